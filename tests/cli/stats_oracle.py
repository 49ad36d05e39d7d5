#!/usr/bin/env python3
"""Independent oracles for `tracekit stats` / `tracekit diff` tests.

  stats_oracle.py summary FILE METRIC UNIT   the JSON `tracekit stats --json` must print for the
                                              numbers in FILE: type 7 percentiles (Hyndman & Fan)
                                              computed in exact rational arithmetic (fractions) from
                                              the decimal text, then rounded once to a double; the
                                              mean the same way. Cross-checked against
                                              statistics.quantiles(method='inclusive') (type 7, in
                                              floating point) to within 1e-12 relative.
  stats_oracle.py compare EXPECTED GOT        exit 0 when the two JSON objects have the same keys in
                                              the same order and the same numbers, except the mean
                                              which may differ by one unit in the last place.
  stats_oracle.py within EXACT GOT REL        exit 0 when GOT's count/min/max equal EXACT's and every
                                              percentile is within REL of EXACT's (relative).
"""
import json
import math
import statistics
import sys
from fractions import Fraction

PCTS = [("p50", 50, 100), ("p90", 90, 100), ("p95", 95, 100), ("p99", 99, 100), ("p99.9", 999, 1000)]


def read_numbers(path):
    vals = []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s and not s.startswith("#"):
                vals.append(Fraction(s))  # exact value of the decimal text
    return vals


def type7(xs, num, den):
    n = len(xs)
    j, delta = divmod((n - 1) * num, den)
    if j + 1 >= n:
        return xs[-1]
    return xs[j] + (xs[j + 1] - xs[j]) * Fraction(delta, den)


def summary(path, metric, unit):
    # The values as doubles (what a parser reads), then exact arithmetic on those doubles.
    xs = sorted(Fraction(float(v)) for v in read_numbers(path))
    n = len(xs)
    out = {"metric": metric, "unit": unit, "count": n}
    out["mean"] = float(sum(xs) / n)
    out["min"] = float(xs[0])
    for name, num, den in PCTS:
        out[name] = float(type7(xs, num, den))
    out["max"] = float(xs[-1])
    if n >= 2:
        fl = [float(x) for x in xs]
        q = statistics.quantiles(fl, n=1000, method="inclusive")
        for name, num, den in PCTS:
            ref = q[num * (1000 // den) - 1]
            assert abs(ref - out[name]) <= 1e-12 * max(1.0, abs(ref)), (name, ref, out[name])
    print(json.dumps(out))


def ulp_close(a, b):
    return a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= math.ulp(max(abs(a), abs(b))))


def compare(exp_path, got_path):
    e = json.load(open(exp_path))
    g = json.load(open(got_path))
    if list(e.keys()) != list(g.keys()):
        sys.exit(f"keys differ: {list(e.keys())} vs {list(g.keys())}")
    for k in e:
        if k == "mean":
            if not ulp_close(e[k], g[k]):
                sys.exit(f"mean: expected {e[k]!r} got {g[k]!r}")
        elif e[k] != g[k] or type(e[k]) != type(g[k]) and not (isinstance(e[k], (int, float)) and isinstance(g[k], (int, float))):
            sys.exit(f"{k}: expected {e[k]!r} got {g[k]!r}")


def within(exp_path, got_path, rel):
    e = json.load(open(exp_path))
    g = json.load(open(got_path))
    for k in ("count", "min", "max"):
        if e[k] != g[k]:
            sys.exit(f"{k}: expected {e[k]!r} got {g[k]!r}")
    for name, _, _ in PCTS:
        if abs(e[name] - g[name]) > rel * abs(e[name]):
            sys.exit(f"{name}: exact {e[name]!r}, got {g[name]!r}: beyond {rel}")


cmd = sys.argv[1]
if cmd == "summary":
    summary(*sys.argv[2:5])
elif cmd == "compare":
    compare(sys.argv[2], sys.argv[3])
elif cmd == "within":
    within(sys.argv[2], sys.argv[3], float(sys.argv[4]))
else:
    sys.exit("unknown command")
