#!/bin/bash
# Inputs that made tracekit quadratic: a session whose images.json lists 100,000 files that cannot
# be read (one warning each, a linear search per file: minutes), and a tag with 200,000 attributes
# under the libxml2 tokenizer (its pairwise duplicate check: minutes). Now: a few warning lines and
# a count; tags with more than 4096 attributes are refused by both tokenizers alike. The bounds
# (60 s of CPU time, tests/lib.sh cpu_bounded) only guard against a hang: the runs take about a
# second of CPU, and a CPU bound does not depend on the machine's load as a wall-clock one does.
. "${TK_ROOT:-.}/tests/lib.sh"
tk_fork_start
mkdir "$TMP/s"
python3 - "$TMP/s" <<'PY'
import json, sys
d = sys.argv[1]
imgs = [{"path": "/nonexistent/lib%d.so" % i, "base": hex(0x10000000 + i * 0x10000), "build_id": "ab",
         "loads": [{"vaddr": "0x0", "memsz": "0x1000", "offset": "0x0", "flags": "r-x"}]} for i in range(100000)]
json.dump({"os": "Linux", "arch": "x86_64", "pid": 1, "images": imgs}, open(d + "/images.json", "w"))
kids = ",".join('{"frame":"%s","count":1}' % hex(0x10000000 + i * 0x10000 + 16) for i in range(0, 100000, 1000))
open(d + "/records", "w").write('collection,key,value\ncpu-highload,1.00,{"start":"1.00","lasting":"61","average":"90"}\n'
    'cpu-highload-stackframe,1.00,[{"frame":"0x10000010","count":100,"children":[%s]}]\n' % kids)
PY
cpu_bounded 60 "$TK" records "$TMP/s" >"$TMP/out" 2>"$TMP/err"
check_eq "100,000 unreadable images: records lists the record" "0" "$?"
check "the record is listed" grep -q '^cpu-highload' "$TMP/out"
check_eq "100,000 unreadable images: 10 warnings and one count" "11" "$(wc -l <"$TMP/err")"
check "the count says how many more" grep -q '99990 more images cannot be used' "$TMP/err"

python3 -c "
import sys
sys.stdout.write('<?xml version=\"1.0\"?><trace-query-result><node ' + ' '.join('a%d=\"\"' % i for i in range(200000)) + '/></trace-query-result>')" >"$TMP/attrs.xml"
for t in fast libxml2; do
	cpu_bounded 60 "$TK" info --tokenizer=$t "$TMP/attrs.xml" >"$TMP/o" 2>&1
	rc=$?
	check "200,000 attributes, $t tokenizer: an error, no hang" test "$rc" -ne 0 -a "$rc" -lt 124
	check "200,000 attributes, $t tokenizer: the error names the limit" grep -q 'more than 4096 attributes' "$TMP/o"
done
python3 -c "
import sys
sys.stdout.write('<?xml version=\"1.0\"?><trace-query-result><node ' + ' '.join('a%d=\"&gt;\"' % i for i in range(4096)) + '/></trace-query-result>')" >"$TMP/ok.xml"
for t in fast libxml2; do
	"$TK" info --tokenizer=$t "$TMP/ok.xml" >"$TMP/o" 2>&1
	check "4096 attributes (values with '>'), $t tokenizer: accepted (fails later, on the missing schema)" grep -q 'without a <schema>' "$TMP/o"
done
