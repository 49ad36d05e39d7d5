#!/usr/bin/env python3
"""check_xctrace_format.py — check an xctrace export against the invariants seen in every real file
(docs/xctrace-format.md §2–§5). Used to keep bench/xcgen honest; also runs on the
real fixtures, which must pass too (except the re-indented ones, with --reindented).

Checks: byte skeleton (declaration, <trace-query-result>, <node xpath='…'> with single quotes, one
row per line, first row on the node line, closing line); one id counter for the whole document,
pre-order, starting at 1, no gaps; every ref points backwards to an element with the same tag;
each row has exactly one child per <col>; frames, binaries, paths, backtraces, tagged backtraces
and text-address fragments are defined and referenced within one process; within one process no
frame (name, addr) or binary (UUID, load-addr) is defined twice.

usage: check_xctrace_format.py FILE.xml [--reindented]   (prints "ok: …" or the first problem; exit 1)
"""
import re
import sys
import xml.etree.ElementTree as ET

TAG = re.compile(r'<([A-Za-z][\w.-]*)((?:\s+[\w.-]+="[^"]*")*)\s*(/?)>')
ATTR = re.compile(r'([\w.-]+)="([^"]*)"')
PER_PROCESS = {"frame", "binary", "path", "backtrace", "tagged-backtrace", "text-addresses"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main(argv):
    path = argv[1]
    reindented = "--reindented" in argv
    data = open(path, "rb").read()
    text = data.decode("utf-8")  # must be valid UTF-8
    lines = text.split("\n")
    if not reindented:
        if not text.startswith("<?xml version=\"1.0\"?>\n<trace-query-result>\n<node xpath='"):
            fail("skeleton: bad start")
        if not text.endswith("</node></trace-query-result>\n"):
            fail("skeleton: bad end")
        if len(lines) > 4:
            if not (lines[2].startswith("<node xpath='") and "</schema><row>" in lines[2] and lines[2].endswith("</row>")):
                fail("skeleton: the first row must sit on the <node> line")
            for n, ln in enumerate(lines[3:-2], 4):
                if not (ln.startswith("<row>") and ln.endswith("</row>")):
                    fail("line %d: not one <row> per line" % n)
            if lines[-2] != "</node></trace-query-result>":
                fail("skeleton: closing line")
    ET.fromstring(data)  # well-formed

    tag_of = {}
    owner = {}
    nxt = 1
    thread_proc = {}
    frames_seen = {}
    bins_seen = {}
    cur_proc = None
    pending_thread = None
    for m in TAG.finditer(text):
        tag, attrs = m.group(1), dict(ATTR.findall(m.group(2)))
        if tag == "row":
            cur_proc = None
            continue
        i, r = attrs.get("id"), attrs.get("ref")
        if i is not None:
            i = int(i)
            if i != nxt:
                fail("id %d (<%s>) where %d was expected: ids must be dense and in document order" % (i, tag, nxt))
            nxt += 1
            tag_of[i] = tag
            if tag == "thread":
                pending_thread = i
            elif tag == "process" and pending_thread is not None:
                thread_proc[pending_thread] = i
                cur_proc = i
                pending_thread = None
            if tag in PER_PROCESS:
                if cur_proc is None:
                    fail("<%s id=%d> outside a known process" % (tag, i))
                owner[i] = cur_proc
                if tag == "frame":
                    k = (cur_proc, attrs.get("name"), attrs.get("addr"))
                    if k in frames_seen:
                        fail("frame %s defined twice in process %s (ids %d, %d)" % (k[1:], cur_proc, frames_seen[k], i))
                    frames_seen[k] = i
                if tag == "binary":
                    k = (cur_proc, attrs.get("UUID"), attrs.get("load-addr"))
                    if k in bins_seen:
                        fail("binary %s defined twice in process %s" % (k[1:], cur_proc))
                    bins_seen[k] = i
        elif r is not None:
            r = int(r)
            if r >= nxt:
                fail("<%s ref=%d> points forwards" % (tag, r))
            if tag_of.get(r) != tag:
                fail("<%s ref=%d> points to <%s>" % (tag, r, tag_of.get(r)))
            if tag == "thread":
                cur_proc = thread_proc[r]
            elif tag == "process" and pending_thread is not None:
                thread_proc[pending_thread] = r
                cur_proc = r
                pending_thread = None
            if tag in PER_PROCESS and owner[r] != cur_proc:
                fail("<%s ref=%d> crosses from process %s to %s" % (tag, r, owner[r], cur_proc))

    root = ET.fromstring(data)
    nrows = 0
    for node in root.iter("node"):
        cols = node.find("schema").findall("col")
        for row in node.iter("row"):
            nrows += 1
            if len(row) != len(cols):
                fail("row %d has %d cells for %d columns" % (nrows, len(row), len(cols)))
    procs = {p for p in owner.values()}
    print("ok: %d rows, %d ids, %d processes with per-process frames" % (nrows, nxt - 1, len(procs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
