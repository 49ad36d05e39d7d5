#include "util/hidx.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

void tk_hidx_free(tk_hidx *t)
{
	free(t->slots);
	memset(t, 0, sizeof *t);
}

uint32_t tk_hidx_find(const tk_hidx *t, uint64_t hash, tk_hidx_eq eq, const void *ctx, const void *key)
{
	if (!t->slots)
		return UINT32_MAX;
	uint32_t h32 = (uint32_t)(hash >> 32) ^ (uint32_t)hash;
	for (uint32_t i = h32 & t->mask;; i = (i + 1) & t->mask) {
		uint64_t s = t->slots[i];
		if (!s)
			return UINT32_MAX;
		if ((uint32_t)(s >> 32) == h32 && eq(ctx, (uint32_t)s - 1, key))
			return (uint32_t)s - 1;
	}
}

static void place(uint64_t *slots, uint32_t mask, uint64_t s)
{
	for (uint32_t i = (uint32_t)(s >> 32) & mask;; i = (i + 1) & mask)
		if (!slots[i]) {
			slots[i] = s;
			return;
		}
}

static void resize(tk_hidx *t, uint32_t ncap)
{
	uint64_t *ns = tk_xmalloc_big((size_t)ncap * sizeof *ns);
	memset(ns, 0, (size_t)ncap * sizeof *ns);
	if (t->slots)
		for (uint32_t i = 0; i <= t->mask; i++)
			if (t->slots[i])
				place(ns, ncap - 1, t->slots[i]);
	free(t->slots);
	t->slots = ns;
	t->mask = ncap - 1;
}

void tk_hidx_reserve(tk_hidx *t, size_t n)
{
	if (n >= UINT32_MAX / 4 || (t->slots && n * 2 <= (size_t)t->mask + 1))
		return;
	uint32_t ncap = 64;
	while (ncap < n * 2)
		ncap *= 2;
	resize(t, ncap);
}

void tk_hidx_insert(tk_hidx *t, uint64_t hash, uint32_t idx)
{
	/* Keep the load factor under 1/2 so probes stay short. */
	if (!t->slots || (t->count + 1) * 2 > t->mask + 1)
		resize(t, t->slots ? (t->mask + 1) * 2 : 64);
	uint32_t h32 = (uint32_t)(hash >> 32) ^ (uint32_t)hash;
	place(t->slots, t->mask, ((uint64_t)h32 << 32) | (uint64_t)(idx + 1));
	t->count++;
}

size_t tk_hidx_memory(const tk_hidx *t)
{
	return t->slots ? (size_t)(t->mask + 1) * sizeof(uint64_t) : 0;
}

uint64_t tk_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	/* FNV-1a over 8-byte words, finished with a mixer: fast and adequate for interning. */
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		b += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, b, n);
	h = (h ^ w ^ ((uint64_t)n << 56)) * 0x100000001b3ULL;
	return tk_hash_u64(h);
}
