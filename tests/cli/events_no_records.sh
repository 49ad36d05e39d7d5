#!/bin/bash
# Consumers read events from the profile alone (issue 16): writers and the store never reach into
# the Records reader. Checked on the objects the build made: no lib/write or lib/store object refers
# to a tk_records_* name (the cursor lib/read/records.c defines), and no lib/write or lib/store
# source includes a reader-private header (lib/read/*.h) or the removed tracekit/records.h.
. "${TK_ROOT:-.}/tests/lib.sh"
OBJ="$TK_ROOT/${BUILD:-build}/obj/lib"
ls "$OBJ"/write/*.o "$OBJ"/store/*.o >/dev/null 2>&1 || { notok "lib/write and lib/store objects in $OBJ"; exit 0; }
nm -g --defined-only "$OBJ"/read/records.o | awk 'NF == 3 && $3 ~ /^tk_records_/ { print $3 }' | sort -u >"$TMP/cursor"
check "lib/read/records.o defines the cursor (tk_records_open among its names)" grep -qx tk_records_open "$TMP/cursor"
for d in write store; do
	nm -u "$OBJ/$d"/*.o | awk 'NF >= 2 { print $NF }' | sort -u >"$TMP/$d"
	check "lib/$d objects have undefined names (the check sees them)" grep -q '^tk_' "$TMP/$d"
	check_eq "no lib/$d object calls a tk_records_* cursor" "" "$(grep '^tk_records_' "$TMP/$d" | paste -sd' ')"
	check_eq "no lib/$d source includes a reader-private header" "" \
		"$(grep -lE '#include "(read/[a-z_]+\.h|tracekit/records\.h)"' "$TK_ROOT/lib/$d"/*.[ch] | paste -sd' ')"
done
# the one entry point consumers use: the registry's reader table, public in tracekit/read.h
check "the store reads Records through the reader table (tk_reader_records)" grep -qx tk_reader_records "$TMP/store"
check_eq "lib/write defines no Records cursor names either" "" \
	"$(nm -g --defined-only "$OBJ"/write/*.o | awk 'NF == 3 && $3 ~ /^tk_records_/' | paste -sd' ')"
