#!/usr/bin/env python3
"""An independent reading of MetricKit payloads for tests/cli/metrickit.sh (Python's json module,
not tracekit's tokenizer).

  metrickit_oracle.py folded FILE     the folded stacks tracekit collapse must print: one line per
                                      (thread, root path) with the frame's self count
                                      (sampleCount - sum of subFrames' sampleCount), threads named
                                      as docs/metrickit.md says
  metrickit_oracle.py totals FILE     per thread: the sum of its root frames' sampleCount
  metrickit_oracle.py offsets FILE... per diagnostic and image: the distinct (address - offset)
                                      values of leaf and non-leaf frames (docs/metrickit.md's table)
  metrickit_oracle.py deep N          a payload whose one hang stack is N frames deep (no recursion)
"""
import json
import sys
from collections import OrderedDict, defaultdict

KINDS = [("hangDiagnostics", "hang"), ("cpuExceptionDiagnostics", "cpu-exception"),
         ("diskWriteExceptionDiagnostics", "disk-write"), ("crashDiagnostics", "crash"),
         ("appLaunchDiagnostics", "launch")]


def values(path):
    text = open(path, encoding="utf-8").read()
    dec = json.JSONDecoder()
    i, out = 0, []
    text = text.strip()
    if text.startswith("["):
        return json.loads(text)
    while i < len(text):
        v, j = dec.raw_decode(text, i)
        out.append(v)
        i = j
        while i < len(text) and text[i] in " \r\n\t":
            i += 1
    return out


def diagnostics(path):
    """(label, tree) per diagnostic, in the order tracekit reads them."""
    n = 0
    for p in values(path):
        if "callStacks" in p or "callStackPerThread" in p:
            n += 1
            yield "stacks %d" % n, p
            continue
        for key in p:  # the payload's key order, as a streaming reader sees it
            for k, label in KINDS:
                if key == k:
                    for d in p[key] or []:
                        n += 1
                        yield "%s %d" % (label, n), d.get("callStackTree")


def frames(root):
    """(frame, parent) pairs, iteratively."""
    stack = [(root, None)]
    while stack:
        f, par = stack.pop()
        yield f, par
        for s in reversed(f.get("subFrames") or []):
            stack.append((s, f))


def loads(tree):
    """Per image, the load address the frames imply (the smallest one)."""
    out = {}
    for cs in tree.get("callStacks", []):
        for r in cs.get("callStackRootFrames", []):
            for f, _ in frames(r):
                u, a, o = f.get("binaryUUID"), f.get("address"), f.get("offsetIntoBinaryTextSegment")
                if not u or a is None:
                    continue
                u = u.upper()
                if o is not None and o >= 1 << 32 and o <= a:
                    l = o
                elif o is not None and o <= a:
                    l = a - o
                else:
                    l = 0
                out[u] = min(out.get(u, l), l)
    return out


def label(f, load):
    u, name = (f.get("binaryUUID") or "").upper(), f.get("binaryName")
    a, o = f.get("address"), f.get("offsetIntoBinaryTextSegment")
    if not u and not name:
        return "0x%x" % (a if a is not None else (o or 0))
    if o is not None:
        off = a - o if (a is not None and o >= 1 << 32 and o <= a) else o
    else:
        off = a - load.get(u, 0)
    return "%s + 0x%x" % (name or u, off)


def threads(path):
    for lab, tree in diagnostics(path):
        if tree is None:
            continue
        per = tree.get("callStackPerThread", True)
        load = loads(tree)
        stacks = tree.get("callStacks", [])
        for i, cs in enumerate(stacks):
            if per:
                name = "%s thread %d%s" % (lab, i, " (attributed)" if cs.get("threadAttributed") is True else "")
            else:
                name = "%s all threads" % lab + (" %d" % i if len(stacks) > 1 else "")
            yield name, cs, load


def folded(path):
    tid = 0
    for name, cs, load in threads(path):
        tid += 1
        cells = OrderedDict()
        for r in cs.get("callStackRootFrames", []):
            paths = {id(r): [label(r, load)]}
            for f, par in frames(r):
                if par is not None:
                    paths[id(f)] = paths[id(par)] + [label(f, load)]
                self_ = f["sampleCount"] - sum(s["sampleCount"] for s in f.get("subFrames") or [])
                if self_:
                    key = ";".join(paths[id(f)])
                    cells[key] = cells.get(key, 0) + self_
        for k, v in cells.items():
            print("%s tid=%d;%s %d" % (name, tid, k, v))


def totals(path):
    for name, cs, _ in threads(path):
        print("%s\t%d" % (name, sum(r["sampleCount"] for r in cs.get("callStackRootFrames", []))))


def offsets(paths):
    for path in paths:
        for lab, tree in diagnostics(path):
            if tree is None:
                continue
            per = defaultdict(lambda: defaultdict(set))
            for cs in tree.get("callStacks", []):
                for r in cs.get("callStackRootFrames", []):
                    for f, _ in frames(r):
                        a, o = f.get("address"), f.get("offsetIntoBinaryTextSegment")
                        if a is None or o is None:
                            continue
                        kind = "inner" if f.get("subFrames") else "leaf"
                        per[f.get("binaryName") or f.get("binaryUUID")][kind].add(a - o)
            for img, kinds in per.items():
                cols = []
                for kind in ("leaf", "inner"):
                    vals = sorted(kinds.get(kind, ()))
                    cols.append(",".join("%#x" % v for v in vals[:4]) + (" (+%d more)" % (len(vals) - 4) if len(vals) > 4 else "") or "-")
                print("%s\t%s\t%s\t%s\t%s" % (path.split("/")[-1], lab, img, cols[0], cols[1]))


def deep(n):
    fr = '{"binaryUUID":"11111111-2222-3333-4444-%012X","binaryName":"Deep","offsetIntoBinaryTextSegment":%d,"address":%d,"sampleCount":%d%s}'
    # frame d opens, holds frame d + 1 in its subFrames, then closes: the openings in order, then the
    # closings in reverse (linear; wrapping the inner text level by level copied it n times)
    heads, tails = [], []
    for d in range(n):
        head, tail = (fr % (1, 0x1000 + 4 * d, 0x100000000 + 0x1000 + 4 * d, 7, "\0")).split("\0")
        sub = d < n - 1
        heads.append(head + (',"subFrames":[' if sub else ""))
        tails.append(("]" if sub else "") + tail)
    inner = "".join(heads) + "".join(reversed(tails))
    print('{"timeStampBegin":"2024-01-01 00:00:00 +0000","timeStampEnd":"2024-01-02 00:00:00 +0000",'
          '"hangDiagnostics":[{"version":"1.0.0","diagnosticMetaData":{"hangDuration":"2.5 sec","appVersion":"1.0"},'
          '"callStackTree":{"callStackPerThread":true,"callStacks":[{"threadAttributed":true,"callStackRootFrames":[%s]}]}}]}' % inner)


if __name__ == "__main__":
    sys.setrecursionlimit(100000)
    cmd = sys.argv[1]
    if cmd == "folded":
        folded(sys.argv[2])
    elif cmd == "totals":
        totals(sys.argv[2])
    elif cmd == "offsets":
        offsets(sys.argv[2:])
    elif cmd == "deep":
        deep(int(sys.argv[2]))
