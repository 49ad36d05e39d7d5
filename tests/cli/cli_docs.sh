# docs/cli.md is `tracekit help --markdown` of this binary, and every option the reference lists for
# a command (its option table, cli/options.h) is accepted by that command's parser and shown by its
# --help. The parser's shared rules (NAME=VALUE, missing values, "--", unknown options) hold.
. "$(dirname "$0")/../lib.sh"
tk_fork_start

"$TK" help --markdown >"$TMP/cli.md" 2>"$TMP/md.err"
check_eq "help --markdown exits 0 quietly" "0:" "$?:$(cat "$TMP/md.err")"
if cmp -s "$TK_ROOT/docs/cli.md" "$TMP/cli.md"; then
	ok "docs/cli.md is current"
else
	notok "docs/cli.md is current (regenerate: build/tracekit help --markdown > docs/cli.md)" \
		"$(diff "$TK_ROOT/docs/cli.md" "$TMP/cli.md" | head -20)"
fi

# Every command of `tracekit --help` has its section.
missing=""
for c in $("$TK" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p'); do
	grep -q "^## tracekit $c\$" "$TMP/cli.md" || missing="$missing $c"
done
check_eq "every command has a section in the reference" "" "$missing"

# The options listed per command: "- `NAME [ARG]`, `ALIAS [ARG]` ...: help" lines, operands excluded;
# commands that link to the shared analysis options take those too.
python3 - "$TMP/cli.md" >"$TMP/opts" <<'EOF'
import re, sys
cmd, shared, sections, uses_shared = None, [], {}, set()
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"## tracekit (\S+)$", line)
    if m:
        cmd = m.group(1); sections.setdefault(cmd, []); continue
    if line.startswith("## Options shared by the analysis commands"):
        cmd = None; continue
    if "(#options-shared-by-the-analysis-commands)" in line and cmd:
        uses_shared.add(cmd); continue
    m = re.match(r"- ((?:`[^`]+`(?:, )?)+)( \(repeatable\)| \(operand\))?: ", line)
    if not m or (m.group(2) or "").strip() == "(operand)":
        continue
    for span in re.findall(r"`([^`]+)`", m.group(1)):
        name, _, arg = span.partition(" ")
        (sections[cmd] if cmd else shared).append((name, "value" if arg else "flag"))
for c, opts in sections.items():
    for name, kind in opts + (shared if c in uses_shared else []):
        print(c, name, kind)
EOF
check_eq "the reference lists options of the converted commands" 1 "$([ "$(wc -l <"$TMP/opts")" -gt 150 ] && echo 1)"
check_eq "tree takes the shared analysis options" 1 "$(grep -c '^tree --hide-system flag$' "$TMP/opts")"

# Accepted: run each with a value where it takes one, no input, in an empty directory, standard input
# empty; whatever else it says, it never calls the option unknown. The command lines run in one
# tk_batch process (tracekit's own main() per line, each one's end marked on stderr), except monitor
# and serve, which install signal handlers and start children: those run as processes of their own.
mkdir "$TMP/empty"
bad_parse="" bad_help=""
: >"$TMP/parse.list"
: >"$TMP/help.list"
n_batch=0
while read -r c name kind; do
	pre=()
	[ "$c" = symcache ] && pre=(build)
	[ "$c" = serve ] && pre=(--listen bad) # never a server: serve --ui alone would serve until killed
	args=("$name")
	[ "$kind" = value ] && args+=(v1)
	case $c in
	monitor | serve)
		(cd "$TMP/empty" && timeout 60 "$TK" "$c" "${pre[@]}" "${args[@]}" </dev/null >/dev/null 2>"$TMP/err")
		rc=$?
		if [ $rc -ge 124 ] || grep -q -e 'unknown option' -e 'Sanitizer' "$TMP/err"; then
			bad_parse="$bad_parse $c:$name(rc=$rc $(head -c 200 "$TMP/err"))"
		fi
		;;
	*)
		tk_batch_add "$TMP/parse.list" "$c" "${pre[@]}" "${args[@]}"
		n_batch=$((n_batch + 1))
		echo "$c:$name" >>"$TMP/parse.names"
		;;
	esac
	[ "$name" = "--" ] && continue # diff's separator: in its --help, but "--" is everywhere there
	# each command's --help once (the same text for every option of it)
	if [ ! -e "$TMP/help.$c" ]; then
		: >"$TMP/help.$c"
		tk_batch_add "$TMP/help.list" "$c" --help
	fi
	echo "$c $name" >>"$TMP/help.want"
done <"$TMP/opts"
(cd "$TMP/empty" && TK_BATCH_MARK=1 timeout 600 "$TK_BATCH" "$TMP/parse.list" </dev/null >/dev/null 2>"$TMP/parse.err")
rc=$?
# each command's stderr ends at its "tk_batch: line N: exit RC" mark
bad_parse="$bad_parse$(python3 - "$TMP/parse.err" "$TMP/parse.names" "$n_batch" "$rc" <<'PY'
import re, sys
err = open(sys.argv[1], encoding="utf-8", errors="replace").read()
names = open(sys.argv[2]).read().split("\n")
n, rc = int(sys.argv[3]), int(sys.argv[4])
out, seg, seen = [], [], 0
for line in err.split("\n"):
    m = re.fullmatch(r"tk_batch: line (\d+): exit (\d+)", line)
    if not m:
        seg.append(line); continue
    i, code, text = int(m.group(1)), int(m.group(2)), "\n".join(seg)
    seen, seg = i, []
    if code >= 124 or "unknown option" in text or "Sanitizer" in text:
        out.append(" %s(rc=%d %s)" % (names[i - 1], code, text[:200]))
if seen != n or rc not in (0, 1):
    out.append(" tk_batch(rc=%d after %d of %d command lines: %s)" % (rc, seen, n, "\n".join(seg)[:400]))
print("".join(out), end="")
PY
)"
# the --help texts, one tk_batch process (each text ends at its "tk_batch: line N: exit RC" mark)
TK_BATCH_MARK=1 "$TK_BATCH" "$TMP/help.list" >"$TMP/help.all" 2>"$TMP/help.err" || bad_help="$bad_help tk_batch:--help-failed"
python3 - "$TMP/help.all" "$TMP/help.list" "$TMP" <<'PY'
import re, sys
cmds = [l.split("\t")[0] for l in open(sys.argv[2]).read().split("\n") if l]
seg = []
for line in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    m = re.fullmatch(r"tk_batch: line (\d+): exit (\d+)", line)
    if not m:
        seg.append(line); continue
    if m.group(2) == "0":
        open("%s/help.%s" % (sys.argv[3], cmds[int(m.group(1)) - 1]), "w", encoding="utf-8").write("\n".join(seg))
    seg = []
PY
while read -r c name; do
	[ -s "$TMP/help.$c" ] || { bad_help="$bad_help $c:--help-missing"; continue; }
	grep -qE -- "(^|[ ,|\[])$name([ ,=|]|\]|\$)" "$TMP/help.$c" || bad_help="$bad_help $c:$name"
done <"$TMP/help.want"
check_eq "every listed option is accepted by its command's parser" "" "$bad_parse"
check_eq "every listed option is in its command's --help" "" "$bad_help"

# The check above can fail: an option no table has is reported as unknown, exit status 2.
"$TK" tree --no-such-option >/dev/null 2>"$TMP/err"
check_eq "an unknown option is a usage error" \
	"2 tracekit: tree: unknown option '--no-such-option' (see tracekit tree --help)" "$? $(cat "$TMP/err")"
"$TK" tree --by >/dev/null 2>"$TMP/err"
check_eq "a missing value is a usage error" "2 tracekit: tree: --by needs a value (see tracekit tree --help)" \
	"$? $(cat "$TMP/err")"
"$TK" info -o >/dev/null 2>"$TMP/err"
check_eq "a missing value names the spelling typed" "2 tracekit: info: -o needs a value (see tracekit info --help)" \
	"$? $(cat "$TMP/err")"

# NAME=VALUE is NAME VALUE; "--" makes a path that starts with '-' the input.
F="$TK_ROOT/tests/fixtures/folded/inferno_austin.txt"
"$TK" tree --max-depth 2 --by all "$F" >"$TMP/a" && "$TK" tree --max-depth=2 --by=all "$F" >"$TMP/b"
check_same_file "--opt=VALUE is --opt VALUE" "$TMP/a" "$TMP/b"
check_eq "--max-depth took effect" 1 "$([ "$(wc -l <"$TMP/a")" -lt "$("$TK" tree --by all "$F" | wc -l)" ] && echo 1)"
cp "$F" "$TMP/-dash.txt"
(cd "$TMP" && "$TK" collapse -- -dash.txt >"$TMP/c") && "$TK" collapse "$F" >"$TMP/d"
check_same_file "-- then a path starting with '-'" "$TMP/d" "$TMP/c"
(cd "$TMP" && "$TK" collapse -dash.txt >/dev/null 2>"$TMP/err")
check_eq "without --, the same path is an unknown option" 2 "$?"
# atos: the first address ends the options (a later --help is an address, not a request for help)
"$TK" atos -o "$TMP/none" 0x1 --help >"$TMP/out" 2>&1
check_eq "atos: options end at the first address" "1 0" "$? $(grep -c 'usage:' "$TMP/out")"
"$TK" atos -o "$TMP/none" --help >"$TMP/out" 2>&1
check_eq "atos: --help where an option stands" "0 1" "$? $(grep -c 'usage:' "$TMP/out")"
out=$("$TK" demangle _Z1fv --help)
check_eq "demangle: options end at the first name" "f()
--help" "$out"
