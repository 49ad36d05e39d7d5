/*
 * The symbol cache: one file per (UUID, arch), mmap'ed and used in place.
 *
 *   header (tk_sc_header, 176 bytes, little-endian like every supported host)
 *   starts[nranges + 1]   u32 (addr_base-relative) or u64 range starts, sorted; the last is the end
 *   locs_of[nranges]      u32 index of the innermost location record, or UINT32_MAX for a gap
 *   syms_of[nranges]      u32 symbol-table ordinal for symtab-only ranges (keeps "+ offset" exact)
 *   locs[nlocs]           tk_sc_loc {name, file, line|flags, parent}: inline chains share tails
 *   strings               NUL-terminated, offset 0 is ""
 *
 * Lookup = one binary search over starts + a walk up the parent links (innermost first). The
 * checksum covers everything but its own field, so a truncated, flipped or foreign file is caught
 * at open; the header also names the source (UUID, arch, size, mtime) so stale caches are rebuilt.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
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
#define SC_VERSION 1u

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
	uint64_t addr_base;
	uint64_t nranges, off_starts, off_locs_of, off_syms_of;
	uint64_t nlocs, off_locs;
	uint64_t string_bytes, off_strings;
	uint32_t image_name, reserved;
} tk_sc_header;

#define SC_HAS_DWARF 1u

struct tk_symcache {
	const uint8_t *data;
	size_t size;
	int how;
	const tk_sc_header *h;
	const uint32_t *starts32;
	const uint64_t *starts64;
	const uint32_t *locs_of, *syms_of;
	const tk_sc_loc *locs;
	const char *strings;
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
		char *dem = tk_demangle_cxx(use);
		uint32_t flags = !dem && tk_is_swift_symbol(use) ? TK_SC_LOC_SWIFT : 0;
		if (dem)
			use = dem;
		seg[ns] = (tk_dw_seg){v[i].addr, end, tk_strpool_add(pool, use, strlen(use)), v[i].ord};
		fl[ns++] = flags;
		free(dem);
		free(tmp);
	}
	free(v);
	*out = seg;
	*flags_out = fl;
	return ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
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
	qsort(b, nb, sizeof *b, cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < nb; i++)
		if (!u || b[u - 1] != b[i])
			b[u++] = b[i];
	nb = u;

	loc_tab lt = {0};
	uint64_t *starts = NULL;
	uint32_t *locs_of = NULL, *syms_of = NULL;
	size_t nr = 0, capr = 0, caplo = 0, capso = 0;
	uint32_t chain[TK_SYMBOL_MAX_FRAMES];
	for (size_t k = 0; k + 1 < nb; k++) {
		uint64_t x = b[k];
		const tk_dw_seg *cu = cover(&L[0], x);
		const tk_dw_seg *sc = cover(&L[1], x);
		const tk_dw_seg *ln = cover(&L[2], x);
		const tk_dw_seg *sy = cover(&L[3], x);
		uint32_t loc = TK_SC_NONE, ord = 0;
		uint32_t symname = sy ? sy->a : 0, symfl = sy ? symflags[sy - syms] : 0;
		if (cu) {
			uint32_t file = ln && ln->a != TK_SC_NONE ? ln->a : 0,
			         line = ln && ln->a != TK_SC_NONE ? ln->b : 0;
			size_t depth = 0;
			if (sc)
				for (uint32_t nd = sc->a; nd != TK_SC_NONE && depth < TK_SYMBOL_MAX_FRAMES;
				     nd = dw.nodes[nd].parent)
					chain[depth++] = nd;
			uint32_t parent = TK_SC_NONE;
			if (!depth) {
				tk_sc_loc l = {sy ? symname : 0, file, line | (sy ? symfl : 0), TK_SC_NONE};
				loc = loc_add(&lt, l);
			}
			/* outermost first so parents exist before children */
			for (size_t d = depth; d-- > 0;) {
				const tk_dw_node *nd = &dw.nodes[chain[d]];
				tk_sc_loc l;
				l.name = nd->name;
				l.line = nd->flags;
				if (d == depth - 1 && sy) {
					l.name = symname; /* LLVM names the outermost frame from the symbol table */
					l.line = symfl;
				}
				if (d == 0) {
					l.file = file;
					l.line |= line;
				} else {
					const tk_dw_node *callee = &dw.nodes[chain[d - 1]];
					l.file = callee->call_file == TK_SC_NONE ? 0 : callee->call_file;
					l.line |= callee->call_line;
				}
				l.parent = parent;
				parent = loc_add(&lt, l);
			}
			if (depth)
				loc = parent;
		} else if (sy) {
			tk_sc_loc l = {symname, 0, TK_SC_LOC_SYMTAB | symfl, TK_SC_NONE};
			loc = loc_add(&lt, l);
			ord = sy->b;
		}
		if (nr && locs_of[nr - 1] == loc && syms_of[nr - 1] == ord)
			continue;
		TK_GROW(starts, capr, nr + 2);
		TK_GROW(locs_of, caplo, nr + 1);
		TK_GROW(syms_of, capso, nr + 1);
		starts[nr] = x;
		locs_of[nr] = loc;
		syms_of[nr++] = ord;
	}
	/* drop leading gaps; the end sentinel closes the last range */
	uint64_t end = nb ? b[nb - 1] : 0;
	size_t first = 0;
	while (first < nr && locs_of[first] == TK_SC_NONE)
		first++;
	while (nr > first && locs_of[nr - 1] == TK_SC_NONE) {
		end = starts[nr - 1];
		nr--;
	}
	size_t n = nr - first;
	uint64_t base = n ? starts[first] : 0;
	uint32_t width = n && end - base <= UINT32_MAX ? 4 : 8;
	if (!n)
		width = 4;
	size_t strbytes;
	const char *strs = tk_strpool_data(pool, &strbytes);

	size_t off = sizeof(tk_sc_header);
	size_t off_starts = off;
	off += (n + 1) * width;
	off = (off + 7) & ~(size_t)7;
	size_t off_locs_of = off;
	off += n * 4;
	size_t off_syms_of = off;
	off += n * 4;
	off = (off + 7) & ~(size_t)7;
	size_t off_locs = off;
	off += lt.n * sizeof(tk_sc_loc);
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
	h->nranges = n;
	h->off_starts = off_starts;
	h->off_locs_of = off_locs_of;
	h->off_syms_of = off_syms_of;
	h->nlocs = lt.n;
	h->off_locs = off_locs;
	h->string_bytes = strbytes;
	h->off_strings = off_strings;
	h->image_name = image;
	for (size_t i = 0; i <= n; i++) {
		uint64_t a = (i < n ? starts[first + i] : end) - base;
		if (width == 4) {
			uint32_t v = (uint32_t)a;
			memcpy(buf + off_starts + 4 * i, &v, 4);
		} else
			memcpy(buf + off_starts + 8 * i, &a, 8);
	}
	if (n) {
		memcpy(buf + off_locs_of, locs_of + first, n * 4);
		memcpy(buf + off_syms_of, syms_of + first, n * 4);
	}
	if (lt.n)
		memcpy(buf + off_locs, lt.v, lt.n * sizeof(tk_sc_loc));
	memcpy(buf + off_strings, strs, strbytes);
	h->checksum = checksum_of(buf, total);

	free(starts);
	free(locs_of);
	free(syms_of);
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
	/* bounds: a valid checksum does not make the layout trustworthy against a hostile writer */
	uint64_t n = h->nranges;
	int ok = (h->addr_width == 4 || h->addr_width == 8) && n < (1ull << 32) && h->nlocs < (1ull << 32) &&
	         h->off_starts >= sizeof *h && h->off_starts <= size &&
	         (n + 1) * h->addr_width <= size - h->off_starts && h->off_locs_of <= size &&
	         n * 4 <= size - h->off_locs_of && h->off_syms_of <= size && n * 4 <= size - h->off_syms_of &&
	         h->off_locs <= size && h->nlocs * sizeof(tk_sc_loc) <= size - h->off_locs && h->off_strings <= size &&
	         h->string_bytes >= 1 && h->string_bytes <= size - h->off_strings && h->off_starts % 8 == 0 &&
	         h->off_locs_of % 4 == 0 && h->off_syms_of % 4 == 0 && h->off_locs % 4 == 0 &&
	         data[h->off_strings + h->string_bytes - 1] == 0 && h->image_name < h->string_bytes;
	if (ok) {
		const tk_sc_loc *locs = (const tk_sc_loc *)(data + h->off_locs);
		const uint32_t *lo = (const uint32_t *)(data + h->off_locs_of);
		for (uint64_t i = 0; ok && i < h->nlocs; i++)
			ok = locs[i].name < h->string_bytes && locs[i].file < h->string_bytes &&
			     (locs[i].parent == TK_SC_NONE || locs[i].parent < i);
		for (uint64_t i = 0; ok && i < n; i++)
			ok = lo[i] == TK_SC_NONE || lo[i] < h->nlocs;
		/* starts must be increasing for the binary search to mean anything */
		for (uint64_t i = 0; ok && i < n; i++) {
			uint64_t a, c;
			if (h->addr_width == 4) {
				a = ((const uint32_t *)(data + h->off_starts))[i];
				c = ((const uint32_t *)(data + h->off_starts))[i + 1];
			} else {
				a = ((const uint64_t *)(data + h->off_starts))[i];
				c = ((const uint64_t *)(data + h->off_starts))[i + 1];
			}
			ok = a < c;
		}
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
	if (h->addr_width == 4)
		c->starts32 = (const uint32_t *)(data + h->off_starts);
	else
		c->starts64 = (const uint64_t *)(data + h->off_starts);
	c->locs_of = (const uint32_t *)(data + h->off_locs_of);
	c->syms_of = (const uint32_t *)(data + h->off_syms_of);
	c->locs = (const tk_sc_loc *)(data + h->off_locs);
	c->strings = (const char *)(data + h->off_strings);
	return c;
bad:
	if (how == TK_SC_MMAP)
		munmap((void *)data, size);
	else if (how == TK_SC_HEAP)
		free((void *)data);
	return NULL;
}

void tk_symcache_close(tk_symcache *c)
{
	if (!c)
		return;
	if (c->how == TK_SC_MMAP)
		munmap((void *)c->data, c->size);
	else if (c->how == TK_SC_HEAP)
		free((void *)c->data);
	free(c);
}

tk_symcache *tk_symcache_open_file(const char *path, tk_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tk_error_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(tk_sc_header)) {
		close(fd);
		tk_error_set(err, "%s: not a tracekit symbol cache (too short)", path);
		return NULL;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		tk_error_set(err, "%s: mmap: %s", path, strerror(errno));
		return NULL;
	}
	return tk_symcache_view(m, (size_t)st.st_size, path, TK_SC_MMAP, err);
}

int tk_symcache_write_file(const char *path, const uint8_t *buf, size_t size, tk_error *err)
{
	/* write a temporary and rename, so a reader never maps a half-written cache */
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return tk_error_set(err, "%s: %s", tmp, strerror(errno));
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

static inline uint64_t start_at(const tk_symcache *c, size_t i)
{
	return c->starts32 ? c->starts32[i] : c->starts64[i];
}

size_t tk_symcache_lookup(const tk_symcache *c, uint64_t file_addr, tk_symbol_frame *out, size_t cap,
                          uint64_t *range_start)
{
	const tk_sc_header *h = c->h;
	size_t n = h->nranges;
	if (!n || file_addr < h->addr_base)
		return 0;
	uint64_t a = file_addr - h->addr_base;
	if (a >= start_at(c, n))
		return 0;
	size_t lo = 0, hi = n; /* find the last i with start[i] <= a */
	if (c->starts32) {
		uint32_t a32 = (uint32_t)a;
		const uint32_t *s = c->starts32;
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (s[mid] <= a32)
				lo = mid;
			else
				hi = mid;
		}
	} else {
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (c->starts64[mid] <= a)
				lo = mid;
			else
				hi = mid;
		}
	}
	uint32_t l = c->locs_of[lo];
	if (l == TK_SC_NONE)
		return 0;
	if (range_start)
		*range_start = start_at(c, lo) + h->addr_base;
	size_t k = 0;
	while (l != TK_SC_NONE && k < cap) {
		const tk_sc_loc *x = &c->locs[l];
		out[k].function = x->name ? c->strings + x->name : "??";
		out[k].file = x->file ? c->strings + x->file : NULL;
		out[k].line = x->line & TK_SC_LINE_MASK;
		out[k].flags = (x->line & TK_SC_LOC_SWIFT ? TK_FRAME_SWIFT : 0) |
		               (x->line & TK_SC_LOC_SYMTAB ? TK_SC_FRAME_SYMTAB : 0);
		k++;
		l = x->parent;
	}
	for (size_t i = 0; i + 1 < k; i++)
		out[i].flags |= TK_FRAME_INLINED;
	return k;
}

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
	m->nlocs = h->nlocs;
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
