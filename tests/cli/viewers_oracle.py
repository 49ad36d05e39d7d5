#!/usr/bin/env python3
"""Independent truth for tests/cli/viewers.sh, computed from the xctrace XML with ElementTree (never
from tracekit's output). Each mode prints "ok ..." or "differs: ..." and exits non-zero on a difference.

  speedscope CHECK_JSON XML    speedscope_check.mjs's line for one file: valid against the schema,
                               one profile per thread, each profile's weight sum = the thread's total
                               from the XML rows (matched by the "(tid N)" in the profile name)
  svg SVG XML                  well-formed XML (this parse), an <svg> root, and per group (g.sec) the
                               root frame's data-w = the group's data-w = the thread's XML total
  pprof CHECK_JSON XML          pprof_check.mjs's line for one file: no broken references, sample types
                               [samples, weight], per-thread weight (label tid) = the XML's totals
  rows XML                     print the number of rows
  stack-weight XML NAME        print the weight of rows whose backtrace has a frame named NAME
  total XML                    print the sum of all rows' weights
"""
import collections
import hashlib
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("differs: " + msg)
    sys.exit(1)


def rows(xpath):
    """(tid, weight, [frame names]) per row, resolving id/ref by hand."""
    root = ET.parse(xpath).getroot()
    ids = {el.get("id"): el for el in root.iter() if el.get("id") is not None}

    def res(el):
        return ids[el.get("ref")] if el.get("ref") is not None else el

    for row in root.iter("row"):
        cells = [res(c) for c in row]
        weight = next((c for c in cells if c.tag in ("weight", "cycle-weight", "pmc-event")), None)
        thread = next((c for c in cells if c.tag == "thread"), None)
        if weight is None or thread is None:
            fail("a row without weight or thread")
        names = []
        for c in cells:
            if c.tag in ("backtrace", "tagged-backtrace"):
                for fr in c.iter("frame"):
                    names.append(res(fr).get("name"))
        yield int(res(thread.find("tid")).text), int(weight.text), names


def thread_totals(xpath):
    """{tid: summed weight} of the XML's rows. With VIEWERS_ORACLE_CACHE set (a directory), computed
    once per XML file (path, size, mtime) and kept there: viewers.sh asks it of every input three or
    four times (speedscope, pprof, svg, total), and the parse costs ~1.4 s of CPU on a 1.8 MB export."""
    cache = os.environ.get("VIEWERS_ORACLE_CACHE")
    if cache:
        st = os.stat(xpath)
        key = hashlib.sha1(("%s\0%d\0%d" % (os.path.realpath(xpath), st.st_size, st.st_mtime_ns)).encode()).hexdigest()
        path = os.path.join(cache, key + ".json")
        if os.path.exists(path):
            return {int(k): v for k, v in json.load(open(path)).items()}
    want = collections.Counter()
    for tid, w, _ in rows(xpath):
        want[tid] += w
    if cache:
        os.makedirs(cache, exist_ok=True)
        with open(path + ".tmp", "w") as f:
            json.dump(want, f)
        os.replace(path + ".tmp", path)
    return dict(want)


def main():
    mode = sys.argv[1]
    if mode == "speedscope":
        d = json.loads(open(sys.argv[2]).read())
        if not d["valid"]:
            fail(f"schema: {d['errors']}")
        want = thread_totals(sys.argv[3])
        got = {}
        for p in d["profiles"]:
            m = re.search(r"\(tid (\d+)\)", p["name"])
            if not m or not p["weightsMatchSamples"]:
                fail(f"profile {p['name']!r}: no tid or weights/samples mismatch")
            got[int(m.group(1))] = int(p["sum"])
        if got != want:
            fail(f"sums {sorted(got.items())[:4]} vs XML {sorted(want.items())[:4]}")
        print(f"ok {len(got)} profiles")
    elif mode == "svg":
        root = ET.parse(sys.argv[2]).getroot()
        if root.tag != SVG + "svg":
            fail(f"root element {root.tag}")
        want = thread_totals(sys.argv[3])
        secs = [g for g in root.iter(SVG + "g") if g.get("class") == "sec"]
        totals = []
        for s in secs:
            frames = [g for g in s.iter(SVG + "g") if g.get("class") == "f"]
            if not frames or frames[0].get("data-d") != "0" or frames[0].get("data-w") != s.get("data-w"):
                fail("a group whose first frame is not its root")
            totals.append(int(s.get("data-w")))
        expect = sorted(want.values()) if len(secs) > 1 or len(want) == 1 else [sum(want.values())]
        if sorted(totals) != expect:
            fail(f"group totals {sorted(totals)[:5]} vs XML {sorted(want.values())[:5]}")
        if int(root.get("data-total")) != sum(want.values()):
            fail(f"data-total {root.get('data-total')} vs XML {sum(want.values())}")
        print(f"ok {len(secs)} groups")
    elif mode == "pprof":
        d = json.loads(open(sys.argv[2]).read())
        if d["problems"]:
            fail(f"references: {d['problems']}")
        if d["sampleTypes"][0] != ["samples", "count"] or d["defaultType"] != d["sampleTypes"][1][0]:
            fail(f"sample types {d['sampleTypes']} default {d['defaultType']}")
        want = thread_totals(sys.argv[3])
        got = {int(k): int(v) for k, v in d["totals"].items()}
        if got != want:
            fail(f"thread totals {sorted(got.items())[:4]} vs XML {sorted(want.items())[:4]}")
        print(f"ok {len(got)} threads")
    elif mode == "rows":
        print(sum(1 for _ in ET.parse(sys.argv[2]).getroot().iter("row")))
    elif mode == "stack-weight":
        print(sum(w for _, w, names in rows(sys.argv[2]) if sys.argv[3] in names))
    elif mode == "total":
        print(sum(thread_totals(sys.argv[2]).values()))
    else:
        fail("unknown mode " + mode)


if __name__ == "__main__":
    main()
