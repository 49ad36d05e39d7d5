#!/usr/bin/env python3
"""Append `kdebug` and `kdebug-strings` tables to an xctrace export, as an xpath union would
(docs/xctrace-format.md §1, §10), so tests can exercise image loads from kdebug.

No real export with kdebug rows is public: the element shapes follow the documented ones
(<kdebug-class/subclass/code/func>, four <kdebug-arg> cells with the hex in fmt, <kdebug-string>
id + <raw-string> path), and the dyld events follow Apple's kdebug codes: DBG_DYLD (0x1f) /
DBG_DYLD_UUID (0x05), code 0 = UUID_MAP_A (arg1, arg2: UUID bytes as two little-endian 64-bit
words, arg3: load address), code 1 = UUID_MAP_B (arg2: string id of the path).

usage: kdebug_export.py IN.xml [--image UUID@LOADADDR@PATH]... [--strings-first] [--fmt-only] > OUT.xml
"""
import re
import sys
import uuid as uuidlib


def main():
    args = sys.argv[1:]
    src = args.pop(0)
    images, strings_first, fmt_only = [], False, False
    while args:
        a = args.pop(0)
        if a == "--image":
            u, load, path = args.pop(0).split("@", 2)
            images.append((uuidlib.UUID(u), int(load, 16), path))
        elif a == "--strings-first":
            strings_first = True
        elif a == "--fmt-only":
            fmt_only = True
        else:
            sys.exit(f"kdebug_export.py: unknown argument {a}")
    doc = open(src, encoding="utf-8").read()
    next_id = max(int(m) for m in re.findall(r' id="(\d+)"', doc)) + 1
    defined = {}

    def cell(tag, value, fmt):
        """A cell with xctrace's id/ref interning: the same (tag, value) again is a ref."""
        nonlocal next_id
        key = (tag, value)
        if key in defined:
            return f'<{tag} ref="{defined[key]}"/>'
        i = next_id
        next_id += 1
        defined[key] = i
        text = "" if fmt_only and tag == "kdebug-arg" else str(value)
        return f'<{tag} id="{i}" fmt="{fmt}">{text}</{tag}>'

    def col(m, name, et):
        return f"<col><mnemonic>{m}</mnemonic><name>{name}</name><engineering-type>{et}</engineering-type></col>"

    def kd_row(t, cls, sub, code, a):
        cells = [cell("event-time", t, f"{t}"), '<thread ref="2"/>', cell("kdebug-class", cls, hex(cls)),
                 cell("kdebug-subclass", sub, hex(sub)), cell("kdebug-code", code, hex(code)),
                 cell("kdebug-func", 0, "None")]
        cells += [cell("kdebug-arg", v, hex(v)) for v in a]
        return "<row>" + "".join(cells) + "</row>\n"

    rows = [kd_row(1000, 0x07, 0x00, 3, [1, 2, 3, 0])]  # some other event: ignored
    strs = []
    for n, (u, load, path) in enumerate(images):
        b = u.bytes
        w1, w2 = int.from_bytes(b[:8], "little"), int.from_bytes(b[8:], "little")
        sid = 0x40 + n
        rows.append(kd_row(2000 + n, 0x1F, 0x05, 0, [w1, w2, load, 0]))
        rows.append(kd_row(2000 + n, 0x1F, 0x05, 1, [0x1234 + n, sid, 0x1000004, 0]))
        strs.append((sid, path))
    kd = ("<node xpath='//trace-toc[1]/run[1]/data[1]/table[3]'><schema name=\"kdebug\">"
          + col("time", "Timestamp", "event-time") + col("thread", "Thread", "thread")
          + col("class", "Class", "kdebug-class") + col("subclass", "Subclass", "kdebug-subclass")
          + col("code", "Code", "kdebug-code") + col("func", "Function", "kdebug-func")
          + "".join(col(f"arg{i}", f"Arg{i}", "kdebug-arg") for i in range(1, 5))
          + "</schema>" + "".join(rows) + "</node>")
    srows = "".join("<row>" + cell("kdebug-string", sid, hex(sid))
                    + cell("raw-string", p, p.replace("&", "&amp;")) + "</row>\n" for sid, p in strs)
    ks = ("<node xpath='//trace-toc[1]/run[1]/data[1]/table[4]'><schema name=\"kdebug-strings\">"
          + col("string-id", "String ID", "kdebug-string") + col("string", "String", "raw-string")
          + "</schema>" + srows + "</node>")
    tail = (ks + kd) if strings_first else (kd + ks)
    end = doc.rindex("</trace-query-result>")
    sys.stdout.write(doc[:end] + tail + doc[end:])


main()
