/*
 * Demangling. Itanium C++ goes through libiberty's cplus_demangle (GNU c++filt's demangler, LGPL
 * with a linking exception), whose output matches LLVM's for the names compilers emit. Swift has
 * no maintained C demangler: Swift symbols are kept as they are and flagged (TK_FRAME_SWIFT) so a
 * consumer can demangle them with swift-demangle where a toolchain exists.
 */
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symint.h"

char *tk_demangle_cxx(const char *name)
{
	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

char *tk_demangle(const char *symbol)
{
	if (!symbol)
		return NULL;
	if (symbol[0] == '_' && symbol[1] == '_' && symbol[2] == 'Z')
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
