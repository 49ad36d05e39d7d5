/*
 * Demangling. Itanium C++ and Rust (legacy "_ZN…17h<hash>E", which loses its hash, and v0 "_R…")
 * go through libiberty's cplus_demangle (GNU c++filt's demangler, LGPL with a linking exception),
 * whose output matches LLVM's for the names compilers emit. Swift goes through our own demangler
 * (demangle_swift.c): no maintained C one exists. Swift names are shown in the simplified form by
 * default (what atos, Instruments and crash reports print); the symbol cache keeps the full form
 * right after it (tk_sc_name).
 */
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symint.h"

/* Rust legacy names are Itanium-shaped: DMGL_RUST makes libiberty recognise them and drop the
 * "::h<hash>" suffix as rustfilt and inferno do. */
char *tk_demangle_cxx(const char *name)
{
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	if (name[1] == 'R')
		return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_RUST);
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_RUST);
	if (!d)
		d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	return d;
}

char *tk_demangle(const char *symbol)
{
	if (!symbol)
		return NULL;
	if (symbol[0] == '_' && symbol[1] == '_' && (symbol[2] == 'Z' || symbol[2] == 'R'))
		symbol++; /* Mach-O symbol tables prefix C names with '_' */
	return tk_demangle_cxx(symbol);
}

int tk_is_swift_symbol(const char *n)
{
	if (!n)
		return 0;
	/* Swift 5 "$s", Swift 4.2 "$S", embedded "$e", Swift 4 "_T0"; Mach-O adds one leading '_' */
	if (n[0] == '_' && (n[1] == '$' || (n[1] == '_' && n[2] == 'T' && n[3] == '0')))
		n++;
	if (n[0] == '$' && (n[1] == 's' || n[1] == 'S' || n[1] == 'e'))
		return 1;
	return n[0] == '_' && n[1] == 'T' && n[2] == '0';
}

int tk_symbol_is_swift(const char *symbol)
{
	return tk_is_swift_symbol(symbol);
}

/* Swift names up to this long are demangled; longer ones are kept as they are. */
#define SWIFT_OUT_MAX 16384

static char *swift(const char *s, int flags)
{
	size_t len = strlen(s);
	char *out = malloc(SWIFT_OUT_MAX);
	if (!out)
		return NULL;
	size_t n = tk_swift_demangle(s, len, out, SWIFT_OUT_MAX, flags);
	/* Mach-O adds one '_' to "_$s…" and to "_T0…" */
	if (!n && s[0] == '_' && (s[1] == '_' || s[1] == '$'))
		n = tk_swift_demangle(s + 1, len - 1, out, SWIFT_OUT_MAX, flags);
	if (!n) {
		free(out);
		return NULL;
	}
	char *r = realloc(out, n + 1);
	return r ? r : out;
}

char *tk_demangle_any(const char *symbol, int flags)
{
	if (!symbol || !symbol[0])
		return NULL;
	char *d = tk_demangle(symbol);
	if (d)
		return d;
	const char *s = symbol[0] == '_' && symbol[1] == '_' ? symbol + 1 : symbol;
	if (!tk_is_swift_symbol(s) && !(s[0] == '_' && s[1] == 'T') && strncmp(s, "@__swiftmacro_", 14))
		return NULL; /* not worth an output buffer */
	return swift(symbol, flags);
}

char *tk_sc_name(const char *name, size_t *len, uint32_t *flags)
{
	*flags = 0;
	char *d = tk_demangle_cxx(name);
	if (d) {
		*len = strlen(d);
		return d;
	}
	if (!tk_is_swift_symbol(name) && !(name[0] == '_' && name[1] == 'T'))
		return NULL;
	char *simple = swift(name, TK_DEMANGLE_SIMPLIFIED);
	char *full = simple ? swift(name, TK_DEMANGLE_FULL) : NULL;
	if (!simple || !full) {
		free(simple);
		free(full);
		if (!tk_is_swift_symbol(name))
			return NULL;
		/* flagged, kept mangled: both forms are the name itself */
		simple = strdup(name);
		full = strdup(name);
		if (!simple || !full) {
			free(simple);
			free(full);
			return NULL;
		}
	}
	size_t ls = strlen(simple), lf = strlen(full);
	char *r = malloc(ls + lf + 2);
	if (r) {
		memcpy(r, simple, ls + 1);
		memcpy(r + ls + 1, full, lf + 1);
		*len = ls + 1 + lf;
		*flags = TK_SC_LOC_SWIFT;
	}
	free(simple);
	free(full);
	return r;
}
