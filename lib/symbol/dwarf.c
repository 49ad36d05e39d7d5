/*
 * DWARF collection through libdwarf for one Mach-O slice.
 *
 * libdwarf 20210528 (Debian 12) cannot open universal files, so every slice — thin or fat — is
 * fed through dwarf_object_init_b with our own object-access methods that point libdwarf at the
 * slice's __DWARF sections inside the mapped file (Mach-O "__debug_info" → ".debug_info").
 *
 * What is collected mirrors what llvm-symbolizer answers, so the cache can reproduce it exactly:
 *   - CU address ranges (.debug_aranges, else the CU DIE's ranges), the lowest CU offset winning;
 *   - every subprogram / inlined_subroutine DIE with code, painted in DIE pre-order (a deeper DIE
 *     overrides its parent over its own ranges), with its name (linkage name through
 *     abstract_origin/specification first, demangled; else DW_AT_name) and call file/line;
 *   - every line-table row as [addr, next row's addr) → (file, line); the last row at an address wins.
 * File names are composed like LLVM's AbsoluteFilePath: comp_dir / include_dir / name.
 */
#include <dwarf.h>
#include <libdwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symint.h"
#include "util/hidx.h"
#include "util/mem.h"

/* ---------------------------------------------------------------- object access */

#define MAX_DW_SECT 32

typedef struct obj {
	const uint8_t *base; /* slice start */
	uint32_t n;
	struct {
		char name[32];
		uint64_t addr, size;
		uint32_t offset;
	} s[MAX_DW_SECT];
} obj;

static int oa_info(void *o, Dwarf_Half i, Dwarf_Obj_Access_Section *ret, int *e)
{
	obj *ob = o;
	if (i >= ob->n) {
		*e = DW_DLE_MDE;
		return DW_DLV_ERROR;
	}
	memset(ret, 0, sizeof *ret);
	ret->addr = ob->s[i].addr;
	ret->size = ob->s[i].size;
	ret->name = ob->s[i].name;
	return DW_DLV_OK;
}
static Dwarf_Endianness oa_order(void *o)
{
	return DW_OBJECT_LSB;
}
static Dwarf_Small oa_len(void *o)
{
	return 4;
}
static Dwarf_Small oa_ptr(void *o)
{
	return 8;
}
static Dwarf_Unsigned oa_count(void *o)
{
	return ((obj *)o)->n;
}
static int oa_load(void *o, Dwarf_Half i, Dwarf_Small **data, int *e)
{
	obj *ob = o;
	if (i >= ob->n) {
		*e = DW_DLE_MDE;
		return DW_DLV_ERROR;
	}
	if (i == 0) { /* the empty placeholder section, as ELF has */
		static Dwarf_Small empty[8];
		*data = empty;
		return DW_DLV_OK;
	}
	/* libdwarf never writes to sections unless relocating, which Mach-O has no use for */
	*data = (Dwarf_Small *)(uintptr_t)(ob->base + ob->s[i].offset);
	return DW_DLV_OK;
}
static const Dwarf_Obj_Access_Methods oa_methods = {oa_info, oa_order, oa_len, oa_ptr, oa_count, oa_load, NULL};

/* ---------------------------------------------------------------- painting */

static int cmp_lo(const void *a, const void *b)
{
	const tk_paint_in *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A max-heap of indexes into in[] ordered by priority. */
typedef struct heap {
	uint32_t *v;
	size_t n, cap;
} heap;
static void heap_push(heap *h, const tk_paint_in *in, uint32_t i)
{
	TK_GROW(h->v, h->cap, h->n + 1);
	size_t k = h->n++;
	while (k) {
		size_t p = (k - 1) / 2;
		if (in[h->v[p]].priority >= in[i].priority)
			break;
		h->v[k] = h->v[p];
		k = p;
	}
	h->v[k] = i;
}
static void heap_pop(heap *h, const tk_paint_in *in)
{
	uint32_t last = h->v[--h->n];
	size_t k = 0;
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && in[h->v[c + 1]].priority > in[h->v[c]].priority)
			c++;
		if (in[h->v[c]].priority <= in[last].priority)
			break;
		h->v[k] = h->v[c];
		k = c;
	}
	if (h->n)
		h->v[k] = last;
}

/* Sort u64 keys: most inputs here (line rows, boundaries of sorted layers) are sorted or nearly
 * so, and a radix sort beats qsort's comparisons on the rest. */
void tk_sort_u64(uint64_t *v, size_t n)
{
	uint64_t *tmp = tk_xmalloc(n * sizeof *tmp);
	tk_sort_u64_buf(v, n, tmp);
	free(tmp);
}

void tk_sort_u64_buf(uint64_t *v, size_t n, uint64_t *tmp)
{
	size_t i = 1;
	while (i < n && v[i - 1] <= v[i])
		i++;
	if (i >= n)
		return;
	uint64_t or_ = 0, and_ = ~(uint64_t)0;
	for (size_t k = 0; k < n; k++)
		or_ |= v[k], and_ &= v[k];
	for (int shift = 0; shift < 64; shift += 11) {
		if ((((or_ ^ and_) >> shift) & 0x7ff) == 0)
			continue;
		size_t *cnt = tk_xcalloc(2048, sizeof *cnt);
		for (size_t k = 0; k < n; k++)
			cnt[(v[k] >> shift) & 0x7ff]++;
		size_t sum = 0;
		for (int d = 0; d < 2048; d++) {
			size_t t = cnt[d];
			cnt[d] = sum;
			sum += t;
		}
		for (size_t k = 0; k < n; k++)
			tmp[cnt[(v[k] >> shift) & 0x7ff]++] = v[k];
		memcpy(v, tmp, n * sizeof *v);
		free(cnt);
	}
}

size_t tk_paint(tk_paint_in *in, size_t n, tk_dw_seg **out)
{
	*out = NULL;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (in[i].hi > in[i].lo)
			in[m++] = in[i];
	n = m;
	if (!n)
		return 0;
	size_t sorted = 1;
	while (sorted < n && in[sorted - 1].lo <= in[sorted].lo)
		sorted++;
	if (sorted < n)
		qsort(in, n, sizeof *in, cmp_lo);
	uint64_t *b = tk_xmalloc(2 * n * sizeof *b);
	for (size_t i = 0; i < n; i++) {
		b[2 * i] = in[i].lo;
		b[2 * i + 1] = in[i].hi;
	}
	tk_sort_u64(b, 2 * n);
	size_t nb = 0;
	for (size_t i = 0; i < 2 * n; i++)
		if (!nb || b[nb - 1] != b[i])
			b[nb++] = b[i];
	heap h = {0};
	tk_dw_seg *seg = NULL;
	size_t ns = 0, cap = 0, next = 0;
	for (size_t k = 0; k + 1 < nb; k++) {
		uint64_t at = b[k];
		while (next < n && in[next].lo <= at)
			heap_push(&h, in, (uint32_t)next++);
		while (h.n && in[h.v[0]].hi <= at)
			heap_pop(&h, in);
		/* a lower-priority range may end later than the top; it surfaces when the top is popped */
		if (!h.n)
			continue;
		const tk_paint_in *w = &in[h.v[0]];
		if (ns && seg[ns - 1].hi == at && seg[ns - 1].a == w->a && seg[ns - 1].b == w->b) {
			seg[ns - 1].hi = b[k + 1];
			continue;
		}
		TK_GROW(seg, cap, ns + 1);
		seg[ns++] = (tk_dw_seg){at, b[k + 1], w->a, w->b};
	}
	free(h.v);
	free(b);
	*out = seg;
	return ns;
}

/* ---------------------------------------------------------------- collection state */

typedef struct name_entry {
	Dwarf_Off off;
	uint32_t name, flags;
	int is_linkage;
} name_entry;

typedef struct cu_state {
	uint64_t base; /* CU low_pc: base of DWARF 4 range lists */
	unsigned version;
	uint64_t addr_base, rnglists_base; /* DWARF 5 */
	uint32_t *files;
	size_t nfiles;
	int64_t file_base; /* index of files[0] in DWARF terms */
} cu_state;

typedef struct walk {
	Dwarf_Debug dbg;
	tk_strpool *pool;
	tk_dw_result *res;
	const char *name; /* for messages */
	tk_error *err;
	int failed;
	tk_paint_in *scopes;
	size_t nscopes, capscopes;
	uint64_t preorder;
	name_entry *names;
	size_t nnames, capnames;
	tk_hidx names_idx;
	cu_state cu;
	struct {
		const uint8_t *data;
		uint64_t size;
	} rng, addr; /* .debug_rnglists and .debug_addr of the slice */
} walk;

/* libdwarf hands out an error object on every failed call; most failures here are answers
 * ("no such attribute"), so the object is just released. */
static void drop_error(walk *w, Dwarf_Error *e)
{
	if (*e)
		dwarf_dealloc_error(w->dbg, *e);
	*e = NULL;
}

static void dw_fail(walk *w, Dwarf_Error e, const char *what)
{
	if (!w->failed)
		tk_error_set(w->err, "%s: DWARF: %s: %s", w->name, what, e ? dwarf_errmsg(e) : "no entry");
	w->failed = 1;
	drop_error(w, &e);
}

static int is_abs(const char *p)
{
	return p && p[0] == '/';
}

/* sys::path::append semantics: empty components are skipped, one '/' between components. */
static void path_append(char *buf, size_t cap, const char *comp)
{
	if (!comp || !*comp)
		return;
	size_t n = strlen(buf);
	if (n && buf[n - 1] == '/') {
		while (*comp == '/')
			comp++;
	} else if (n && comp[0] != '/') {
		if (n + 1 < cap)
			buf[n++] = '/', buf[n] = 0;
	}
	size_t m = strlen(comp);
	if (n + m >= cap)
		m = cap - n - 1;
	memcpy(buf + n, comp, m);
	buf[n + m] = 0;
}

static void load_files(walk *w, Dwarf_Line_Context lc, Dwarf_Unsigned version, const char *comp_dir)
{
	Dwarf_Signed base = 0, count = 0, end = 0, ndirs = 0;
	Dwarf_Error e = NULL;
	free(w->cu.files);
	w->cu.files = NULL;
	w->cu.nfiles = 0;
	if (dwarf_srclines_files_indexes(lc, &base, &count, &end, &e) != DW_DLV_OK) {
		drop_error(w, &e);
		return;
	}
	if (dwarf_srclines_include_dir_count(lc, &ndirs, &e) != DW_DLV_OK) {
		drop_error(w, &e);
		ndirs = 0;
	}
	w->cu.file_base = base;
	if (count <= 0)
		return;
	w->cu.files = tk_xcalloc((size_t)count, sizeof *w->cu.files);
	w->cu.nfiles = (size_t)count;
	for (Dwarf_Signed i = base; i < end; i++) {
		const char *fname = NULL;
		Dwarf_Unsigned dir = 0, mtime = 0, flen = 0;
		Dwarf_Form_Data16 *md5 = NULL;
		if (dwarf_srclines_files_data_b(lc, i, &fname, &dir, &mtime, &flen, &md5, &e) != DW_DLV_OK || !fname) {
			drop_error(w, &e);
			w->cu.files[i - base] = TK_SC_NONE;
			continue;
		}
		char path[4096] = "";
		if (is_abs(fname)) {
			path_append(path, sizeof path, fname);
		} else {
			const char *inc = NULL;
			/* DWARF 2-4: directory 0 is the comp dir, 1.. index include_directories (libdwarf
			 * counts from 1); DWARF 5: entry 0 is the comp dir itself (libdwarf counts from 0) and
			 * LLVM still joins it, giving "././src/x.c" for comp dir "." */
			Dwarf_Signed di = (Dwarf_Signed)dir;
			if (version >= 5 ? di < ndirs : di >= 1 && di <= ndirs) {
				if (dwarf_srclines_include_dir_data(lc, di, &inc, &e) != DW_DLV_OK) {
					drop_error(w, &e);
					inc = NULL;
				}
			}
			if (comp_dir && *comp_dir && !is_abs(inc))
				path_append(path, sizeof path, comp_dir);
			path_append(path, sizeof path, inc);
			path_append(path, sizeof path, fname);
		}
		w->cu.files[i - base] = tk_strpool_add(w->pool, path, strlen(path));
	}
}

static uint32_t file_str(walk *w, Dwarf_Unsigned idx)
{
	int64_t k = (int64_t)idx - w->cu.file_base;
	if (k < 0 || (uint64_t)k >= w->cu.nfiles)
		return TK_SC_NONE;
	return w->cu.files[k];
}

static void collect_lines(walk *w, Dwarf_Die cu_die, const char *comp_dir)
{
	Dwarf_Unsigned version = 0;
	Dwarf_Small tables = 0;
	Dwarf_Line_Context lc = NULL;
	Dwarf_Error e = NULL;
	int rc = dwarf_srclines_b(cu_die, &version, &tables, &lc, &e);
	if (rc != DW_DLV_OK) {
		if (rc == DW_DLV_ERROR)
			dw_fail(w, e, "line table");
		return;
	}
	load_files(w, lc, version, comp_dir);
	Dwarf_Line *lines = NULL;
	Dwarf_Signed n = 0;
	if (dwarf_srclines_from_linecontext(lc, &lines, &n, &e) != DW_DLV_OK) {
		if (e)
			dw_fail(w, e, "line rows");
		dwarf_srclines_dealloc_b(lc);
		return;
	}
	tk_paint_in *rows = NULL;
	size_t nrows = 0, cap = 0;
	uint64_t seq_lo = 0;
	int in_seq = 0;
	uint64_t prev_addr = 0;
	uint32_t prev_file = 0, prev_line = 0;
	for (Dwarf_Signed i = 0; i < n; i++) {
		Dwarf_Addr addr = 0;
		Dwarf_Unsigned lineno = 0, fileno = 0;
		Dwarf_Bool endseq = 0;
		if (dwarf_lineaddr(lines[i], &addr, &e) != DW_DLV_OK ||
		    dwarf_lineno(lines[i], &lineno, &e) != DW_DLV_OK ||
		    dwarf_line_srcfileno(lines[i], &fileno, &e) != DW_DLV_OK ||
		    dwarf_lineendsequence(lines[i], &endseq, &e) != DW_DLV_OK) {
			drop_error(w, &e);
			continue;
		}
		if (in_seq && addr > prev_addr) {
			TK_GROW(rows, cap, nrows + 1);
			rows[nrows++] = (tk_paint_in){prev_addr, addr, prev_file, prev_line, seq_lo};
		}
		if (endseq) {
			in_seq = 0;
			continue;
		}
		if (!in_seq) {
			in_seq = 1;
			seq_lo = addr;
		}
		if (in_seq && addr < prev_addr && i > 0)
			seq_lo = addr < seq_lo ? addr : seq_lo;
		prev_addr = addr;
		prev_file = file_str(w, fileno);
		prev_line = lineno > TK_SC_LINE_MASK ? TK_SC_LINE_MASK : (uint32_t)lineno;
	}
	dwarf_srclines_dealloc_b(lc);
	/* the lines of one CU are sequences that do not overlap; painting merges equal neighbours */
	tk_dw_seg *segs = NULL;
	size_t ns = tk_paint(rows, nrows, &segs);
	free(rows);
	tk_dw_result *r = w->res;
	TK_GROW(r->lines, r->caplines, r->nlines + ns);
	memcpy(r->lines + r->nlines, segs, ns * sizeof *segs);
	r->nlines += ns;
	free(segs);
}

/* DIE attribute helpers */
static int attr_udata(walk *w, Dwarf_Die d, Dwarf_Half at, Dwarf_Unsigned *v)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	if (dwarf_attr(d, at, &a, &e) != DW_DLV_OK) {
		drop_error(w, &e);
		return 0;
	}
	int ok = dwarf_formudata(a, v, &e) == DW_DLV_OK;
	if (!ok)
		drop_error(w, &e);
	dwarf_dealloc_attribute(a);
	return ok;
}

static const char *attr_str(walk *w, Dwarf_Die d, Dwarf_Half at)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	char *s = NULL;
	if (dwarf_attr(d, at, &a, &e) != DW_DLV_OK) {
		drop_error(w, &e);
		return NULL;
	}
	if (dwarf_formstring(a, &s, &e) != DW_DLV_OK) {
		drop_error(w, &e);
		s = NULL;
	}
	dwarf_dealloc_attribute(a);
	return s; /* points into .debug_str / .debug_info: lives as long as dbg */
}

static int attr_ref(walk *w, Dwarf_Die d, Dwarf_Half at, Dwarf_Off *off)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	if (dwarf_attr(d, at, &a, &e) != DW_DLV_OK) {
		drop_error(w, &e);
		return 0;
	}
	int ok = dwarf_global_formref(a, off, &e) == DW_DLV_OK;
	if (!ok)
		drop_error(w, &e);
	dwarf_dealloc_attribute(a);
	return ok;
}

static int name_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const name_entry *)ctx)[idx].off == *(const Dwarf_Off *)key;
}

/* The LLVM LinkageName rule: a linkage name found on the DIE or through abstract_origin /
 * specification wins; otherwise the first DW_AT_name along the same path. */
static name_entry resolve_name(walk *w, Dwarf_Die d, Dwarf_Off off, int depth)
{
	uint64_t h = tk_hash_u64(off);
	uint32_t k = tk_hidx_find(&w->names_idx, h, name_eq, w->names, &off);
	if (k != UINT32_MAX)
		return w->names[k];
	name_entry r = {off, 0, 0, 0};
	const char *link = attr_str(w, d, DW_AT_linkage_name);
	if (!link)
		link = attr_str(w, d, DW_AT_MIPS_linkage_name);
	const char *own = link ? NULL : attr_str(w, d, DW_AT_name);
	if (link) {
		r.is_linkage = 1;
		size_t dl = 0;
		uint32_t fl = 0;
		char *dem = tk_sc_name(link, &dl, &fl);
		r.name = tk_strpool_add(w->pool, dem ? dem : link, dem ? dl : strlen(link));
		r.flags = fl;
		free(dem);
	} else {
		Dwarf_Off t = 0;
		name_entry sub = {0};
		int have = 0;
		if (depth < 8 &&
		    (attr_ref(w, d, DW_AT_abstract_origin, &t) || attr_ref(w, d, DW_AT_specification, &t))) {
			Dwarf_Die td = NULL;
			Dwarf_Error e = NULL;
			if (dwarf_offdie_b(w->dbg, t, 1, &td, &e) == DW_DLV_OK) {
				sub = resolve_name(w, td, t, depth + 1);
				have = 1;
				dwarf_dealloc_die(td);
			} else
				drop_error(w, &e);
		}
		if (have && (sub.is_linkage || !own))
			r = (name_entry){off, sub.name, sub.flags, sub.is_linkage};
		else if (own)
			r.name = tk_strpool_add(w->pool, own, strlen(own));
	}
	TK_GROW(w->names, w->capnames, w->nnames + 1);
	w->names[w->nnames] = r;
	tk_hidx_insert(&w->names_idx, h, (uint32_t)w->nnames++);
	return r;
}

static int rd_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (int sh = 0; sh < 64; sh += 7) {
		if (*p >= end)
			return 0;
		uint8_t b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = x;
			return 1;
		}
	}
	return 0;
}

static int rd_u64(const uint8_t *base, uint64_t size, uint64_t off, uint64_t *v)
{
	if (off > size || size - off < 8)
		return 0;
	uint64_t x = 0;
	for (int k = 7; k >= 0; k--)
		x = x << 8 | base[off + k];
	*v = x;
	return 1;
}

static int rd_addrx(walk *w, uint64_t index, uint64_t *v)
{
	if (!w->addr.data || index > (UINT64_MAX - w->cu.addr_base) / 8)
		return 0;
	return rd_u64(w->addr.data, w->addr.size, w->cu.addr_base + index * 8, v);
}

/* A DWARF 5 range list: by index into the CU's offset table (DW_FORM_rnglistx) or by section
 * offset. Every read is bounds-checked; returns the number of ranges written. */
static size_t rnglist_decode(walk *w, int is_index, uint64_t val, uint64_t *lo, uint64_t *hi, size_t cap)
{
	const uint8_t *sec = w->rng.data;
	uint64_t size = w->rng.size, off = val;
	if (!sec)
		return 0;
	if (is_index) {
		uint64_t base = w->cu.rnglists_base;
		if (val > (size / 4) || base > size || size - base < 4 * (val + 1))
			return 0;
		const uint8_t *q = sec + base + 4 * val;
		off = base + ((uint64_t)q[0] | (uint64_t)q[1] << 8 | (uint64_t)q[2] << 16 | (uint64_t)q[3] << 24);
	}
	if (off >= size)
		return 0;
	const uint8_t *p = sec + off, *end = sec + size;
	uint64_t base = w->cu.base, x, y;
	size_t n = 0;
	while (p < end && n < cap) {
		uint8_t kind = *p++;
		switch (kind) {
		case DW_RLE_end_of_list: return n;
		case DW_RLE_base_addressx:
			if (!rd_uleb(&p, end, &x) || !rd_addrx(w, x, &base))
				return n;
			break;
		case DW_RLE_startx_endx:
			if (!rd_uleb(&p, end, &x) || !rd_uleb(&p, end, &y) || !rd_addrx(w, x, &lo[n]) ||
			    !rd_addrx(w, y, &hi[n]))
				return n;
			n++;
			break;
		case DW_RLE_startx_length:
			if (!rd_uleb(&p, end, &x) || !rd_uleb(&p, end, &y) || !rd_addrx(w, x, &lo[n]))
				return n;
			hi[n] = lo[n] + y;
			n++;
			break;
		case DW_RLE_offset_pair:
			if (!rd_uleb(&p, end, &x) || !rd_uleb(&p, end, &y))
				return n;
			lo[n] = base + x, hi[n] = base + y;
			n++;
			break;
		case DW_RLE_base_address:
			if (!rd_u64(sec, size, (uint64_t)(p - sec), &base))
				return n;
			p += 8;
			break;
		case DW_RLE_start_end:
			if (!rd_u64(sec, size, (uint64_t)(p - sec), &lo[n]) ||
			    !rd_u64(sec, size, (uint64_t)(p - sec) + 8, &hi[n]))
				return n;
			p += 16;
			n++;
			break;
		case DW_RLE_start_length:
			if (!rd_u64(sec, size, (uint64_t)(p - sec), &lo[n]))
				return n;
			p += 8;
			if (!rd_uleb(&p, end, &y))
				return n;
			hi[n] = lo[n] + y;
			n++;
			break;
		default: return n;
		}
	}
	return n;
}

/* Append the address ranges of d to *out (n/cap); returns the count added. */
static size_t die_ranges(walk *w, Dwarf_Die d, tk_paint_in **out, size_t *n, size_t *cap, uint32_t a, uint64_t prio)
{
	Dwarf_Error e = NULL;
	Dwarf_Addr lo = 0, hi = 0;
	Dwarf_Half form = 0;
	enum Dwarf_Form_Class cls = DW_FORM_CLASS_UNKNOWN;
	size_t added = 0;
	if (dwarf_lowpc(d, &lo, &e) == DW_DLV_OK) {
		if (dwarf_highpc_b(d, &hi, &form, &cls, &e) == DW_DLV_OK) {
			if (cls == DW_FORM_CLASS_CONSTANT)
				hi += lo;
			TK_GROW(*out, *cap, *n + 1);
			(*out)[(*n)++] = (tk_paint_in){lo, hi, a, 0, prio};
			return 1;
		}
		drop_error(w, &e);
		return 0;
	}
	drop_error(w, &e);
	Dwarf_Attribute at = NULL;
	if (dwarf_attr(d, DW_AT_ranges, &at, &e) != DW_DLV_OK) {
		drop_error(w, &e);
		return 0;
	}
	Dwarf_Half f = 0;
	dwarf_whatform(at, &f, &e);
	Dwarf_Unsigned off = 0;
	int ok;
	if (f == DW_FORM_rnglistx) {
		ok = dwarf_formudata(at, &off, &e) == DW_DLV_OK; /* an index into the CU's offsets table */
	} else {
		ok = dwarf_global_formref(at, &off, &e) == DW_DLV_OK;
		if (!ok) {
			drop_error(w, &e);
			ok = dwarf_formudata(at, &off, &e) == DW_DLV_OK;
		}
	}
	if (!ok)
		drop_error(w, &e);
	if (ok && w->cu.version < 5) {
		/* DWARF 2-4: .debug_ranges, offsets relative to the CU base address */
		Dwarf_Ranges *rb = NULL;
		Dwarf_Signed cnt = 0;
		Dwarf_Unsigned bytes = 0;
		Dwarf_Off real = 0;
		if (dwarf_get_ranges_b(w->dbg, off, d, &real, &rb, &cnt, &bytes, &e) == DW_DLV_OK) {
			uint64_t base = w->cu.base;
			for (Dwarf_Signed i = 0; i < cnt; i++) {
				if (rb[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
					base = rb[i].dwr_addr2;
				else if (rb[i].dwr_type == DW_RANGES_ENTRY) {
					TK_GROW(*out, *cap, *n + 1);
					(*out)[(*n)++] =
					    (tk_paint_in){base + rb[i].dwr_addr1, base + rb[i].dwr_addr2, a, 0, prio};
					added++;
				}
			}
			dwarf_ranges_dealloc(w->dbg, rb, cnt);
		} else
			drop_error(w, &e);
		ok = 0;
	}
	if (!added && ok) {
		/* DWARF 5 .debug_rnglists, decoded here: libdwarf 20210528's reader crashes on
		 * malformed lists (found by fuzz_symbol_macho) */
		uint64_t rlo[256], rhi[256];
		size_t k = rnglist_decode(w, f == DW_FORM_rnglistx, off, rlo, rhi, 256);
		for (size_t i = 0; i < k; i++) {
			TK_GROW(*out, *cap, *n + 1);
			(*out)[(*n)++] = (tk_paint_in){rlo[i], rhi[i], a, 0, prio};
			added++;
		}
	}
	dwarf_dealloc_attribute(at);
	return added;
}

static void walk_die(walk *w, Dwarf_Die d, uint32_t parent, int depth)
{
	Dwarf_Error e = NULL;
	Dwarf_Half tag = 0;
	if (dwarf_tag(d, &tag, &e) != DW_DLV_OK) {
		drop_error(w, &e);
		return;
	}
	uint32_t me = parent;
	int descend = 0;
	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
		tk_dw_result *r = w->res;
		uint32_t idx = (uint32_t)r->nnodes;
		size_t before = w->nscopes;
		uint64_t prio = w->preorder++;
		if (die_ranges(w, d, &w->scopes, &w->nscopes, &w->capscopes, idx, prio) > 0) {
			Dwarf_Off off = 0;
			dwarf_dieoffset(d, &off, &e);
			name_entry nm = resolve_name(w, d, off, 0);
			Dwarf_Unsigned cf = 0, cl = 0;
			uint32_t cfile = TK_SC_NONE;
			if (tag == DW_TAG_inlined_subroutine) {
				if (attr_udata(w, d, DW_AT_call_file, &cf))
					cfile = file_str(w, cf);
				attr_udata(w, d, DW_AT_call_line, &cl);
			}
			TK_GROW(r->nodes, r->capnodes, r->nnodes + 1);
			r->nodes[r->nnodes++] =
			    (tk_dw_node){nm.name, cfile, cl > TK_SC_LINE_MASK ? TK_SC_LINE_MASK : (uint32_t)cl,
			                 tag == DW_TAG_subprogram ? TK_SC_NONE : parent, nm.flags};
			me = idx;
			descend = 1;
		} else {
			w->nscopes = before;
		}
	} else if (tag == DW_TAG_lexical_block || tag == DW_TAG_namespace || tag == DW_TAG_module ||
	           tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit) {
		descend = 1;
	}
	if (!descend || depth > 200)
		return;
	Dwarf_Die c = NULL;
	if (dwarf_child(d, &c, &e) != DW_DLV_OK) {
		if (e)
			dw_fail(w, e, "child DIE");
		return;
	}
	while (c && !w->failed) {
		walk_die(w, c, me, depth + 1);
		Dwarf_Die s = NULL;
		int rc = dwarf_siblingof_b(w->dbg, c, 1, &s, &e);
		dwarf_dealloc_die(c);
		c = rc == DW_DLV_OK ? s : NULL;
		if (rc == DW_DLV_ERROR)
			dw_fail(w, e, "sibling DIE");
	}
}

/* libdwarf 20210528 parses every .debug_rnglists / .debug_loclists header when it opens the
 * DWARF, and a malformed header makes it free memory twice (found by fuzz_symbol_macho). Check
 * the headers first and hide a malformed section: lookups then miss its ranges, never crash. */
static int lists_headers_ok(const uint8_t *p, uint64_t size)
{
	uint64_t off = 0;
	while (off < size) {
		if (size - off < 12)
			return 0;
		uint64_t len = (uint64_t)p[off] | (uint64_t)p[off + 1] << 8 | (uint64_t)p[off + 2] << 16 |
		               (uint64_t)p[off + 3] << 24;
		uint64_t hdr = 4, offsz = 4;
		if (len == 0xffffffffu) {
			if (size - off < 20)
				return 0;
			len = 0;
			for (int k = 7; k >= 0; k--)
				len = len << 8 | p[off + 4 + k];
			hdr = 12, offsz = 8;
		} else if (len >= 0xfffffff0u)
			return 0;
		if (len < 8 || len > size - off - hdr)
			return 0;
		const uint8_t *h = p + off + hdr;
		unsigned version = h[0] | h[1] << 8, asz = h[2], seg = h[3];
		uint64_t count = (uint64_t)h[4] | (uint64_t)h[5] << 8 | (uint64_t)h[6] << 16 | (uint64_t)h[7] << 24;
		if (version != 5 || (asz != 4 && asz != 8) || seg != 0 || count > (len - 8) / offsz)
			return 0;
		off += hdr + len;
	}
	return 1;
}

static void handler(Dwarf_Error e, Dwarf_Ptr arg)
{
	(void)e, (void)arg;
}

int tk_dwarf_collect(const uint8_t *slice, size_t slice_size, const tk_macho_slice *sl, const char *name,
                     tk_strpool *pool, tk_dw_result *res, tk_error *err)
{
	memset(res, 0, sizeof *res);
	obj ob = {.base = slice, .n = 1};
	strcpy(ob.s[0].name, "");
	for (uint32_t i = 0; i < sl->nsects && ob.n < MAX_DW_SECT; i++) {
		const tk_macho_section *x = &sl->sects[i];
		if (strncmp(x->sectname, "__debug_", 8) != 0 || !x->offset || !x->size)
			continue;
		if ((uint64_t)x->offset + x->size > slice_size)
			return tk_error_set(err, "%s: section %s,%s runs past the end of its slice", name, x->segname,
			                    x->sectname);
		if ((strcmp(x->sectname, "__debug_rnglists") == 0 || strcmp(x->sectname, "__debug_loclists") == 0) &&
		    !lists_headers_ok(slice + x->offset, x->size))
			continue;
		/* Mach-O truncates section names to 16 bytes */
		const char *n = x->sectname + 2;
		char full[32];
		if (strcmp(n, "debug_str_offs") == 0)
			n = "debug_str_offsets";
		snprintf(full, sizeof full, ".%s", n);
		strcpy(ob.s[ob.n].name, full);
		ob.s[ob.n].addr = x->addr;
		ob.s[ob.n].size = x->size;
		ob.s[ob.n].offset = x->offset;
		ob.n++;
	}
	Dwarf_Obj_Access_Interface intf = {&ob, &oa_methods};
	Dwarf_Debug dbg = NULL;
	Dwarf_Error e = NULL;
	int rc = dwarf_object_init_b(&intf, handler, NULL, DW_GROUPNUMBER_ANY, &dbg, &e);
	if (rc != DW_DLV_OK) {
		tk_error_set(err, "%s (%s): DWARF: cannot open: %s", name, sl->arch,
		             rc == DW_DLV_ERROR && e ? dwarf_errmsg(e) : "no DWARF sections");
		if (e)
			dwarf_dealloc_error(NULL, e);
		return -1;
	}
	walk w = {.dbg = dbg, .pool = pool, .res = res, .name = name, .err = err};
	for (uint32_t i = 1; i < ob.n; i++) {
		if (strcmp(ob.s[i].name, ".debug_rnglists") == 0)
			w.rng.data = slice + ob.s[i].offset, w.rng.size = ob.s[i].size;
		else if (strcmp(ob.s[i].name, ".debug_addr") == 0)
			w.addr.data = slice + ob.s[i].offset, w.addr.size = ob.s[i].size;
	}
	tk_paint_in *cus = NULL;
	size_t ncus = 0, capcus = 0;
	Dwarf_Off *cu_offs = NULL;
	size_t ncuoffs = 0, capcuoffs = 0;
	/* CU DIE ranges, used for CUs .debug_aranges does not list */
	tk_paint_in *cu_die_rng = NULL;
	size_t ncdr = 0, capcdr = 0;
	for (;;) {
		Dwarf_Unsigned hlen = 0, abbr = 0, typeoff = 0, next = 0;
		Dwarf_Half ver = 0, asz = 0, lsz = 0, esz = 0, utype = 0;
		Dwarf_Sig8 sig;
		rc = dwarf_next_cu_header_d(dbg, 1, &hlen, &ver, &abbr, &asz, &lsz, &esz, &sig, &typeoff, &next, &utype,
		                            &e);
		if (rc == DW_DLV_NO_ENTRY)
			break;
		if (rc == DW_DLV_ERROR) {
			dw_fail(&w, e, "CU header");
			break;
		}
		Dwarf_Die cu = NULL;
		if (dwarf_siblingof_b(dbg, NULL, 1, &cu, &e) != DW_DLV_OK) {
			dw_fail(&w, e, "CU DIE");
			break;
		}
		Dwarf_Off cuoff = 0;
		dwarf_dieoffset(cu, &cuoff, &e);
		uint32_t cu_index = (uint32_t)ncuoffs;
		w.cu.version = ver;
		w.cu.addr_base = w.cu.rnglists_base = 0;
		TK_GROW(cu_offs, capcuoffs, ncuoffs + 1);
		cu_offs[ncuoffs++] = cuoff;
		Dwarf_Addr lo = 0;
		w.cu.base = dwarf_lowpc(cu, &lo, &e) == DW_DLV_OK ? lo : 0;
		if (e)
			dwarf_dealloc_error(dbg, e), e = NULL;
		Dwarf_Off ab = 0;
		if (attr_ref(&w, cu, DW_AT_addr_base, &ab) || attr_udata(&w, cu, DW_AT_addr_base, &ab))
			w.cu.addr_base = ab;
		if (attr_ref(&w, cu, DW_AT_rnglists_base, &ab) || attr_udata(&w, cu, DW_AT_rnglists_base, &ab))
			w.cu.rnglists_base = ab;
		die_ranges(&w, cu, &cu_die_rng, &ncdr, &capcdr, cu_index, UINT64_MAX - cuoff);
		const char *comp_dir = attr_str(&w, cu, DW_AT_comp_dir);
		collect_lines(&w, cu, comp_dir);
		if (!w.failed)
			walk_die(&w, cu, TK_SC_NONE, 0);
		dwarf_dealloc_die(cu);
		if (w.failed)
			break;
	}
	if (!w.failed) {
		/* .debug_aranges first; CUs it does not mention fall back to their DIE ranges */
		Dwarf_Arange *ar = NULL;
		Dwarf_Signed nar = 0;
		unsigned char *listed = tk_xcalloc(ncuoffs + 1, 1);
		if (dwarf_get_aranges(dbg, &ar, &nar, &e) == DW_DLV_OK) {
			for (Dwarf_Signed i = 0; i < nar; i++) {
				Dwarf_Unsigned seg = 0, segsz = 0, len = 0;
				Dwarf_Addr start = 0;
				Dwarf_Off cudie = 0;
				if (dwarf_get_arange_info_b(ar[i], &seg, &segsz, &start, &len, &cudie, &e) ==
				    DW_DLV_OK) {
					for (size_t k = 0; k < ncuoffs; k++)
						if (cu_offs[k] == cudie) {
							TK_GROW(cus, capcus, ncus + 1);
							cus[ncus++] = (tk_paint_in){start, start + len, (uint32_t)k, 0,
							                            UINT64_MAX - cudie};
							listed[k] = 1;
							break;
						}
				} else if (e)
					dwarf_dealloc_error(dbg, e), e = NULL;
				dwarf_dealloc(dbg, ar[i], DW_DLA_ARANGE);
			}
			dwarf_dealloc(dbg, ar, DW_DLA_LIST);
		} else if (e)
			dwarf_dealloc_error(dbg, e), e = NULL;
		for (size_t i = 0; i < ncdr; i++)
			if (!listed[cu_die_rng[i].a]) {
				TK_GROW(cus, capcus, ncus + 1);
				cus[ncus++] = cu_die_rng[i];
			}
		free(listed);
		res->ncus = tk_paint(cus, ncus, &res->cus);
		res->nscopes = tk_paint(w.scopes, w.nscopes, &res->scopes);
		/* lines were painted per CU; sort the CUs' lists together (overlaps are not expected) */
		tk_paint_in *all = tk_xmalloc((res->nlines + 1) * sizeof *all);
		for (size_t i = 0; i < res->nlines; i++)
			all[i] = (tk_paint_in){res->lines[i].lo, res->lines[i].hi, res->lines[i].a, res->lines[i].b, i};
		free(res->lines);
		res->nlines = tk_paint(all, res->nlines, &res->lines);
		free(all);
	}
	free(cus);
	free(cu_die_rng);
	free(cu_offs);
	free(w.scopes);
	free(w.names);
	tk_hidx_free(&w.names_idx);
	free(w.cu.files);
	dwarf_finish(dbg, &e);
	if (w.failed) {
		tk_dw_result_free(res);
		return -1;
	}
	return 0;
}

void tk_dw_result_free(tk_dw_result *r)
{
	free(r->nodes);
	free(r->cus);
	free(r->lines);
	free(r->scopes);
	memset(r, 0, sizeof *r);
}
