/*
 * The symbol cache: one file per (UUID, arch), mmap'ed (the symbolicator's: read into huge pages, the arena
 * below) and used in place.
 *
 *   header      tk_sc_header (little-endian like every supported host)
 *   block_start[nblocks]  u32 (addr_base-relative) or u64 start of each block of 16 ranges
 *   block_off[nblocks+1]  u32 byte offset of each block in the range data (+ end)
 *   range data  per range: varint start delta (0 for a block's first), a flag byte, then the
 *               changed fields: varint node+1 (0 = gap), varint file index, zigzag line delta;
 *               state (node, file, line) restarts at every block
 *   nodes[n]    tk_sc_loc inline-context records (outermost has parent UINT32_MAX)
 *   files[n]    u32 string offsets; index 0 = unknown
 *   strings     NUL-terminated, offset 0 is ""
 *
 * A lookup finds its block from an index by address made at open (about one bucket per block: the
 * bucket's blocks, then a binary search among their starts), then decodes at most 16 ranges, then walks
 * up the node parents. Nothing is parsed at open: the checksum (over the whole
 * file but its own field) and bounds of the fixed tables are checked, and every decode step is
 * bounds-checked, so a truncated, flipped or foreign file is rejected or yields no answer, never a
 * bad read. The header names the source (UUID, arch, size, mtime) so stale caches are rebuilt.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbol/symint.h"
#include "util/hidx.h"
#include "util/mem.h"

#define SC_MAGIC "TKSYMC\r\n"
#define SC_VERSION 3u /* 3: Swift names demangled (simplified, then full) */
#define SC_BLOCK 16

typedef struct tk_sc_header {
	char magic[8];
	uint32_t version, header_size;
	uint64_t file_size;
	uint64_t checksum;
	uint8_t uuid[16];
	uint32_t cputype, cpusubtype;
	uint64_t text_vmaddr, text_vmsize;
	uint64_t src_size;
	int64_t src_mtime_ns;
	uint32_t flags, addr_width;
	uint64_t addr_base, addr_end; /* ranges cover [addr_base, addr_end) with gaps */
	uint64_t nranges, nblocks, off_block_start, off_block_off, off_data, data_bytes;
	uint64_t nnodes, off_nodes;
	uint64_t nfiles, off_files;
	uint64_t string_bytes, off_strings;
	uint32_t image_name, reserved;
} tk_sc_header;

#define SC_HAS_DWARF 1u

/* The decoding state of a block: the entry being read (start, node, file, line). */
typedef struct sc_pos {
	uint64_t start, node, file, line;
} sc_pos;

#define SC_WARMED 64 /* a power of two */

struct tk_symcache {
	const uint8_t *data;
	size_t size;
	int how;
	const tk_sc_header *h;
	const uint32_t *bstart32;
	const uint64_t *bstart64;
	const uint32_t *boff;
	const uint8_t *rdata;
	const tk_sc_loc *nodes;
	const uint32_t *files;
	const char *strings;
	/* the header's bounds, here where a lookup reads them first */
	uint64_t base, end;
	size_t nb;
	/* the index by address (made at open; NULL with fewer than 2 blocks): bucket k, the addresses
	 * [k << ashift, (k + 1) << ashift) above base, → the last block starting at or before its first */
	uint32_t *aidx;
	size_t naidx;
	unsigned ashift;
	struct sc_slab *slab; /* TK_SC_ARENA: the arena's slab holding the bytes */
	/* what tk_symcache_warm decoded, by address (a − base): its block and the entry answering (and
	 * where the next one starts), so the lookup that follows does not search and decode again */
	struct sc_warmed {
		uint64_t a;
		size_t block, next;
		sc_pos got;
		int valid;
	} warmed[SC_WARMED];
	size_t hint; /* block of the previous lookup: sorted batches hit it or the next one */
	/* where the previous lookup's decoding stopped: the entry it answered (start, node, file,
	 * line) and the offset of the entry after it, so a lookup at or above it in the same block
	 * (lookups sorted by address) goes on from there instead of decoding the block again */
	struct {
		size_t block, next;
		uint64_t start, node, file, line;
		int valid;
	} cur;
};

/* ---------------------------------------------------------------- string pool */

struct tk_strpool {
	char *buf;
	size_t len, cap;
	uint32_t *offs;
	size_t n, capo;
	tk_hidx idx;
};

typedef struct sp_key {
	const char *s;
	size_t len;
} sp_key;

static int sp_eq(const void *ctx, uint32_t i, const void *key)
{
	const tk_strpool *p = ctx;
	const sp_key *k = key;
	const char *s = p->buf + p->offs[i];
	return strncmp(s, k->s, k->len) == 0 && s[k->len] == 0;
}

tk_strpool *tk_strpool_new(void)
{
	tk_strpool *p = tk_xcalloc(1, sizeof *p);
	TK_GROW(p->buf, p->cap, 1);
	p->buf[0] = 0;
	p->len = 1;
	return p;
}

void tk_strpool_free(tk_strpool *p)
{
	if (!p)
		return;
	free(p->buf);
	free(p->offs);
	tk_hidx_free(&p->idx);
	free(p);
}

uint32_t tk_strpool_add(tk_strpool *p, const char *s, size_t len)
{
	if (!len)
		return 0;
	uint64_t h = tk_hash_bytes(s, len, 7);
	sp_key k = {s, len};
	uint32_t i = tk_hidx_find(&p->idx, h, sp_eq, p, &k);
	if (i != UINT32_MAX)
		return p->offs[i];
	TK_GROW(p->buf, p->cap, p->len + len + 1);
	uint32_t off = (uint32_t)p->len;
	memcpy(p->buf + p->len, s, len);
	p->buf[p->len + len] = 0;
	p->len += len + 1;
	TK_GROW(p->offs, p->capo, p->n + 1);
	p->offs[p->n] = off;
	tk_hidx_insert(&p->idx, h, (uint32_t)p->n++);
	return off;
}

const char *tk_strpool_data(const tk_strpool *p, size_t *len)
{
	*len = p->len;
	return p->buf;
}

/* ---------------------------------------------------------------- checksum */

static uint64_t sc_checksum(const uint8_t *d, size_t n)
{
	/* 4 lanes of multiply-rotate so the loop is not latency bound; the checksum field itself is
	 * zero when this runs. */
	uint64_t a = 0x9e3779b97f4a7c15ULL, b = 0xc2b2ae3d27d4eb4fULL, c = 0x165667b19e3779f9ULL, e = n;
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		uint64_t w[4];
		memcpy(w, d + i, 32);
		a = ((a ^ w[0]) * 0x100000001b3ULL);
		b = ((b ^ w[1]) * 0x100000001b3ULL);
		c = ((c ^ w[2]) * 0x100000001b3ULL);
		e = ((e ^ w[3]) * 0x100000001b3ULL);
		a = a << 31 | a >> 33;
		b = b << 29 | b >> 35;
		c = c << 27 | c >> 37;
		e = e << 25 | e >> 39;
	}
	for (; i < n; i++)
		a = (a ^ d[i]) * 0x100000001b3ULL;
	return tk_hash_u64(a ^ tk_hash_u64(b ^ tk_hash_u64(c ^ tk_hash_u64(e))));
}

static uint64_t checksum_of(const uint8_t *data, size_t size)
{
	tk_sc_header h;
	memcpy(&h, data, sizeof h);
	h.checksum = 0;
	uint64_t x = sc_checksum((const uint8_t *)&h, sizeof h);
	return x ^ sc_checksum(data + sizeof h, size - sizeof h);
}

void tk_symcache_fix_checksum(uint8_t *data, size_t size)
{
	if (size < sizeof(tk_sc_header))
		return;
	uint64_t c = checksum_of(data, size);
	memcpy(data + offsetof(tk_sc_header, checksum), &c, 8);
}

/* ---------------------------------------------------------------- builder */

typedef struct loc_tab {
	tk_sc_loc *v;
	size_t n, cap;
	tk_hidx idx;
} loc_tab;

static int loc_eq(const void *ctx, uint32_t i, const void *key)
{
	return memcmp(&((const tk_sc_loc *)ctx)[i], key, sizeof(tk_sc_loc)) == 0;
}

static uint32_t loc_add(loc_tab *t, tk_sc_loc l)
{
	uint64_t h = tk_hash_bytes(&l, sizeof l, 3);
	uint32_t i = tk_hidx_find(&t->idx, h, loc_eq, t->v, &l);
	if (i != UINT32_MAX)
		return i;
	TK_GROW(t->v, t->cap, t->n + 1);
	t->v[t->n] = l;
	tk_hidx_insert(&t->idx, h, (uint32_t)t->n);
	return (uint32_t)t->n++;
}

typedef struct sym {
	uint64_t addr;
	uint32_t sect, ord, name_strx;
} sym;

static int sym_cmp(const void *a, const void *b)
{
	const sym *x = a, *y = b;
	if (x->sect != y->sect)
		return x->sect < y->sect ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord; /* symbol-table order among equals */
}

/* The symbol table as llvm-symbolizer sees it: N_SECT symbols, each extending to the next symbol
 * or the end of its section; of several symbols at one address the last in table order is kept. */
static size_t symtab_segments(const uint8_t *s, size_t ssize, const tk_macho_slice *sl, tk_strpool *pool,
                              tk_dw_seg **out, uint32_t **flags_out)
{
	*out = NULL;
	*flags_out = NULL;
	if (!sl->nsyms)
		return 0;
	sym *v = tk_xmalloc((sl->nsyms + sl->nsects) * sizeof *v);
	size_t n = 0;
	for (uint32_t i = 0; i < sl->nsyms; i++) {
		const uint8_t *e = s + sl->symoff + 16 * (size_t)i;
		uint32_t strx;
		uint8_t type = e[4], sect = e[5];
		uint64_t value;
		memcpy(&strx, e, 4);
		memcpy(&value, e + 8, 8);
		if ((type & 0xe0) || (type & 0x0e) != 0x0e || sect == 0 || sect > sl->nsects)
			continue;
		if (strx >= sl->strsize)
			continue;
		v[n++] = (sym){value, sect, i + 1, strx};
	}
	size_t nsym = n;
	for (uint32_t i = 0; i < sl->nsects; i++)
		v[n++] = (sym){sl->sects[i].addr + sl->sects[i].size, i + 1, UINT32_MAX, UINT32_MAX};
	qsort(v, n, sizeof *v, sym_cmp);
	tk_dw_seg *seg = tk_xmalloc((nsym + 1) * sizeof *seg);
	uint32_t *fl = tk_xmalloc((nsym + 1) * sizeof *fl);
	size_t ns = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].ord == UINT32_MAX)
			continue;
		size_t j = i + 1;
		while (j < n && v[j].addr == v[i].addr && v[j].sect == v[i].sect)
			j++;
		if (j - 1 != i && v[j - 1].ord != UINT32_MAX)
			continue; /* a later symbol at the same address wins */
		uint64_t end = j < n && v[j].sect == v[i].sect ? v[j].addr : UINT64_MAX;
		const char *nm = (const char *)s + sl->stroff + v[i].name_strx;
		size_t maxlen = sl->strsize - v[i].name_strx;
		size_t len = strnlen(nm, maxlen);
		char *tmp = tk_xstrndup(nm, len);
		const char *use = tmp[0] == '_' ? tmp + 1 : tmp;
		/* C++/Rust demangled; Swift kept once in both forms ("SIMPLIFIED\0FULL") */
		size_t dl = 0;
		uint32_t flags = 0;
		char *dem = tk_sc_name(use, &dl, &flags);
		size_t ul = strlen(use);
		if (dem) {
			use = dem;
			ul = dl;
		}
		seg[ns] = (tk_dw_seg){v[i].addr, end, tk_strpool_add(pool, use, ul), v[i].ord};
		fl[ns++] = flags;
		free(dem);
		free(tmp);
	}
	free(v);
	*out = seg;
	*flags_out = fl;
	return ns;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static int file_eq(const void *ctx, uint32_t i, const void *key)
{
	return ((const uint32_t *)ctx)[i] == *(const uint32_t *)key;
}

typedef struct layer {
	const tk_dw_seg *s;
	size_t n, i;
} layer;

/* The segment of a sorted, non-overlapping layer that covers x, advancing monotonically. */
static const tk_dw_seg *cover(layer *l, uint64_t x)
{
	while (l->i < l->n && l->s[l->i].hi <= x)
		l->i++;
	if (l->i < l->n && l->s[l->i].lo <= x)
		return &l->s[l->i];
	return NULL;
}

int tk_symcache_build_slice(const uint8_t *data, size_t size, const char *path, const tk_macho_slice *sl,
                            const tk_sc_input *in, uint8_t **out, size_t *out_size, tk_error *err)
{
	const uint8_t *s = data + sl->offset;
	size_t ssize = sl->size;
	tk_strpool *pool = tk_strpool_new();
	tk_dw_result dw;
	memset(&dw, 0, sizeof dw);
	int has_dwarf = 0;
	if (sl->has_dwarf) {
		if (tk_dwarf_collect(s, ssize, sl, path, pool, &dw, err) < 0) {
			tk_strpool_free(pool);
			return -1;
		}
		has_dwarf = 1;
	}
	tk_dw_seg *syms = NULL;
	uint32_t *symflags = NULL;
	size_t nsyms = symtab_segments(s, ssize, sl, pool, &syms, &symflags);
	uint32_t image = tk_strpool_add(pool, in->image_name, strlen(in->image_name));

	/* boundaries of every layer → elementary intervals */
	layer L[4] = {{dw.cus, dw.ncus, 0}, {dw.scopes, dw.nscopes, 0}, {dw.lines, dw.nlines, 0}, {syms, nsyms, 0}};
	size_t nb = 0;
	for (int k = 0; k < 4; k++)
		nb += 2 * L[k].n;
	uint64_t *b = tk_xmalloc((nb + 1) * sizeof *b);
	nb = 0;
	for (int k = 0; k < 4; k++)
		for (size_t i = 0; i < L[k].n; i++) {
			b[nb++] = L[k].s[i].lo;
			b[nb++] = L[k].s[i].hi;
		}
	tk_sort_u64(b, nb);
	size_t u = 0;
	for (size_t i = 0; i < nb; i++)
		if (!u || b[u - 1] != b[i])
			b[u++] = b[i];
	nb = u;

	loc_tab lt = {0};
	/* file string offset → file index (0 = unknown) */
	uint32_t *files = NULL;
	size_t nfiles = 1, capfiles = 0;
	TK_GROW(files, capfiles, 1);
	files[0] = 0;
	tk_hidx fidx = {0};
	/* elementary intervals → (start, node, file, line), merging equal neighbours */
	typedef struct rng {
		uint64_t start;
		uint32_t node, file, line;
	} rng;
	rng *r = NULL;
	size_t nr = 0, capr = 0;
	uint32_t chain[TK_SYMBOL_MAX_FRAMES];
	for (size_t k = 0; k + 1 < nb; k++) {
		uint64_t x = b[k];
		const tk_dw_seg *cu = cover(&L[0], x);
		const tk_dw_seg *sc = cover(&L[1], x);
		const tk_dw_seg *ln = cover(&L[2], x);
		const tk_dw_seg *sy = cover(&L[3], x);
		uint32_t node = TK_SC_NONE, fstr = 0, line = 0;
		uint32_t symname = sy ? sy->a : 0, symfl = sy ? symflags[sy - syms] : 0;
		if (cu) {
			if (ln && ln->a != TK_SC_NONE) {
				fstr = ln->a;
				line = ln->b;
			}
			size_t depth = 0;
			if (sc)
				for (uint32_t nd = sc->a; nd != TK_SC_NONE && depth < TK_SYMBOL_MAX_FRAMES;
				     nd = dw.nodes[nd].parent)
					chain[depth++] = nd;
			uint32_t parent = TK_SC_NONE;
			if (!depth)
				parent = loc_add(&lt, (tk_sc_loc){sy ? symname : 0, 0, sy ? symfl : 0, TK_SC_NONE});
			/* outermost first so parents exist before children; the outermost name comes from the
			 * symbol table when it has one (what llvm-symbolizer prints) */
			for (size_t d = depth; d-- > 0;) {
				const tk_dw_node *nd = &dw.nodes[chain[d]];
				tk_sc_loc l = {nd->name, 0, nd->flags, parent};
				if (d == depth - 1 && sy) {
					l.name = symname;
					l.line = symfl;
				}
				if (d > 0) {
					/* this record is a caller: keep where it calls the next one from */
					const tk_dw_node *callee = &dw.nodes[chain[d - 1]];
					l.call_file = callee->call_file == TK_SC_NONE ? 0 : callee->call_file;
					l.line |= callee->call_line;
				}
				parent = loc_add(&lt, l);
			}
			node = parent;
		} else if (sy) {
			/* the ordinal keeps neighbouring symbols of the same name apart ("+ offset" base) */
			node = loc_add(&lt, (tk_sc_loc){symname, sy->b, TK_SC_LOC_SYMTAB | symfl, TK_SC_NONE});
		}
		uint32_t file = 0;
		if (fstr) {
			uint64_t h = tk_hash_u64(fstr);
			file = tk_hidx_find(&fidx, h, file_eq, files, &fstr);
			if (file == UINT32_MAX) {
				TK_GROW(files, capfiles, nfiles + 1);
				files[nfiles] = fstr;
				tk_hidx_insert(&fidx, h, (uint32_t)nfiles);
				file = (uint32_t)nfiles++;
			}
		}
		if (nr && r[nr - 1].node == node && r[nr - 1].file == file && r[nr - 1].line == line)
			continue;
		TK_GROW(r, capr, nr + 1);
		r[nr++] = (rng){x, node, file, line};
	}
	/* drop leading and trailing gaps; the end closes the last range */
	uint64_t end = nb ? b[nb - 1] : 0;
	size_t first = 0;
	while (first < nr && r[first].node == TK_SC_NONE)
		first++;
	while (nr > first && r[nr - 1].node == TK_SC_NONE)
		end = r[--nr].start;
	size_t n = nr - first;
	rng *R = n ? r + first : NULL; /* r is NULL when there are no ranges: no pointer arithmetic on it */
	uint64_t base = n ? R[0].start : 0;
	uint32_t width = !n || end - base <= UINT32_MAX ? 4 : 8;
	size_t nblocks = (n + SC_BLOCK - 1) / SC_BLOCK;

	/* encode the ranges */
	uint8_t *rd = NULL;
	size_t nrd = 0, caprd = 0;
	uint32_t *boff = tk_xmalloc((nblocks + 1) * sizeof *boff);
	uint32_t pnode = TK_SC_NONE, pfile = 0, pline = 0;
	uint64_t pstart = 0;
	for (size_t i = 0; i < n; i++) {
		if (i % SC_BLOCK == 0) {
			boff[i / SC_BLOCK] = (uint32_t)nrd;
			pnode = TK_SC_NONE, pfile = 0, pline = 0, pstart = R[i].start;
		}
		TK_GROW(rd, caprd, nrd + 40);
		nrd += put_varint(rd + nrd, R[i].start - pstart);
		uint8_t fl = (R[i].node != pnode ? 1 : 0) | (R[i].file != pfile ? 2 : 0);
		rd[nrd++] = fl;
		if (fl & 1)
			nrd += put_varint(rd + nrd, R[i].node == TK_SC_NONE ? 0 : (uint64_t)R[i].node + 1);
		if (fl & 2)
			nrd += put_varint(rd + nrd, R[i].file);
		int64_t dl = (int64_t)R[i].line - (int64_t)pline;
		nrd += put_varint(rd + nrd, ((uint64_t)dl << 1) ^ (uint64_t)(dl >> 63));
		pnode = R[i].node, pfile = R[i].file, pline = R[i].line, pstart = R[i].start;
	}
	boff[nblocks] = (uint32_t)nrd;

	size_t strbytes;
	const char *strs = tk_strpool_data(pool, &strbytes);
	size_t off = sizeof(tk_sc_header);
	size_t off_bstart = off;
	off += nblocks * width;
	off = (off + 7) & ~(size_t)7;
	size_t off_boff = off;
	off += (nblocks + 1) * 4;
	size_t off_data = off;
	off += nrd;
	off = (off + 7) & ~(size_t)7;
	size_t off_nodes = off;
	off += lt.n * sizeof(tk_sc_loc);
	size_t off_files = off;
	off += nfiles * 4;
	size_t off_strings = off;
	off += strbytes;
	size_t total = (off + 7) & ~(size_t)7;
	uint8_t *buf = tk_xcalloc(1, total);
	tk_sc_header *h = (tk_sc_header *)buf;
	memcpy(h->magic, SC_MAGIC, 8);
	h->version = SC_VERSION;
	h->header_size = sizeof *h;
	h->file_size = total;
	memcpy(h->uuid, in->uuid, 16);
	h->cputype = in->cputype;
	h->cpusubtype = in->cpusubtype;
	h->text_vmaddr = in->text_vmaddr;
	h->text_vmsize = sl->text_vmsize;
	h->src_size = in->src_size;
	h->src_mtime_ns = in->src_mtime_ns;
	h->flags = has_dwarf ? SC_HAS_DWARF : 0;
	h->addr_width = width;
	h->addr_base = base;
	h->addr_end = end;
	h->nranges = n;
	h->nblocks = nblocks;
	h->off_block_start = off_bstart;
	h->off_block_off = off_boff;
	h->off_data = off_data;
	h->data_bytes = nrd;
	h->nnodes = lt.n;
	h->off_nodes = off_nodes;
	h->nfiles = nfiles;
	h->off_files = off_files;
	h->string_bytes = strbytes;
	h->off_strings = off_strings;
	h->image_name = image;
	for (size_t i = 0; i < nblocks; i++) {
		uint64_t a = R[i * SC_BLOCK].start - base;
		if (width == 4) {
			uint32_t v = (uint32_t)a;
			memcpy(buf + off_bstart + 4 * i, &v, 4);
		} else
			memcpy(buf + off_bstart + 8 * i, &a, 8);
	}
	memcpy(buf + off_boff, boff, (nblocks + 1) * 4);
	if (nrd)
		memcpy(buf + off_data, rd, nrd);
	if (lt.n)
		memcpy(buf + off_nodes, lt.v, lt.n * sizeof(tk_sc_loc));
	memcpy(buf + off_files, files, nfiles * 4);
	memcpy(buf + off_strings, strs, strbytes);
	h->checksum = checksum_of(buf, total);

	free(r);
	free(rd);
	free(boff);
	free(files);
	tk_hidx_free(&fidx);
	free(lt.v);
	tk_hidx_free(&lt.idx);
	free(b);
	free(syms);
	free(symflags);
	tk_dw_result_free(&dw);
	tk_strpool_free(pool);
	*out = buf;
	*out_size = total;
	return 0;
}

/* ---------------------------------------------------------------- reader */

tk_symcache *tk_symcache_view(const uint8_t *data, size_t size, const char *name, int how, tk_error *err)
{
	const tk_sc_header *h = (const tk_sc_header *)data;
	if (size < sizeof *h || memcmp(h->magic, SC_MAGIC, 8) != 0) {
		tk_error_set(err, "%s: not a tracekit symbol cache", name);
		goto bad;
	}
	if (h->version != SC_VERSION || h->header_size != sizeof *h) {
		tk_error_set(err, "%s: symbol cache version %u (this tracekit reads %u)", name, h->version, SC_VERSION);
		goto bad;
	}
	if (h->file_size != size) {
		tk_error_set(err, "%s: symbol cache is %zu bytes, its header says %llu (truncated?)", name, size,
		             (unsigned long long)h->file_size);
		goto bad;
	}
	if (checksum_of(data, size) != h->checksum) {
		tk_error_set(err, "%s: symbol cache checksum mismatch (corrupt)", name);
		goto bad;
	}
	/* bounds of the fixed tables: a valid checksum does not make a hostile writer's layout safe */
	uint64_t nb = h->nblocks, w = h->addr_width;
#define FITS(off, count, sz) ((off) <= size && (count) <= (size - (off)) / (sz))
	int ok = (w == 4 || w == 8) && nb < (1ull << 32) && h->nnodes < (1ull << 32) && h->nfiles < (1ull << 32) &&
	         h->nfiles >= 1 && h->off_block_start >= sizeof *h && h->off_block_start % 8 == 0 &&
	         FITS(h->off_block_start, nb, w) && h->off_block_off % 4 == 0 && FITS(h->off_block_off, nb + 1, 4) &&
	         FITS(h->off_data, h->data_bytes, 1) && h->off_nodes % 4 == 0 &&
	         FITS(h->off_nodes, h->nnodes, sizeof(tk_sc_loc)) && h->off_files % 4 == 0 &&
	         FITS(h->off_files, h->nfiles, 4) && FITS(h->off_strings, h->string_bytes, 1) && h->string_bytes >= 1 &&
	         data[h->off_strings + h->string_bytes - 1] == 0 && h->image_name < h->string_bytes &&
	         h->addr_end >= h->addr_base && (nb == 0) == (h->nranges == 0);
#undef FITS
	if (ok) {
		const uint32_t *bo = (const uint32_t *)(data + h->off_block_off);
		for (uint64_t i = 0; ok && i < nb; i++)
			ok = bo[i] < bo[i + 1];
		ok = ok && (nb == 0 || bo[nb] <= h->data_bytes);
		for (uint64_t i = 0; ok && i + 1 < nb; i++)
			ok = w == 4 ? ((const uint32_t *)(data + h->off_block_start))[i] <
			                  ((const uint32_t *)(data + h->off_block_start))[i + 1]
			            : ((const uint64_t *)(data + h->off_block_start))[i] <
			                  ((const uint64_t *)(data + h->off_block_start))[i + 1];
		const tk_sc_loc *nodes = (const tk_sc_loc *)(data + h->off_nodes);
		for (uint64_t i = 0; ok && i < h->nnodes; i++)
			ok = nodes[i].name < h->string_bytes &&
			     (nodes[i].line & TK_SC_LOC_SYMTAB || nodes[i].call_file < h->string_bytes) &&
			     (nodes[i].parent == TK_SC_NONE || nodes[i].parent < i);
		const uint32_t *files = (const uint32_t *)(data + h->off_files);
		for (uint64_t i = 0; ok && i < h->nfiles; i++)
			ok = files[i] < h->string_bytes;
	}
	if (!ok) {
		tk_error_set(err, "%s: symbol cache layout is inconsistent (corrupt)", name);
		goto bad;
	}
	tk_symcache *c = tk_xcalloc(1, sizeof *c);
	c->data = data;
	c->size = size;
	c->how = how;
	c->h = h;
	if (w == 4)
		c->bstart32 = (const uint32_t *)(data + h->off_block_start);
	else
		c->bstart64 = (const uint64_t *)(data + h->off_block_start);
	c->boff = (const uint32_t *)(data + h->off_block_off);
	c->rdata = data + h->off_data;
	c->nodes = (const tk_sc_loc *)(data + h->off_nodes);
	c->files = (const uint32_t *)(data + h->off_files);
	c->strings = (const char *)(data + h->off_strings);
	c->base = h->addr_base;
	c->end = h->addr_end;
	c->nb = (size_t)nb;
	if (nb > 1) {
		/* buckets no narrower than the blocks are on average: at most nb of them */
		uint64_t span = h->addr_end - h->addr_base;
		unsigned sh = 0;
		while (sh < 63 && (span >> sh) >= nb)
			sh++;
		c->ashift = sh;
		c->naidx = (size_t)(span >> sh) + 1;
		c->aidx = tk_xmalloc(c->naidx * sizeof *c->aidx);
		size_t j = 0;
		for (size_t k = 0; k < c->naidx; k++) {
			uint64_t x = (uint64_t)k << sh;
			while (j + 1 < nb && (w == 4 ? c->bstart32[j + 1] : c->bstart64[j + 1]) <= x)
				j++;
			c->aidx[k] = (uint32_t)j;
		}
	}
	return c;
bad:
	if (how == TK_SC_MMAP)
		munmap((void *)data, size);
	else if (how == TK_SC_HEAP)
		free((void *)data);
	return NULL;
}

static void slab_release(struct sc_slab *sl);

void tk_symcache_close(tk_symcache *c)
{
	if (!c)
		return;
	if (c->how == TK_SC_MMAP)
		munmap((void *)c->data, c->size);
	else if (c->how == TK_SC_HEAP)
		free((void *)c->data);
	else if (c->how == TK_SC_ARENA)
		slab_release(c->slab);
	free(c->aidx);
	free(c);
}

/* ---- the arena: caches read into memory on huge pages ----
 * A lookup touches a few far-apart places of its cache (index, block, records, strings): in a file
 * mapped 4 kB page by page, each is a TLB miss as well as a cache miss, and a batch's caches are
 * thousands of pages. Read into 2 MB-aligned slabs advised into huge pages instead, the caches of a
 * batch are a few TLB entries. A slab holds caches up to half its size one after the other and is
 * freed when the last of them is closed (a bigger cache has a slab of its own); the slab being
 * filled is reused from its start when it empties. */
enum { SC_SLAB = 2u << 20, SC_ARENA_MAX = 64u << 20 /* bigger caches stay mapped */ };

struct sc_slab {
	struct sc_slab *next, *prev;
	tk_sc_arena *arena;
	uint8_t *mem;
	size_t size, used, live;
};

struct tk_sc_arena {
	struct sc_slab *slabs; /* all of them; the first is the one being filled */
};

tk_sc_arena *tk_sc_arena_new(void)
{
	return tk_xcalloc(1, sizeof(tk_sc_arena));
}

static void slab_unlink_free(struct sc_slab *sl)
{
	if (sl->prev)
		sl->prev->next = sl->next;
	else
		sl->arena->slabs = sl->next;
	if (sl->next)
		sl->next->prev = sl->prev;
	free(sl->mem);
	free(sl);
}

void tk_sc_arena_free(tk_sc_arena *a)
{
	if (!a)
		return;
	while (a->slabs)
		slab_unlink_free(a->slabs);
	free(a);
}

static void slab_release(struct sc_slab *sl)
{
	if (--sl->live)
		return;
	if (sl == sl->arena->slabs && sl->size == SC_SLAB)
		sl->used = 0; /* the one being filled: filled again from its start */
	else
		slab_unlink_free(sl);
}

/* n bytes (64-aligned) in the arena, counted in their slab */
static uint8_t *slab_alloc(tk_sc_arena *a, size_t n, struct sc_slab **out)
{
	n = (n + 63) & ~(size_t)63;
	struct sc_slab *sl = a->slabs;
	if (n > SC_SLAB / 2 || !sl || sl->size != SC_SLAB || sl->size - sl->used < n) {
		sl = tk_xcalloc(1, sizeof *sl);
		sl->arena = a;
		sl->size = n > SC_SLAB / 2 ? n : SC_SLAB;
		sl->mem = tk_xmalloc_big(sl->size < SC_SLAB ? SC_SLAB : sl->size);
		if (n > SC_SLAB / 2 && a->slabs) { /* a cache's own slab: after the one being filled */
			sl->prev = a->slabs;
			sl->next = a->slabs->next;
			if (sl->next)
				sl->next->prev = sl;
			a->slabs->next = sl;
		} else {
			sl->next = a->slabs;
			if (sl->next)
				sl->next->prev = sl;
			a->slabs = sl;
		}
	}
	uint8_t *p = sl->mem + sl->used;
	sl->used += n;
	sl->live++;
	*out = sl;
	return p;
}

/* owned: a file of the cache directory, trusted only when it is a regular file of ours that no
 * one else may write (never followed through a symlink). O_NONBLOCK: a FIFO must not hang us.
 * arena: read into it (up to SC_ARENA_MAX bytes), else mapped. */
static tk_symcache *open_cache(const char *path, int owned, tk_sc_arena *arena, tk_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (owned ? O_NOFOLLOW : 0));
	if (fd < 0) {
		tk_error_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		tk_error_set(err, "%s: not a regular file", path);
		return NULL;
	}
	if (owned && (st.st_uid != geteuid() || (st.st_mode & 022))) {
		close(fd);
		tk_error_set(err, "%s: not owned by this user or writable by others: not trusted", path);
		return NULL;
	}
	if (st.st_size < (off_t)sizeof(tk_sc_header)) {
		close(fd);
		tk_error_set(err, "%s: not a tracekit symbol cache (too short)", path);
		return NULL;
	}
	size_t size = (size_t)st.st_size;
	if (arena && size <= SC_ARENA_MAX) {
		struct sc_slab *sl;
		uint8_t *m = slab_alloc(arena, size, &sl);
		size_t got = 0;
		ssize_t r = 1;
		while (got < size) {
			r = pread(fd, m + got, size - got, (off_t)got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		int e = errno;
		close(fd);
		tk_symcache *c = NULL;
		if (got < size)
			tk_error_set(err, "%s: %s", path, r == 0 ? "shorter than when opened" : strerror(e));
		else
			c = tk_symcache_view(m, size, path, TK_SC_BORROWED, err);
		if (!c) {
			slab_release(sl);
			return NULL;
		}
		c->how = TK_SC_ARENA;
		c->slab = sl;
		return c;
	}
	void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		tk_error_set(err, "%s: mmap: %s", path, strerror(errno));
		return NULL;
	}
	return tk_symcache_view(m, size, path, TK_SC_MMAP, err);
}

tk_symcache *tk_symcache_open_file(const char *path, tk_error *err)
{
	return open_cache(path, 0, NULL, err);
}

tk_symcache *tk_symcache_open_owned(const char *path, tk_error *err)
{
	return open_cache(path, 1, NULL, err);
}

tk_symcache *tk_symcache_open_owned_in(const char *path, tk_sc_arena *arena, tk_error *err)
{
	return open_cache(path, 1, arena, err);
}

int tk_symcache_write_file(const char *path, const uint8_t *buf, size_t size, tk_error *err)
{
	/* Write a temporary and rename, so a reader never maps a half-written cache. mkostemp creates
	 * a new file (O_EXCL): a planted symlink or file of that name is never written through. */
	char tmp[4200];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= sizeof tmp)
		return tk_error_set(err, "%s: path too long", path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return tk_error_set(err, "%s: %s", tmp, strerror(errno));
	(void)fchmod(fd, 0644);
	size_t done = 0;
	while (done < size) {
		ssize_t w = write(fd, buf + done, size - done);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			unlink(tmp);
			return tk_error_set(err, "%s: %s", tmp, strerror(e));
		}
		done += (size_t)w;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return tk_error_set(err, "%s: %s", path, strerror(e));
	}
	return 0;
}

/* Bounds-checked LEB128 read; returns 0 on overrun or an over-long encoding. */
static inline int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return 0;
		uint8_t b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 1;
		}
	}
	return 0;
}

/* Decodes the entries of a block from *pp (state *cur, *found: an entry answers already, it is *got
 * and ends at *after) while they start at or below a. Returns 0 when the bytes are corrupt. */
static inline int sc_decode(const uint8_t **pp, const uint8_t *end, uint64_t a, sc_pos *cur, sc_pos *got, int *found,
                            const uint8_t **after)
{
	const uint8_t *p = *pp;
	while (p < end) {
		uint64_t d, v;
		if (!get_varint(&p, end, &d) || p >= end)
			return 0;
		uint64_t s = cur->start + d;
		if (s > a && *found)
			break;
		uint8_t fl = *p++;
		if (fl & 1) {
			if (!get_varint(&p, end, &v))
				return 0;
			cur->node = v ? v - 1 : TK_SC_NONE;
		}
		if (fl & 2) {
			if (!get_varint(&p, end, &cur->file))
				return 0;
		}
		if (!get_varint(&p, end, &v))
			return 0;
		cur->line += (uint64_t)((int64_t)(v >> 1) ^ -(int64_t)(v & 1));
		if (s > a)
			break;
		cur->start = s;
		*got = *cur;
		*found = 1;
		*after = p;
	}
	*pp = p;
	return 1;
}

#define BSTART(c, i) ((c)->bstart32 ? (uint64_t)(c)->bstart32[i] : (c)->bstart64[i])
#define SC_WHASH(a) ((size_t)(((a)*0x9E3779B97F4A7C15ull) >> 58) & (SC_WARMED - 1))

/* [*lo, *hi): the blocks among which is the last one starting at or before a (a < end − base), from the
 * index by address (0 when none does) */
static inline void sc_range(const tk_symcache *c, uint64_t a, size_t *lo, size_t *hi)
{
	if (!c->aidx) {
		*lo = 0, *hi = c->nb;
		return;
	}
	size_t k = (size_t)(a >> c->ashift);
	*lo = c->aidx[k];
	*hi = k + 1 < c->naidx ? (size_t)c->aidx[k + 1] + 1 : c->nb;
}

size_t tk_symcache_lookup(const tk_symcache *c, uint64_t file_addr, tk_symbol_frame *out, size_t cap,
                          uint64_t *range_start)
{
	const tk_sc_header *h = c->h;
	size_t nb = h->nblocks;
	if (!nb || file_addr < h->addr_base || file_addr >= h->addr_end)
		return 0;
	uint64_t a = file_addr - h->addr_base;
	tk_symcache *mc = (tk_symcache *)c;
	sc_pos got = {0, TK_SC_NONE, 0, 0};
	const uint8_t *after;
	int found = 0;
	const struct sc_warmed *w = &c->warmed[SC_WHASH(a)];
	size_t lo = 0, hi = nb; /* the last block starting at or before a */
	if (w->valid && w->a == a) {
		lo = w->block;
		got = w->got;
		found = 1;
		after = c->rdata + w->next;
		mc->hint = lo;
		goto answered;
	}
	size_t g = c->hint;
	if (g < nb && BSTART(c, g) <= a && (g + 1 == nb || a < BSTART(c, g + 1)))
		lo = g, hi = lo + 1;
	else if (g + 1 < nb && BSTART(c, g + 1) <= a && (g + 2 == nb || a < BSTART(c, g + 2)))
		lo = g + 1, hi = lo + 1;
	if (hi - lo <= 1) {
		/* hint hit */
	} else if (sc_range(c, a, &lo, &hi), c->bstart32) {
		uint32_t a32 = (uint32_t)a;
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (c->bstart32[mid] <= a32)
				lo = mid;
			else
				hi = mid;
		}
	} else {
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (c->bstart64[mid] <= a)
				lo = mid;
			else
				hi = mid;
		}
	}
	mc->hint = lo;
	sc_pos cur = {BSTART(c, lo), TK_SC_NONE, 0, 0};
	const uint8_t *p = c->rdata + c->boff[lo], *end = c->rdata + c->boff[lo + 1];
	if (mc->cur.valid && mc->cur.block == lo && mc->cur.start <= a) {
		/* the entries before the previous answer are all at or below it: go on from there */
		cur = got = (sc_pos){mc->cur.start, mc->cur.node, mc->cur.file, mc->cur.line};
		p = c->rdata + mc->cur.next;
		found = 1;
	}
	after = p; /* the end of the entry answering (got) */
	if (!sc_decode(&p, end, a, &cur, &got, &found, &after))
		return 0;
answered:
	mc->cur.valid = found;
	if (found) {
		mc->cur.block = lo, mc->cur.next = (size_t)(after - c->rdata);
		mc->cur.start = got.start, mc->cur.node = got.node, mc->cur.file = got.file, mc->cur.line = got.line;
	}
	if (!found || got.node == TK_SC_NONE || got.node >= h->nnodes || got.file >= h->nfiles)
		return 0;
	if (range_start)
		*range_start = got.start + h->addr_base;
	size_t k = 0;
	uint32_t l = (uint32_t)got.node;
	while (l != TK_SC_NONE && k < cap) {
		const tk_sc_loc *x = &c->nodes[l];
		out[k].function = x->name ? c->strings + x->name : "??";
		out[k].full_name = out[k].function;
		if (x->line & TK_SC_LOC_SWIFT) {
			/* "SIMPLIFIED\0FULL": the full form follows when it is inside the string table */
			size_t fl = strlen(out[k].function);
			if (x->name + fl + 1 < c->h->string_bytes)
				out[k].full_name = out[k].function + fl + 1;
		}
		if (x->line & TK_SC_LOC_SYMTAB) {
			out[k].file = NULL;
			out[k].line = 0;
		} else if (k == 0) {
			/* the innermost frame is located by the range itself */
			out[k].file = got.file ? c->strings + c->files[got.file] : NULL;
			out[k].line = (uint32_t)got.line & TK_SC_LINE_MASK;
		} else {
			/* a caller's record keeps the call site of its callee */
			out[k].file = x->call_file ? c->strings + x->call_file : NULL;
			out[k].line = x->line & TK_SC_LINE_MASK;
		}
		out[k].flags = (x->line & TK_SC_LOC_SWIFT ? TK_FRAME_SWIFT : 0) |
		               (x->line & TK_SC_LOC_SYMTAB ? TK_SC_FRAME_SYMTAB : 0);
		k++;
		l = x->parent;
	}
	for (size_t i = 0; i + 1 < k; i++)
		out[i].flags |= TK_FRAME_INLINED;
	return k;
}

/* The string at offset o fetched (its first two lines: most names are shorter). */
static inline void sc_prefetch_string(const tk_symcache *c, uint32_t o)
{
	__builtin_prefetch(c->strings + o);
	if (o + 64 < c->h->string_bytes)
		__builtin_prefetch(c->strings + o + 64);
}

/* Every step of a lookup is a load that depends on the one before (block search, block offset, block
 * bytes, inline records, strings), and a cache larger than the processor's caches misses at each: so
 * the lookups of a batch take each step together, each loading what the previous step fetched and
 * fetching what the next one needs, and n misses wait about as long as one does. Reads only what
 * tk_symcache_lookup reads, with the same bounds checks; answers nothing. */
enum { SC_WARM_MAX = 32 };
static void sc_warm(const tk_symcache *const *cs, const uint64_t *addrs, size_t n)
{
	const tk_symcache *c[SC_WARM_MAX];
	uint64_t a[SC_WARM_MAX];
	size_t lo[SC_WARM_MAX], hi[SC_WARM_MAX], m = 0;
	for (size_t i = 0; i < n; i++) {
		const tk_symcache *x = cs[i];
		if (!x || !x->nb || addrs[i] < x->base || addrs[i] >= x->end)
			continue;
		c[m] = x;
		a[m] = addrs[i] - x->base;
		if (x->aidx)
			__builtin_prefetch(&x->aidx[a[m] >> x->ashift]);
		m++;
	}
	/* the buckets, then the block starts in them */
	for (size_t i = 0; i < m; i++) {
		sc_range(c[i], a[i], &lo[i], &hi[i]);
		if (c[i]->bstart32) {
			__builtin_prefetch(&c[i]->bstart32[lo[i]]);
			__builtin_prefetch(&c[i]->bstart32[hi[i] - 1]);
		} else {
			__builtin_prefetch(&c[i]->bstart64[lo[i]]);
			__builtin_prefetch(&c[i]->bstart64[hi[i] - 1]);
		}
	}
	/* the searches among them, then each block's offset */
	for (size_t i = 0; i < m; i++) {
		while (hi[i] - lo[i] > 1) {
			size_t mid = (lo[i] + hi[i]) / 2;
			if (BSTART(c[i], mid) <= a[i])
				lo[i] = mid;
			else
				hi[i] = mid;
		}
		__builtin_prefetch(&c[i]->boff[lo[i]]);
	}
	/* the blocks' bytes */
	for (size_t i = 0; i < m; i++) {
		const uint8_t *p = c[i]->rdata + c[i]->boff[lo[i]], *end = c[i]->rdata + c[i]->boff[lo[i] + 1];
		for (const uint8_t *q = p; q < end; q += 64)
			__builtin_prefetch(q);
	}
	/* the entries answering, then their records and files */
	uint32_t l[SC_WARM_MAX];
	for (size_t i = 0; i < m; i++) {
		const tk_sc_header *h = c[i]->h;
		sc_pos cur = {BSTART(c[i], lo[i]), TK_SC_NONE, 0, 0}, got = {0, TK_SC_NONE, 0, 0};
		const uint8_t *p = c[i]->rdata + c[i]->boff[lo[i]], *end = c[i]->rdata + c[i]->boff[lo[i] + 1], *after;
		int found = 0;
		l[i] = TK_SC_NONE;
		if (!sc_decode(&p, end, a[i], &cur, &got, &found, &after) || !found)
			continue;
		struct sc_warmed *w = &((tk_symcache *)c[i])->warmed[SC_WHASH(a[i])];
		*w = (struct sc_warmed){a[i], lo[i], (size_t)(after - c[i]->rdata), got, 1};
		if (got.node >= h->nnodes || got.file >= h->nfiles)
			continue;
		l[i] = (uint32_t)got.node;
		__builtin_prefetch(&c[i]->nodes[l[i]]);
		if (got.file) {
			__builtin_prefetch(&c[i]->files[got.file]);
			lo[i] = got.file; /* kept for the next step */
		} else
			lo[i] = 0;
	}
	for (size_t i = 0; i < m; i++)
		if (l[i] != TK_SC_NONE && lo[i])
			sc_prefetch_string(c[i], c[i]->files[lo[i]]);
	/* the inline chains, one record of each per round, and their strings */
	for (int more = 1, depth = 0; more && depth < TK_SYMBOL_MAX_FRAMES; depth++) {
		more = 0;
		for (size_t i = 0; i < m; i++) {
			if (l[i] == TK_SC_NONE)
				continue;
			const tk_sc_loc *x = &c[i]->nodes[l[i]];
			if (x->name)
				sc_prefetch_string(c[i], x->name);
			if (depth && !(x->line & TK_SC_LOC_SYMTAB) && x->call_file)
				sc_prefetch_string(c[i], x->call_file);
			l[i] = x->parent;
			if (l[i] != TK_SC_NONE) {
				__builtin_prefetch(&c[i]->nodes[l[i]]);
				more = 1;
			}
		}
	}
}

void tk_symcache_warm(const tk_symcache *const *cs, const uint64_t *addrs, size_t n)
{
	for (size_t i = 0; i < n; i += SC_WARM_MAX)
		sc_warm(cs + i, addrs + i, n - i < SC_WARM_MAX ? n - i : SC_WARM_MAX);
}
#undef BSTART

void tk_symcache_info(const tk_symcache *c, tk_symcache_meta *m)
{
	const tk_sc_header *h = c->h;
	memset(m, 0, sizeof *m);
	m->version = h->version;
	memcpy(m->uuid, h->uuid, 16);
	tk_uuid_format(h->uuid, m->uuid_str);
	tk_macho_arch_name(h->cputype, h->cpusubtype, m->arch);
	m->text_vmaddr = h->text_vmaddr;
	m->text_vmsize = h->text_vmsize;
	m->image = c->strings + h->image_name;
	m->has_dwarf = (h->flags & SC_HAS_DWARF) != 0;
	m->nranges = h->nranges;
	m->nlocs = h->nnodes;
	m->string_bytes = h->string_bytes;
	m->file_size = h->file_size;
}

int tk_symcache_matches(const tk_symcache *c, const uint8_t uuid[16], uint32_t cputype, uint32_t cpusubtype,
                        const tk_sc_source *src)
{
	const tk_sc_header *h = c->h;
	if (uuid && memcmp(h->uuid, uuid, 16) != 0)
		return 0;
	if (h->cputype != cputype || h->cpusubtype != cpusubtype)
		return 0;
	if (src && (h->src_size != src->size || h->src_mtime_ns != src->mtime_ns))
		return 0;
	return 1;
}
