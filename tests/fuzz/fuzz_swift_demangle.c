/* libFuzzer harness: arbitrary bytes as a Swift symbol, in both output forms, through the
 * current-mangling parser (prefixed "$s" when the input has no prefix of its own) and the legacy
 * one. The input is an exact-size copy, so ASan reports any read past it; output must fit and be
 * NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/symbol.h"

static void one(const char *s, size_t n)
{
	static char out[4096];
	for (int flags = 0; flags < 2; flags++) {
		size_t r = tk_swift_demangle(s, n, out, sizeof out, flags);
		if (r && (r >= sizeof out || out[r] != 0 || strlen(out) != r))
			abort();
		char small[24];
		r = tk_swift_demangle(s, n, small, sizeof small, flags);
		if (r && (r >= sizeof small || small[r] != 0))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *b = malloc(size ? size : 1);
	memcpy(b, data, size);
	one(b, size);
	free(b);
	char *p = malloc(size + 2);
	memcpy(p, "$s", 2);
	memcpy(p + 2, data, size);
	one(p, size + 2);
	memcpy(p, "_T", 2);
	one(p, size + 2);
	free(p);
	return 0;
}
