#!/usr/bin/env python3
"""Independent checks for tests/cli/tree_*.sh. Each mode prints "ok" or one line saying what differs
and exits non-zero.

  folded-vs-inferno OURS ORACLE UNIT   our `collapse --no-thread` output vs inferno-collapse-xctrace's
                                       folded file. inferno counts rows and post-processes Rust names
                                       (legacy demangling, hash suffix removed), so we divide our
                                       weights by UNIT (ns per row) and apply the same name rewriting.
  tree-json JSON XML                   call-tree JSON invariants (total = self + sum of children at
                                       every node) and each thread's total = the sum of the weight
                                       cells of its rows, read from the xctrace XML with ElementTree.
  top-vs-jmh TOP_JSON CSV [FROM TO [total]]
                                       `top --json` self weights per leaf symbol and the grand total
                                       vs JMH's per-row oracle (time;weight;addr;symbol;binary;pmc),
                                       restricted to FROM <= time < TO when given ("-" for none);
                                       "total" compares the total only.
"""
import collections
import json
import re
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    print("differs: " + msg)
    sys.exit(1)


RUST_ESCAPES = {"$LT$": "<", "$GT$": ">", "$u20$": " ", "$u7b$": "{", "$u7d$": "}", "$RF$": "&",
                "$LP$": "(", "$RP$": ")", "$C$": ",", "$BP$": "*", "$SP$": "@", "$u5b$": "[", "$u5d$": "]",
                "$u27$": "'", "$u22$": '"'}


def rust_legacy(name):
    """The rewriting inferno's oracle shows: drop a ::h<16 hex> suffix, a leading '_' before '$',
    decode $..$ escapes and turn '..' into '::'."""
    m = re.match(r"^(.*)::h[0-9a-f]{16}$", name)
    if not m:
        return name
    name = m.group(1)
    if name.startswith("_$"):
        name = name[1:]
    for k, v in RUST_ESCAPES.items():
        name = name.replace(k, v)
    return name.replace("..", "::")


def folded(path, rewrite=None, unit=1):
    out = collections.Counter()
    with open(path) as f:
        for line in f:
            stack, _, w = line.rstrip("\n").rpartition(" ")
            w = int(w)
            if w % unit:
                fail(f"{path}: weight {w} is not a multiple of {unit}")
            if rewrite:
                stack = ";".join(rewrite(fr) for fr in stack.split(";"))
            out[stack] += w // unit
    return out


def folded_vs_inferno(ours, oracle, unit):
    a, b = folded(ours, rust_legacy, int(unit)), folded(oracle)
    if a != b:
        only_a = {k: v for k, v in a.items() if b.get(k) != v}
        only_b = {k: v for k, v in b.items() if a.get(k) != v}
        fail(f"ours-only {list(only_a.items())[:3]} oracle-only {list(only_b.items())[:3]}")
    print(f"ok {len(a)} stacks, {sum(a.values())} rows")


def tree_json(jpath, xpath):
    doc = json.load(open(jpath))
    nodes = 0
    for g in doc["threads"]:
        if g["total"] != g["self"] + sum(r["total"] for r in g["root"]):
            fail(f"group tid={g['tid']}: total {g['total']} != self + roots")
        todo = list(g["root"])
        while todo:  # iterative: real stacks are deeper than Python's recursion limit
            n = todo.pop()
            nodes += 1
            if n["total"] != n["self"] + sum(c["total"] for c in n["children"]):
                fail(f"node {n['name']}: total {n['total']} != self {n['self']} + children")
            if n["samples"] < sum(c["samples"] for c in n["children"]):
                fail(f"node {n['name']}: fewer samples than its children")
            todo.extend(n["children"])
    # Thread totals from the XML rows, resolving id/ref by hand.
    root = ET.parse(xpath).getroot()
    ids = {el.get("id"): el for el in root.iter() if el.get("id") is not None}

    def res(el):
        return ids[el.get("ref")] if el.get("ref") is not None else el

    want = collections.Counter()
    for row in root.iter("row"):
        cells = [res(c) for c in row]
        weight = next((c for c in cells if c.tag in ("weight", "cycle-weight", "pmc-event")), None)
        thread = next((c for c in cells if c.tag == "thread"), None)
        if weight is None or thread is None:
            fail("a row without weight or thread")
        tid = int(res(thread.find("tid")).text)
        want[tid] += int(weight.text)
    got = {g["tid"]: g["total"] for g in doc["threads"]}
    if got != dict(want):
        fail(f"thread totals {sorted(got.items())[:4]} vs XML {sorted(want.items())[:4]}")
    print(f"ok {len(got)} threads, {nodes} nodes")


def top_vs_jmh(tpath, csv, t_from=None, t_to=None, what="self"):
    doc = json.load(open(tpath))
    want_self = collections.Counter()
    total = 0
    for line in open(csv):
        f = line.rstrip("\n").split(";")
        t, w, sym = int(f[0]), int(f[1]), f[3]
        if t_from not in (None, "-") and not (int(t_from) <= t < int(t_to)):
            continue
        total += w
        if sym:
            want_self[sym] += w
    got_self = collections.Counter()
    for e in doc["functions"]:
        if e["self"]:
            got_self[e["name"]] += e["self"]
        if e["total"] > doc["total"]:
            fail(f"{e['name']}: total {e['total']} above 100% ({doc['total']})")
    if doc["total"] != total:
        fail(f"total {doc['total']} vs oracle {total}")
    if what == "self" and got_self != want_self:
        diff = {k: (got_self.get(k), want_self.get(k)) for k in set(got_self) | set(want_self)
                if got_self.get(k) != want_self.get(k)}
        fail(f"self per leaf (ours, oracle): {list(diff.items())[:4]}")
    print(f"ok total {total}, {len(want_self)} leaf symbols")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"folded-vs-inferno": folded_vs_inferno, "tree-json": tree_json, "top-vs-jmh": top_vs_jmh}[mode](*args)
