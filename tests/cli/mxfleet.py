#!/usr/bin/env python3
"""mxfleet.py -- a generated MetricKit fleet and the hand computation of Apple's hang rate.

  mxfleet.py gen OUT N SEED        N metric payloads (one device's day each: foreground time and a
                                   histogrammedAppHangTime) as OUT/metrics.jsonl, and N/2 diagnostic
                                   payloads with hang diagnostics as OUT/diag-NNN.json
  mxfleet.py rate [--fg TSV] FILE… the hang rate by version, computed here without tracekit, one JSON
                                   object per version then one for all: count (sessions), pooled
                                   (Σ hang s / Σ foreground h), p50, p90 (type 7 over the sessions'
                                   rates), estimated (sessions whose hang time is from a histogram).
     FILE: MetricKit payload files (one payload, an array or JSON Lines); metric payloads with a
     foreground time are sessions, their hang seconds the buckets at or above 250 ms at their
     midpoints (a bucket straddling 250 ms: the part above, spread evenly). Diagnostic payloads name
     no session with foreground time, so their hangs are not counted.
     --fg TSV: storegen --foreground's foreground.tsv (version, session, foreground s, hang ms list):
     monitor sessions whose exact hangs (all >= 250 ms) are summed.
"""
import json
import random
import sys
from fractions import Fraction as F

UNITS = {"ms": F(1, 1000), "sec": F(1), "s": F(1), "min": F(60), "h": F(3600)}


def seconds(text):
    num, unit = text.split(" ", 1)
    return F(num.replace(",", "")) * UNITS[unit]


def payloads(path):
    text = open(path).read()
    dec = json.JSONDecoder()
    i = 0
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i >= len(text):
            return
        v, i = dec.raw_decode(text, i)
        if isinstance(v, list):
            yield from v
        else:
            yield v


def estimate(hist):
    """Σ over buckets of count × the part of the bucket >= 250 ms at its midpoint, in seconds."""
    total = F(0)
    lo = F(1, 4)
    for b in hist["histogramValue"].values():
        s, e, c = seconds(b["bucketStart"]), seconds(b["bucketEnd"]), b["bucketCount"]
        if e < lo or c == 0:
            continue
        if s >= lo or e == s:
            total += c * (s + e) / 2
        else:
            total += c * (e - lo) / (e - s) * (lo + e) / 2
    return total


def q7(v, num, den):
    v = sorted(v)
    n = len(v)
    j, d = divmod((n - 1) * num, den)
    if j + 1 >= n:
        return v[-1]
    return v[j] + F(d, den) * (v[j + 1] - v[j])


def rate(args):
    sessions = []  # (version, hang s, foreground s, estimated)
    if args[:1] == ["--fg"]:
        for line in open(args[1]):
            ver, _sess, hangs, fg = line.rstrip("\n").split("\t")
            ms = [int(x) for x in hangs.split(",") if x]
            sessions.append((ver, F(sum(m for m in ms if m >= 250), 1000), F(fg), 0))
        args = args[2:]
    for path in args:
        for p in payloads(path):
            fg = p.get("applicationTimeMetrics", {}).get("cumulativeForegroundTime")
            if fg is None:
                continue
            hist = p.get("applicationResponsivenessMetrics", {}).get("histogrammedAppHangTime")
            sessions.append((p.get("appVersion", ""), estimate(hist) if hist else F(0), seconds(fg), 1 if hist else 0))
    groups = {}
    for s in sessions:
        if s[2] > 0:
            groups.setdefault(s[0], []).append(s)
    groups[None] = [s for v in groups.values() for s in v]
    for ver in sorted(k for k in groups if k is not None) + [None]:
        g = groups[ver]
        rates = [h * 3600 / f for _, h, f, _ in g]
        out = {"count": len(g), "pooled": float(sum(h for _, h, _, _ in g) * 3600 / sum(f for _, _, f, _ in g)),
               "p50": float(q7(rates, 50, 100)), "p90": float(q7(rates, 90, 100)),
               "min": float(min(rates)), "max": float(max(rates)), "estimated": sum(e for *_, e in g)}
        if ver is not None:
            out = dict({"version": ver}, **out)
        print(json.dumps(out))


def gen(out, n, seed):
    rng = random.Random(seed)
    bounds = [(0, 100), (100, 400), (400, 700), (700, 1000), (1000, 2000), (2000, 5000), (5000, 10000)]
    with open(out + "/metrics.jsonl", "w") as f:
        for i in range(n):
            ver = "5.%d" % rng.randrange(3)
            day = 1 + i % 28
            hv = {}
            for k, (s, e) in enumerate(bounds):
                c = rng.randrange(0, 12 if k < 2 else 5 + 3 * int(ver[-1]))
                if c:
                    hv[str(len(hv))] = {"bucketStart": "%s ms" % format(s, ","), "bucketEnd": "%s ms" % format(e, ","),
                                        "bucketCount": c}
            p = {"appVersion": ver, "timeStampBegin": "2026-11-%02d 00:00:00 +0000" % day,
                 "timeStampEnd": "2026-11-%02d 23:59:00 +0000" % day,
                 "metaData": {"appBuildVersion": "%d" % (100 + int(ver[-1])), "osVersion": "iPhone OS 17.4 (21E219)",
                              "deviceType": rng.choice(["iPhone15,2", "iPhone14,5", "iPhone13,2"]),
                              "platformArchitecture": "arm64e", "bundleIdentifier": "com.example.atlas",
                              "regionFormat": "US"},
                 "applicationTimeMetrics": {"cumulativeForegroundTime": "%s sec" % format(rng.randrange(300, 20000), ","),
                                            "cumulativeBackgroundTime": "%d sec" % rng.randrange(0, 3000)},
                 "cpuMetrics": {"cumulativeCPUTime": "%d sec" % rng.randrange(10, 900)}}
            if hv or rng.random() < 0.5:  # some devices' payloads carry no hang histogram at all
                p["applicationResponsivenessMetrics"] = {"histogrammedAppHangTime": {"histogramNumBuckets": len(hv),
                                                                                     "histogramValue": hv}}
            f.write(json.dumps(p) + "\n")
    frames = [0x1000 + 4 * rng.randrange(0x10000) for _ in range(6)]
    for i in range(n // 2):
        ver = "5.%d" % rng.randrange(3)

        def tree(depth):
            fr = {"binaryUUID": "1B7E1D4A-5C2B-3F44-9A6E-2D5C7B8E9F01", "binaryName": "Atlas", "sampleCount": 10,
                  "offsetIntoBinaryTextSegment": frames[depth], "address": 0x104000000 + frames[depth]}
            if depth:
                fr["subFrames"] = [tree(depth - 1)]
            return fr
        p = {"timeStampBegin": "2026-11-%02d 00:00:00 +0000" % (1 + i % 28),
             "timeStampEnd": "2026-11-%02d 23:59:00 +0000" % (1 + i % 28),
             "hangDiagnostics": [{"version": "1.0.0", "diagnosticMetaData": {
                 "appVersion": ver, "appBuildVersion": "%d" % (100 + int(ver[-1])), "osVersion": "iPhone OS 17.4 (21E219)",
                 "deviceType": "iPhone15,2", "platformArchitecture": "arm64e", "bundleIdentifier": "com.example.atlas",
                 "pid": 100 + i, "hangDuration": "%s ms" % format(rng.randrange(250, 8000), ",")},
                 "callStackTree": {"callStackPerThread": True, "callStacks": [
                     {"threadAttributed": True, "callStackRootFrames": [tree(5)]}]}}]}
        with open("%s/diag-%03d.json" % (out, i), "w") as f:
            json.dump(p, f)


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        rate(sys.argv[2:])
