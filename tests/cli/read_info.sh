#!/bin/bash
# `tracekit info` on real exports: totals against the Python oracle, tocs, gzip and stdin, errors.
. "$TK_ROOT/tests/lib.sh"
tk_fork_start
X="$FIX/xctrace"
ORACLE="$TK_ROOT/tests/oracle/xctrace_oracle.py"

check "info --help" "$TK" info --help
check_fails "info without FILE" "$TK" info
check_fails "info with an unknown option" "$TK" info --bogus "$X/time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.xml"

# per-thread samples and weights from --json equal the oracle's, for every table fixture
for f in "$X"/time-profile_*.xml "$X"/cpu-profile_*.xml "$X"/counters-profile_*.xml "$X"/time-sample_*.xml; do
	n=$(basename "$f")
	"$TK" info --json "$f" >"$TMP/info.json" 2>"$TMP/err" || { notok "info $n" "$(cat "$TMP/err")"; continue; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = []
for p in d["processes"]:
    for t in p["threads"]:
        rows.append("%d %d %d %d" % (p["pid"], t["tid"], t["samples"], t["weight"]))
print("\n".join(sorted(rows)))' "$TMP/info.json" >"$TMP/got" 2>&1
	python3 "$ORACLE" threads "$f" | sort >"$TMP/want"
	check_same_file "info --json thread totals: $n" "$TMP/want" "$TMP/got"
done

# the text report: the heaviest thread first, with its share
"$TK" info "$X/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml" >"$TMP/out"
# the tid in decimal, as tree and collapse print it (the export's own fmt says 0xe787e)
check_eq "info: first thread line is the heaviest" "55 52.4% 55.0 ThreadJavaMain (tid $((0xe787e)))" \
	"$(grep -m1 ThreadJavaMain "$TMP/out" | tr -s ' ' | sed 's/^ //')"
check_eq "info: schema line" "schema time-profile" "$(grep '^schema' "$TMP/out" | tr -s ' ')"
check_eq "info: symbolication" "symbolicated partly" "$(grep '^symbolicated' "$TMP/out" | tr -s ' ')"

# gzip and stdin give the same report
f="$X/time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.xml"
"$TK" info --json "$f" | grep -v '"file"' >"$TMP/a"
gzip -c "$f" >"$TMP/t.xml.gz"
"$TK" info --json "$TMP/t.xml.gz" | grep -v '"file"' >"$TMP/b"
check_same_file "info on a gzip'd export" "$TMP/a" "$TMP/b"
"$TK" info --json - <"$f" | grep -v '"file"' >"$TMP/c0"
check_same_file "info on plain standard input" "$TMP/a" "$TMP/c0"
gzip -c "$f" | "$TK" info --json - | grep -v '"file"' >"$TMP/c"
check_same_file "info on gzip'd standard input" "$TMP/a" "$TMP/c"
"$TK" info --json --tokenizer=libxml2 "$f" | grep -v '"file"\|"tokenizer"' >"$TMP/d"
grep -v '"tokenizer"' "$TMP/a" >"$TMP/a2"
check_same_file "info: libxml2 tokenizer agrees" "$TMP/a2" "$TMP/d"

# tocs: runs, template, tables; the environment and arguments are never printed
t="$X/toc_xcode26.4_instruments16.0-17E192_time-profiler-template_macos-arm64.xml"
"$TK" info "$t" >"$TMP/toc"
check_eq "toc: template" "template Time Profiler" "$(grep '^  template' "$TMP/toc" | tr -s ' ' | sed 's/^ //')"
check_eq "toc: table 13 is time-profile" "[13] time-profile" "$(grep -o '\[13\] time-profile' "$TMP/toc")"
check "toc --json is valid JSON" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["runs"][0]["tables"][38]["schema"]=="time-sample"' <<<"$("$TK" info --json "$t")"
cat >"$TMP/secret-toc.xml" <<'X'
<?xml version="1.0"?>
<trace-toc><run number="1"><info><target><device name="d"/><process name="app" pid="1" arguments="--password=hunter2"><environment><item key="AWS_SECRET" value="s3cr3t-value"/></environment></process></target></info></run></trace-toc>
X
"$TK" info "$TMP/secret-toc.xml" >"$TMP/s1" 2>&1; "$TK" info --json "$TMP/secret-toc.xml" >>"$TMP/s1" 2>&1
if grep -q 's3cr3t\|hunter2\|AWS_SECRET' "$TMP/s1"; then notok "toc: environment and arguments stay hidden" "$(cat "$TMP/s1")"; else ok "toc: environment and arguments stay hidden"; fi

# bad input: one line naming the file and place, non-zero exit, nothing on stdout
bad() { # NAME CONTENT WANT
	printf '%s' "$2" >"$TMP/bad.xml"
	"$TK" info "$TMP/bad.xml" >"$TMP/o" 2>"$TMP/e"; rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ ! -s "$TMP/o" ] && [ "$(wc -l <"$TMP/e")" -eq 1 ] && grep -q -- "$3" "$TMP/e"; then
		ok "bad input: $1"
	else
		notok "bad input: $1" "rc=$rc stdout=$(head -c 200 "$TMP/o") stderr=$(cat "$TMP/e")"
	fi
}
head -c 50000 "$X/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml" >"$TMP/trunc.xml"
"$TK" info "$TMP/trunc.xml" >"$TMP/o" 2>"$TMP/e"; rc=$?
if [ $rc -ne 0 ] && [ ! -s "$TMP/o" ] && grep -q "trunc.xml:[0-9]*:[0-9]*:" "$TMP/e"; then ok "bad input: truncated real export"; else notok "bad input: truncated real export" "rc=$rc $(cat "$TMP/e")"; fi
bad "empty file" "" "bad.xml: empty input"
bad "binary junk" $'\x01\x02\x03\x00junk' "bad.xml: unrecognised input format"
bad "an ELF file says what it is" $'\x7fELF\x02\x01\x01\x00junk' "bad.xml: an executable or library (ELF / Mach-O), not a profile"
bad "unknown schema" "$(cat "$X/hang-risks_xcode27.0_empty-table.xml")" "bad.xml:3:[0-9]*: unsupported table schema 'hang-risks'; supported: "
bad "dangling ref" "$(sed 's/<weight ref="9"\/>/<weight ref="999999"\/>/' "$f" | head -c 20000; echo '</row></node></trace-query-result>')" "refers to id 999999"
bad "malformed tag" '<?xml version="1.0"?>
<trace-query-result><node><schema name="time-profile"></node></trace-query-result>' "bad.xml:2:"
printf 'xctrace: warning: some diagnostics\n' >"$TMP/pre.xml"; cat "$f" >>"$TMP/pre.xml"
check "text before <?xml is tolerated" "$TK" info "$TMP/pre.xml"
check_fails "missing file" "$TK" info "$TMP/does-not-exist.xml"

# a monitor session directory goes through tk_read_path (the records reader), not the xctrace path
S2="$TMP/session"; mkdir -p "$S2"
printf 'collection,key,value\ncpu-highload,575204600.00,{"start":"575204600.00","lasting":"60.00","average":"150.00"}\n' >"$S2/records.mtlog"
printf '575204600.00,[{"frame":"0x1000","count":2}]\xc2\xb7' >"$S2/cpu-highload-stackframe-ext"
check_eq "info on a session directory" "samples 2" "$("$TK" info "$S2" | grep '^samples' | tr -s ' ')"
