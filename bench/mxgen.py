#!/usr/bin/env python3
"""mxgen.py -- MetricKit payloads of realistic size for bench/bench_metrickit.sh.

  mxgen.py lines N SEED > payloads.jsonl     N diagnostic payloads, one per line (as servers store them):
                                             each a hang (4 call stacks, per thread, ~25 frames deep with
                                             branches) and a CPU exception (aggregated tree), ~30 system
                                             images + the app, diagnostic metadata as iOS 17 writes it.
  mxgen.py peer FILE                         the peer: Python's json module decodes every line and walks
                                             every tree (sum of sampleCount), printing the frame count.
  mxgen.py ingest-peer FILE DB               the ingest peer: json + sqlite3, one row per diagnostic with
                                             its keys and a five-frame signature, one transaction.
"""
import json
import random
import sys

IMAGES = ["UIKitCore", "CoreFoundation", "Foundation", "libsystem_kernel.dylib", "libsystem_pthread.dylib",
          "libdispatch.dylib", "QuartzCore", "CoreGraphics", "SwiftUI", "libswiftCore.dylib", "libobjc.A.dylib",
          "GraphicsServices", "dyld", "CFNetwork", "libsystem_c.dylib", "Security", "CoreData", "WebKit",
          "JavaScriptCore", "AVFAudio", "MapKit", "Combine", "libc++.1.dylib", "CoreText", "ImageIO",
          "AudioToolbox", "CoreMotion", "Metal", "libsqlite3.dylib", "Network", "Atlas"]


POOL = {}


def make(rng, n):
    if not POOL:
        r = random.Random(7)
        for im in IMAGES:
            POOL[im] = [r.randrange(0x1000, 0x800000, 4) for _ in range(400)]
    r = random.Random(11)  # one build of each image across the fleet
    uuids = {im: "%08X-%04X-%04X-%04X-%012X" % (r.getrandbits(32), r.getrandbits(16), r.getrandbits(16),
                                                r.getrandbits(16), r.getrandbits(48)) for im in IMAGES}
    loads = {im: 0x180000000 + i * 0x4000000 + rng.randrange(0, 0x1000) * 0x4000 for i, im in enumerate(IMAGES)}

    def frame(depth, samples):
        im = rng.choice(IMAGES)
        off = POOL[im][rng.randrange(0, len(POOL[im]))]  # code recurs: call sites from a pool
        f = {"binaryUUID": uuids[im], "offsetIntoBinaryTextSegment": off, "sampleCount": samples,
             "binaryName": im, "address": loads[im] + off}
        if depth > 0 and samples > 0:
            k = 1 if rng.random() < 0.9 else 2
            left = samples - rng.randrange(0, max(1, samples // 8))
            subs = []
            for j in range(k):
                s = left if j == k - 1 else rng.randrange(0, left + 1)
                left -= s
                if s:
                    subs.append(frame(depth - 1, s))
            if subs:
                f["subFrames"] = subs
        return f

    meta = {"appBuildVersion": "%d" % rng.randrange(100, 400), "appVersion": "5.%d" % rng.randrange(0, 3),
            "regionFormat": "US", "osVersion": "iPhone OS 17.%d (21D61)" % rng.randrange(0, 5),
            "deviceType": rng.choice(["iPhone15,2", "iPhone14,5", "iPhone13,2"]), "platformArchitecture": "arm64e",
            "bundleIdentifier": "com.example.atlas", "pid": rng.randrange(100, 60000)}
    hang = {"version": "1.0.0", "diagnosticMetaData": dict(meta, hangDuration="%d ms" % rng.randrange(250, 9000)),
            "callStackTree": {"callStackPerThread": True, "callStacks": [
                {"threadAttributed": i == 0, "callStackRootFrames": [frame(22, rng.randrange(50, 700))]}
                for i in range(3)]}}
    cpu = {"version": "1.0.0", "diagnosticMetaData": dict(meta, totalCPUTime="%d sec" % rng.randrange(60, 200),
                                                          totalSampledTime="%d sec" % rng.randrange(180, 300)),
           "callStackTree": {"callStackPerThread": False, "callStacks": [
               {"callStackRootFrames": [frame(18, rng.randrange(100, 1000)) for _ in range(2)]}]}}
    return {"timeStampBegin": "2024-03-%02d 00:00:00 +0000" % (1 + n % 28),
            "timeStampEnd": "2024-03-%02d 23:59:00 +0000" % (1 + n % 28),
            "hangDiagnostics": [hang], "cpuExceptionDiagnostics": [cpu]}


def main():
    if sys.argv[1] == "lines":
        n, rng = int(sys.argv[2]), random.Random(int(sys.argv[3]))
        out = sys.stdout
        for i in range(n):
            out.write(json.dumps(make(rng, i), separators=(",", ":")))
            out.write("\n")
    elif sys.argv[1] == "peer":
        frames = 0
        for line in open(sys.argv[2]):
            p = json.loads(line)
            for k in ("hangDiagnostics", "cpuExceptionDiagnostics"):
                for d in p.get(k, []):
                    for cs in d["callStackTree"]["callStacks"]:
                        stack = list(cs["callStackRootFrames"])
                        while stack:
                            f = stack.pop()
                            frames += 1
                            stack.extend(f.get("subFrames", ()))
        print(frames)
    elif sys.argv[1] == "ingest-peer":
        # the peer of `tracekit ingest`: Python's json and sqlite3, one row per diagnostic (kind,
        # version, device, OS, duration text, the attributed stack's first five frames as image+offset),
        # all in one transaction
        import sqlite3
        db = sqlite3.connect(sys.argv[3])
        db.execute("CREATE TABLE IF NOT EXISTS reports (kind TEXT, version TEXT, device TEXT, os TEXT,"
                   " duration TEXT, signature TEXT)")
        rows = []
        for line in open(sys.argv[2]):
            p = json.loads(line)
            for k in ("hangDiagnostics", "cpuExceptionDiagnostics"):
                for d in p.get(k, []):
                    m = d["diagnosticMetaData"]
                    cs = d["callStackTree"]["callStacks"]
                    st = next((c for c in cs if c.get("threadAttributed")), cs[0])
                    path, fr = [], st["callStackRootFrames"][0]
                    while fr:  # the heaviest path, root to leaf
                        path.append("%s+0x%x" % (fr["binaryName"], fr["offsetIntoBinaryTextSegment"]))
                        subs = fr.get("subFrames") or []
                        fr = max(subs, key=lambda s: s["sampleCount"]) if subs else None
                    rows.append((k, m.get("appVersion"), m.get("deviceType"), m.get("osVersion"),
                                 m.get("hangDuration") or m.get("totalCPUTime"), ";".join(path[::-1][:5])))
        db.executemany("INSERT INTO reports VALUES (?,?,?,?,?,?)", rows)
        db.commit()
        print(len(rows))


if __name__ == "__main__":
    main()
