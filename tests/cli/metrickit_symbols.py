#!/usr/bin/env python3
"""Payloads pointing into a generated dylib, and what their frames must become (tests/cli/metrickit_symbols.sh).

  metrickit_symbols.py make LAYOUT DSYM_DWARF OUT_PAYLOAD OUT_EXPECTED [--seed N] [--frames N]

Writes an MXDiagnosticPayload with two diagnostics over the same random tree of frames inside the
dylib's __text (loaded at 0x104a8c000): a hang in the usual form (offsetIntoBinaryTextSegment = the
offset into the image) and a crash in the iOS 14 form (the field holds the load address), plus a frame
of a system image no dSYM here has. The expected folded stacks come from llvm-symbolizer --inlining
on the image offsets tracekit must look up: a leaf (the sampled PC) as given, a caller (a return
address) at offset - 1, each inline chain written outermost first as tracekit expands it.
"""
import json
import random
import subprocess
import sys

LOAD = 0x104A8C000


def main():
    _, cmd, layout, dwarf, out_payload, out_expected = sys.argv[:6]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    nframes = int(sys.argv[sys.argv.index("--frames") + 1]) if "--frames" in sys.argv else 60
    row = open(layout).read().splitlines()[1].split("\t")
    uuid, vmaddr, text_lo, text_size = row[2], int(row[3], 16), int(row[4], 16), int(row[5], 16)
    rng = random.Random(seed)
    # a random tree: each node an offset into __text (4-aligned, as arm64 code is)
    nodes = []  # (parent index or -1, offset)
    for i in range(nframes):
        parent = -1 if i < 2 else rng.randrange(0, i)
        off = rng.randrange(text_lo, text_lo + text_size, 4) - vmaddr
        nodes.append((parent, off))
    children = {i: [] for i in range(nframes)}
    for i, (p, _) in enumerate(nodes):
        if p >= 0:
            children[p].append(i)
    selfc = {i: rng.randrange(0, 4) if children[i] else rng.randrange(1, 5) for i in range(nframes)}

    def count(i):
        return selfc[i] + sum(count(c) for c in children[i])

    def frame(i, ios14):
        off = nodes[i][1]
        f = {"binaryUUID": uuid, "binaryName": "libtks-arm64.dylib",
             "offsetIntoBinaryTextSegment": LOAD if ios14 else off, "address": LOAD + off,
             "sampleCount": count(i)}
        subs = [frame(c, ios14) for c in children[i]]
        if i == 1:  # a system frame no dSYM here has, above this root's children
            f = {"binaryUUID": "DE46DD52-4994-30D8-B4B4-E352A1A19354", "binaryName": "UIKitCore",
                 "offsetIntoBinaryTextSegment": 0x1234, "address": 0x180001234, "sampleCount": count(i),
                 "subFrames": [dict(frame_plain(i, ios14), subFrames=subs)]}
            return f
        if subs:
            f["subFrames"] = subs
        return f

    def frame_plain(i, ios14):
        off = nodes[i][1]
        return {"binaryUUID": uuid, "binaryName": "libtks-arm64.dylib",
                "offsetIntoBinaryTextSegment": LOAD if ios14 else off, "address": LOAD + off,
                "sampleCount": count(i)}

    roots = [0, 1]
    tree = lambda ios14: {"callStackPerThread": True, "callStacks": [
        {"threadAttributed": True, "callStackRootFrames": [frame(r, ios14) for r in roots]}]}
    payload = {"timeStampBegin": "2024-01-01 00:00:00 +0000", "timeStampEnd": "2024-01-02 00:00:00 +0000",
               "hangDiagnostics": [{"diagnosticMetaData": {"hangDuration": "1.5 sec", "platformArchitecture": "arm64"},
                                    "callStackTree": tree(False)}],
               "crashDiagnostics": [{"diagnosticMetaData": {"signal": 11, "platformArchitecture": "arm64"},
                                     "callStackTree": tree(True)}]}
    json.dump(payload, open(out_payload, "w"), indent=1)

    # llvm-symbolizer on the file addresses tracekit must look up
    look = {}
    for i, (p, off) in enumerate(nodes):
        leaf = not children[i]
        look[i] = vmaddr + (off if leaf else off - 1)
    addrs = sorted(set(look.values()))
    r = subprocess.run(["llvm-symbolizer", "--inlining", "--output-style=JSON", "--obj=" + dwarf],
                       input="".join("0x%x\n" % a for a in addrs), capture_output=True, text=True, check=True)
    # Swift symbols: llvm-symbolizer leaves them mangled; atos (and tracekit) print the simplified
    # form. That naming is tracekit's demangler, checked on its own against Swift's test vectors
    # (tests/cli/swift_names.sh), so it is applied here to llvm's symbol names.
    import os
    tk = os.environ.get("TK")
    chains = {}
    lines_out = [l for l in r.stdout.splitlines() if l.strip()]
    swift = sorted({s["FunctionName"] for l in lines_out for s in json.loads(l)["Symbol"]
                    if s["FunctionName"].startswith("$s")})
    shown = {}
    if swift:
        d = subprocess.run([tk, "demangle", "--simplified"] + swift, capture_output=True, text=True, check=True)
        shown = dict(zip(swift, d.stdout.splitlines()))
    for a, line in zip(addrs, [l for l in r.stdout.splitlines() if l.strip()]):
        syms = json.loads(line)["Symbol"]
        names = [shown.get(s["FunctionName"], s["FunctionName"]) for s in syms if s["FunctionName"]]
        chains[a] = list(reversed(names))  # outermost first
    lines = {}

    def walk(i, path, thread):
        chain = chains[look[i]] or ["libtks-arm64.dylib + 0x%x" % nodes[i][1]]
        here = path + chain
        if i == 1:
            here = path + ["UIKitCore + 0x1234"] + chain
        if selfc[i]:
            key = thread + ";" + ";".join(here)
            lines[key] = lines.get(key, 0) + selfc[i]
        for c in children[i]:
            walk(c, here, thread)

    for thread in ("hang 1 thread 0 (attributed) tid=1", "crash 2 thread 0 (attributed) tid=2"):
        for rt in roots:
            walk(rt, [], thread)
    with open(out_expected, "w") as f:
        for k, v in sorted(lines.items()):
            f.write("%s %d\n" % (k, v))
    print(len(addrs))


if __name__ == "__main__":
    main()
