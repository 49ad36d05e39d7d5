#!/usr/bin/env python3
"""Independent oracle for `symbolicate` fidelity: print one line per <row> of the profile tables of
an xctrace export: "TIME TID WEIGHT" (refs resolved by id, columns found by mnemonic), or with
--totals one line per thread "TID ROWS WEIGHT_SUM". Python's ElementTree, no tracekit code."""
import sys
import xml.etree.ElementTree as ET

PROFILES = {"time-profile", "cpu-profile", "counters-profile"}


def main():
    path = sys.argv[-1]
    totals = "--totals" in sys.argv
    root = ET.parse(path).getroot()
    byid = {}
    for el in root.iter():
        if "id" in el.attrib:
            byid[el.attrib["id"]] = el

    def res(el):
        return byid[el.attrib["ref"]] if "ref" in el.attrib else el

    out, sums = [], {}
    for node in root.findall("node"):
        schema = node.find("schema")
        if schema is None or schema.attrib.get("name") not in PROFILES:
            continue
        mn = [c.findtext("mnemonic") for c in schema.findall("col")]
        for row in node.findall("row"):
            cells = dict(zip(mn, list(row)))
            t = res(cells["time"]).text
            th = res(cells["thread"])
            tid = res(th.find("tid")).text
            w = res(cells["weight"])
            wv = "0" if w.tag == "sentinel" else w.text
            out.append(f"{t} {tid} {wv}")
            n, s = sums.get(tid, (0, 0))
            sums[tid] = (n + 1, s + int(wv))
    if totals:
        for tid in sorted(sums):
            print(tid, *sums[tid])
    else:
        print("\n".join(out))


main()
