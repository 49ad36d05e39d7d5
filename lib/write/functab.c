/* Functions of a profile; see functab.h. */
#include "write/functab.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

typedef struct fkey {
	tk_str name;   /* 0 when unsymbolicated: then addr identifies it */
	uint64_t addr; /* only when name is 0 */
	tk_str bin;    /* the binary's name, 0 if none */
} fkey;

typedef struct ctx {
	const tk_profile *p;
	const tk_functab *ft;
} ctx;

static fkey key_of(const tk_profile *p, tk_frame_id id)
{
	const tk_frame *f = tk_frame_get(p, id);
	const tk_binary *b = tk_binary_get(p, f->binary);
	return (fkey){f->name, f->name ? 0 : f->addr, b ? b->name : 0};
}

static int eq(const void *c, uint32_t idx, const void *key)
{
	const ctx *x = c;
	fkey a = key_of(x->p, x->ft->first[idx]);
	const fkey *b = key;
	return a.name == b->name && a.addr == b->addr && a.bin == b->bin;
}

void tk_functab_build(tk_functab *ft, const tk_profile *p)
{
	memset(ft, 0, sizeof *ft);
	size_t nf = tk_frame_count(p);
	ft->of_frame = tk_xcalloc(nf + 1, sizeof *ft->of_frame);
	size_t cap = 0;
	ctx c = {p, ft};
	for (tk_frame_id id = 1; id <= nf; id++) {
		fkey k = key_of(p, id);
		uint64_t h = tk_hash_u64(((uint64_t)k.name << 32 | k.bin) ^ tk_hash_u64(k.addr));
		uint32_t fi = tk_hidx_find(&ft->idx, h, eq, &c, &k);
		if (fi == UINT32_MAX) {
			TK_GROW(ft->first, cap, ft->n + 1);
			fi = ft->n++;
			ft->first[fi] = id;
			tk_hidx_insert(&ft->idx, h, fi);
		}
		ft->of_frame[id] = fi;
	}
}

void tk_functab_free(tk_functab *ft)
{
	free(ft->of_frame);
	free(ft->first);
	tk_hidx_free(&ft->idx);
	memset(ft, 0, sizeof *ft);
}
