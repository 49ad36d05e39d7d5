/*
 * Records compaction. A living record is rewritten by appending a newer line with the same
 * (collection, key) — the reader keeps the last one — so a long high load would grow the file by a
 * whole tree every persist interval. When enough has been appended, the monitor rewrites the file
 * keeping only the last line of each (collection, key), in file order, and renames it into place.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct span {
	size_t off, len; /* the whole line, without its '\n' */
	size_t key_len;  /* "collection,key" prefix length */
	uint64_t hash;
} span;

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

int tkm_records_compact(const char *text, size_t n, tkm_buf *out)
{
	span *lines = NULL;
	size_t count = 0, cap = 0;
	for (size_t off = 0; off < n;) {
		const char *nl = memchr(text + off, '\n', n - off);
		size_t len = nl ? (size_t)(nl - (text + off)) : n - off;
		if (count == cap) {
			cap = cap ? cap * 2 : 256;
			span *p = realloc(lines, cap * sizeof *p);
			if (!p) {
				free(lines);
				return -1;
			}
			lines = p;
		}
		/* key = up to the second comma; a line without two commas is its own key */
		const char *c1 = memchr(text + off, ',', len);
		const char *c2 = c1 ? memchr(c1 + 1, ',', len - (size_t)(c1 + 1 - (text + off))) : NULL;
		size_t key_len = c2 ? (size_t)(c2 - (text + off)) : len;
		lines[count++] = (span){off, len, key_len, hash_bytes(text + off, key_len)};
		off += len + (nl ? 1 : 0);
	}
	/* open-addressing set of keys, filled from the end: a line is kept if its key is new */
	size_t slots = 16;
	while (slots < count * 2)
		slots *= 2;
	size_t *set = calloc(slots, sizeof *set); /* 1 + index of a kept line, 0 = empty */
	bool *keep = calloc(count ? count : 1, sizeof *keep);
	if (!set || !keep) {
		free(set);
		free(keep);
		free(lines);
		return -1;
	}
	for (size_t i = count; i-- > 0;) {
		size_t s = (size_t)lines[i].hash & (slots - 1);
		bool seen = false;
		while (set[s]) {
			const span *o = &lines[set[s] - 1];
			if (o->hash == lines[i].hash && o->key_len == lines[i].key_len &&
			    memcmp(text + o->off, text + lines[i].off, o->key_len) == 0) {
				seen = true;
				break;
			}
			s = (s + 1) & (slots - 1);
		}
		if (!seen) {
			set[s] = i + 1;
			keep[i] = true;
		}
	}
	for (size_t i = 0; i < count; i++)
		if (keep[i] && lines[i].len) {
			tkm_buf_put(out, text + lines[i].off, lines[i].len);
			tkm_buf_put(out, "\n", 1);
		}
	free(set);
	free(keep);
	free(lines);
	return out->oom ? -1 : 0;
}
