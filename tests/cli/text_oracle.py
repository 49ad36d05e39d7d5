#!/usr/bin/env python3
"""Independent reading of the text fixtures' own numbers (no tracekit code), for read_text.sh.

  text_oracle.py deepcopy FILE TREE_JSON   every node of the Deep Copy against tracekit's tree:
                                           total = Σ self cells below it, exactly (Allocations:
                                           = its own total in bytes, exactly), and the top rows'
                                           totals within the text's own rounding (prints "ok N
                                           nodes" or the first mismatch; exit 1 on a mismatch)
  text_oracle.py sample-threads FILE       "TID COUNT" per thread (Σ of its Thread_ rows)
  text_oracle.py sample-top FILE           "NAME\tIMAGE\tCOUNT" from "Sort by top of stack"
  text_oracle.py perf-threads FILE         "TID COUNT" per sample header
  text_oracle.py perf-leaves FILE          "SYMBOL COUNT" per leaf symbol
  text_oracle.py folded-threads FILE       "NAME TID COUNT" per `NAME tid=TID` first frame
"""
import gzip
import json
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

UNITS = {"s": 10**9, "ms": 10**6, "µs": 10**3, "μs": 10**3, "us": 10**3, "ns": 1, "min": 60 * 10**9,
         "Gc": 10**9, "Mc": 10**6, "Kc": 10**3, "cycles": 1,
         "TB": 2**40, "GB": 2**30, "MB": 2**20, "KB": 2**10, "Bytes": 1, "bytes": 1}


def text(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8")


def weight(cell, bare_mult=None):
    """(exact value in the unit, half of the last printed digit's step) from '4.93 s  100.0%'."""
    cell = cell.replace("\u2007", " ").strip()
    if cell == "-":
        return Decimal(0), Decimal(0)
    m = re.match(r"([0-9]+(?:\.[0-9]+)?)\s*([^\s0-9]*)", cell)
    num, unit = m.group(1), m.group(2)
    mult = UNITS[unit] if unit else bare_mult
    d = Decimal(num)
    step = Decimal(1).scaleb(d.as_tuple().exponent) * mult
    return d * mult, step / 2


def deepcopy(path, tree_json):
    lines = [l for l in text(path).split("\n") if l.strip()]
    hdr = lines[0].split("\t")
    self_kind = hdr[1]
    rows = []
    base = None
    for l in lines[1:]:
        cells = l.split("\t")
        sym = cells[-1]
        sp = len(sym) - len(sym.lstrip(" "))
        if base is None:
            base = sp
        tot, tot_err = weight(cells[0])
        if self_kind == "Count":
            slf, slf_err = None, None
        elif self_kind == "Self (ms)":
            slf, slf_err = Decimal(cells[1].strip()) * 10**6, Decimal(0)
        else:
            slf, slf_err = weight(cells[1])
        rows.append({"depth": sp - base, "name": sym.strip(), "total": tot, "terr": tot_err, "self": slf,
                     "serr": slf_err, "kids": []})
    # rebuild the tree
    roots, path_ = [], []
    for r in rows:
        del path_[r["depth"]:]
        (path_[-1]["kids"] if path_ else roots).append(r)
        path_.append(r)

    def sums(r):  # exact Σ self and Σ half-steps below r (self-column formats)
        s, e = r["self"], r["serr"]
        for k in r["kids"]:
            ks, ke = sums(k)
            s, e = s + ks, e + ke
        r["sum"], r["err"] = s, e
        return s, e

    exact = self_kind == "Count"
    if not exact:
        for r in roots:
            sums(r)
    got = json.load(open(tree_json))
    # tracekit's roots: frames under the synthetic process/thread rows
    def is_proc(n):
        return re.search(r" \(\d+\)$", n) is not None

    def is_thread(n):
        return re.search(r" +\(?0x[0-9a-fA-F]+\)?$", n) is not None

    frame_roots = []

    def strip(rs, lvl):
        for r in rs:
            if lvl == 0 and is_proc(r["name"]):
                strip(r["kids"], 1)
            elif lvl <= 1 and is_thread(r["name"]):
                strip(r["kids"], 2)
            else:
                frame_roots.append(r)

    strip(roots, 0)
    ours = []
    for t in got["threads"]:
        ours.extend(t["root"])
    checked = 0

    def cmp(want, have, where):
        nonlocal checked
        have = sorted(have, key=lambda n: (n["name"], n["total"]))
        # tracekit merges siblings with the same name; merge the text's the same way
        merged = {}
        for w in want:
            merged.setdefault(w["name"], []).append(w)
        if sorted(merged) != sorted(n["name"] for n in have):
            return "%s: children %s vs ours %s" % (where, sorted(merged), [n["name"] for n in have])
        for n in have:
            ws = merged[n["name"]]
            if exact:
                want_total = sum((w["total"].to_integral_value(ROUND_HALF_UP) for w in ws), Decimal(0))
                if Decimal(n["total"]) != want_total:
                    return "%s/%s: total %s, the text says %s" % (where, n["name"], n["total"], want_total)
            else:
                s = sum((w["sum"] for w in ws), Decimal(0))
                if Decimal(n["total"]) != s.to_integral_value(ROUND_HALF_UP):
                    return "%s/%s: total %s, the self cells add up to %s" % (where, n["name"], n["total"], s)
                # the top rows' totals, within the text's own rounding (deeper rows can disagree with
                # their self cells in the text itself: 13.4's `1.34 Kc` over a lone `532 cycles`)
                bound = sum((w["terr"] + w["err"] for w in ws), Decimal(0))
                txt = sum((w["total"] for w in ws), Decimal(0))
                if where == "" and abs(Decimal(n["total"]) - txt) > bound:
                    return "%s/%s: total %s is further than %s from the text's %s" % (where, n["name"], n["total"],
                                                                                   bound, txt)
            checked += len(ws)
            kids = [k for w in ws for k in w["kids"]]
            e = cmp(kids, n.get("children", []), where + "/" + n["name"])
            if e:
                return e
        return None

    e = cmp(frame_roots, ours, "")
    if e:
        print("mismatch " + e)
        sys.exit(1)
    print("ok %d nodes" % checked)


def call_graph(path):
    t = text(path)
    g = t.split("\nCall graph:\n", 1)[1]
    for l in g.split("\n"):
        if not l.strip() or not l.startswith(" "):
            break
        yield l


def sample_threads(path):
    # a thread that ran several dispatch queues has a row per queue: one thread, their sum
    n = {}
    for l in call_graph(path):
        m = re.match(r"    (\d+) Thread_(\d+|0x[0-9a-fA-F]+)", l)
        if m:
            tid = int(m.group(2), 0)
            n[tid] = n.get(tid, 0) + int(m.group(1))
    for tid in n:
        print(tid, n[tid])


def sample_top(path):
    t = text(path)
    sec = t.split("\nSort by top of stack, same collapsed (when >= 5):\n", 1)[1]
    for l in sec.split("\n"):
        if not l.strip():
            break
        m = re.match(r"\s+(.*?)  \(in (.*?)\)(?:  \[(0x[0-9a-f]+)\])?\s+(\d+)$", l)
        name = m.group(3) if m.group(1) == "???" else m.group(1)
        img = "" if m.group(2) == "<unknown binary>" else m.group(2)
        print("%s\t%s\t%s" % (name, img, m.group(4)))


def perf_samples(path):
    tid, frames = None, []
    for l in text(path).split("\n") + [""]:
        if l.startswith("#"):
            continue
        if not l.strip():
            if tid is not None:
                yield tid, frames
            tid, frames = None, []
        elif l[0] in " \t":
            frames.append(l.split(None, 1)[1])
        else:
            m = re.search(r" (?:\d+/)?(\d+) +(?:\[\d+\] +)?\d+\.\d+:", l)
            tid = m.group(1)


def perf_threads(path):
    n = {}
    for tid, _ in perf_samples(path):
        n[tid] = n.get(tid, 0) + 1
    for tid in sorted(n, key=int):
        print(tid, n[tid])


def perf_leaves(path):
    n = {}
    for _, frames in perf_samples(path):
        sym = re.sub(r"\+0x[0-9a-f]+$", "", frames[0].rsplit(" (", 1)[0]) if frames else "(none)"
        n[sym] = n.get(sym, 0) + 1
    for s in sorted(n):
        print("%s %d" % (s, n[s]))


def folded_threads(path):
    n = {}
    for l in text(path).split("\n"):
        if not l:
            continue
        stack, count = l.rsplit(" ", 1)
        m = re.match(r"(.*) tid=(\d+)$", stack.split(";", 1)[0])
        k = (m.group(1), m.group(2))
        n[k] = n.get(k, 0) + int(count)
    for k in sorted(n, key=lambda k: int(k[1])):
        print(k[0], k[1], n[k])


if __name__ == "__main__":
    mode = sys.argv[1]
    {"deepcopy": lambda: deepcopy(sys.argv[2], sys.argv[3]),
     "sample-threads": lambda: sample_threads(sys.argv[2]),
     "sample-top": lambda: sample_top(sys.argv[2]),
     "perf-threads": lambda: perf_threads(sys.argv[2]),
     "perf-leaves": lambda: perf_leaves(sys.argv[2]),
     "folded-threads": lambda: folded_threads(sys.argv[2])}[mode]()
