#!/usr/bin/env python3
"""Independent oracle for the xctrace reader tests: a plain ElementTree reading of an export.

usage: xctrace_oracle.py threads FILE   -> "pid tid samples weight" per thread, sorted
       xctrace_oracle.py folded FILE    -> "pid/tid;root;...;leaf weight" aggregated, sorted

It resolves id/ref by a dict over the whole document (no streaming, no windows), maps cells to
columns by position and columns by mnemonic, and labels frames by name, or 0x<hex addr> when the
name is missing, or is a bare hex address and the frame has a <binary> (a hex name without a binary
is the label, as Instruments shows it). Written separately from the C reader on purpose.
"""
import re
import sys
import xml.etree.ElementTree as ET

HEX = re.compile(r'^0x[0-9a-fA-F]+$')


def main():
    mode, path = sys.argv[1], sys.argv[2]
    root = ET.parse(path).getroot()
    byid = {}
    for e in root.iter():
        if 'id' in e.attrib:
            byid[e.attrib['id']] = e

    def res(e):
        while e is not None and 'ref' in e.attrib:
            t = byid[e.attrib['ref']]
            assert t.tag == e.tag, (t.tag, e.tag)
            e = t
        return e

    def frame_label(f):
        f = res(f)
        name = f.attrib.get('name', '')
        if name and (not HEX.match(name) or f.find('binary') is None):
            return name
        return '0x%x' % int(f.attrib.get('addr', '0x0'), 16)

    def addrs_of(frags):
        vals = []
        for fr in frags:
            vals += [int(v) for v in (res(fr).text or '').split()]
        if vals and vals[-1] == 0:
            vals.pop()
        return ['0x%x' % v for v in vals]

    def stack(cell):
        """Frames leaf first."""
        cell = res(cell)
        if cell.tag == 'sentinel':
            return []
        if cell.tag == 'kperf-bt':
            frags = [c for c in cell if c.tag == 'text-addresses']
            pc = [int(res(c).text) for c in cell if c.tag == 'text-address']
            vals = []
            for fr in frags:
                vals += [int(v) for v in (res(fr).text or '').split()]
            if pc and not (vals and vals[0] == pc[0]):
                vals = pc + vals
            if vals and vals[-1] == 0:
                vals.pop()
            return ['0x%x' % v for v in vals]
        if cell.tag == 'tagged-backtrace':
            inner = [c for c in cell if c.tag == 'backtrace']
            if inner:
                return stack(inner[0])
        frames = [c for c in cell if c.tag == 'frame']
        if frames:
            return [frame_label(f) for f in frames]
        return addrs_of([c for c in cell if c.tag == 'text-addresses'])

    threads = {}
    folded = {}
    for node in root.iter('node'):
        schema = node.find('schema')
        name = schema.attrib['name']
        cols = [c.findtext('mnemonic') for c in schema.findall('col')]
        stack_col = 'cp-user-callstack' if name == 'time-sample' else 'stack'
        for row in node.findall('row'):
            cells = list(row)
            assert len(cells) == len(cols)
            c = dict(zip(cols, cells))
            th = res(c['thread'])
            tid = int(res(th.find('tid')).text)
            proc = res(th.find('process'))
            pid = int(res(proc.find('pid')).text)
            if name == 'time-sample':
                w = 1
            else:
                wc = res(c['weight'])
                w = 0 if wc.tag == 'sentinel' else int(wc.text)
            key = (pid, tid)
            s, tw = threads.get(key, (0, 0))
            threads[key] = (s + 1, tw + w)
            frames = stack(c[stack_col])
            line = ';'.join(['%d/%d' % key] + frames[::-1])
            folded[line] = folded.get(line, 0) + w
    if mode == 'threads':
        for (pid, tid), (s, w) in sorted(threads.items()):
            print(pid, tid, s, w)
    else:
        for line in sorted(folded):
            print(line, folded[line])


main()
