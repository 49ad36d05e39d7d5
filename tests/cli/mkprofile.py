#!/usr/bin/env python3
"""Write a small `xctrace export` time-profile (Xcode 14.3+ backtrace/frame/binary form) whose
function weights are known exactly, for the stats and diff tests and the README examples.

usage: mkprofile.py OUT.xml [--seed S] [--rows N] [--noise PCT] [--inject NAME:ROWS[:PARENT]]…

Every row weighs 1 ms (1000000 ns). The stack set comes from --shape-seed (default 1), so runs
with other --seed values share functions and paths; --seed picks which stacks the rows use (and
--noise PCT varies the row count by up to ±PCT %). --inject NAME:ROWS[:PARENT] adds ROWS rows whose
leaf is NAME, called from the path of the first stack through PARENT (default: the first stack).
The truth (function → self rows) goes to OUT.truth, one "NAME SELF_ROWS" line per function."""
import random
import sys
from xml.sax.saxutils import quoteattr

args = sys.argv[1:]
out = args.pop(0)
seed, rows, noise, shape_seed, injects = 1, 2000, 0.0, 1, []
while args:
    a = args.pop(0)
    if a == "--seed":
        seed = int(args.pop(0))
    elif a == "--rows":
        rows = int(args.pop(0))
    elif a == "--noise":
        noise = float(args.pop(0))
    elif a == "--shape-seed":
        shape_seed = int(args.pop(0))
    elif a == "--inject":
        parts = args.pop(0).split(":")
        injects.append((parts[0], int(parts[1]), parts[2] if len(parts) > 2 else None))
    else:
        sys.exit("mkprofile: unknown option " + a)

shape = random.Random(shape_seed)
funcs = ["main", "run_loop", "dispatch", "layout", "render", "decode_json", "parse_token", "hash_table_insert",
         "malloc", "free", "memcpy", "objc_msgSend", "draw_text", "shape_glyphs", "compress_block", "sqlite_step",
         "btree_search", "image_resize", "blend_pixels", "network_read"]
system = {"malloc", "free", "memcpy", "objc_msgSend"}
stacks = []
for i in range(60):
    depth = shape.randint(2, 7)
    s = ["main", "run_loop"] + [shape.choice(funcs[2:]) for _ in range(depth)]
    stacks.append(s)
weights_of_stack = [shape.randint(1, 20) for _ in stacks]

rng = random.Random(seed)
n = rows
if noise:
    n = int(round(rows * (1 + rng.uniform(-noise, noise) / 100)))
chosen = rng.choices(range(len(stacks)), weights=weights_of_stack, k=n)
rowstacks = [stacks[c] for c in chosen]
for name, k, parent in injects:
    base = stacks[0]
    if parent:
        base = next((s for s in stacks if parent in s), stacks[0])
        base = base[: base.index(parent) + 1]
    rowstacks += [base + [name]] * k

ids = [0]


def nid():
    ids[0] += 1
    return ids[0]


frame_ids, bin_ids, bt_ids = {}, {}, {}
addr_of = {f: 0x100004000 + 0x40 * i for i, f in enumerate(funcs)}
truth = {}
with open(out, "w") as f:
    f.write('<?xml version="1.0"?>\n<trace-query-result>\n')
    f.write("<node xpath='//trace-toc[1]/run[1]/data[1]/table[11]'><schema name=\"time-profile\">")
    for mn, nm, et in [("time", "Sample Time", "sample-time"), ("thread", "Thread", "thread"),
                       ("process", "Process", "process"), ("core", "Core", "core"),
                       ("thread-state", "State", "thread-state"), ("weight", "Weight", "weight"),
                       ("stack", "Backtrace", "backtrace")]:
        f.write(f"<col><mnemonic>{mn}</mnemonic><name>{nm}</name><engineering-type>{et}</engineering-type></col>")
    f.write("</schema>\n")
    thread_id = weight_id = core_id = state_id = proc_id = None
    for r, st in enumerate(rowstacks):
        truth[st[-1]] = truth.get(st[-1], 0) + 1
        t = 1000000 * (r + 1)
        row = [f'<row><sample-time id="{nid()}" fmt="00:00.000">{t}</sample-time>']
        if thread_id is None:
            thread_id, tid_id, proc_id, pid_id, ds_id = nid(), nid(), nid(), nid(), nid()
            row.append(f'<thread id="{thread_id}" fmt="Main Thread 0x1 (app, pid: 42)"><tid id="{tid_id}" fmt="0x1">1</tid>'
                       f'<process id="{proc_id}" fmt="app (42)"><pid id="{pid_id}" fmt="42">42</pid>'
                       f'<device-session id="{ds_id}" fmt="x">x</device-session></process></thread>')
            row.append(f'<process ref="{proc_id}"/>')
            core_id, state_id, weight_id = nid(), nid(), nid()
            row.append(f'<core id="{core_id}" fmt="CPU 0">0</core><thread-state id="{state_id}" fmt="Running">Running</thread-state>'
                       f'<weight id="{weight_id}" fmt="1.00 ms">1000000</weight>')
        else:
            row.append(f'<thread ref="{thread_id}"/><process ref="{proc_id}"/><core ref="{core_id}"/>'
                       f'<thread-state ref="{state_id}"/><weight ref="{weight_id}"/>')
        key = tuple(st)
        if key in bt_ids:
            row.append(f'<backtrace ref="{bt_ids[key]}"/>')
        else:
            bid = nid()
            bt_ids[key] = bid
            parts = [f'<backtrace id="{bid}">']
            for depth, fn in enumerate(reversed(st)):  # leaf first
                if fn in frame_ids:
                    parts.append(f'<frame ref="{frame_ids[fn]}"/>')
                    continue
                fid = nid()
                frame_ids[fn] = fid
                binname = "libsystem_malloc.dylib" if fn in system else "App"
                addr = addr_of.get(fn, 0x100100000 + 0x40 * len(frame_ids))
                parts.append(f'<frame id="{fid}" name={quoteattr(fn)} addr="0x{addr:x}">')
                if binname in bin_ids:
                    parts.append(f'<binary ref="{bin_ids[binname]}"/>')
                else:
                    bn = nid()
                    bin_ids[binname] = bn
                    path = "/usr/lib/system/" + binname if fn in system else "/private/var/App.app/App"
                    parts.append(f'<binary id="{bn}" name="{binname}" UUID="00000000-0000-0000-0000-00000000000{len(bin_ids)}" '
                                 f'arch="arm64" load-addr="0x100000000" path="{path}"/>')
                parts.append("</frame>")
            parts.append("</backtrace>")
            row.append("".join(parts))
        row.append("</row>\n")
        f.write("".join(row))
    f.write("</node></trace-query-result>\n")
with open(out + ".truth", "w") as f:
    for k in sorted(truth):
        f.write(f"{k} {truth[k]}\n")
