#!/bin/bash
# Small inputs must not make tracekit use memory out of proportion to what they hold: memory is
# bounded by distinct stacks, never by the length of one text run, comment, tag or stack. Each
# case is a gzip'd input that expands to gigabytes; each must end quickly with a clear error (or
# succeed) with a small peak RSS (measured by /usr/bin/time). Multi-member gzip files are built
# by concatenating one compressed block many times, so making them costs no time either.
. "${TK_ROOT:-.}/tests/lib.sh"
RSS_LIMIT_KB=400000 # generous for ASan builds; the inputs below would need gigabytes if buffered

# rep FILE COUNT: gzip one block (stdin) and append it COUNT times to FILE (COUNT a power of two:
# the block is doubled log2(COUNT) times, a dozen cat processes rather than COUNT)
rep() {
	local n=1
	gzip -1 -c >"$TMP/blk.gz"
	while [ "$n" -lt "$2" ]; do cat "$TMP/blk.gz" "$TMP/blk.gz" >"$TMP/blk2.gz" && mv "$TMP/blk2.gz" "$TMP/blk.gz"; n=$((n * 2)); done
	cat "$TMP/blk.gz" >>"$1"
}
# run_bounded NAME EXPECT_RC_NONZERO(1|0) CMD...: run with /usr/bin/time, check RSS and status
run_bounded() {
	local n=$1 want_fail=$2; shift 2
	cpu_bounded 60 /usr/bin/time -f 'RSS %M' -o "$TMP/time" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	local rss; rss=$(sed -n 's/^RSS \([0-9]*\)$/\1/p' "$TMP/time" | tail -1)
	rss=${rss:-999999999}
	if [ "$rc" -ge 124 ] || grep -q Sanitizer "$TMP/err"; then
		notok "$n" "rc=$rc rss=${rss}KB $(head -c 300 "$TMP/err")"; return
	fi
	if [ "$want_fail" = 1 ] && [ "$rc" -eq 0 ]; then notok "$n" "expected a failure, got rc 0"; return; fi
	if [ "$want_fail" = 0 ] && [ "$rc" -ne 0 ]; then notok "$n" "rc=$rc $(head -c 300 "$TMP/err")"; return; fi
	if [ "$rss" -gt "$RSS_LIMIT_KB" ]; then notok "$n" "peak RSS ${rss} KB > ${RSS_LIMIT_KB} KB"; return; fi
	ok "$n (peak RSS ${rss} KB)"
}

HEAD='<?xml version="1.0"?><trace-query-result><node><schema name="time-profile"><col><mnemonic>time</mnemonic></col><col><mnemonic>thread</mnemonic></col><col><mnemonic>weight</mnemonic></col><col><mnemonic>stack</mnemonic></col></schema><row><sample-time id="1">1</sample-time><thread id="2" fmt="t 0x1"><tid id="3">1</tid></thread><weight id="4">1000</weight><backtrace id="5"><text-addresses id="6">'
TAIL='</text-addresses></backtrace></row></node></trace-query-result>'

# 1. one <text-addresses> of 2^31 addresses (4 GiB of "1 "), a 4 MB gzip file
f="$TMP/addrs.xml.gz"
printf '%s' "$HEAD" | gzip -c >"$f"
head -c 1048576 /dev/zero | tr '\0' '1' | sed 's/1/1 /g' | head -c 1048576 | rep "$f" 4096
printf '%s' "$TAIL" | gzip -c >>"$f"
run_bounded "2^31 text addresses: bounded memory, an error" 1 "$TK" tree "$f"
check "the error names the stack-depth limit" grep -q 'more than [0-9]* frames' "$TMP/err"
check_eq "the error is one line" 1 "$(wc -l <"$TMP/err")"

# 2. 512 MiB of whitespace between elements: read in bounded memory (and then: no table)
f="$TMP/ws.xml.gz"
printf '<?xml version="1.0"?><trace-query-result>' | gzip -c >"$f"
head -c 1048576 /dev/zero | tr '\0' ' ' | rep "$f" 512
printf '</trace-query-result>' | gzip -c >>"$f"
run_bounded "512 MiB of whitespace in content: bounded memory" 1 "$TK" info "$f"
check "whitespace document: the error is about the missing table" grep -q 'no table' "$TMP/err"

# 3. a 512 MiB text run inside an element that keeps no text
f="$TMP/text.xml.gz"
printf '<?xml version="1.0"?><trace-query-result><x>' | gzip -c >"$f"
head -c 1048576 /dev/zero | tr '\0' 'a' | rep "$f" 512
printf '</x></trace-query-result>' | gzip -c >>"$f"
run_bounded "512 MiB text run: bounded memory" 1 "$TK" info "$f"

# 4. a 512 MiB text run inside an element whose text is kept (<path>): a clear error
f="$TMP/path.xml.gz"
printf '%s' "${HEAD%<text-addresses id=\"6\">}" | sed 's/<backtrace id="5">$/<backtrace id="5"><frame id="7" name="f" addr="0x1"><source id="8"><path id="9">/' | gzip -c >"$f"
head -c 1048576 /dev/zero | tr '\0' 'a' | rep "$f" 512
printf '</path></source></frame></backtrace></row></node></trace-query-result>' | gzip -c >>"$f"
run_bounded "512 MiB <path> text: bounded memory, an error" 1 "$TK" tree "$f"
check "the <path> error names the text limit" grep -q 'longer than' "$TMP/err"

# 5. a 512 MiB comment and 5. a 512 MiB tag (whitespace between attributes)
f="$TMP/comment.xml.gz"
printf '<?xml version="1.0"?><trace-query-result><!--' | gzip -c >"$f"
head -c 1048576 /dev/zero | tr '\0' 'c' | rep "$f" 512
printf -- '--></trace-query-result>' | gzip -c >>"$f"
run_bounded "512 MiB comment: bounded memory, an error" 1 "$TK" info "$f"
check "the comment error names the limit" grep -q 'longer than' "$TMP/err"
f="$TMP/tag.xml.gz"
printf '<?xml version="1.0"?><trace-query-result><x' | gzip -c >"$f"
head -c 1048576 /dev/zero | tr '\0' ' ' | rep "$f" 512
printf '/></trace-query-result>' | gzip -c >>"$f"
run_bounded "512 MiB tag: bounded memory, an error" 1 "$TK" info "$f"

# 6. a <backtrace> of 100,000 <frame ref> children: over the stack-depth limit
f="$TMP/frames.xml.gz"
{ printf '%s' "${HEAD%<text-addresses id=\"6\">}" | sed 's/<backtrace id="5">$/<backtrace id="5"><frame id="7" name="f" addr="0x1"\/>/'
  for _ in $(seq 99999); do printf '<frame ref="7"/>'; done
  printf '</backtrace></row></node></trace-query-result>'; } | gzip -c >"$f"
run_bounded "100,000 frames in one backtrace: an error" 1 "$TK" tree "$f"
check "the frames error names the stack-depth limit" grep -q 'more than [0-9]* frames' "$TMP/err"
