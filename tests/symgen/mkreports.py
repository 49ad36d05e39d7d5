#!/usr/bin/env python3
"""mkreports.py -- Apple reports whose frames point into tksymgen.py images, with their truth.

  mkreports.py --image DIR/layout.tsv:FILE:LOADADDR [--image …] --out DIR [--count 4] [--threads 3]
               [--frames 20] [--seed 1] [--formats ips,crash,spin] [--system N]

Writes DIR/rNNN.ips (JSON crash report, header line + body), DIR/rNNN.crash (legacy text, frames
unsymbolicated as `0xADDR 0xBASE + OFF`) and DIR/rNNN.spin (spindump hang, a sampled tree), each
with the given images loaded at LOADADDR plus N system images that have no dSYM, and DIR/truth.tsv:
report, thread, frame, image file, arch, runtime address, lookup file address (the PC for a thread's
first frame / a tree's leaf, the return address − 1 otherwise).
The layouts follow docs/apple-reports.md; nothing here comes from tracekit's code.
"""
import argparse
import json
import os
import random


def read_layout(spec):
    path, fname, load = spec.rsplit(":", 2)
    rows = [l.rstrip("\n").split("\t") for l in open(path)][1:]
    for r in rows:
        if r[0] == fname:
            return {"file": r[0], "arch": r[1], "uuid": r[2], "vmaddr": int(r[3], 16), "text": int(r[4], 16),
                    "size": int(r[5], 16), "load": int(load, 16), "dir": os.path.dirname(path)}
    raise SystemExit("mkreports: %s not in %s" % (fname, path))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", action="append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=4)
    ap.add_argument("--threads", type=int, default=3)
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--formats", default="ips,crash,spin")
    ap.add_argument("--system", type=int, default=1)
    ap.add_argument("--branchy", action="store_true",
                    help="spindump: one hung main thread whose 200 samples split over a random tree "
                         "(for pictures; no truth rows)")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    imgs = [read_layout(s) for s in a.image]
    arch = imgs[0]["arch"]
    arm = arch.startswith("arm64")
    os.makedirs(a.out, exist_ok=True)
    truth = open(os.path.join(a.out, "truth.tsv"), "w")
    formats = a.formats.split(",")
    for r in range(a.count):
        used = []  # name, base, size, uuid, path, has_dsym, image index in imgs
        for k, im in enumerate(imgs):
            size = (im["text"] - im["vmaddr"]) + im["size"] + 0x4000
            used.append({"name": im["file"], "base": im["load"], "size": size, "uuid": im["uuid"],
                         "path": "/private/var/containers/Bundle/Application/X/App.app/" + im["file"], "im": im})
        for s in range(a.system):
            base = 0x180000000 + 0x1000000 * (s + 1) if arm else 0x7ff800000000 + 0x1000000 * (s + 1)
            u = "%08X-%04X-%04X-%04X-%012X" % (rnd.getrandbits(32), rnd.getrandbits(16), rnd.getrandbits(16),
                                               rnd.getrandbits(16), rnd.getrandbits(48))
            used.append({"name": "libsystem_%d.dylib" % s, "base": base, "size": 0x40000, "uuid": u,
                         "path": "/usr/lib/system/libsystem_%d.dylib" % s, "im": None})
        threads = []
        for t in range(a.threads):
            frames = []
            for f in range(a.frames):
                ui = rnd.randrange(len(used)) if rnd.random() < 0.2 else rnd.randrange(len(imgs))
                u = used[ui]
                if u["im"]:
                    im = u["im"]
                    off_text = rnd.randrange(0, im["size"] - 8)
                    if arm:
                        off_text &= ~3
                        if f > 0:
                            off_text += 4  # a return address: the instruction after a call
                    faddr = im["text"] + off_text
                    addr = faddr - im["vmaddr"] + im["load"]
                else:
                    addr = u["base"] + (rnd.randrange(0x100, 0x30000) & ~3)
                frames.append((ui, addr))
            threads.append(frames)
        name = "r%03d" % r
        crashed = rnd.randrange(a.threads)
        for t, frames in enumerate(threads):
            for f, (ui, addr) in enumerate(frames):
                u = used[ui]
                if not u["im"]:
                    continue
                im = u["im"]
                look = addr if f == 0 else addr - 1
                faddr = look - im["load"] + im["vmaddr"]
                dwarf = os.path.join(im["dir"], im["file"] + ".dSYM", "Contents", "Resources", "DWARF", im["file"])
                truth.write("%s\t%d\t%d\t%s\t%s\t0x%x\t0x%x\n" % (name, t, f, dwarf, im["arch"], addr, faddr))
        incident = "%08X-AAAA-4BBB-8CCC-%012X" % (r, rnd.getrandbits(48))
        osv = "iPhone OS 17.2 (21C62)" if arm else "macOS 14.2 (23C64)"
        if "ips" in formats:
            hdr = {"app_name": "TKApp", "timestamp": "2026-11-2%d 10:00:0%d.00 +0000" % (r % 9, r % 9),
                   "app_version": "2.1", "slice_uuid": imgs[0]["uuid"].lower(), "build_version": "77",
                   "platform": 2 if arm else 1, "bundleID": "dev.tracekit.app", "bug_type": "309",
                   "os_version": osv, "incident_id": incident, "name": "TKApp"}
            body = {"incident": incident, "captureTime": "2026-11-2%d 10:00:00.1234 +0000" % (r % 9),
                    "procName": "TKApp", "procPath": used[0]["path"], "pid": 400 + r, "parentProc": "launchd",
                    "parentPid": 1, "cpuType": "ARM-64" if arm else "X86-64", "modelCode": "iPhone15,2" if arm else "Mac14,2",
                    "osVersion": {"train": osv.split(" (")[0], "build": osv.split("(")[1][:-1], "releaseType": "User"},
                    "bundleInfo": {"CFBundleShortVersionString": "2.1", "CFBundleVersion": "77",
                                   "CFBundleIdentifier": "dev.tracekit.app"},
                    "exception": {"type": "EXC_BAD_ACCESS", "signal": "SIGSEGV",
                                  "codes": "0x0000000000000001, 0x0000000000000010"},
                    "faultingThread": crashed, "threads": [],
                    "usedImages": [{"uuid": u["uuid"].lower(), "base": u["base"], "size": u["size"], "arch": arch,
                                    "name": u["name"], "path": u["path"], "source": "P"} for u in used]}
            for t, frames in enumerate(threads):
                th = {"id": 1000 + t, "frames": [{"imageIndex": ui, "imageOffset": addr - used[ui]["base"]}
                                                  for ui, addr in frames]}
                if t == 0:
                    th["queue"] = "com.apple.main-thread"
                if t == crashed:
                    th["triggered"] = True
                body["threads"].append(th)
            with open(os.path.join(a.out, name + ".ips"), "w") as o:
                o.write(json.dumps(hdr, separators=(",", ":")) + "\n" + json.dumps(body, indent=2) + "\n")
        if "crash" in formats:
            with open(os.path.join(a.out, name + ".crash"), "w") as o:
                o.write("Incident Identifier: %s\nHardware Model:      iPhone15,2\nProcess:             TKApp [%d]\n"
                        "Path:                %s\nIdentifier:          dev.tracekit.app\nVersion:             2.1 (77)\n"
                        "Code Type:           %s (Native)\nParent Process:      launchd [1]\n\n"
                        "Date/Time:           2026-11-20 10:00:00.123 +0000\nOS Version:          %s\n"
                        "Report Version:      104\n\nException Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
                        "Exception Codes: 0x0000000000000001, 0x0000000000000010\nTriggered by Thread:  %d\n\n"
                        % (incident, 400 + r, used[0]["path"], "ARM-64" if arm else "X86-64", osv, crashed))
                for t, frames in enumerate(threads):
                    if t == 0:
                        o.write("Thread 0 name:  Dispatch queue: com.apple.main-thread\n")
                    o.write("Thread %d%s:\n" % (t, " Crashed" if t == crashed else ""))
                    for f, (ui, addr) in enumerate(frames):
                        u = used[ui]
                        o.write("%-4d%-30s\t0x%016x 0x%x + %d\n" % (f, u["name"], addr, u["base"], addr - u["base"]))
                    o.write("\n")
                o.write("Binary Images:\n")
                for u in used:
                    o.write("%#18x - %#18x %s %s  <%s> %s\n" % (u["base"], u["base"] + u["size"] - 1, u["name"], arch,
                                                              u["uuid"].replace("-", "").lower(), u["path"]))
        if "spin" in formats and a.branchy:
            def addr_in(rng, leaf):
                im = imgs[0]
                off = im["text"] + (rng.randrange(0, im["size"] - 8) & ~3) + (0 if leaf else 4)
                return off - im["vmaddr"] + im["load"]

            def tree(o, n, depth, rng):
                leaf = depth >= 9 or n < 4 or rng.random() < 0.12
                addr = addr_in(rng, leaf)
                o.write("  %s%d  ??? (%s + %d) [0x%x]\n" % ("  " * depth, n, used[0]["name"], addr - used[0]["base"], addr))
                if leaf:
                    return
                parts, left = [], n
                while left > 0 and len(parts) < 3:
                    k = left if len(parts) == 2 or rng.random() < 0.4 else rng.randrange(1, left + 1)
                    parts.append(k)
                    left -= k
                for k in parts:
                    tree(o, k, depth + 1, rng)

            with open(os.path.join(a.out, name + ".spin"), "w") as o:
                o.write("Date/Time:        2026-11-20 10:00:00.000 +0000\nOS Version:       %s\n"
                        "Architecture:     %s\nReport Version:   35.1\n\nCommand:          TKApp\nPID:              %d\n\n"
                        "Event:            hang\nDuration:         2.00s\nSteps:            200 (10ms sampling interval)\n\n"
                        "Process:          TKApp [%d]\n" % (osv, arch, 400 + r, 400 + r))
                o.write('  Thread 0x103    DispatchQueue "com.apple.main-thread"(1)    200 samples (1-200)    '
                        'priority 47 (base 47)\n')
                tree(o, 200, 0, rnd)
                o.write("\n  Binary Images:\n")
                for u in used:
                    o.write("  %#18x - %#18x  %s  <%s>  %s\n" % (u["base"], u["base"] + u["size"] - 1, u["name"],
                                                                u["uuid"], u["path"]))
        elif "spin" in formats:
            # one thread per stack: a chain whose every frame has the same count (a leaf at the end)
            with open(os.path.join(a.out, name + ".spin"), "w") as o:
                o.write("Date/Time:        2026-11-20 10:00:00.000 +0000\nEnd time:         2026-11-20 10:00:02.000 +0000\n"
                        "OS Version:       %s\nArchitecture:     %s\nReport Version:   35.1\n"
                        "Incident Identifier: %s\n\nCommand:          TKApp\nPID:              %d\n\n"
                        "Event:            hang\nDuration:         2.00s\nSteps:            20 (100ms sampling interval)\n\n"
                        % (osv, arch, incident, 400 + r))
                o.write("Process:          TKApp [%d]\nPath:             %s\nArchitecture:     %s\n"
                        % (400 + r, used[0]["path"], arch))
                for t, frames in enumerate(threads):
                    n = 5 + t
                    q = '    DispatchQueue "com.apple.main-thread"(1)' if t == 0 else ""
                    o.write("  Thread 0x%x%s    %d samples (1-%d)    priority 31 (base 31)\n" % (0x100 + t, q, n, n))
                    for depth, (ui, addr) in enumerate(reversed(frames)):
                        u = used[ui]
                        o.write("  %s%d  ??? (%s + %d) [0x%x]\n" % ("  " * depth, n, u["name"], addr - u["base"], addr))
                o.write("\n  Binary Images:\n")
                for u in used:
                    o.write("  %#18x - %#18x  %s  <%s>  %s\n" % (u["base"], u["base"] + u["size"] - 1, u["name"],
                                                                u["uuid"], u["path"]))
    truth.close()


if __name__ == "__main__":
    main()
