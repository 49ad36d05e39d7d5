#!/usr/bin/env python3
"""mkreports_bench.py -- the input of bench/bench_reports.sh.

  mkreports_bench.py MEDIUM_DIR OUT_DIR NDSYMS NREPORTS NFRAMES

From one tksymgen.py dylib (MEDIUM_DIR, arm64), writes NDSYMS copies of its dSYM with distinct
UUIDs (OUT/dsyms/modNNN.dSYM), NREPORTS .ips crash reports (OUT/reports/rNNNNN.ips) of 4 threads
whose NFRAMES frames in all point into 5 of those images each (random __text addresses, arm64
return addresses), and OUT/llvm.txt: the same lookups as `DWARF_FILE 0xFILEADDR` lines (the PC of
each thread's first frame, return address − 1 otherwise) for llvm-symbolizer.
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
llvm = open(os.path.join(out, "llvm.txt"), "w")
per_thread = nf // 4
for r in range(nr):
    pick = rnd.sample(range(nd), 5)
    used = []
    for k, m in enumerate(pick):
        used.append({"uuid": mods[m]["uuid"], "base": 0x100000000 + 0x1000000 * k, "size": text + tsize + 0x4000,
                     "arch": "arm64", "name": mods[m]["name"], "path": "/var/App.app/" + mods[m]["name"], "m": m})
    threads = []
    for t in range(4):
        frames = []
        for f in range(per_thread):
            ui = rnd.randrange(5)
            off = (text - vmaddr) + (rnd.randrange(0, tsize - 8) & ~3) + (4 if f else 0)
            frames.append({"imageIndex": ui, "imageOffset": off})
            faddr = off + vmaddr - (1 if f else 0)
            llvm.write("%s 0x%x\n" % (mods[used[ui]["m"]]["dwarf"], faddr))
        th = {"id": 100 + t, "frames": frames}
        if t == 0:
            th["triggered"] = True
            th["queue"] = "com.apple.main-thread"
        threads.append(th)
    hdr = {"app_name": "App", "app_version": "1.0", "build_version": "1", "bug_type": "309",
           "os_version": "iPhone OS 17.2 (21C62)", "incident_id": "%08X-0000-4000-8000-000000000000" % r}
    body = {"procName": "App", "pid": 100, "cpuType": "ARM-64", "captureTime": "2026-11-20 10:00:00.0000 +0000",
            "exception": {"type": "EXC_BAD_ACCESS", "signal": "SIGSEGV", "codes": "0x1, 0x0"},
            "threads": threads,
            "usedImages": [{k: v for k, v in u.items() if k != "m"} for u in used]}
    with open(os.path.join(out, "reports", "r%05d.ips" % r), "w") as o:
        o.write(json.dumps(hdr, separators=(",", ":")) + "\n" + json.dumps(body, indent=1) + "\n")
llvm.close()
