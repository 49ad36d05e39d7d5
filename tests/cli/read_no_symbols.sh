#!/bin/bash
# Readers do not link symbol code (issue 11): naming frames is a pass of its own (lib/symbol,
# tk_elf_name_profile, tk_symbolicate_profile), so a program that only reads profiles links none
# of libdwfl, libdwarf or the demanglers. Checked on the objects the build made: no lib/read object
# refers to a name a lib/symbol object defines, and no lib/read source includes a symbol header.
. "${TK_ROOT:-.}/tests/lib.sh"
OBJ="$TK_ROOT/${BUILD:-build}/obj/lib"
ls "$OBJ"/read/*.o >/dev/null 2>&1 || { notok "lib/read objects in $OBJ/read"; exit 0; }
nm -g --defined-only "$OBJ"/symbol/*.o | awk 'NF == 3 { print $3 }' | sort -u >"$TMP/symbol"
check "lib/symbol defines names (tk_elf_open among them)" grep -qx tk_elf_open "$TMP/symbol"
nm -u "$OBJ"/read/*.o | awk 'NF >= 2 { print $NF }' | sort -u >"$TMP/read"
check "lib/read objects have undefined names (the check sees them)" grep -qx tk_stack_push "$TMP/read"
check_eq "no lib/read object refers to symbol code" "" "$(comm -12 "$TMP/symbol" "$TMP/read" | paste -sd' ')"
check_eq "no lib/read source includes a symbol header" "" \
	"$(grep -lE '#include "(symbol/|tracekit/symbol\.h)' "$TK_ROOT"/lib/read/*.[ch] | paste -sd' ')"
