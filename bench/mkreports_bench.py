#!/usr/bin/env python3
"""mkreports_bench.py -- the input of bench/bench_reports.sh.

  mkreports_bench.py MEDIUM_DIR OUT_DIR NDSYMS NREPORTS NFRAMES

From one tksymgen.py dylib (MEDIUM_DIR, arm64), writes NDSYMS copies of its dSYM with distinct
UUIDs (OUT/dsyms/modNNN.dSYM), NREPORTS .ips crash reports (OUT/reports/rNNNNN.ips) of 4 threads
whose NFRAMES frames in all point into the 5 images of one app (arm64 return addresses), and
OUT/llvm.txt: the same lookups as `DWARF_FILE 0xFILEADDR` lines (the PC of each thread's first
frame, return address − 1 otherwise) for llvm-symbolizer, in the reports' order.

How the stacks are drawn, and why. Crash reports of a fleet repeat their stacks: reports of one
app version cluster on a few crash signatures (the reason `top-diagnostics` counts signatures at
all), every thread of a process ends in the same root frames (in the one real .ips of
tests/fixtures/reports/, multithread-test_macos13_lldb.ips, the 3 threads' 30 frames are 25
distinct addresses, the two worker threads sharing their 5 outermost ones; the hang payload of
/work/shared/reference/apple-diagnostics.md has 857 frames over 32 images), and a process's idle
threads wait in the same few places in every report. An earlier version of this script drew every
frame uniformly from the whole __text of 5 random images of 50: 1 M lookups with almost no repeat,
which no fleet sends. So, with the same counts (NREPORTS reports, NFRAMES frames in 4 threads,
5 images a report, NDSYMS dSYMs all used):
  - NDSYMS / 5 apps of 5 images each (app a: dSYMs 5a … 5a+4); each report is from one app, drawn
    uniformly, the images loaded at a slide that differs per report (ASLR: the same file addresses,
    other runtime addresses in each report);
  - the crashed thread's stack is stack number k of its app, k drawn from a Zipf law (s = 1.1)
    over 1 … NREPORTS: a few signatures make most crashes, with a long tail of stacks seen once;
  - the 3 other threads' stacks are drawn the same way from 100 idle stacks of the app;
  - a stack ends in 3 root frames of its app (start, main, the run loop: the same in every stack of
    the app) and its other frames are random __text addresses fixed by (app, stack number).
The generator prints how many of the lookups are distinct. llvm-symbolizer and tracekit answer
exactly the same lookups, repeats included.
"""
import json
import os
import random
import struct
import sys

med, out, nd, nr, nf = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
src = os.path.join(med, "libtks-arm64.dylib.dSYM/Contents/Resources/DWARF/libtks-arm64.dylib")
data = bytearray(open(src, "rb").read())
ncmds = struct.unpack_from("<I", data, 16)[0]
pos, uuid_at = 32, None
for _ in range(ncmds):
    cmd, size = struct.unpack_from("<II", data, pos)
    if cmd == 0x1B:  # LC_UUID
        uuid_at = pos + 8
    pos += size
row = open(os.path.join(med, "layout.tsv")).read().splitlines()[1].split("\t")
vmaddr, text, tsize = int(row[3], 16), int(row[4], 16), int(row[5], 16)
rnd = random.Random(9)
mods = []
for i in range(nd):
    u = bytes([0xBE, 0x0C, i >> 8, i & 0xFF]) + bytes(data[uuid_at + 4:uuid_at + 16])
    data[uuid_at:uuid_at + 16] = u
    d = os.path.join(out, "dsyms", "mod%03d.dSYM" % i, "Contents", "Resources", "DWARF")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "mod%03d" % i)
    open(path, "wb").write(data)
    h = u.hex()
    mods.append({"uuid": "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:]), "dwarf": path,
                 "name": "mod%03d" % i})
os.makedirs(os.path.join(out, "reports"), exist_ok=True)

NIMG = 5
napps = max(1, nd // NIMG)
per_thread = nf // 4
NIDLE = 100
ROOTS = 3


def zipf_table(n, s=1.1):
    """cumulative weights of ranks 1 … n under a Zipf law"""
    acc, t = 0.0, []
    for k in range(1, n + 1):
        acc += 1.0 / k ** s
        t.append(acc)
    return t


def draw(table):
    x = rnd.random() * table[-1]
    lo, hi = 0, len(table) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if table[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def rand_off():
    return (text - vmaddr) + (rnd.randrange(0, tsize - 8) & ~3)


def app_images(a):
    return [(a * NIMG + k) % nd for k in range(NIMG)]


# the root frames of each app (image index in the report, offset of the call's return address)
roots = []
for a in range(napps):
    roots.append([(0, rand_off() + 4) for _ in range(ROOTS)])
stacks = {}  # (app, kind, number) -> [(image index, offset)], frame 0 the PC


def stack(a, kind, k):
    key = (a, kind, k)
    s = stacks.get(key)
    if s is None:
        g = random.Random("%d/%s/%d" % key)
        s = []
        for f in range(per_thread - ROOTS):
            off = (text - vmaddr) + (g.randrange(0, tsize - 8) & ~3) + (4 if f else 0)
            s.append((g.randrange(NIMG), off))
        s += roots[a][:per_thread - len(s)]
        stacks[key] = s
    return s


crash_t, idle_t = zipf_table(nr), zipf_table(NIDLE)
llvm = open(os.path.join(out, "llvm.txt"), "w")
seen = set()
nlook = 0
for r in range(nr):
    a = rnd.randrange(napps)
    im = app_images(a)
    used = []
    for k, m in enumerate(im):
        slide = rnd.randrange(0x4000) * 0x4000
        used.append({"uuid": mods[m]["uuid"], "base": 0x100000000 + 0x10000000 * k + slide,
                     "size": text + tsize + 0x4000, "arch": "arm64", "name": mods[m]["name"],
                     "path": "/var/App.app/" + mods[m]["name"]})
    threads = []
    for t in range(4):
        st = stack(a, "crash", draw(crash_t)) if t == 0 else stack(a, "idle", draw(idle_t))
        frames = []
        for f, (ui, off) in enumerate(st):
            frames.append({"imageIndex": ui, "imageOffset": off})
            faddr = off + vmaddr - (1 if f else 0)
            llvm.write("%s 0x%x\n" % (mods[im[ui]]["dwarf"], faddr))
            seen.add((im[ui], faddr))
            nlook += 1
        th = {"id": 100 + t, "frames": frames}
        if t == 0:
            th["triggered"] = True
            th["queue"] = "com.apple.main-thread"
        threads.append(th)
    hdr = {"app_name": "App", "app_version": "1.0", "build_version": "1", "bug_type": "309",
           "os_version": "iPhone OS 17.2 (21C62)", "incident_id": "%08X-0000-4000-8000-000000000000" % r}
    body = {"procName": "App", "pid": 100, "cpuType": "ARM-64", "captureTime": "2026-11-20 10:00:00.0000 +0000",
            "exception": {"type": "EXC_BAD_ACCESS", "signal": "SIGSEGV", "codes": "0x1, 0x0"},
            "threads": threads, "usedImages": used}
    with open(os.path.join(out, "reports", "r%05d.ips" % r), "w") as o:
        o.write(json.dumps(hdr, separators=(",", ":")) + "\n" + json.dumps(body, indent=1) + "\n")
llvm.close()
print("mkreports_bench: %d reports of %d apps, %d lookups, %d distinct (%d stacks)"
      % (nr, napps, nlook, len(seen), len(stacks)), file=sys.stderr)
