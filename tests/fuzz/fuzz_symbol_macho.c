/* libFuzzer harness: arbitrary bytes as a Mach-O (thin or fat) → parse, build the symbol cache of
 * every slice (load commands, symbol table, DWARF through libdwarf), then look addresses up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tk_macho_file f;
	tk_error err;
	if (tk_macho_parse(data, size, "fuzz", &f, &err) < 0)
		return 0;
	for (uint32_t i = 0; i < f.nslices; i++) {
		const tk_macho_slice *sl = &f.slices[i];
		if (!(sl->cputype & 0x01000000u) || !sl->nsects)
			continue;
		tk_sc_input in = {.image_name = "fuzz", .cputype = sl->cputype, .cpusubtype = sl->cpusubtype};
		uint8_t *buf = NULL;
		size_t n = 0;
		if (tk_symcache_build_slice(data, size, "fuzz", sl, &in, &buf, &n, &err) < 0)
			continue;
		tk_symcache *c = tk_symcache_view(buf, n, "fuzz", TK_SC_HEAP, &err);
		if (!c)
			abort(); /* what we build must always validate */
		tk_symbol_frame fr[TK_SYMBOL_MAX_FRAMES];
		uint64_t start;
		for (uint32_t k = 0; k < sl->nsects; k++) {
			tk_symcache_lookup(c, sl->sects[k].addr, fr, TK_SYMBOL_MAX_FRAMES, &start);
			tk_symcache_lookup(c, sl->sects[k].addr + sl->sects[k].size / 2, fr, TK_SYMBOL_MAX_FRAMES,
			                   &start);
		}
		tk_symcache_close(c);
	}
	tk_macho_free(&f);
	return 0;
}
