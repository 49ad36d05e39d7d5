#!/bin/bash
# The analysis library (libtracekit.a) needs none of the fleet store's libraries: SQLite, curl,
# microhttpd and OpenSSL are referenced only from libtracekit-store.a; a program on the public API
# (examples/api/heaviest.c) links with the analysis library alone and reads a real export; and the
# version it reports at run time is the headers' version.
set -u
. "$(dirname "$0")/../lib.sh"
B="$TK_ROOT/$BUILD"
undef=$(nm -A "$B/libtracekit.a" 2>/dev/null | grep -E ' U (sqlite3_|curl_|MHD_|SHA256|EVP_)' | head -5)
check_eq "libtracekit.a references no sqlite3_/curl_/MHD_/OpenSSL symbol" "" "$undef"
store_undef=$(nm "$B/libtracekit-store.a" 2>/dev/null | grep -cE ' U (sqlite3_|curl_)')
[ "${store_undef:-0}" -gt 0 ] && ok "libtracekit-store.a holds the store's SQLite and curl calls" ||
	notok "libtracekit-store.a holds the store's SQLite and curl calls" "none found"
ex="$B/examples/api/heaviest"
fix="$FIX/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"
if [ -x "$ex" ]; then
	libs=$(ldd "$ex" 2>/dev/null | grep -cE 'libsqlite3|libcurl|libmicrohttpd|libcrypto')
	check_eq "the example links no store library" 0 "$libs"
	"$ex" "$fix" >"$TMP/h.out" 2>&1
	ours=$("$TK" info "$fix" | awk '$1 == "weight" {print $2}')
	got=$(awk '/^unit/ {gsub(",", "", $4); print $4}' "$TMP/h.out")
	want=$(python3 - "$fix" <<'PY'
import sys, xml.etree.ElementTree as ET
# independent sum of the export's weights (ns), following xctrace's id/ref rule
ids = {}; total = 0
for ev, el in ET.iterparse(sys.argv[1], events=("end",)):
    if el.tag == "weight":
        if "id" in el.attrib: ids[el.attrib["id"]] = int(el.text)
        total += ids[el.attrib["ref"]] if "ref" in el.attrib else int(el.text)
print(total)
PY
)
	check_eq "the example's total weight equals an independent sum of the export's weights" "${want:-missing}" "$got"
	hv=$(sed -n 's/^#define TK_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' "$TK_ROOT/include/tracekit/version.h" | paste -sd.)
	check_eq "tk_version_string() is the header's version" "libtracekit $hv" "$(head -1 "$TMP/h.out" | cut -d' ' -f1-2)"
	check_eq "tracekit version says the same" "tracekit $hv" "$("$TK" version)"
else
	notok "examples/api/heaviest built" "missing $ex"
fi
