#!/usr/bin/env python3
"""Write Records files for a simulated fleet of app sessions, as libtracekit-monitor and MTHawkeye
write them (docs/records-format.md): each session has 0-6 `cpu-highload` records (a period of
sustained load: its duration in seconds and average CPU % of one core) and a few `hang` records.
Durations are log-normal (most high-load periods end soon after the 60 s threshold, a few last many
minutes) and one session in 50 is a "burning phone" with long, heavy periods.

usage: fleet.py OUTDIR [SESSIONS] [SEED]    (writes OUTDIR/session-NNNN.records)
"""
import os
import random
import sys

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
r = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
os.makedirs(out, exist_ok=True)
CF = 978307200  # CFAbsoluteTime epoch in Unix seconds
for s in range(n):
    burning = r.random() < 0.02
    t = 1764000000 + s * 3600 + r.uniform(0, 600)
    lines = ["collection,key,value"]
    for _ in range(r.randint(0, 6) if not burning else r.randint(5, 9)):
        t += r.uniform(30, 600)
        dur = 60 + (r.lognormvariate(3.0, 1.1) if not burning else r.lognormvariate(6.0, 0.5))
        avg = min(380.0, 80 + r.lognormvariate(2.8, 0.6) + (150 if burning else 0))
        key = "%.2f" % (t - CF)
        lines.append('cpu-highload,%s,{"start":"%s","lasting":"%.2f","average":"%.2f"}' % (key, key, dur, avg))
        t += dur
    for _ in range(r.choice([0, 0, 0, 1, 1, 2])):
        t += r.uniform(10, 300)
        ms = 250 + r.lognormvariate(5.5, 1.0)
        lines.append('hang,%.3f,{"start":%.3f,"duration_ms":%.0f,"threshold_ms":250,"tid":1,"thread":"main","samples":0}'
                     % (t, t, ms))
    with open(os.path.join(out, "session-%04d.records" % s), "w") as f:
        f.write("\n".join(lines) + "\n")
