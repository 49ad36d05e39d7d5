#!/bin/bash
# Names that are not UTF-8 (stray bytes, overlong forms, encoded surrogates, code points above
# U+10FFFF, a cut sequence) and characters XML forbids (controls, U+FFFE) still give valid output in
# every format: each JSON output decodes as strict UTF-8 and parses with Python's json, each SVG/XML
# output parses with expat, and the names read back are the input's bytes decoded the way Python
# (and browsers) decode them: one U+FFFD per maximal ill-formed subpart, controls as JSON escapes
# in JSON and as U+FFFD in XML. The inputs: a folded profile, a dSYM whose symbol is such a name
# (atos), and a fleet store whose keys and signatures are.
. "${TK_ROOT:-.}/tests/lib.sh"
tk_fork_start
# the bad name: every kind of ill-formed UTF-8, plus a control, ESC/OSC/BEL and U+FFFE (valid
# UTF-8, not XML); 24 bytes, the length of the dSYM symbol it replaces below
python3 - "$TMP" <<'PY'
import sys
d = sys.argv[1]
bad = b'b\xff\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xef\xbf\xbe\x01\x1b[2Jx\x07\xe2\x82'
bad += b'z' * (24 - len(bad))
assert len(bad) == 24
open(d + '/bad.name', 'wb').write(bad)
other = b'\xf5\x80\x80\x80 \xe0\x80\xaf \xed\xbf\xbf \xc3\xa9\xf0\x9d\x84\x9e ok'
open(d + '/other.name', 'wb').write(other)
with open(d + '/a.folded', 'wb') as f:
    f.write(b'main;' + bad + b';' + other + b' 70\n')
    f.write(b'main;' + bad + b' 20\n')
    f.write(b'main;plain 10\n')
with open(d + '/b.folded', 'wb') as f:
    f.write(b'main;' + bad + b';' + other + b' 35\n')
    f.write(b'main;plain 10\n')
PY
cat >"$TMP/check.py" <<'PY'
# check.py KIND FILE NAMEFILE...: FILE is strict UTF-8 and valid KIND (json, jsonl, xml), and holds
# each name decoded as Python decodes it (for xml: with what XML forbids made U+FFFD)
import json, re, sys, xml.etree.ElementTree as ET
kind, path, names = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(path, 'rb').read().decode('utf-8')  # strict: raises on any ill-formed byte
found = set()
def walk(v):
    if isinstance(v, str): found.add(v)
    elif isinstance(v, dict): [walk(k) or walk(x) for k, x in v.items()]
    elif isinstance(v, list): [walk(x) for x in v]
if kind == 'json':
    walk(json.loads(text))
elif kind == 'jsonl':
    for line in text.splitlines():
        if line.strip(): walk(json.loads(line))
else:
    for e in ET.fromstring(text.encode('utf-8')).iter():
        for s in [e.text, e.tail] + list(e.attrib.values()):
            if s: found.add(s)
blob = '\n'.join(found)
for n in names:
    want = open(n, 'rb').read().decode('utf-8', 'replace')
    if kind == 'xml':
        want = re.sub('[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]', '\ufffd', want)
    if want not in blob:
        sys.exit('%s: %r not found' % (path, want))
PY
v() { python3 "$TMP/check.py" "$@"; }
N="$TMP/bad.name"; O="$TMP/other.name"
for to in gecko speedscope json svg; do
	"$TK" convert "$TMP/a.folded" --to $to -o "$TMP/a.$to" 2>"$TMP/err"
	kind=json; [ $to = svg ] && kind=xml
	check "convert --to $to: valid UTF-8 $kind, names as Python decodes them" v $kind "$TMP/a.$to" "$N" "$O"
done
# pprof: protobuf strings must be UTF-8 (proto3); the string table read with a few lines of
# protobuf decoding (field 6 of Profile)
"$TK" convert "$TMP/a.folded" --to pprof -o "$TMP/a.pb.gz"
check "convert --to pprof: every string of the string table is UTF-8, names as Python decodes them" python3 -c '
import gzip, sys
d = gzip.decompress(open(sys.argv[1], "rb").read())
def varint(i):
    v = s = 0
    while True:
        b = d[i]; i += 1; v |= (b & 127) << s; s += 7
        if b < 128: return v, i
i, strings = 0, []
while i < len(d):
    key, i = varint(i)
    if key & 7 == 0: _, i = varint(i)
    elif key & 7 == 1: i += 8
    elif key & 7 == 5: i += 4
    else:
        n, i = varint(i)
        if key >> 3 == 6: strings.append(d[i:i + n].decode("utf-8"))
        i += n
for f in sys.argv[2:]:
    assert open(f, "rb").read().decode("utf-8", "replace") in strings, f
' "$TMP/a.pb.gz" "$N" "$O"
"$TK" convert "$TMP/a.folded" --to svg --icicle -o "$TMP/ic.svg"
check "convert --to svg --icicle: valid XML" v xml "$TMP/ic.svg" "$N" "$O"
"$TK" tree --json "$TMP/a.folded" >"$TMP/tree.json"
check "tree --json: valid UTF-8 JSON" v json "$TMP/tree.json" "$N" "$O"
"$TK" top --json "$TMP/a.folded" >"$TMP/top.json"
check "top --json: valid UTF-8 JSON" v json "$TMP/top.json" "$N" "$O"
"$TK" diff --json "$TMP/a.folded" "$TMP/b.folded" >"$TMP/diff.json"
check "diff --json: valid UTF-8 JSON" v json "$TMP/diff.json" "$N" "$O"
"$TK" diff --svg "$TMP/diff.svg" "$TMP/a.folded" "$TMP/b.folded" >/dev/null
check "diff --svg: valid XML" v xml "$TMP/diff.svg" "$N" "$O"
"$TK" stats --functions --json "$TMP/a.folded" "$TMP/b.folded" >"$TMP/fn.json"
check "stats --functions --json: valid UTF-8 JSON" v json "$TMP/fn.json" "$N" "$O"
"$TK" stats --json --metric "fn.self:$(cat "$N")" "$TMP/a.folded" "$TMP/b.folded" >"$TMP/st.json"
check "stats --json with such a metric name: valid UTF-8 JSON" v json "$TMP/st.json" "$N"
"$TK" stats --svg "$TMP/st.svg" --metric "fn.self:$(cat "$N")" "$TMP/a.folded" "$TMP/b.folded" >/dev/null
check "stats --svg with such a metric name: valid XML" v xml "$TMP/st.svg" "$N"

# atos --json: a dSYM whose function is named so (its symbol and DWARF name patched in a copy)
python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
assert d.count(b"u0_f11_queue_glyph_merge") == 3
open(sys.argv[2], "wb").write(d.replace(b"u0_f11_queue_glyph_merge", open(sys.argv[3], "rb").read()))
' "$FIX/symbol/libtks-arm64.dylib.dwarf" "$TMP/bad.dwarf" "$N"
"$TK" atos --json -o "$TMP/bad.dwarf" --no-cache-write 0x1264 >"$TMP/atos.json"
check "atos --json: valid UTF-8 JSON, the function as Python decodes it" v jsonl "$TMP/atos.json" "$N"

# a fleet store whose keys (--set) and hang signatures (written by some other ingester) are such names
mkdir -p "$TMP/s1"
printf '%s\n' 'collection,key,value' \
	'hang,100.000,{"start":100.000,"duration_ms":300,"tid":1,"thread":"main","threads":[{"tid":1,"name":"main","frames":["0x10","0x20"]}]}' \
	'hang-stackframe,100.000,[{"frame":"0x20","count":3,"children":[{"frame":"0x10","count":3}]}]' >"$TMP/s1/records"
"$TK" ingest -q --db "sqlite:$TMP/f.db" --set "app=$(cat "$N"),version=$(cat "$O")" "$TMP/s1" 2>"$TMP/err"
check_eq "the store took the report" 1 "$(sqlite3 "$TMP/f.db" 'SELECT count(*) FROM reports')"
H=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read().hex())' "$N")
sqlite3 "$TMP/f.db" "UPDATE reports SET signature = CAST(X'$H' AS TEXT); UPDATE hang_sigs SET signature = CAST(X'$H' AS TEXT)"
"$TK" stats --db "sqlite:$TMP/f.db" --by app,version --json >"$TMP/db.json"
check "stats --db --json: valid UTF-8 JSON, the keys as Python decodes them" v jsonl "$TMP/db.json" "$N" "$O"
"$TK" top-hangs --db "sqlite:$TMP/f.db" --json >"$TMP/th.json"
check "top-hangs --json: valid UTF-8 JSON, the signature as Python decodes it" v jsonl "$TMP/th.json" "$N"
