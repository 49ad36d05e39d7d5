/* libFuzzer harness: arbitrary bytes as a symbol cache. The checksum is fixed up first so the
 * fuzzer reaches the layout checks and lookups (a real corrupt file is stopped by the checksum). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 176 || size > (1 << 20))
		return 0;
	uint8_t *b = malloc(size);
	memcpy(b, data, size);
	memcpy(b, "TKSYMC\r\n", 8);
	uint64_t fsz = size;
	memcpy(b + 16, &fsz, 8);
	tk_symcache_fix_checksum(b, size);
	tk_error err;
	tk_symcache *c = tk_symcache_view(b, size, "fuzz", TK_SC_HEAP, &err);
	if (!c)
		return 0;
	tk_symcache_meta m;
	tk_symcache_info(c, &m);
	tk_symbol_frame fr[TK_SYMBOL_MAX_FRAMES];
	uint64_t start, x = 0x9e3779b97f4a7c15ULL, addr[64];
	const tk_symcache *cs[64];
	for (int i = 0; i < 64; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		addr[i] = (i & 1) ? x : m.text_vmaddr + (x >> 40);
		cs[i] = c;
	}
	tk_symcache_warm(cs, addr, 64); /* reads what the lookups will, with the same checks */
	for (int i = 0; i < 64; i++)
		tk_symcache_lookup(c, addr[i], fr, TK_SYMBOL_MAX_FRAMES, &start);
	tk_symcache_close(c);
	return 0;
}
