/*
 * tk_symbolicate_profile: rewrite frames that carry (binary UUID/path, load address) — or an
 * address inside a user-given image — into named frames with file:line, inlined callees expanded
 * as extra frames. Stacks are rebuilt through the prefix tree (a stack's parent always has a
 * smaller id), so every distinct stack is expanded once however many samples share it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/derive.h"
#include "util/hidx.h"
#include "symbol/symint.h"
#include "util/mem.h"

void tk_symbolicate_options_init(tk_symbolicate_options *o)
{
	memset(o, 0, sizeof *o);
}

typedef struct bin_state {
	int tried;
	tk_symbol_image *im;
	uint64_t mask;
} bin_state;

typedef struct spec_state {
	tk_symbol_image *im;
	uint64_t lo, hi;
	tk_binary_id out_bin;
	uint64_t mask;
} spec_state;

typedef struct xf {
	tk_derive d; /* strings, binaries, threads (model/derive.h) */
	const tk_profile *in;
	tk_profile *out;
	tk_symbolicator *s;
	const tk_symbolicate_options *o;
	bin_state *bins;
	spec_state *specs;
	size_t nspecs;
	size_t resolved, unresolved;
	/* memo: old frame id → expansion [off, off+len) into exp */
	uint32_t *exp_off, *exp_len;
	uint8_t *exp_ok; /* old frame id → resolved in this run */
	tk_frame_id *exp;
	size_t nexp, capexp;
	/* in place (tk_symbolicate_profile_take): out is in, strings and binaries are used as they are,
	 * and expansions are frame contents in cexp (ids assigned once all are known): only what
	 * differs from the input frame, whose address and binary every frame of its expansion keeps */
	int inplace;
	struct cx {
		tk_str name, file;
		uint32_t line, flags;
	} *cexp;
	size_t capcexp;
	/* names from the symbol cache by their address (they point into its mapping): most frames
	 * share a few thousand functions and files, and interning each into the profile's big table
	 * was a quarter of the work. A hit is checked against the string, so any pointer is safe. */
	const char **nkey;
	tk_str *nval;
	size_t nmask, nused;
	/* the previous look-up's names and files, outermost first: look-ups in address order mostly
	 * land in the function (and inline chain) of the one before, whose names are then taken as
	 * they are. Only from the same image: its cache stays mapped between two of its look-ups, so
	 * the same pointer is the same string. */
	const tk_symbol_image *arm_im; /* the image arm is known for */
	int arm;
	const tk_symbol_image *prev_im;
	size_t prev_n;
	struct {
		const char *fn, *file;
		tk_str fn_s, file_s;
	} prev[TK_SYMBOL_MAX_FRAMES];
} xf;

static uint64_t mask_for(const char *arch, uint64_t user)
{
	if (user)
		return user;
	/* arm64e return addresses may carry PAC bits above the VA; 40 bits cover iOS and macOS user
	 * space (framehop's 24/40 split). x86_64 has no pointer authentication. */
	if (arch && strncmp(arch, "arm64", 5) == 0)
		return 0x000000ffffffffffULL;
	return UINT64_MAX;
}

static void warn(xf *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(xf *x, const char *fmt, ...)
{
	if (!x->o->warn)
		return;
	char buf[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	x->o->warn(x->o->warn_ctx, buf);
}

static tk_str copy_str(xf *x, tk_str s)
{
	return x->inplace ? s : tk_derive_str(&x->d, s);
}

static tk_binary_id copy_bin(xf *x, tk_binary_id id)
{
	return x->inplace ? id : tk_derive_binary(&x->d, id);
}

static tk_str intern_name(xf *x, const char *s)
{
	if (x->nused * 2 >= x->nmask) {
		size_t cap = x->nmask ? (x->nmask + 1) * 2 : 4096;
		const char **ok = x->nkey;
		tk_str *ov = x->nval;
		size_t omask = x->nmask;
		x->nkey = tk_xcalloc(cap, sizeof *x->nkey);
		x->nval = tk_xcalloc(cap, sizeof *x->nval);
		x->nmask = cap - 1;
		x->nused = 0;
		for (size_t i = 0; ok && i <= omask; i++)
			if (ok[i]) {
				size_t j = (size_t)tk_hash_u64((uintptr_t)ok[i]) & x->nmask;
				while (x->nkey[j])
					j = (j + 1) & x->nmask;
				x->nkey[j] = ok[i], x->nval[j] = ov[i], x->nused++;
			}
		free(ok);
		free(ov);
	}
	size_t j = (size_t)tk_hash_u64((uintptr_t)s) & x->nmask;
	while (x->nkey[j] && x->nkey[j] != s)
		j = (j + 1) & x->nmask;
	if (x->nkey[j] && strcmp(tk_string(x->out, x->nval[j]), s) == 0)
		return x->nval[j];
	if (!x->nkey[j])
		x->nused++;
	x->nkey[j] = s;
	return x->nval[j] = tk_intern_cstr(x->out, s);
}

static void push_exp(xf *x, const tk_frame *g)
{
	if (x->inplace) {
		TK_GROW(x->cexp, x->capcexp, x->nexp + 1);
		x->cexp[x->nexp++] = (struct cx){g->name, g->file, g->line, g->flags};
		return;
	}
	TK_GROW(x->exp, x->capexp, x->nexp + 1);
	x->exp[x->nexp++] = tk_frame_add(x->out, g);
}

/* A frame's look-up, prepared (its binary resolved, warnings in stack order) and made later. */
typedef struct lookup {
	tk_symbol_image *im;
	uint64_t fa;      /* the file address looked up */
	tk_frame nf;      /* the frame as it stays, and the template of its expansion */
	tk_frame_id id;   /* the input frame */
	tk_binary_id bin; /* the input frame's binary (look-ups are grouped by it) */
} lookup;

/* Everything of id's expansion but the look-up: returns 1 with *lk filled when the address is to
 * be looked up, 0 when the expansion (the frame as it is) has been pushed. */
static int expand_prep(xf *x, tk_frame_id id, lookup *lk)
{
	const tk_frame *f = tk_frame_get(x->in, id);
	if (f->flags & TK_FRAME_INLINED) {
		/* Made by an earlier expansion (tk_symbol_write_xctrace tags such frames, the reader flags
		 * them): its outer frame's expansion recreates it, so it is never looked up on its own. */
		tk_frame nf = {f->addr, copy_str(x, f->name), copy_bin(x, f->binary), copy_str(x, f->file), f->line,
		               f->flags};
		push_exp(x, &nf);
		return 0;
	}
	tk_symbol_image *im = NULL;
	uint64_t load = 0, mask = UINT64_MAX;
	tk_binary_id out_bin = 0;
	int had_binary = f->binary != 0;
	if (f->binary) {
		bin_state *bs = &x->bins[f->binary];
		const tk_binary *b = tk_binary_get(x->in, f->binary);
		if (!bs->tried) {
			bs->tried = 1;
			const char *uuid = b->uuid ? tk_string(x->in, b->uuid) : NULL;
			const char *arch = b->arch ? tk_string(x->in, b->arch) : NULL;
			bs->mask = mask_for(arch, x->o->pac_mask);
			tk_error err;
			if (uuid && *uuid) {
				/* the UUID names one slice; the recorded arch is only a label (xctrace says arm64e
				 * for system images whose dSYM slice may be arm64) */
				bs->im = tk_symbolicator_image(x->s, uuid, NULL, NULL, &err);
			} else if (b->path) {
				bs->im = tk_symbolicator_image(x->s, NULL, tk_string(x->in, b->path), arch, &err);
			} else
				tk_error_set(&err, "no UUID or path");
			if (!bs->im)
				warn(x, "%s: left unsymbolicated: %s", b->name ? tk_string(x->in, b->name) : "(binary)",
				     err.msg);
		}
		im = bs->im;
		load = b->load_addr;
		mask = bs->mask;
		out_bin = copy_bin(x, f->binary);
	} else {
		for (size_t i = 0; i < x->nspecs; i++) {
			uint64_t a = f->addr & x->specs[i].mask;
			if (x->specs[i].im && a >= x->specs[i].lo && a < x->specs[i].hi) {
				im = x->specs[i].im;
				load = x->specs[i].lo;
				mask = x->specs[i].mask;
				out_bin = x->specs[i].out_bin;
				break;
			}
		}
	}
	tk_frame nf = {
	    f->addr, copy_str(x, f->name), out_bin ? out_bin : copy_bin(x, f->binary), copy_str(x, f->file), f->line,
	    f->flags};
	if (!im || !f->addr) {
		if (im || had_binary)
			x->unresolved++;
		push_exp(x, &nf);
		return 0;
	}
	if (im != x->arm_im) { /* the image's arch, once per run of frames of one image */
		tk_symcache_meta m;
		tk_symbol_image_meta(im, &m);
		x->arm_im = im;
		x->arm = strncmp(m.arch, "arm64", 5) == 0;
	}
	uint64_t a = f->addr & mask;
	int arm = x->arm;
	switch (x->o->adjust) {
	case TK_ADJUST_NONE: break;
	case TK_ADJUST_MINUS1: a -= 1; break;
	default:
		if (f->flags & TK_FRAME_LEAF_PC)
			a = arm ? a & ~(uint64_t)3 : (had_binary ? a - 1 : a);
		else
			a -= 1; /* a return address: the call is the instruction before */
	}
	*lk = (lookup){im, tk_symbol_image_file_addr(im, load, a), nf, id, f->binary};
	return 1;
}

/* The look-up prepared by expand_prep and the expansion it gives: fa looked up in im for input frame
 * id, whose frame as it stays is nf with these flags (in place, nf is read only where the answer
 * keeps its name: an address not found, a function named "??"). */
static void expand_lookup(xf *x, tk_symbol_image *im, uint64_t fa, tk_frame_id id, const tk_frame *nf,
                          uint32_t flags)
{
	tk_symbol_result r;
	size_t n = tk_symbol_image_lookup(im, fa, &r);
	if (n == 1 && !r.frames[0].file && strcmp(r.frames[0].function, "??") == 0)
		n = 0;
	if (!n) {
		x->unresolved++;
		push_exp(x, nf);
		return;
	}
	x->resolved++;
	if (x->exp_ok)
		x->exp_ok[id] = 1;
	size_t same = x->prev_im == im ? x->prev_n : 0; /* levels comparable with the previous */
	for (size_t i = n; i-- > 0;) {
		const tk_symbol_frame *sf = &r.frames[i];
		size_t j = n - 1 - i; /* outermost first */
		tk_frame g = x->inplace ? (tk_frame){0} : *nf; /* in place, the address and binary are nf's */
		if (j < same && x->prev[j].fn == sf->function && strcmp(sf->function, "??"))
			g.name = x->prev[j].fn_s;
		else
			g.name = strcmp(sf->function, "??") ? intern_name(x, sf->function) : nf->name;
		if (j < same && x->prev[j].file == sf->file)
			g.file = x->prev[j].file_s;
		else
			g.file = sf->file ? intern_name(x, sf->file) : 0;
		x->prev[j].fn = sf->function, x->prev[j].fn_s = g.name;
		x->prev[j].file = sf->file, x->prev[j].file_s = g.file;
		g.line = sf->line;
		g.flags = (flags & ~(uint32_t)(TK_FRAME_INLINED | TK_FRAME_LEAF_PC | TK_FRAME_SWIFT)) | sf->flags |
		          (i == 0 ? flags & TK_FRAME_LEAF_PC : 0);
		push_exp(x, &g);
	}
	x->prev_im = im, x->prev_n = n;
}

static void expand(xf *x, tk_frame_id id)
{
	lookup lk;
	if (expand_prep(x, id, &lk))
		expand_lookup(x, lk.im, lk.fa, lk.id, &lk.nf, lk.nf.flags);
}

/* A look-up of the in-place path, prepared: the input frame (its expansion's address, binary and
 * flags, kept here so the look-ups in address order need not read the frame table) and the file
 * address to look up; the image is its binary's. */
typedef struct plookup {
	uint64_t addr, fa;
	tk_frame_id id;
	tk_binary_id bin;
	uint32_t flags, pad;
} plookup;

/* The order to make n look-ups in (into ord): grouped by binary, by address (masked: mask[bin])
 * within each (neighbouring addresses share the symbol cache's blocks: tk_symcache_lookup goes on
 * where the previous one stopped; a return address looked up at − 1 may come just after a leaf
 * looked up above it, which only decodes a block again). key and tmp hold n + 1 values each. A
 * group whose addresses span too much to pack with an index stays in stack order (*unsorted set);
 * the order changes only the speed, never an answer. */
static void lookup_order(const plookup *lk, size_t n, const bin_state *bins, size_t nbins, uint32_t *ord,
                         uint64_t *key, uint64_t *tmp, int *unsorted)
{
	size_t *at = tk_xcalloc(nbins + 2, sizeof *at);
	for (size_t i = 0; i < n; i++)
		at[lk[i].bin + 1]++;
	for (size_t b = 1; b <= nbins + 1; b++)
		at[b] += at[b - 1];
	for (size_t i = 0; i < n; i++)
		ord[at[lk[i].bin]++] = (uint32_t)i; /* at[b] ends as group b's end */
	int bits = 1;
	while (bits < 32 && ((size_t)1 << bits) < n)
		bits++;
	for (size_t g0 = 0, b = 0; b <= nbins; g0 = at[b++]) {
		size_t len = at[b] - g0;
		if (len < 2)
			continue;
		uint64_t lo = UINT64_MAX, hi = 0, mask = bins[b].mask;
		for (size_t i = g0; i < at[b]; i++) {
			uint64_t a = lk[ord[i]].addr & mask;
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
		}
		if ((hi - lo) >> (64 - bits)) {
			*unsorted = 1;
			continue;
		}
		for (size_t i = g0; i < at[b]; i++)
			key[i - g0] = ((lk[ord[i]].addr & mask) - lo) << bits | ord[i];
		tk_sort_u64_buf(key, len, tmp);
		for (size_t i = 0; i < len; i++)
			ord[g0 + i] = (uint32_t)(key[i] & (((uint64_t)1 << bits) - 1));
	}
	free(at);
}

/* Does any frame carry only an address (the pre-Xcode 14.3 form)? Only then are images needed. */
static int has_address_only_frames(const tk_profile *p)
{
	for (size_t f = 1; f <= tk_frame_count(p); f++) {
		const tk_frame *fr = tk_frame_get(p, (tk_frame_id)f);
		if (!fr->binary && fr->addr && !(fr->flags & TK_FRAME_SYNTHETIC))
			return 1;
	}
	return 0;
}

tk_profile *tk_symbolicate_profile(const tk_profile *in, tk_symbolicator *s, const tk_symbolicate_options *o,
                                   tk_error *err)
{
	tk_symbolicate_options defaults;
	if (!o) {
		tk_symbolicate_options_init(&defaults);
		o = &defaults;
	}
	if (o->adjust < TK_ADJUST_AUTO || o->adjust > TK_ADJUST_MINUS1) {
		tk_error_set(err, "symbolicate: unknown address adjustment %d", o->adjust);
		return NULL;
	}
	xf x = {.in = in, .s = s, .o = o};
	x.out = tk_derive_begin(&x.d, in); /* unit, metadata and the trace's images */
	x.bins = tk_xcalloc(tk_binary_count(in) + 1, sizeof *x.bins);
	/* Images the trace itself lists (kdebug tables of a pre-14.3 export) are used when the caller
	 * names none. Most of them are system libraries without a dSYM here: count those, warn once. */
	size_t ntrace = 0;
	const tk_binary *trace_im = tk_profile_images(in, &ntrace);
	const tk_image_spec *specs = o->images;
	size_t nspecs = o->nimages, trace_missing = 0;
	tk_image_spec *auto_specs = NULL;
	int from_trace = 0;
	if (!nspecs && ntrace && has_address_only_frames(in)) {
		auto_specs = tk_xcalloc(ntrace, sizeof *auto_specs);
		for (size_t i = 0; i < ntrace; i++) {
			if (!trace_im[i].uuid)
				continue; /* a path alone would name a file of the recording device */
			auto_specs[nspecs++] = (tk_image_spec){
			    trace_im[i].path ? tk_string(in, trace_im[i].path) : NULL, tk_string(in, trace_im[i].uuid),
			    trace_im[i].arch ? tk_string(in, trace_im[i].arch) : NULL, trace_im[i].load_addr};
		}
		specs = auto_specs;
		from_trace = 1;
	}
	x.nspecs = nspecs;
	x.specs = tk_xcalloc(nspecs + 1, sizeof *x.specs);
	for (size_t i = 0; i < nspecs; i++) {
		const tk_image_spec *sp = &specs[i];
		tk_error e2;
		tk_symbol_image *im =
		    tk_symbolicator_image(s, sp->uuid, from_trace ? NULL : sp->path, from_trace ? NULL : sp->arch, &e2);
		if (!im) {
			if (from_trace)
				trace_missing++;
			else
				warn(&x, "image %s: %s", sp->path ? sp->path : sp->uuid ? sp->uuid : "?", e2.msg);
			continue;
		}
		tk_symcache_meta m;
		tk_symbol_image_meta(im, &m);
		x.specs[i].im = im;
		x.specs[i].lo = sp->load_addr;
		x.specs[i].hi = sp->load_addr + (m.text_vmsize ? m.text_vmsize : 1);
		x.specs[i].mask = mask_for(m.arch, o->pac_mask);
		/* a kdebug image is named after its path on the device, not after the dSYM file found */
		const char *slash = from_trace && sp->path ? strrchr(sp->path, '/') : NULL;
		tk_binary b = {tk_intern_cstr(x.out, slash && slash[1] ? slash + 1 : m.image),
		               sp->path ? tk_intern_cstr(x.out, sp->path) : 0, tk_intern_cstr(x.out, m.uuid_str),
		               tk_intern_cstr(x.out, m.arch), sp->load_addr};
		x.specs[i].out_bin = tk_binary_add(x.out, &b);
	}
	if (trace_missing)
		warn(&x, "%zu of %zu images from the trace's kdebug tables have no dSYM or binary in the symbol paths",
		     trace_missing, nspecs);
	free(auto_specs);
	size_t nf = tk_frame_count(in);
	x.exp_off = tk_xcalloc(nf + 1, sizeof *x.exp_off);
	x.exp_len = tk_xcalloc(nf + 1, sizeof *x.exp_len);
	x.exp_ok = tk_xcalloc(nf + 1, 1);
	size_t ns = tk_stack_count(in);
	tk_stack_id *map = tk_xcalloc(ns + 1, sizeof *map);
	/* run_ok[stack]: the stack's last frame was resolved in this run, directly or as part of the
	 * same address's inline chain */
	uint8_t *run_ok = tk_xcalloc(ns + 1, 1);
	for (size_t id = 1; id <= ns; id++) {
		const tk_stack_node *nd = tk_stack_get(in, (tk_stack_id)id);
		tk_frame_id f = nd->frame;
		const tk_frame *fr = tk_frame_get(in, f);
		if (fr && (fr->flags & TK_FRAME_INLINED) && nd->parent && run_ok[nd->parent]) {
			/* An inlined frame from an earlier run, below its outer frame that this run expanded
			 * again: the new chain replaces it (symbolicating twice = once). */
			const tk_frame *pf = tk_frame_get(in, tk_stack_get(in, nd->parent)->frame);
			if (pf && pf->addr == fr->addr && pf->binary == fr->binary) {
				map[id] = map[nd->parent];
				run_ok[id] = 1;
				continue;
			}
		}
		if (f <= nf && !x.exp_len[f]) {
			x.exp_off[f] = (uint32_t)x.nexp;
			expand(&x, f);
			x.exp_len[f] = (uint32_t)(x.nexp - x.exp_off[f]);
		}
		tk_stack_id cur = map[nd->parent];
		for (uint32_t k = 0; k < x.exp_len[f]; k++)
			cur = tk_stack_push(x.out, cur, x.exp[x.exp_off[f] + k]);
		map[id] = cur;
		run_ok[id] = f <= nf && x.exp_ok[f];
	}
	tk_derive_samples(&x.d, map);
	tk_profile_set_meta(x.out, "symbolicated", "tracekit");
	if (o->resolved)
		*o->resolved = x.resolved;
	if (o->unresolved)
		*o->unresolved = x.unresolved;
	free(map);
	free(run_ok);
	free(x.exp_ok);
	free(x.exp_off);
	free(x.exp_len);
	free(x.exp);
	free(x.bins);
	free(x.specs);
	free(x.nkey);
	free(x.nval);
	tk_derive_end(&x.d);
	return x.out;
}

/* Can p be symbolicated in place, with the answer tk_symbolicate_profile would give? Frames that
 * carry their binary, every frame on some stack (a derived profile drops the others), no inlined
 * frame of an earlier run (those are dropped or kept by position), no per-sample list (its rows
 * name stacks) and no images to place address-only frames in (they add binaries). */
static int inplace_ok(const tk_profile *p, const tk_symbolicate_options *o)
{
	if (o->nimages || tk_profile_keeps_samples(p) || tk_profile_sample_count(p))
		return 0;
	size_t nf = tk_frame_count(p), ns = tk_stack_count(p);
	if (nf >= UINT32_MAX / 2 || ns >= UINT32_MAX / 2)
		return 0;
	for (size_t f = 1; f <= nf; f++)
		if (tk_frame_get(p, (tk_frame_id)f)->flags & TK_FRAME_INLINED)
			return 0;
	if (has_address_only_frames(p))
		return 0;
	/* ... and binaries first used in their own order (a derived profile numbers them so) */
	uint8_t *used = tk_xcalloc(nf + 1, 1);
	size_t n = 0, nb = tk_binary_count(p), next_bin = 1;
	int ok = 1;
	for (size_t id = 1; id <= ns && ok; id++) {
		tk_frame_id f = tk_stack_get(p, (tk_stack_id)id)->frame;
		if (f > nf || used[f])
			continue;
		used[f] = 1;
		n++;
		tk_binary_id b = tk_frame_get(p, f)->binary;
		if (b == next_bin)
			next_bin++;
		else if (b > next_bin)
			ok = 0;
	}
	free(used);
	return ok && n == nf && next_bin == nb + 1;
}

/* Frames of one expansion cluster compared for equality (below): more than this and the frames
 * are numbered through the frame table's hash instead. */
enum { CLUSTER_MAX = 64 };

/* Scratch tables of the in-place path, cut from one block (64-byte aligned parts). */
typedef struct cut {
	uint8_t *p;
	size_t left;
} cut;

static void *cut_take(cut *c, size_t n)
{
	n = (n + 63) & ~(size_t)63;
	if (n > c->left)
		return NULL;
	void *r = c->p;
	c->p += n, c->left -= n;
	return r;
}

/* n zeroed bytes from c, or from the heap when c has no room (*heap then owns them). */
static void *cut_zeroed(cut *c, size_t n, void **heap)
{
	void *r = cut_take(c, n);
	if (!r)
		r = *heap = tk_xmalloc_big(n);
	memset(r, 0, n);
	return r;
}

tk_profile *tk_symbolicate_profile_take(tk_profile *p, tk_symbolicator *s, const tk_symbolicate_options *o,
                                        tk_error *err)
{
	tk_symbolicate_options defaults;
	if (!o) {
		tk_symbolicate_options_init(&defaults);
		o = &defaults;
	}
	if (o->adjust < TK_ADJUST_AUTO || o->adjust > TK_ADJUST_MINUS1 || !inplace_ok(p, o)) {
		tk_profile *q = tk_symbolicate_profile(p, s, o, err);
		if (q)
			tk_profile_free(p);
		return q;
	}
	xf x = {.in = p, .out = p, .s = s, .o = o, .inplace = 1};
	size_t nbins = tk_binary_count(p);
	x.bins = tk_xcalloc(nbins + 1, sizeof *x.bins);
	x.specs = tk_xcalloc(1, sizeof *x.specs);
	size_t nf = tk_frame_count(p), ns = tk_stack_count(p);
	/* The tables of the step are written once: they take huge pages (tk_xmalloc_big), as on a
	 * virtual machine their first touch (a fault per 4 KB page) was most of the step. One block
	 * holds the per-frame and per-stack tables and the look-ups; the look-ups' part serves again
	 * for the tables of the rebuild once they are done. */
#define CUT(n) (((n) + 63) & ~(size_t)63)
	size_t n1 = nf + 1, sz = 2 * CUT(4 * n1) + CUT(n1) + CUT(4 * (ns + 1)) + CUT(sizeof(plookup) * n1) +
	                        CUT(4 * n1) + 2 * CUT(8 * n1);
#undef CUT
	uint8_t *block = tk_xmalloc_big(sz);
	cut c = {block, sz};
	x.exp_off = cut_take(&c, 4 * n1);
	x.exp_len = cut_take(&c, 4 * n1);
	memset(x.exp_len, 0, 4 * n1);
	uint8_t *done = cut_take(&c, n1);
	memset(done, 0, n1);
	tk_stack_id *map = cut_take(&c, 4 * (ns + 1));
	map[0] = 0;
	cut lkc = c; /* the look-ups' part */
	plookup *lk = cut_take(&c, sizeof *lk * n1);
	uint32_t *ord = cut_take(&c, 4 * n1);
	uint64_t *key = cut_take(&c, 8 * n1), *tmp = cut_take(&c, 8 * n1);
	size_t nlk = 0;
	x.capcexp = 2 * nf + 16; /* 1.8 frames an input frame on the bench's payload */
	x.cexp = tk_xmalloc_big(x.capcexp * sizeof *x.cexp);
	/* each distinct frame prepared once, in the order the stacks first use them (as the derived
	 * profile does: the same warnings in the same order), then looked up in address order */
	for (size_t id = 1; id <= ns; id++) {
		tk_frame_id f = tk_stack_get(p, (tk_stack_id)id)->frame;
		if (f <= nf && !x.exp_len[f]) {
			x.exp_off[f] = (uint32_t)x.nexp;
			lookup l;
			if (expand_prep(&x, f, &l)) {
				lk[nlk++] = (plookup){l.nf.addr, l.fa, f, l.bin, l.nf.flags, 0};
				x.exp_len[f] = UINT32_MAX; /* its expansion comes below */
			} else
				x.exp_len[f] = (uint32_t)(x.nexp - x.exp_off[f]);
		}
	}
	/* Frames that come out equal are one frame (a leaf and a caller at one address can share a
	 * chain's outer function; a chain can repeat a frame). Equal frames have one address and one
	 * binary, so they come from look-ups of one binary at one address: neighbours in this order.
	 * Such a cluster's frames are compared here and a repeat points at its first (dup: pairs
	 * repeat, first), so no table of every frame is needed. Frames not looked up are the input's
	 * own, distinct, and equal to no looked-up one (another binary, or address 0). When the order
	 * is not by address or a cluster is too big, frames are numbered through the hash (fallback). */
	int fallback = 0;
	lookup_order(lk, nlk, x.bins, nbins, ord, key, tmp, &fallback);
	uint32_t *dup = NULL;
	size_t ndup = 0, capdup = 0, cstart = 0;
	uint64_t caddr[CLUSTER_MAX], ckey = 0;
	tk_binary_id cbin = 0;
	for (size_t i = 0; i < nlk; i++) {
		const plookup *pl = &lk[ord[i]];
		uint64_t masked = pl->addr & x.bins[pl->bin].mask;
		if (!i || pl->bin != cbin || masked != ckey)
			cstart = x.nexp;
		cbin = pl->bin, ckey = masked;
		size_t k0 = x.nexp;
		x.exp_off[pl->id] = (uint32_t)k0;
		expand_lookup(&x, x.bins[pl->bin].im, pl->fa, pl->id, tk_frame_get(p, pl->id), pl->flags);
		x.exp_len[pl->id] = (uint32_t)(x.nexp - k0);
		if (fallback)
			continue;
		if (x.nexp - cstart > CLUSTER_MAX) {
			fallback = 1;
			continue;
		}
		for (size_t k = k0; k < x.nexp; k++) {
			caddr[k - cstart] = pl->addr;
			for (size_t r = cstart; r < k; r++)
				if (caddr[r - cstart] == pl->addr && memcmp(&x.cexp[r], &x.cexp[k], sizeof x.cexp[k]) == 0) {
					TK_GROW(dup, capdup, 2 * ndup + 2);
					dup[2 * ndup] = (uint32_t)k, dup[2 * ndup + 1] = (uint32_t)r;
					ndup++;
					break;
				}
		}
	}
	/* The new frame table and stack tree, numbered as tk_symbolicate_profile numbers them: a
	 * frame's chain at the first stack that uses it, stacks in order (a parent before its children).
	 * Stacks that then meet are one, their cells added. The input's tree has no two equal children,
	 * so a stack can meet another only where it pushes a frame that several entries are (shared) or
	 * under a stack that has met one already (met): only those pushes look for an equal child, the
	 * others are appended as new. */
	size_t nstk = 0; /* the new tree's stacks, at most */
	for (size_t id = 1; id <= ns; id++)
		nstk += x.exp_len[tk_stack_get(p, (tk_stack_id)id)->frame];
	void *heap[4] = {NULL, NULL, NULL, NULL};
	c = lkc;
	tk_frame_id *cid = cut_zeroed(&c, 4 * (x.nexp + 1), &heap[0]);
	uint32_t *first = NULL; /* entry → the first equal entry */
	uint8_t *shared = NULL, *met = NULL;
	if (ndup && !fallback) {
		first = cut_zeroed(&c, 4 * (x.nexp + 1), &heap[1]);
		shared = cut_zeroed(&c, x.nexp + 1, &heap[2]);
		met = cut_zeroed(&c, nstk + 1, &heap[3]);
		for (size_t k = 0; k < x.nexp; k++)
			first[k] = (uint32_t)k;
		for (size_t d = 0; d < ndup; d++) {
			first[dup[2 * d]] = dup[2 * d + 1];
			shared[dup[2 * d + 1]] = 1;
		}
	}
	free(dup);
	tk_profile *tree = tk_profile_new();
	tk_profile_reserve(tree, x.nexp, nstk);
	for (size_t id = 1; id <= ns; id++) {
		const tk_stack_node *nd = tk_stack_get(p, (tk_stack_id)id);
		tk_frame_id f = nd->frame;
		uint32_t off = x.exp_off[f], len = x.exp_len[f];
		if (!done[f]) {
			done[f] = 1;
			const tk_frame *in = tk_frame_get(p, f);
			for (uint32_t k = off; k < off + len; k++) {
				uint32_t r = first ? first[k] : k;
				if (!cid[r]) {
					const struct cx *e = &x.cexp[r];
					tk_frame g = {in->addr, e->name, in->binary, e->file, e->line, e->flags};
					cid[r] = fallback ? tk_frame_add(tree, &g) : tk_frame_append(tree, &g);
				}
				cid[k] = cid[r];
			}
		}
		tk_stack_id cur = map[nd->parent];
		for (uint32_t k = off; k < off + len; k++) {
			if (fallback)
				cur = tk_stack_push(tree, cur, cid[k]);
			else if (!first || (!shared[first[k]] && !met[cur]))
				cur = tk_stack_append(tree, cur, cid[k]);
			else {
				size_t before = tk_stack_count(tree);
				cur = tk_stack_push(tree, cur, cid[k]);
				if (tk_stack_count(tree) == before)
					met[cur] = 1;
			}
		}
		map[id] = cur;
	}
	int rc = tk_profile_take_tree(p, tree, map);
	tk_profile_free(tree);
	for (int i = 0; i < 4; i++)
		free(heap[i]);
	free(block);
	tk_profile *q = NULL;
	if (rc < 0) /* not reached: inplace_ok checked that p keeps no per-sample list */
		tk_error_set(err, "symbolicate: the profile keeps a per-sample list");
	if (rc == 0) {
		tk_profile_set_meta(p, "symbolicated", "tracekit");
		if (o->resolved)
			*o->resolved = x.resolved;
		if (o->unresolved)
			*o->unresolved = x.unresolved;
		q = p;
	}
	free(x.cexp);
	free(x.bins);
	free(x.specs);
	free(x.nkey);
	free(x.nval);
	return q;
}
