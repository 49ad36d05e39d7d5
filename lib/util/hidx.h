/*
 * hidx — an open-addressing hash index over an external array.
 *
 * The table stores (hash, index) pairs only; the entries themselves live in the caller's array,
 * so one small structure serves strings, frames, stacks and per-thread maps alike. Lookup takes
 * an equality callback that compares the key with entry `idx` of the caller's array.
 */
#ifndef TK_UTIL_HIDX_H
#define TK_UTIL_HIDX_H

#include <stddef.h>
#include <stdint.h>

typedef struct tk_hidx {
	uint64_t *slots; /* (hash32 << 32) | (index + 1); 0 = empty */
	uint32_t mask;   /* capacity - 1, capacity a power of two */
	uint32_t count;
} tk_hidx;

typedef int (*tk_hidx_eq)(const void *ctx, uint32_t idx, const void *key);

void tk_hidx_free(tk_hidx *t);
/* Returns the index of the entry equal to key, or UINT32_MAX. */
uint32_t tk_hidx_find(const tk_hidx *t, uint64_t hash, tk_hidx_eq eq, const void *ctx, const void *key);
/* Records that entry idx has this hash (the caller has checked it is absent). */
void tk_hidx_insert(tk_hidx *t, uint64_t hash, uint32_t idx);
/* Room for n entries without growing (a table that will be filled to a known size). */
void tk_hidx_reserve(tk_hidx *t, size_t n);
size_t tk_hidx_memory(const tk_hidx *t);

/* Hash helpers: 64-bit mixers good enough for interning. */
static inline uint64_t tk_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}
uint64_t tk_hash_bytes(const void *p, size_t n, uint64_t seed);

#endif
