#!/usr/bin/env python3
"""Independent readings for tests/cli/read_text_shapes.sh (no tracekit code).

  text_shapes_oracle.py folded FILE [RUN] [--keep-going]
        "STACK<TAB>VALUE" per distinct stack with a non-zero sum, sorted by stack, values as exact
        decimals without trailing zeros. Lines are read by flamegraph.pl's rule: STACK, blanks, a
        count `\\d+(\\.\\d*)?`, and for a differential file a second count (RUN 1 or 2 picks one,
        default 2); blank lines and "# " lines are skipped. A line that fits no rule exits 1 naming
        it, or is skipped with --keep-going (the count of skipped lines goes to stderr). Decodes a
        UTF-16 or UTF-8 byte-order mark; CRLF line ends are accepted.
  text_shapes_oracle.py total FILE [RUN] [--keep-going]
        the exact sum of every count, as above.
  text_shapes_oracle.py sample-gen SEED DEPTH REPORT TRUTH
        writes a macOS `sample` report with a random call graph down to DEPTH levels, its guides
        drawn as `sample` draws them (`+ ! : |` by level), and TRUTH: "NAME<TAB>SELF" per function
        plus "(thread)<TAB>TOTAL" per thread, known from the tree generated, not from a reading.
"""
import random
import re
import sys
from decimal import Decimal

LINE = re.compile(r"^(.*?)[ \t]+(\d+(?:\.\d*)?)(?:[ \t]+(\d+(?:\.\d*)?))?$")


def text(path):
    data = open(path, "rb").read()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16")  # the BOM picks the byte order
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    return data.decode("utf-8")


def fmt(d):
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def folded(path, run, keep_going):
    sums, skipped, counts = {}, 0, None
    for i, l in enumerate(text(path).split("\n"), 1):
        l = l.rstrip("\r")
        if not l.strip() or re.match(r"#(\s|$)", l):
            continue
        m = LINE.match(l)
        n = 0 if not m else (2 if m.group(3) is not None else 1)
        if m and counts is None:
            counts = n
        if not m or n != counts:
            if keep_going:
                skipped += 1
                continue
            print("line %d fits no rule: %r" % (i, l))
            sys.exit(1)
        v = Decimal(m.group(2) if n == 1 or run == 1 else m.group(3))
        sums[m.group(1)] = sums.get(m.group(1), Decimal(0)) + v
    if keep_going:
        print("skipped %d" % skipped, file=sys.stderr)
    return sums


def sample_gen(seed, depth, report, truth):
    rnd = random.Random(seed)
    selfs, threads = {}, []
    lines = []

    def node(level, path_open):
        """A random subtree: returns (total, rendered lines); path_open[k] says whether the node at
        depth k+1 on the path has a later sibling (its guide is drawn)."""
        name = "f%d_%d" % (level, rnd.randrange(3))
        slf = rnd.randrange(4)
        kids = []
        if level < depth:
            n = 1 if level < depth - 3 and rnd.random() < 0.7 else rnd.randrange(0, 3)
            kids = [None] * n
        rendered, total = [], slf
        for k in range(len(kids)):
            t, r = node(level + 1, path_open + [k + 1 < len(kids)])
            total += t
            rendered += r
        if total == 0:
            slf, total = 1, 1
        selfs[name] = selfs.get(name, 0) + slf
        guides = ""
        for k in range(1, level + 1):
            on = k == 1 or path_open[k - 1]
            guides += ("+!:|"[(k - 1) % 4] if on else " ") + " "
        line = "    %s%d %s  (in Lib%d) + %d  [0x%x]" % (guides, total, name, level % 3, rnd.randrange(999),
                                                     0x100000 + rnd.randrange(1 << 20))
        return total, [line] + rendered

    for t in range(3):
        tid = 1000 + t
        roots = [node(1, [i + 1 < 2]) for i in range(2)]
        own = rnd.randrange(3)
        total = own + sum(r[0] for r in roots)
        lines.append("    %d Thread_%d%s" % (total, tid, "   DispatchQueue_1: com.apple.main-thread  (serial)"
                                                 if t == 0 else ""))
        for r in roots:
            lines += r[1]
        threads.append((tid, total))
    with open(report, "w") as f:
        f.write("Analysis of sampling gen (pid 42) every 1 millisecond\nProcess:         gen [42]\n"
                "Code Type:       ARM64\n\nCall graph:\n")
        f.write("\n".join(lines) + "\n\nTotal number in stack (recursive counted multiple, when >=5):\n\n"
                "Binary Images:\n")
    with open(truth, "w") as f:
        for name in sorted(selfs):
            if selfs[name]:
                f.write("%s\t%d\n" % (name, selfs[name]))
        for tid, total in threads:
            f.write("(thread %d)\t%d\n" % (tid, total))


if __name__ == "__main__":
    a = sys.argv[1:]
    kg = "--keep-going" in a
    a = [x for x in a if x != "--keep-going"]
    if a[0] == "folded":
        s = folded(a[1], int(a[2]) if len(a) > 2 else 2, kg)
        for k in sorted(s):
            if s[k]:
                print("%s\t%s" % (k, fmt(s[k])))
    elif a[0] == "total":
        print(fmt(sum(folded(a[1], int(a[2]) if len(a) > 2 else 2, kg).values(), Decimal(0))))
    elif a[0] == "sample-gen":
        sample_gen(int(a[1]), int(a[2]), a[3], a[4])
