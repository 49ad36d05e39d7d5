#!/usr/bin/env python3
"""oracle.py -- compare `tracekit atos -i --json` with `llvm-symbolizer --inlining` (JSON).

  oracle.py --tk build/tracekit --obj DWARF_FILE [--arch A] --addrs FILE [--cache-dir D] [--show 5]

Both tools get the same file addresses. A frame chain matches when every frame has the same
function, file and line (llvm's "??" / line 0 are compared as-is). Prints "N/M identical" and
exits non-zero on any difference.
"""
import argparse
import json
import re
import os
import subprocess
import sys


def llvm_frames(obj, arch, addrs):
    target = "%s:%s" % (obj, arch) if arch else obj
    p = subprocess.run(["llvm-symbolizer", "--inlining", "--output-style=JSON", "--obj=" + target],
                       input="\n".join(addrs) + "\n", capture_output=True, text=True, check=True)
    out = []
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        o = json.loads(line)
        fr = [(s["FunctionName"], s["FileName"], s["Line"]) for s in o["Symbol"]]
        if fr == [("", "", 0)]:
            fr = []
        out.append(fr)
    return out


def tk_frames(tk, obj, arch, addrs, cache_dir):
    cmd = [tk, "atos", "-i", "--json", "-o", obj]
    if arch:
        cmd += ["-arch", arch]
    if cache_dir:
        cmd += ["--cache-dir", cache_dir]
    p = subprocess.run(cmd, input="\n".join(addrs) + "\n", capture_output=True, text=True)
    if p.returncode:
        sys.exit("oracle: tracekit atos failed: %s" % p.stderr)
    out = []
    for line in p.stdout.splitlines():
        o = json.loads(line)
        out.append([(f["function"], f["file"] if f["file"] is not None else "??", f["line"]) for f in o["frames"]])
    return out


# llvm-symbolizer leaves Swift names mangled; tracekit prints them as atos does. The generator
# (tksymgen.py) writes four mangling shapes, whose simplified forms are written out here by hand.
SWIFT_SHAPES = [
    (re.compile(r"^\$s7tksynth\d+(\w+?)V3runyyF$"), "%s.run()"),
    (re.compile(r"^\$s7tksynth\d+(\w+?)C6updateyySiF$"), "%s.update(_:)"),
    (re.compile(r"^\$s7tksynth\d+(\w+?)V5countSivg$"), "%s.count.getter"),
    (re.compile(r"^\$s7tksynth\d+(\w+?)C5fetch2id10completionySi_ySbctF$"), "%s.fetch(id:completion:)"),
]


def swift_simplified(name):
    for rx, fmt in SWIFT_SHAPES:
        m = rx.match(name or "")
        if m:
            return fmt % m.group(1)
    return name


def norm_llvm(fr):
    # llvm prints "??" for unknown names; a lone unknown frame means "nothing"
    if len(fr) == 1 and fr[0][0] in ("??", "") and fr[0][1] in ("??", ""):
        return []
    return [(swift_simplified(f) or "??", fi or "??", l) for f, fi, l in fr]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tk", required=True)
    ap.add_argument("--obj", required=True)
    ap.add_argument("--arch")
    ap.add_argument("--addrs", required=True)
    ap.add_argument("--cache-dir")
    ap.add_argument("--show", type=int, default=5)
    a = ap.parse_args()
    addrs = [l.strip() for l in open(a.addrs) if l.strip()]
    L = [norm_llvm(f) for f in llvm_frames(a.obj, a.arch, addrs)]
    T = tk_frames(a.tk, a.obj, a.arch, addrs, a.cache_dir)
    if len(L) != len(T):
        sys.exit("oracle: %d llvm answers vs %d tracekit answers" % (len(L), len(T)))
    bad = [i for i in range(len(L)) if L[i] != T[i]]
    for i in bad[:a.show]:
        print("DIFF %s\n  llvm: %s\n  tk:   %s" % (addrs[i], L[i], T[i]))
    frames = sum(len(x) for x in L)
    print("%d/%d identical (%d frames, %s)" % (len(L) - len(bad), len(L), frames, os.path.basename(a.obj)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
