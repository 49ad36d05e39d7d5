#!/usr/bin/env python3
"""reports_oracle.py -- every frame `tracekit symbolicate` named in a report, against llvm-symbolizer
and `tracekit atos`.

  reports_oracle.py --tk build/tracekit --truth DIR/truth.tsv --out OUTDIR --ext crash|spin

truth.tsv (tests/symgen/mkreports.py) says, per frame with a dSYM, the DWARF file and the file
address to look up (the caller-frame rule already applied). The symbolicated reports in OUTDIR are
parsed here on their own (frame lines `N  Binary\t0xADDR  rest`, spindump tree lines), and each
frame's lines must be exactly what atos prints for that address, `function (in Binary) (file:line)`
with inlined frames first — the chain llvm-symbolizer --inlining gives (Swift names in atos's short
form) and `tracekit atos -i --json` gives. Frames of images without a dSYM must be left unnamed.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "symgen"))
from oracle import swift_simplified  # noqa: E402

FRAME = re.compile(r"^(\d+)\s+.*?\t\s*0x[0-9a-f]+ (.*)$")
SPIN = re.compile(r"^(\s*)\*?(\d+)  (.*?) \(([^()]*) \+ \d+\) \[0x[0-9a-f]+\]$")


def parse_text(path):
    """{(thread, frame): [rest lines]} for a crash-report text."""
    out = collections.OrderedDict()
    t = None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"^Thread (\d+)( Crashed)?:+", line)
        if m and "name:" not in line and "crashed with" not in line:
            t = int(m.group(1))
            continue
        if line.startswith("Binary Images:"):
            t = None
        m = FRAME.match(line)
        if m and t is not None:
            out.setdefault((t, int(m.group(1))), []).append(m.group(2))
    return out


def parse_spin(path):
    out = {}
    t = -1
    rows = []
    for line in open(path):
        line = line.rstrip("\n")
        if line.strip().startswith("Thread 0x"):
            t += 1
            rows.append([])
            continue
        m = SPIN.match(line)
        if m and t >= 0:
            rows[t].append(m.group(3))
    for t, r in enumerate(rows):
        n = len(r)
        for depth, text in enumerate(r):
            out[(t, n - 1 - depth)] = text.split(" <- ")
    return out


def llvm(dwarf, arch, addrs):
    p = subprocess.run(["llvm-symbolizer", "--inlining", "--output-style=JSON", "--obj=%s:%s" % (dwarf, arch)],
                       input="\n".join(addrs) + "\n", capture_output=True, text=True, check=True)
    res = []
    for line in p.stdout.splitlines():
        if line.strip():
            o = json.loads(line)
            res.append([(s["FunctionName"], s["FileName"], s["Line"]) for s in o["Symbol"]])
    return res


def atos(tk, dwarf, arch, addrs):
    p = subprocess.run([tk, "atos", "-i", "--json", "-o", dwarf, "-arch", arch], input="\n".join(addrs) + "\n",
                       capture_output=True, text=True, check=True)
    return [[(f["function"], f["file"], f["line"]) for f in json.loads(l)["frames"]] for l in p.stdout.splitlines()]


def atos_line(fn, binary, file, line):
    if not file or file == "??":
        return None  # symbol table only: "fn (in Bin) + off", compared by name
    return "%s (in %s) (%s:%d)" % (fn, binary, os.path.basename(file), line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tk", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ext", required=True)
    a = ap.parse_args()
    rows = [l.rstrip("\n").split("\t") for l in open(a.truth) if l.strip()]
    by_obj = collections.defaultdict(list)
    for r in rows:
        by_obj[(r[3], r[4])].append(r)
    expect = {}
    for (dwarf, arch), rs in by_obj.items():
        addrs = [r[6] for r in rs]
        L = llvm(dwarf, arch, addrs)
        T = atos(a.tk, dwarf, arch, addrs)
        binary = os.path.basename(dwarf)
        for r, l, t in zip(rs, L, T):
            chain = [(swift_simplified(f) or "??", fi or "??", ln) for f, fi, ln in l]
            if [(f, fi or "??", ln) for f, fi, ln in t] != chain:
                print("ATOS-DIFF %s %s: llvm %s atos %s" % (r[0], r[6], chain, t))
                sys.exit(1)
            expect[(r[0], int(r[1]), int(r[2]))] = [(f, atos_line(f, binary, fi, ln)) for f, fi, ln in chain]
    seen = bad = 0
    parsed = {}
    for name in sorted({r[0] for r in rows}):
        path = os.path.join(a.out, name + "." + a.ext)
        parsed[name] = parse_spin(path) if a.ext == "spin" else parse_text(path)
    for key, chain in expect.items():
        got = parsed[key[0]].get((key[1], key[2]))
        seen += 1
        ok = got is not None and len(got) == len(chain)
        if ok:
            for g, (fn, want) in zip(got, chain):
                if want is None:
                    ok = ok and g.startswith(fn + " (in ")
                else:
                    ok = ok and g == want
        if not ok:
            bad += 1
            if bad <= 5:
                print("DIFF %s thread %d frame %d:\n  want %s\n  got  %s" % (key[0], key[1], key[2],
                                                                           [w or f for f, w in chain], got))
    # frames of images without dSYMs stay as the report had them
    named_system = 0
    for name, frames in parsed.items():
        for (t, f), lines in frames.items():
            if (name, t, f) not in expect and any(" (in " in x for x in lines):
                named_system += 1
    print("%d/%d frames as llvm-symbolizer and tracekit atos name them; %d frames without a dSYM named" %
          (seen - bad, seen, named_system))
    sys.exit(1 if bad or named_system or not seen else 0)


if __name__ == "__main__":
    main()
