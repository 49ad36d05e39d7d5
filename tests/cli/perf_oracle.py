#!/usr/bin/env python3
"""Independent oracle for the sampling-profiler text readers (tests/cli/read_perf.sh).

It never runs tracekit. The perf modes read a recording printed with every field
(`perf script -F comm,pid,tid,time,period,event,ip,sym,dso --ns`), the one unambiguous rendering,
so the other renderings of the same recording (default fields, no time, simpleperf's layouts) can
be checked against it; the dtrace and folded modes sum the numbers written in the file.

  events REF                 EVENT SAMPLES PERIOD_SUM, first seen first (EVENT without :modifiers)
  threads REF EVENT          TID SAMPLES of that event, by tid
  leaves REF EVENT           LEAF_SYMBOL SAMPLES of that event, by name
  depth REF EVENT            Σ over that event's samples of the stack depth
  folded FILE                TOTAL Σ(count × frames) of a folded file
  folded-leafmods FILE       MODULE COUNT of the leaf frames (`module`func`; none for a bare 0x…)
  dtrace FILE                TOTAL Σ(count × frames) of a DTrace stack aggregation
  dtrace-leafmods FILE       MODULE COUNT of its leaf frames
"""
import re
import sys
from collections import Counter, OrderedDict

HDR = re.compile(r"^\s*(\S.*?)\s+(\d+)/(\d+)\s+(\d+\.\d+):\s+(\d+)\s+(\S+):(\s.*)?$")
FRAME = re.compile(r"^\s*([0-9a-f]+) (.*) \((.*)\)$")


def perf_samples(path):
    out, cur = [], None
    for line in open(path, encoding="utf-8", errors="replace").read().split("\n"):
        m = HDR.match(line)
        if m:
            cur = {"tid": int(m.group(3)), "period": int(m.group(5)),
                   "event": m.group(6).split(":")[0], "frames": []}
            out.append(cur)
            if m.group(7) and m.group(7).strip():
                cur["frames"].append(FRAME.match(" " + m.group(7).strip()).group(2))
        elif line.strip() and cur is not None:
            cur["frames"].append(FRAME.match(line).group(2))
    return out


def main():
    mode, path = sys.argv[1], sys.argv[2]
    ev = sys.argv[3] if len(sys.argv) > 3 else None
    if mode == "events":
        agg = OrderedDict()
        for s in perf_samples(path):
            n, p = agg.get(s["event"], (0, 0))
            agg[s["event"]] = (n + 1, p + s["period"])
        for e, (n, p) in agg.items():
            print(e, n, p)
    elif mode in ("threads", "leaves", "depth"):
        ss = [s for s in perf_samples(path) if s["event"] == ev]
        if mode == "depth":
            print(sum(len(s["frames"]) for s in ss))
            return
        c = Counter(s["tid"] if mode == "threads" else (s["frames"][0] if s["frames"] else "(none)") for s in ss)
        for k in sorted(c):
            print(k, c[k])
    elif mode in ("folded", "folded-leafmods"):
        total, depth, mods = 0, 0, Counter()
        for line in open(path, encoding="utf-8").read().split("\n"):
            if not line:
                continue
            stack, n = line.rsplit(" ", 1)
            frames = stack.split(";")
            total += int(n)
            depth += int(n) * len(frames)
            mods[frames[-1].split("`")[0] if "`" in frames[-1] else ""] += int(n)
        if mode == "folded":
            print(total, depth)
        else:
            for k in sorted(mods):
                print(k or "-", mods[k])
    elif mode in ("dtrace", "dtrace-leafmods"):
        total, depth, mods, frames = 0, 0, Counter(), []
        lines = open(path, encoding="utf-8").read().split("\n")
        started = False
        for line in lines:
            t = line.strip()
            if not started:  # the CPU/ID header and the probe line come before the first stack
                if line.startswith("CPU") or not t or re.match(r"^\d+\s+\d+\s+\S*:\S*$", t):
                    continue
                started = True
            if not t:
                continue
            if re.fullmatch(r"\d+", t):
                n = int(t)
                total += n
                depth += n * len(frames)
                mods[frames[0].split("`")[0] if frames and "`" in frames[0] else ""] += n
                frames = []
            else:
                frames.append(t)
        if mode == "dtrace":
            print(total, depth)
        else:
            for k in sorted(mods):
                print(k or "-", mods[k])


main()
