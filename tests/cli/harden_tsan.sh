#!/bin/bash
# ThreadSanitizer: four threads read exports at once (both tokenizers); no race may be reported and
# every result must equal a read alone. The binary is built by mk/harden.mk ($BUILD/tsan/).
. "${TK_ROOT:-.}/tests/lib.sh"
BIN="$TK_ROOT/${BUILD:-build}/tsan/parallel_readers"
[ -x "$BIN" ] || { notok "ThreadSanitizer build of the parallel reader test" "missing $BIN (make $BUILD/tsan/parallel_readers)"; exit 0; }
# a document with tags of 40 attributes and a 300 KB text run, on top of real fixtures
python3 - "$TMP/attrs.xml" <<'PY'
import sys
attrs = " ".join('x%d="%d"' % (i, i) for i in range(40))
rows = "".join('<row><sample-time id="%d">%d</sample-time><thread ref="2"/><weight ref="4"/><backtrace ref="5"/><extra %s/></row>' % (10 + i, i, attrs) for i in range(200))
open(sys.argv[1], "w").write('<?xml version="1.0"?><trace-query-result><node><schema name="time-profile"><col><mnemonic>time</mnemonic></col><col><mnemonic>thread</mnemonic></col><col><mnemonic>weight</mnemonic></col><col><mnemonic>stack</mnemonic></col><col><mnemonic>extra</mnemonic></col></schema>'
  '<row><sample-time id="1">0</sample-time><thread id="2" fmt="t 0x1"><tid id="3">1</tid></thread><weight id="4">1000</weight><backtrace id="5"><frame id="6" name="f" addr="0x1"/></backtrace><extra %s>%s</extra></row>%s</node></trace-query-result>' % (attrs, " " * 300000, rows))
PY
TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$BIN" "$TMP/attrs.xml" \
	"$FIX"/xctrace/time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml \
	"$FIX"/xctrace/time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.xml >"$TMP/out" 2>"$TMP/err"
rc=$?
cat "$TMP/out"
if [ $rc -eq 0 ] && ! grep -q 'ThreadSanitizer' "$TMP/err"; then ok "ThreadSanitizer: no race among parallel readers"
else notok "ThreadSanitizer: no race among parallel readers" "rc=$rc $(grep -m3 -A12 'WARNING: ThreadSanitizer' "$TMP/err" | head -30)"; fi
