#!/bin/bash
# Text a fleet store holds comes from uploads: keys (meta.json, --set) and hang signatures (image
# names from images.json) may carry any character. On SQLite and on a real clickhouse-server:
#  - JSON answers give every character back exactly (ClickHouse's TabSeparated escapes \b \f …
#    must be decoded, not read as the letter after the backslash);
#  - text answers reach the terminal escaped like the rest of the CLI (no ESC, CR, BEL, OSC).
. "$TK_ROOT/tests/lib.sh"
. "$TK_ROOT/tests/store_lib.sh"
tk_fork_start
start_clickhouse
"$STOREGEN" "$TMP/g" 1 2 11 >/dev/null
S=$(ls -d "$TMP"/g/s*)
# the app name and the app's image name: every control ClickHouse escapes, and a terminal attack
# (an OSC title sequence ended by BEL, a screen clear, a carriage return)
python3 - "$S" "$TMP/want" <<'PY'
import glob, json, sys
s, want = sys.argv[1], sys.argv[2]
name = 'At\b\f\x1b]0;pwned\x07\x1b[2J\r\x01\x0b\x07\\b\'las'
for f in glob.glob(s + '/images*.json'):
    d = json.load(open(f))
    for im in d['images']:
        im['path'] = im['path'].replace('/Atlas.app/Atlas', '/Atlas.app/' + name)
    json.dump(d, open(f, 'w'))
m = json.load(open(s + '/meta.json'))
m['app'] = name
json.dump(m, open(s + '/meta.json', 'w'))
open(want, 'w').write(json.dumps(name))
PY
# raw C0 controls other than the output's own line ends, DEL, or UTF-8 encoded C1 controls
has_raw_controls() { python3 -c 'import re,sys; d=open(sys.argv[1],"rb").read(); sys.exit(0 if re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", d) else 1)' "$1"; }
for DB in "sqlite:$TMP/t.db" "$CH_URL/tk_text"; do
	b=${DB%%:*}
	"$TK" ingest -q --db "$DB" "$S"
	"$TK" stats --db "$DB" --by app --json >"$TMP/$b.json"
	check "$b: stats --db --json gives the app name back exactly" python3 -c '
import json, sys
want = json.loads(open(sys.argv[2]).read())
got = [json.loads(l)["app"] for l in open(sys.argv[1])]
assert got == [want], (got, want)' "$TMP/$b.json" "$TMP/want"
	"$TK" top-hangs --db "$DB" --json >"$TMP/$b.top.json"
	check "$b: top-hangs --json gives the image name in each signature back exactly" python3 -c '
import json, sys
want = json.loads(open(sys.argv[2]).read())
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all(r["signature"].startswith(want + "+0x") for r in rows), (rows[:1], want)' "$TMP/$b.top.json" "$TMP/want"
	"$TK" stats --db "$DB" --by app >"$TMP/$b.txt" 2>&1
	check "$b: stats --db text: no raw control characters" eval '! has_raw_controls "$TMP/$b.txt"'
	check "$b: stats --db text: the app name shown escaped" grep -qF 'At\x08\x0c\x1b]0;pwned\x07\x1b[2J\x0d\x01\x0b\x07\b'"'"'las' "$TMP/$b.txt"
	"$TK" top-hangs --db "$DB" >"$TMP/$b.top.txt" 2>&1
	check "$b: top-hangs text: no raw control characters" eval '! has_raw_controls "$TMP/$b.top.txt"'
	check "$b: top-hangs text: the signature shown escaped" grep -qF 'At\x08\x0c\x1b]0;pwned\x07\x1b[2J\x0d\x01\x0b\x07\b'"'"'las+0x' "$TMP/$b.top.txt"
done
