#!/bin/bash
# Compare two tracekit binaries argument by argument: stdout, stderr, exit status and the files each
# writes, for the command lines below (option parsing edge cases and real conversions of fixtures).
# Used to check that a change to option parsing (cli/options.c) changes no behaviour:
#   git worktree add /tmp/base main && make -C /tmp/base -j2
#   scripts/cli_compare.sh /tmp/base/build/tracekit build/tracekit
# Tokens F, G (inputs), A, B (diff sides) and P (a directory) stand for fixtures; D for a fleet store
# (sqlite:, the fixtures' MetricKit payloads and Apple reports ingested by OLD, copied afresh before
# every run), R for an alert rules file, I for a report id in D, M for a MetricKit fixture, V for a
# file of numbers. --help output is expected to differ where the help text was reworded; everything
# else should be identical.
set -u
OLD=$(realpath "$1") NEW=$(realpath "$2")
R=$(cd "$(dirname "$0")/.." && pwd)
F=$R/tests/fixtures/folded/inferno_austin.txt
G=$R/tests/fixtures/other/deep-copy_instruments16.0_time-profile_speedscope.txt
A=$R/tests/fixtures/folded/inferno_diff-folded_before.txt
B=$R/tests/fixtures/folded/inferno_diff-folded_after.txt
P=$R/tests/fixtures/mthawkeye
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
M=$R/tests/fixtures/metrickit/meter_xcode_simulated.json
X=$R/tests/fixtures/symbol/time-profile-14.3-synthetic.xml
Y=$R/tests/fixtures/symbol
Q=$R/tests/fixtures/reports
Q1=$Q/multithread-test_macos13_lldb.ips
mkdir -p "$W/db"
(cd "$W" && "$OLD" ingest --keep-going --db "sqlite:$W/template.db" "$R/tests/fixtures/metrickit" \
	"$R/tests/fixtures/reports" >/dev/null 2>&1)
I=$("$OLD" top-diagnostics --kind crash --db "sqlite:$W/template.db" --json | sed -n '1s/.*"example": "\([0-9a-f]*\)".*/\1/p')
RULES=$W/rules
printf 'count(hang.duration) > 0 by version\np95(hang.duration) > 1000 s\n' >"$RULES"
V=$W/values
printf '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n' >"$V"
n=0 bad=0
while IFS= read -r line; do
	[ -z "$line" ] && continue
	n=$((n + 1))
	for v in old new; do
		bin=$OLD; [ $v = new ] && bin=$NEW
		d=$W/$v; rm -rf "$d"; mkdir -p "$d"
		cp "$W/template.db" "$W/db/t.db"
		eval "set -- $line"
		args=()
		for a in "$@"; do
			case $a in F) a=$F ;; G) a=$G ;; A) a=$A ;; B) a=$B ;; P) a=$P ;; D) a=sqlite:$W/db/t.db ;;
			R) a=$RULES ;; I) a=$I ;; M) a=$M ;; V) a=$V ;; X) a=$X ;; Y) a=$Y ;; Q) a=$Q ;; Q1) a=$Q1 ;; --db=D) a=--db=sqlite:$W/db/t.db ;; esac
			args+=("$a")
		done
		(cd "$d" && TK_MONITOR_LIB=/nonexistent timeout 60 "$bin" "${args[@]}" </dev/null >"$W/$v.out" 2>"$W/$v.err"
		 echo $? >"$W/$v.rc")
		(cd "$d" && find . -type f | sort | xargs -r md5sum) >"$W/$v.files"
	done
	for x in out err rc files; do
		if ! cmp -s "$W/old.$x" "$W/new.$x"; then
			bad=$((bad + 1))
			echo "differs [$line] $x:"
			diff "$W/old.$x" "$W/new.$x" | head -6
		fi
	done
done <<'CASES'
symbolicate
symbolicate --bogus
symbolicate X
symbolicate X --symbols
symbolicate X --symbols Y
symbolicate X --symbols=Y -o out.xml
symbolicate X --symbols Y --output=out2.xml --cache-dir cache
symbolicate X --symbols Y --pac-mask zz
symbolicate X --symbols Y --pac-mask 0
symbolicate X --symbols Y --pac-mask=ff
symbolicate X --symbols Y --adjust bad
symbolicate X --symbols Y --adjust=none
symbolicate X --image nope
symbolicate X --image 0123456789abcdef0123456789abcdef:arm64@0x1000
symbolicate X --image Y/libtks-arm64.dylib.dwarf@0x1000 --adjust minus1
symbolicate Q1 --symbols Y
symbolicate Q1 --symbols Y --json
symbolicate Q --symbols Y
symbolicate Q --symbols Y -o outdir
symbolicate Q1 Q --symbols Y -o outdir2 --json
symbolicate -- X --symbols Y
symbolicate - --symbols Y
symbolicate X --symbols Y --
symbolicate X -h
tree
tree --bogus
tree --by
tree --by x F
tree --by=all F
tree --json F
tree F --json --invert --min-percent 5 --max-depth 3
tree F --min-percent=abc
tree F --max-depth -1
tree F G
tree -- F
tree --
tree F --
tree -o
tree -o=x F
tree --output=OUT1 F
tree F --event 1
tree F --event=1
tree F --event cycles
tree F --event=
tree F --event
tree F --focus ""
tree F --focus= 
tree F --thread main --process 0x1 --kind hang
tree F --time-from 1s --time-to 500ms
tree F --time-from bad
tree F --weight period
tree F --weight bad
tree F --run 3
tree F --run=1 --keep-going
tree F --symbols /nonexistent
tree F --hide-system --hide-unsymbolicated --flatten-recursion --merge a --merge-binary b --exclude c
tree - 
tree -x
tree --json=1 F
top F --sort total --limit 3
top F --sort bad
top F --limit x
top F --json
collapse F --no-thread
collapse F --no-thread=1
flame F --title T --min-width 1 --max-frames 10 --merge-threads --icicle --invert -o OUT2.svg
flame F --min-width 99999
flame F --max-frames x
convert F
convert F --to bad
convert F G
convert F G --to svg -o /nonexistent
convert F -o out.weird
convert F --to folded
convert F --to=folded --title x
convert -- F --to folded
convert F -- --to folded
convert --to
diff
diff A
diff A B C
diff A -- B -- C
diff --json --limit 3 A B
diff --limit x A B
diff --fail-if-slower 200 A B
diff --fail-min-share x A B
diff --svg
diff -o
diff --bogus A B
diff - B
atos
atos -o
atos -o /nonexistent 0x1
atos -o=/nonexistent 0x1
atos -l zz -o x
atos -s 0x10 -o /nonexistent
atos -bogus
atos -o /nonexistent -5
atos --search /nonexistent -i --json
atos -o /nonexistent -- -x
atos -h
atos -o -h
atos --help
demangle _Z1fv
demangle -s _Z1fv
demangle --simplified '$s4main3fooyyF'
demangle -x
demangle -- -s
demangle _Z1fv --help
demangle --help
info
info --bogus
info F --json
info F G
info F -- G
info -- F
info --tokenizer bad F
info --tokenizer=libxml2 F
info --event 3 F
info --event=3 F
info --weight bad F
info --run 9 F
info -o
info F --
records
records P Q
records --bogus
records -- P
records P --min-percent x
records P --tree a --collapse b
records --tree
symcache
symcache bogus
symcache build
symcache build -- x
symcache build --bogus
symcache info --arch
symcache info -arch arm64 /nonexistent
symcache build -o /tmp/clio/cache /nonexistent
open
open --port 70000 F
open --port x F
open --save
open --bogus
open -v --no-browser
monitor
monitor --bogus -- true
monitor x -- true
monitor - -- true
monitor --cpu-threshold 0 -- true
monitor --max-frames x -- true
monitor --dir -- true
monitor -q
monitor --upload http://x -- true
version
version x
version --help
convert G --to gecko -o OUT.json
convert G --to speedscope
convert G --to pprof -o OUT.pb.gz
convert G --to svg --title hello --merge-threads
convert G --to json --invert
convert G -o OUT.speedscope.json
convert F G --to folded -o .
tree G --json --by process
tree G --invert --min-percent 2
top G --sort total --json --limit 5
collapse G --thread 0x1 --focus main
flame G -o OUT.svg --hide-system
diff A B
diff A B --json --svg OUT.svg -o OUT.txt
diff A -- B
diff --keep-going A /nonexistent -- B
diff A
info G
info G --json -o OUT.info
info F --run 1 --keep-going
demangle _ZN3foo3barEv '$s4main3fooyyF' -s
atos -o /nonexistent
symcache info /nonexistent
alert
alert --help
alert --db D --rules R
alert --db D --rules R --json
alert --db=D --rules=R --now 1700000000
alert --db D --rules R --where version=1.0
alert --db D --rules R --where bogus
alert --db D --rules R --where
alert --db D --rules R --now x
alert --db D --rules R --now -5
alert --db D --rules /nonexistent
alert --db D
alert --bogus
alert --db D --rules R extra
alert --db D --rules R --
alert --db D --rules R -- --json
alert --db
alert --db /nonexistent/x.db --rules R
report
report --help
report --db D I
report --db D --json I
report --db D --folded I
report --db D --folded --json I
report --db=D I I
report --db D 0000
report --db D -
report --db D -- I
report --db D --bogus I
report --db
report I --db D
store
store --help
store bogus
store compact --db D
store compact --db=D
store compact --db
store compact --bogus
store compact --db D extra
store compact --db D --
store --db D compact
top-hangs --db D
top-hangs --db D --json --limit 3
top-hangs --db D --limit 0
top-hangs --db D --limit x
top-hangs --db D --where version=1.0 --since 100000d
top-hangs --db D --since bogus
top-hangs --db D --where bogus
top-hangs --db D --kind hang
top-hangs --db D --metric x
top-hangs --db D --folded
top-hangs --db D --signature testBinaryName+0x7b --folded
top-hangs --db D --signature testBinaryName+0x7b --folded --max-reports 1
top-hangs --db D --signature testBinaryName+0x7b --detail --examples 2
top-hangs --db D --signature testBinaryName+0x7b --detail --json
top-hangs --db D --signature testBinaryName+0x7b --detail --examples x
top-hangs --db D --max-reports -1 --signature s --folded
top-hangs --db D extra
top-hangs --db D --
top-hangs --bogus
top-hangs --db
top-hangs --help
top-diagnostics --db D
top-diagnostics --db D --kind crash
top-diagnostics --db D --kind=crash --json --limit 1
top-diagnostics --db D --kind bogus
top-diagnostics --db D --kind
top-diagnostics --db D --kind hang --overview
top-diagnostics --help
stats --db D
stats --db D --json
stats --db=D --by version
stats --db D --by version --json --metric hang.rate
stats --db D --overview --by version
stats --db D --overview --json --by version,device
stats --db D --by bogus
stats --db D --by
stats --db D --where version=1.0 --since 100000d
stats --db D --signature testBinaryName+0x7b
stats --db D --limit 3
stats --db D --kind hang
stats --db D --folded
stats --db D extra
stats --db D --
stats --db D --bogus
stats --db D --help
stats --db --help
stats --values V
stats --values V --json
stats --values V --csv --unit ms
stats --values V --json --csv
stats --values V --bars 3 --memory-limit 1 --sketch
stats --values V --bars x
stats --values V --limit -1
stats --values V --memory-limit
stats --values V --svg OUT.svg -o OUT.txt
stats --values V --output=OUT.txt
stats --values V --sketch-out OUT.sk
stats --values --sketch-in /nonexistent
stats --values V --bogus
stats --values -- V
stats --values V --
stats --values - 
stats
stats --help
stats M --metric hang.duration
stats M --metric launch.duration --json
stats M --metric histogram.app.hang.time
stats G --metric profile.weight
stats G --functions --limit 3
stats G --functions --json
stats G --event 3
stats G --event=3
stats G --event cycles
stats G --event
stats G --event=
stats G --weight period
stats G --weight bad
stats G --run 3
stats G --run 2 --keep-going
stats G /nonexistent --keep-going
stats G /nonexistent
stats G --share --metric fn.self:main
stats P --metric cpu.duration
ingest
ingest --help
ingest --db D M
ingest --db=D -q M
ingest --db D --quiet --jobs 1 --batch 2 M
ingest --db D --jobs 0 M
ingest --db D --jobs x M
ingest --db D --batch 0 M
ingest --db D --batch= M
ingest --db D --set app=x,version=9 M
ingest --db D --set bogus M
ingest --db D --symbols /nonexistent M
ingest --db D --symbols /nonexistent --symbols /nonexistent2 M
ingest --db D --keep-going M /nonexistent
ingest --db D M --quiet
ingest --db D -- M
ingest --db D --
ingest --db D -
ingest --db D --bogus M
ingest --db
ingest -x
ingest --db D M --help
upload
upload --help
upload --url http://127.0.0.1:1/v1/reports
upload --url http://127.0.0.1:1/v1/reports --token-file V
upload --url http://127.0.0.1:1/v1/reports --token-file /nonexistent M
upload --url=http://127.0.0.1:1/v1/reports --token-file=V --retries 1 --retry-delay 1 M
upload --url http://127.0.0.1:1/v1/reports --token-file V --retries=1 -j 1 --force M F
upload --url http://127.0.0.1:1/v1/reports --token-file V --retries 0 M
upload --url http://127.0.0.1:1/v1/reports --token-file V --retry-delay x M
upload --url http://127.0.0.1:1/v1/reports --token-file V --jobs 0 M
upload --url http://127.0.0.1:1/v1/reports --token-file V --jobs 65 M
upload --url http://127.0.0.1:1/v1/reports --token-file V -j x M
upload --url http://127.0.0.1:1/v1/reports --token-file V --set bogus --retries 1 M
upload --url http://127.0.0.1:1/v1/reports --token-file V -
upload --url http://127.0.0.1:1/v1/reports --token-file V -- M
upload --url http://127.0.0.1:1/v1/reports --token-file V --retries 1 M --force
upload --url http://127.0.0.1:1/v1/reports --token-file V --bogus M
upload --url
upload -j
upload M --help
serve
serve --help
serve --bogus
serve x
serve --
serve -- --ui
serve --ingest
serve --ingest --token-file /nonexistent
serve --ingest --token-file V
serve --ingest --token-file=V --db=D -v
serve --ui --read-token-file V
serve --ui --rules /nonexistent --db D
serve --ui --max-body 10
serve --ui --max-body x
serve --ui --max-body=-2048
serve --ui --max-stacks 0
serve --ui --max-seconds x
serve --ui --workers 0
serve --ui --header-timeout
serve --ui --max-per-address -1
serve --ui --symbols /nonexistent --symbols /nonexistent2 --read-token-file /nonexistent
serve --listen
serve --ui --verbose --token-file V --ingest
CASES
echo "$n command lines, $bad differences"
[ $bad -eq 0 ]
