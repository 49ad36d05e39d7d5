/*
 * tk_elf_name_profile: name the frames of a Linux monitor session from the ELF files of this
 * machine (symbol tables, DWARF lines and inlined calls through symbol/elf.c). The records reader
 * leaves frames as (image, address) and lists the session's images in the profile; this pass,
 * like tk_symbolicate_profile, rebuilds stacks through the prefix tree, so each distinct frame is
 * looked up once however many stacks share it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/derive.h"
#include "symbol/elf.h"
#include "tracekit/symbol.h"
#include "util/hidx.h"
#include "util/mem.h"

/* Beyond the first few unusable images, one line counts the rest (a session may list 100,000). */
#define MAX_IMAGE_WARNINGS 10

struct tk_elf_namer {
	tk_elf_cache *elf;
	char **checked;  /* "path\0build-id" of every image already opened once (warned at most once) */
	uint8_t *usable; /* per checked image: its file could be opened */
	size_t nchecked, capchecked, capusable;
	tk_hidx checked_index;
	char **warnings;
	size_t nwarnings, capwarnings;
};

tk_elf_namer *tk_elf_namer_new(void)
{
	tk_elf_namer *z = tk_xcalloc(1, sizeof *z);
	z->elf = tk_elf_cache_new();
	return z;
}

void tk_elf_namer_free(tk_elf_namer *z)
{
	if (!z)
		return;
	tk_elf_cache_free(z->elf);
	for (size_t i = 0; i < z->nchecked; i++)
		free(z->checked[i]);
	free(z->checked);
	free(z->usable);
	tk_hidx_free(&z->checked_index);
	for (size_t i = 0; i < z->nwarnings; i++)
		free(z->warnings[i]);
	free(z->warnings);
	free(z);
}

size_t tk_elf_namer_warning_count(const tk_elf_namer *z)
{
	return z->nwarnings;
}

const char *tk_elf_namer_warning(const tk_elf_namer *z, size_t i)
{
	return i < z->nwarnings ? z->warnings[i] : NULL;
}

static void warn(tk_elf_namer *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(tk_elf_namer *z, const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	TK_GROW(z->warnings, z->capwarnings, z->nwarnings + 1);
	z->warnings[z->nwarnings++] = tk_xstrdup(buf);
}

typedef struct key {
	const char *path, *build_id;
	size_t plen, blen;
} key;

static int checked_eq(const void *ctx, uint32_t idx, const void *k)
{
	const char *c = ((const tk_elf_namer *)ctx)->checked[idx];
	const key *q = k;
	return strcmp(c, q->path) == 0 && strcmp(c + q->plen + 1, q->build_id) == 0;
}

/* The index of this image (path and build-id) among those this namer has opened, or -1 with *at
 * set to the index it gets now. */
static ptrdiff_t seen_before(tk_elf_namer *z, const char *path, const char *build_id, size_t *at)
{
	key k = {path, build_id, strlen(path), strlen(build_id)};
	uint64_t h = tk_hash_bytes(build_id, k.blen, tk_hash_bytes(path, k.plen, 5));
	uint32_t i = tk_hidx_find(&z->checked_index, h, checked_eq, z, &k);
	if (i != UINT32_MAX)
		return (ptrdiff_t)i;
	char *c = tk_xmalloc(k.plen + k.blen + 2);
	memcpy(c, path, k.plen + 1);
	memcpy(c + k.plen + 1, build_id, k.blen + 1);
	TK_GROW(z->checked, z->capchecked, z->nchecked + 1);
	TK_GROW(z->usable, z->capusable, z->nchecked + 1);
	tk_hidx_insert(&z->checked_index, h, (uint32_t)z->nchecked);
	*at = z->nchecked;
	z->checked[z->nchecked++] = c;
	return -1;
}

/* Open every listed image file once, before the first lookup, so each unusable one gets one
 * warning (whether or not a frame uses it: a changed file is worth knowing about). Returns whether
 * any listed file can be used (opening is cached: asking again per profile is cheap). */
static int check_images(tk_elf_namer *z, const tk_profile *p, const tk_binary *im, size_t n)
{
	size_t broken = 0, at = 0;
	int usable = 0;
	for (size_t i = 0; i < n; i++) {
		const char *path = tk_string(p, im[i].path), *bid = tk_string(p, im[i].uuid);
		ptrdiff_t seen = seen_before(z, path, bid, &at);
		if (seen >= 0) {
			usable |= z->usable[seen];
			continue;
		}
		tk_error e;
		z->usable[at] = tk_elf_open(z->elf, path, bid, &e) == 0;
		usable |= z->usable[at];
		/* a relative path names no file of this machine for sure: tried, never reported */
		if (!z->usable[at] && path[0] == '/' && ++broken <= MAX_IMAGE_WARNINGS)
			warn(z, "%s; its frames stay unnamed", e.msg);
	}
	if (broken > MAX_IMAGE_WARNINGS)
		warn(z, "%zu more images cannot be used either; their frames stay unnamed",
		     broken - MAX_IMAGE_WARNINGS);
	return usable;
}

static int image_eq(const void *ctx, uint32_t idx, const void *k)
{
	const tk_binary *a = &((const tk_binary *)ctx)[idx], *b = k;
	return a->uuid == b->uuid && a->path == b->path && a->name == b->name && a->arch == b->arch &&
	       a->load_addr == b->load_addr;
}

static uint64_t image_hash(const tk_binary *b)
{
	return tk_hash_u64(((uint64_t)b->path << 32 | b->uuid) ^ tk_hash_u64(b->load_addr));
}

typedef struct pass {
	tk_derive d;
	const tk_profile *in;
	tk_profile *out;
	tk_elf_namer *z;
	uint8_t *local; /* input binary id → 1 if it is one of the listed images */
	tk_frame_id *exp;
	size_t nexp, capexp;
} pass;

static void push_exp(pass *x, tk_frame_id f)
{
	TK_GROW(x->exp, x->capexp, x->nexp + 1);
	x->exp[x->nexp++] = f;
}

static void expand(pass *x, tk_frame_id id)
{
	const tk_frame *f = tk_frame_get(x->in, id);
	if (f->name || !f->binary || !x->local[f->binary] || (f->flags & TK_FRAME_INLINED)) {
		push_exp(x, tk_derive_frame(&x->d, id));
		return;
	}
	const tk_binary *b = tk_binary_get(x->in, f->binary);
	tk_elf_loc loc[16];
	tk_error e;
	/* recorded addresses are already call sites (docs/records-format.md): looked up as they are */
	int n = tk_elf_lookup_frames(x->z->elf, tk_string(x->in, b->path), f->addr - b->load_addr, loc, 16, &e);
	if (n <= 0) {
		push_exp(x, tk_derive_frame(&x->d, id));
		return;
	}
	tk_frame g0 = {.addr = f->addr, .binary = tk_derive_binary(&x->d, f->binary), .flags = f->flags};
	for (int i = n - 1; i >= 0; i--) {
		tk_frame g = g0;
		/* "clock_nanosleep@GLIBC_2.2.5": the symbol version is not part of the name; C++ and Rust
		 * names are shown demangled, as llvm-symbolizer and perf show them, Swift names as atos and
		 * Instruments show them */
		if (loc[i].func) {
			char *plain = tk_xstrndup(loc[i].func, strcspn(loc[i].func, "@"));
			char *dem = tk_demangle_any(plain, TK_DEMANGLE_SIMPLIFIED);
			if (dem && tk_symbol_is_swift(plain))
				g.flags |= TK_FRAME_SWIFT;
			g.name = tk_intern_cstr(x->out, dem ? dem : plain);
			free(dem);
			free(plain);
		}
		g.file = tk_intern_cstr(x->out, loc[i].file);
		g.line = loc[i].file ? loc[i].line : 0;
		if (loc[i].inlined)
			g.flags |= TK_FRAME_INLINED;
		push_exp(x, tk_frame_add(x->out, &g));
	}
}

tk_profile *tk_elf_name_profile(const tk_profile *in, tk_elf_namer *z, tk_error *err)
{
	(void)err; /* unusable files are warnings: their frames stay as they were */
	pass x = {.in = in, .z = z};
	x.out = tk_derive_begin(&x.d, in);
	size_t nim = 0;
	const tk_binary *im = tk_profile_images(in, &nim);
	check_images(z, in, im, nim);
	/* which of the profile's binaries are listed images (the reader adds both from one record) */
	tk_hidx idx = {0};
	for (size_t i = 0; i < nim; i++)
		tk_hidx_insert(&idx, image_hash(&im[i]), (uint32_t)i);
	size_t nb = tk_binary_count(in);
	x.local = tk_xcalloc(nb + 1, 1);
	for (size_t b = 1; b <= nb; b++) {
		const tk_binary *bin = tk_binary_get(in, (tk_binary_id)b);
		x.local[b] = bin && bin->path && tk_hidx_find(&idx, image_hash(bin), image_eq, im, bin) != UINT32_MAX;
	}
	tk_hidx_free(&idx);
	size_t nf = tk_frame_count(in), ns = tk_stack_count(in);
	uint32_t *off = tk_xcalloc(nf + 1, sizeof *off), *len = tk_xcalloc(nf + 1, sizeof *len);
	tk_stack_id *map = tk_xcalloc(ns + 1, sizeof *map);
	for (size_t id = 1; id <= ns; id++) {
		const tk_stack_node *nd = tk_stack_get(in, (tk_stack_id)id);
		tk_frame_id f = nd->frame;
		if (f <= nf && !len[f]) {
			off[f] = (uint32_t)x.nexp;
			expand(&x, f);
			len[f] = (uint32_t)(x.nexp - off[f]);
		}
		tk_stack_id cur = map[nd->parent];
		for (uint32_t k = 0; k < len[f]; k++)
			cur = tk_stack_push(x.out, cur, x.exp[off[f] + k]);
		map[id] = cur;
	}
	tk_derive_samples(&x.d, map);
	free(map);
	free(off);
	free(len);
	free(x.exp);
	free(x.local);
	tk_derive_end(&x.d);
	return x.out;
}

int tk_elf_name_listed(tk_profile **p, tk_elf_namer *z, tk_error *err)
{
	size_t nim = 0;
	const tk_binary *im = tk_profile_images(*p, &nim);
	if (!nim)
		return 0;
	tk_elf_namer *own = z ? NULL : tk_elf_namer_new();
	int rc = 0;
	/* no listed file can be used (a session read on another machine): nothing to copy */
	if (check_images(z ? z : own, *p, im, nim)) {
		tk_profile *q = tk_elf_name_profile(*p, z ? z : own, err);
		if (q) {
			tk_profile_free(*p);
			*p = q;
		} else
			rc = -1;
	}
	tk_elf_namer_free(own);
	return rc;
}

int tk_elf_name_session(tk_profile **p, tk_elf_namer *z, tk_error *err)
{
	const char *format = tk_profile_meta(*p, "format");
	if (!format || (strcmp(format, "tracekit") != 0 && strcmp(format, "mthawkeye") != 0))
		return 0;
	return tk_elf_name_listed(p, z, err);
}
