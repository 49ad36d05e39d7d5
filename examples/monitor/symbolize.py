#!/usr/bin/env python3
"""Symbolize a monitor session with nm, independently of `tracekit records` (used by the tests).

  symbolize.py SESSION_DIR tree COLLECTION       print the last tree of COLLECTION
                                                 (cpu-highload-stackframe / hang-stackframe)
  symbolize.py SESSION_DIR share COLLECTION FUNC  fraction of samples whose path contains FUNC,
                                                 then the fraction whose leaf is FUNC, then the
                                                 number of samples
  symbolize.py SESSION_DIR keys COLLECTION        the distinct keys, one a line
  symbolize.py SESSION_DIR record COLLECTION FIELD  a field of the last value of COLLECTION
  symbolize.py SESSION_DIR hang-top               the innermost symbolized frame of the blocked
                                                 thread at detection that lies in the main program

Frames are mapped through images.json (base + PT_LOAD ranges) and `nm --defined-only` of each
image file; frames other than the leaf are already "return address - 1" in the Records contract.
"""
import bisect, json, os, subprocess, sys

def load(session):
    lines = {}
    order = []
    with open(os.path.join(session, "records"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            line = line.rstrip("\n")
            if i == 0 or not line:
                continue
            coll, key, value = line.split(",", 2)
            if (coll, key) not in lines:
                order.append((coll, key))
            lines[(coll, key)] = value  # the last line wins
    with open(os.path.join(session, "images.json"), encoding="utf-8") as f:
        images = json.load(f)
    return lines, order, images

_syms = {}
def symbols(path):
    if path not in _syms:
        out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True).stdout
        if not out.strip():
            out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True).stdout
        s = []
        for l in out.splitlines():
            p = l.split()
            if len(p) >= 3 and p[1] in "tTwW":
                s.append((int(p[0], 16), p[2]))
        s.sort()
        _syms[path] = ([a for a, _ in s], [n for _, n in s])
    return _syms[path]

def image_of(images, addr):
    for im in images["images"]:
        base = int(im["base"], 16)
        for ld in im["loads"]:
            lo = base + int(ld["vaddr"], 16)
            if lo <= addr < lo + int(ld["memsz"], 16):
                return im, addr - base
    return None, None

def symbolize(images, addr):
    im, off = image_of(images, addr)
    if not im:
        return "?"
    if not os.path.exists(im["path"]):
        return os.path.basename(im["path"]) + "+" + hex(off)
    addrs, names = symbols(im["path"])
    i = bisect.bisect_right(addrs, off) - 1
    return names[i] if i >= 0 else os.path.basename(im["path"]) + "+" + hex(off)

def last(lines, order, coll):
    keys = [k for c, k in order if c == coll]
    if not keys:
        sys.exit(f"symbolize.py: no {coll} line")
    return keys[-1], lines[(coll, keys[-1])]

def main():
    session, cmd = sys.argv[1], sys.argv[2]
    lines, order, images = load(session)
    if cmd == "keys":
        for c, k in order:
            if c == sys.argv[3]:
                print(k)
    elif cmd == "record":
        _, v = last(lines, order, sys.argv[3])
        print(json.loads(v)[sys.argv[4]])
    elif cmd == "tree":
        _, v = last(lines, order, sys.argv[3])
        def walk(nodes, depth):
            for n in sorted(nodes, key=lambda n: -n["count"]):
                print("  " * depth + f"{n['count']:6d} {symbolize(images, int(n['frame'], 16))} {n['frame']}")
                walk(n.get("children", []), depth + 1)
        walk(json.loads(v), 0)
    elif cmd == "share":
        _, v = last(lines, order, sys.argv[3])
        func = sys.argv[4]
        roots = json.loads(v)
        total = sum(n["count"] for n in roots)
        inclusive = leaf = 0
        def walk(n, inside):
            nonlocal inclusive, leaf
            is_f = symbolize(images, int(n["frame"], 16)) == func
            if is_f and not inside:
                inclusive += n["count"]
            kids = n.get("children", [])
            self_count = n["count"] - sum(k["count"] for k in kids)
            if is_f:
                leaf += self_count
            for k in kids:
                walk(k, inside or is_f)
        for r in roots:
            walk(r, False)
        print(f"{inclusive / total:.3f}" if total else "0")
        print(f"{leaf / total:.3f}" if total else "0")
        print(total)
    elif cmd == "hang-top":
        _, v = last(lines, order, "hang")
        rec = json.loads(v)
        main_path = images["images"][0]["path"]
        for t in rec["threads"]:
            if t["tid"] != rec["tid"]:
                continue
            for fr in t["frames"]:
                im, _ = image_of(images, int(fr, 16))
                if im and im["path"] == main_path:
                    print(symbolize(images, int(fr, 16)))
                    return
        print("?")
    else:
        sys.exit("symbolize.py: unknown command " + cmd)

main()
