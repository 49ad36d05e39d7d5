#!/usr/bin/env python3
"""peer_etree.py — the xctrace-XML-to-folded-stacks approach the usual write-ups describe.

Parse the whole document with xml.etree.ElementTree, index every element carrying an id in a
dict, resolve each ref through it, and sum the rows' weights per (thread, stack). This is the
peer `tracekit collapse` is benchmarked against, and a second, independent reading of the format
for the generator's truth.

Output (stdout): folded lines "THREADNAME tid=TID;root;...;leaf WEIGHT", sorted bytewise, identical
lines merged. Unsymbolicated frames (hex names) with a <binary> print as 0x + lowercase hex of addr,
without one as their name (as Instruments shows them); text-addresses
values print as 0x + lowercase hex of the value (the trailing 0 end marker is dropped); a
<sentinel/> stack is the thread frame alone.

usage: peer_etree.py FILE.xml [--threads OUT.tsv]
"""
import re
import sys
import xml.etree.ElementTree as ET

HEX_NAME = re.compile(r"^0x[0-9a-fA-F]+$")
PROC_SUFFIX = re.compile(r" \([^()]*, pid: -?\d+\)$")
TID_SUFFIX = re.compile(r"(?:\s+\(0x[0-9a-fA-F]+\)|\s+0x[0-9a-fA-F]+)$")


def thread_name(fmt):
    name = PROC_SUFFIX.sub("", fmt)
    return TID_SUFFIX.sub("", name)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    path = argv[1]
    threads_out = argv[argv.index("--threads") + 1] if "--threads" in argv else None

    root = ET.parse(path).getroot()
    ids = {}
    for el in root.iter():
        i = el.get("id")
        if i is not None:
            ids[i] = el

    def res(el):
        r = el.get("ref")
        return ids[r] if r is not None else el

    stack_cache = {}

    def stack_labels(cell):
        cell = res(cell)
        if cell.tag == "sentinel":
            return ()
        key = cell.get("id")
        got = stack_cache.get(key)
        if got is not None:
            return got
        inner = cell
        if cell.tag == "tagged-backtrace":
            bt = cell.find("backtrace")
            if bt is not None:
                inner = res(bt)
        labels = []  # leaf first
        for ch in inner:
            if ch.tag == "frame":
                f = res(ch)
                name = f.get("name", "")
                if HEX_NAME.match(name) and f.find("binary") is not None:
                    name = "0x%x" % int(f.get("addr"), 16)
                labels.append(name)
            elif ch.tag == "text-addresses":
                labels.extend("0x%x" % int(v) for v in (res(ch).text or "").split())
        if cell.find("text-addresses") is not None and labels and labels[-1] == "0x0":
            labels.pop()
        labels.reverse()
        got = tuple(labels)
        stack_cache[key] = got
        return got

    folded = {}
    totals = {}
    for node in root.iter("node"):
        schema = node.find("schema")
        cols = [c.findtext("mnemonic") for c in schema.findall("col")]
        ti, wi, si = cols.index("thread"), cols.index("weight"), cols.index("stack")
        for row in node.iter("row"):
            cells = list(row)
            th = res(cells[ti])
            tid = res(th.find("tid")).text.strip()
            pid = res(res(th.find("process")).find("pid")).text.strip()
            tlabel = "%s tid=%s" % (thread_name(th.get("fmt")), tid)
            w = int(res(cells[wi]).text)
            labels = stack_labels(cells[si])
            k = (tlabel,) + labels
            folded[k] = folded.get(k, 0) + w
            t = totals.setdefault((int(pid), int(tid)), [0, 0, thread_name(th.get("fmt"))])
            t[0] += w
            t[1] += 1

    merged = {}
    for k, w in folded.items():
        s = ";".join(k)
        merged[s] = merged.get(s, 0) + w
    lines = sorted(("%s %d\n" % (s, w)).encode("utf-8") for s, w in merged.items())
    out = sys.stdout.buffer
    for ln in lines:
        out.write(ln)
    if threads_out:
        with open(threads_out, "w", encoding="utf-8") as f:
            for (pid, tid), (w, n, name) in sorted(totals.items()):
                f.write("%d\t%d\t%d\t%d\t%s\n" % (pid, tid, w, n, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
