#!/bin/bash
# Names and messages from untrusted files reach the terminal escaped: no raw control character
# (line breaks, C1 controls such as U+009B CSI, ESC) in text output or errors, and every error is
# one line. JSON output keeps the exact names (as JSON escapes). XML cannot carry ESC itself, so
# the inputs use what it can: line breaks, tabs and C1 controls; ESC comes in through paths.
. "${TK_ROOT:-.}/tests/lib.sh"
tk_fork_start
ESC=$(printf '\033')
# raw C0 controls other than the line ends of the output itself, DEL, or UTF-8 encoded C1 controls
has_raw_controls() { python3 -c 'import re,sys; d=open(sys.argv[1],"rb").read(); sys.exit(0 if re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", d) else 1)' "$1"; }
cat >"$TMP/evil.xml" <<'X'
<?xml version="1.0"?><trace-query-result><node><schema name="time-profile"><col><mnemonic>time</mnemonic></col><col><mnemonic>thread</mnemonic></col><col><mnemonic>process</mnemonic></col><col><mnemonic>weight</mnemonic></col><col><mnemonic>stack</mnemonic></col></schema>
<row><sample-time id="1">1</sample-time><thread id="2" fmt="evil&#155;[2J&#10;thread 0x1"><tid id="3">1</tid></thread><process id="4" fmt="app&#155;]0;title&#156; (7)"><pid id="5">7</pid></process><weight id="6">1000000</weight><backtrace id="7"><frame id="8" name="f&#155;[31mred&#13;x" addr="0x1"><binary id="9" name="lib&#155;[1m" path="/l"/></frame></backtrace></row>
</node></trace-query-result>
X
for c in tree top info; do
	"$TK" $c "$TMP/evil.xml" >"$TMP/$c.out" 2>&1
	check "$c: no raw control characters in the text output" eval '! has_raw_controls "$TMP/$c.out"'
done
check "tree: the thread name is shown escaped" grep -q 'Thread evil\\xc2\\x9b\[2J\\x0athread' "$TMP/tree.out"
check "tree: the frame name is shown escaped" grep -q 'f\\xc2\\x9b\[31mred\\x0dx  \[lib\\xc2\\x9b\[1m\]' "$TMP/tree.out"
"$TK" tree --json "$TMP/evil.xml" >"$TMP/tree.json" 2>&1
check "tree --json keeps the exact name" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if "\"f\u009b[31mred\rx\"" in json.dumps(d) .encode().decode("unicode_escape") else 1)' "$TMP/tree.json"

# a toc whose attributes carry escape sequences
cat >"$TMP/toc.xml" <<'X'
<?xml version="1.0"?><trace-toc><run number="1"><info><target><device name="dev&#155;[2J" model="m"/></target><summary><template-name>t&#155;[5m</template-name></summary></info><data><table schema="time-profile" x="a&#155;[31mb&#10;c"/></data></run></trace-toc>
X
"$TK" info "$TMP/toc.xml" >"$TMP/toc.out" 2>&1
check "info --toc: no raw control characters" eval '! has_raw_controls "$TMP/toc.out"'
check "info --toc: the attribute is shown escaped" grep -q 'x=a\\xc2\\x9b\[31mb\\x0ac' "$TMP/toc.out"

# errors: one line, escaped, whatever the path or the input holds
bad="$TMP/no$ESC[2Jsuch
file.xml"
"$TK" tree "$bad" >"$TMP/e1" 2>&1
check_eq "an error naming a path with ESC and a newline is one line" 1 "$(wc -l <"$TMP/e1")"
check "that error has no raw control characters" eval '! has_raw_controls "$TMP/e1"'
printf '<?xml version="1.0"?><trace-query-result><node><schema name="x&#155;[2J&#10;y"/></node></trace-query-result>' >"$TMP/bad.xml"
"$TK" tree "$TMP/bad.xml" >"$TMP/e2" 2>&1
check_eq "an error quoting input with ESC and a newline is one line" 1 "$(wc -l <"$TMP/e2")"
check "that error has no raw control characters" eval '! has_raw_controls "$TMP/e2"'
