/*
 * Firefox Profiler output (`tracekit convert --to gecko`, `tracekit open`).
 *
 * The Gecko format has no per-sample weight (the profiler's importer sets every sample to weight 1),
 * so an Instruments sample of 1.13 ms would count as much as one of 0.01 ms. The *processed* format
 * carries `samples.weight`, so that is what is written, pinned at preprocessedProfileVersion 60: the
 * first version whose stack, frame and function tables are shared by all threads (`profile.shared`),
 * which is exactly the model's global prefix tree of stacks, and old enough that every deployed
 * profiler upgrades it (each later version has an upgrader in the profiler;
 * tests/cli/gecko_profiler.sh loads the output with the profiler's own code).
 *
 * Mapping:
 *   model stack k (1-based, parents first)  -> shared.stackTable row k-1, prefix = parent-1 / null
 *   model frame k                           -> shared.frameTable row k-1 (address relative to its
 *                                              binary, already adjusted for lookup: return
 *                                              addresses - 1; line from the frame)
 *   (label, binary)                         -> one funcTable row (file as its source)
 *   binary                                  -> one resourceTable row and one `libs` entry
 *                                              (breakpadId = UUID hex + "0", as Mach-O debug ids)
 *   thread                                  -> one thread (pid as a string, tid, names), samples in
 *                                              time order from the per-sample list, else one sample
 *                                              per (stack) cell laid end to end
 *   weight                                  -> ns as "tracing-ms" (exact decimal ms), other units as
 *                                              "samples" with the raw count; the profiler has no
 *                                              weight type for cycles or events, so the profile's
 *                                              name says what the counts are
 *   empty stack (xctrace <sentinel/>)       -> one extra frame, function and root stack
 *                                              "(no stack)", as `tracekit tree` shows it: the
 *                                              profiler drops samples whose stack is null, which
 *                                              would change every total above them
 *   per-sample weight (ns, cycles)          -> samples.threadCPUDelta too (meta.sampleUnits): the CPU
 *                                              a sample stands for, so the activity graph shows
 *                                              a sparse thread as mostly idle between its samples
 *                                              instead of at 100 % from one sample to the next
 *   inline chain (--symbols)                -> the outer frame at inlineDepth 0 and each frame
 *                                              inlined into it at depth 1, 2 … with one
 *                                              nativeSymbol for the chain, as the profiler's own
 *                                              symbolication (through `tracekit open`) makes them
 * Categories: Other (no binary), App (non-system binaries), System (tk_binary_is_system).
 */
#include <stdlib.h>
#include <string.h>

#include "tracekit/transform.h"
#include "tracekit/write.h"
#include "util/hidx.h"
#include "util/mem.h"
#include "write/wutil.h"

enum { CAT_OTHER = 0, CAT_APP = 1, CAT_SYSTEM = 2 };

/* The writer's own string table: the shared stringArray. Entries are either model strings or
 * owned copies (hex labels), deduplicated by content. */
typedef struct sstr {
	const char *s;
	size_t len;
} sstr;

typedef struct func_key {
	uint32_t name; /* index into strs */
	tk_binary_id binary;
} func_key;

typedef struct gw {
	FILE *out;
	const tk_profile *p;
	sstr *strs;
	size_t nstrs, capstrs;
	tk_hidx str_idx;
	char **owned;
	size_t nowned, capowned;
	func_key *funcs;
	uint32_t *func_file; /* strs index of the source file + 1, 0 = none */
	size_t nfuncs, capfuncs;
	tk_hidx func_idx;
	uint32_t *frame_func; /* per model frame (index fid-1) */
	int32_t *bin_lib;     /* per binary id: lib/resource index, -1 none */
	uint8_t *bin_cat;
	size_t nbins;
	uint32_t *files; /* sources table: strs indices */
	size_t nfiles, capfiles;
	tk_hidx file_idx;
	int nostack;            /* a sample has the empty stack: the extra "(no stack)" frame and stack */
	uint32_t nostack_fn;    /* its function */
	uint32_t *inl_depth;    /* per model frame (index fid-1): inlineDepth */
	int32_t *frame_sym;     /* per model frame: nativeSymbols row, -1 none */
	tk_frame_id *inl_outer; /* per inlined model frame: its chain's outer frame (its address), 0 none */
	uint32_t *sym_name;     /* nativeSymbols: name (strs index) */
	int32_t *sym_lib;       /* and lib */
	uint64_t *sym_addr;     /* and lowest address seen (relative to the lib) */
	size_t nsyms;
} gw;

static int str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const gw *w = ctx;
	const sstr *k = key;
	return w->strs[idx].len == k->len && memcmp(w->strs[idx].s, k->s, k->len) == 0;
}

static uint32_t str_add(gw *w, const char *s, size_t len, int copy)
{
	sstr k = {s, len};
	uint64_t h = tk_hash_bytes(s, len, 0x67656b6fULL);
	uint32_t i = tk_hidx_find(&w->str_idx, h, str_eq, w, &k);
	if (i != UINT32_MAX)
		return i;
	if (copy) {
		char *c = tk_xmalloc(len + 1);
		memcpy(c, s, len);
		c[len] = 0;
		TK_GROW(w->owned, w->capowned, w->nowned + 1);
		w->owned[w->nowned++] = c;
		k.s = c;
	}
	TK_GROW(w->strs, w->capstrs, w->nstrs + 1);
	w->strs[w->nstrs] = k;
	tk_hidx_insert(&w->str_idx, h, (uint32_t)w->nstrs);
	return (uint32_t)w->nstrs++;
}

static uint32_t str_model(gw *w, tk_str s)
{
	return str_add(w, tk_string(w->p, s), tk_string_len(w->p, s), 0);
}

static int func_eq(const void *ctx, uint32_t idx, const void *key)
{
	const gw *w = ctx;
	const func_key *k = key;
	return w->funcs[idx].name == k->name && w->funcs[idx].binary == k->binary;
}

static int file_eq(const void *ctx, uint32_t idx, const void *key)
{
	const gw *w = ctx;
	return w->files[idx] == *(const uint32_t *)key;
}

static uint32_t file_add(gw *w, uint32_t str)
{
	uint64_t h = tk_hash_u64(str);
	uint32_t i = tk_hidx_find(&w->file_idx, h, file_eq, w, &str);
	if (i != UINT32_MAX)
		return i;
	TK_GROW(w->files, w->capfiles, w->nfiles + 1);
	w->files[w->nfiles] = str;
	tk_hidx_insert(&w->file_idx, h, (uint32_t)w->nfiles);
	return (uint32_t)w->nfiles++;
}

/* ---- small fast printers (numbers dominate the output) ---- */

static void put_u64(FILE *out, uint64_t v)
{
	char b[24];
	int n = 0;
	do
		b[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		putc_unlocked(b[--n], out);
}

/* ns as milliseconds, exactly: "1.13", "0.000001", "12". */
static void put_ms(FILE *out, uint64_t ns)
{
	put_u64(out, ns / 1000000);
	uint64_t frac = ns % 1000000;
	if (!frac)
		return;
	char b[8];
	int n = 6;
	b[6] = 0;
	for (int i = 5; i >= 0; i--, frac /= 10)
		b[i] = (char)('0' + frac % 10);
	while (n > 0 && b[n - 1] == '0')
		n--;
	putc_unlocked('.', out);
	fwrite(b, 1, (size_t)n, out);
}

static void put_str(FILE *out, const char *s)
{
	fputs(s, out);
}

/* A JSON string from bytes that may not be NUL-terminated at len (model strings are). */
static void put_json(FILE *out, const sstr *s)
{
	tk_wu_json_string(out, s->s);
}

/* The sample arrays are most of the file (three numbers per row): they are formatted into a
 * buffer of our own and written in blocks, not a character at a time through stdio. */
typedef struct obuf {
	FILE *f;
	size_t n;
	char b[1 << 16];
} obuf;

static void ob_flush(obuf *o)
{
	fwrite(o->b, 1, o->n, o->f);
	o->n = 0;
}

static inline char *ob_room(obuf *o, size_t need)
{
	if (sizeof o->b - o->n < need)
		ob_flush(o);
	return o->b + o->n;
}

static inline void ob_lit(obuf *o, const char *s, size_t len)
{
	memcpy(ob_room(o, len), s, len);
	o->n += len;
}

static inline void ob_u64(obuf *o, uint64_t v)
{
	char t[20];
	int n = 0;
	do
		t[19 - n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	memcpy(ob_room(o, 20), t + 20 - n, (size_t)n);
	o->n += (size_t)n;
}

/* put_ms into the buffer */
static inline void ob_ms(obuf *o, uint64_t ns)
{
	ob_u64(o, ns / 1000000);
	uint32_t frac = (uint32_t)(ns % 1000000);
	if (!frac)
		return;
	char *d = ob_room(o, 7);
	d[0] = '.';
	int n = 6;
	while (frac % 10 == 0)
		frac /= 10, n--;
	for (int i = n; i >= 1; i--, frac /= 10)
		d[i] = (char)('0' + frac % 10);
	o->n += (size_t)n + 1;
}

static const char *binary_arch(const tk_profile *p, const tk_binary *b)
{
	return b && b->arch ? tk_string(p, b->arch) : "";
}

/* The address the profiler (and our symbol server) should look up, relative to the image: a
 * return address points after the call, so its call is at addr - 1; a sampled PC is looked up as
 * is (xctrace 14.3+ stores PC + 1 for a leaf of a frame with a binary, and arm64 PCs are 4-aligned). */
static int64_t frame_rel_addr(const tk_profile *p, const tk_frame *f)
{
	const tk_binary *b = tk_binary_get(p, f->binary);
	if (!b || !f->addr || (f->flags & (TK_FRAME_INLINED | TK_FRAME_SYNTHETIC)))
		return -1;
	const char *arch = binary_arch(p, b);
	int arm = strncmp(arch, "arm64", 5) == 0;
	uint64_t a = arm ? f->addr & ((1ULL << 40) - 1) : f->addr;
	if (f->flags & TK_FRAME_LEAF_PC)
		a = arm ? a & ~(uint64_t)3 : a - 1;
	else
		a -= 1;
	if (a < b->load_addr || a - b->load_addr > INT32_MAX)
		return -1;
	return (int64_t)(a - b->load_addr);
}

/* "4C4C44D7-5555-3144-A1A5-753F1442BA46" -> "4C4C44D755553144A1A5753F1442BA460" (Breakpad's Mach-O
 * debug id: the UUID's 32 hex digits and an age of 0). */
static void breakpad_id(const char *uuid, char out[40])
{
	size_t n = 0;
	for (const char *c = uuid; *c && n < 32; c++)
		if ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F'))
			out[n++] = (char)(*c >= 'a' ? *c - 32 : *c);
	if (n != 32)
		n = 0;
	else
		out[n++] = '0';
	out[n] = 0;
}

/* Inline chains: walking the stacks parents first, a frame flagged TK_FRAME_INLINED sits one level
 * deeper than its caller in the chain, whose outer frame is the nearest caller not inlined. A chain's
 * frames share one nativeSymbol (the outer function, at the lowest address seen in it), which is how
 * the profiler tells an inlined call from a plain one. A symbolicated address always expands to the
 * same chain, so each frame has one depth. */
typedef struct sym_key {
	uint32_t name;
	int32_t lib;
} sym_key;

static int sym_eq(const void *ctx, uint32_t idx, const void *key)
{
	const gw *w = ctx;
	const sym_key *k = key;
	return w->sym_name[idx] == k->name && w->sym_lib[idx] == k->lib;
}

static void build_inlines(gw *w)
{
	const tk_profile *p = w->p;
	size_t ns = tk_stack_count(p), nf = tk_frame_count(p);
	w->inl_depth = tk_xcalloc(nf + 1, sizeof *w->inl_depth);
	w->frame_sym = tk_xmalloc((nf + 1) * sizeof *w->frame_sym);
	w->inl_outer = tk_xcalloc(nf + 1, sizeof *w->inl_outer);
	for (size_t i = 0; i <= nf; i++)
		w->frame_sym[i] = -1;
	uint32_t *sdepth = tk_xcalloc(ns + 1, sizeof *sdepth);
	tk_stack_id *outer = tk_xcalloc(ns + 1, sizeof *outer);
	tk_hidx sym_idx = {0};
	size_t capsyms = 0;
	for (size_t i = 1; i <= ns; i++) {
		const tk_stack_node *n = tk_stack_get(p, (tk_stack_id)i);
		const tk_frame *f = tk_frame_get(p, n->frame);
		if (!(f->flags & TK_FRAME_INLINED) || !n->parent) {
			outer[i] = (tk_stack_id)i;
			continue;
		}
		const tk_frame *pf = tk_frame_get(p, tk_stack_get(p, n->parent)->frame);
		sdepth[i] = sdepth[n->parent] + 1;
		outer[i] = (pf->flags & TK_FRAME_INLINED) ? outer[n->parent] : n->parent;
		if (w->inl_depth[n->frame])
			continue; /* seen in the same chain before */
		w->inl_depth[n->frame] = sdepth[i];
		tk_frame_id of = tk_stack_get(p, outer[i])->frame;
		const tk_frame *o = tk_frame_get(p, of);
		int32_t lib = w->bin_lib[o->binary];
		if (lib < 0)
			continue;
		if (w->frame_sym[of] < 0) {
			sym_key k = {w->funcs[w->frame_func[of]].name, lib};
			uint64_t h = tk_hash_u64(((uint64_t)k.name << 32) | (uint32_t)lib);
			uint32_t si = tk_hidx_find(&sym_idx, h, sym_eq, w, &k);
			if (si == UINT32_MAX) {
				size_t cap = capsyms;
				TK_GROW(w->sym_name, capsyms, w->nsyms + 1);
				if (capsyms != cap) { /* not per symbol: ASan's realloc always copies */
					w->sym_lib = tk_xrealloc(w->sym_lib, capsyms * sizeof *w->sym_lib);
					w->sym_addr = tk_xrealloc(w->sym_addr, capsyms * sizeof *w->sym_addr);
				}
				w->sym_name[w->nsyms] = k.name;
				w->sym_lib[w->nsyms] = lib;
				w->sym_addr[w->nsyms] = UINT64_MAX;
				tk_hidx_insert(&sym_idx, h, (uint32_t)w->nsyms);
				si = (uint32_t)w->nsyms++;
			}
			w->frame_sym[of] = (int32_t)si;
			int64_t a = frame_rel_addr(p, o);
			if (a >= 0 && (uint64_t)a < w->sym_addr[si])
				w->sym_addr[si] = (uint64_t)a;
		}
		w->frame_sym[n->frame] = w->frame_sym[of];
		w->inl_outer[n->frame] = of;
	}
	for (size_t i = 0; i < w->nsyms; i++)
		if (w->sym_addr[i] == UINT64_MAX)
			w->sym_addr[i] = 0;
	tk_hidx_free(&sym_idx);
	free(sdepth);
	free(outer);
}

static void build_tables(gw *w)
{
	const tk_profile *p = w->p;
	w->nbins = tk_binary_count(p) + 1;
	w->bin_lib = tk_xmalloc(w->nbins * sizeof *w->bin_lib);
	w->bin_cat = tk_xcalloc(w->nbins, 1);
	int32_t nlibs = 0;
	for (size_t b = 1; b < w->nbins; b++) {
		w->bin_lib[b] = nlibs++;
		w->bin_cat[b] = tk_binary_is_system(p, (tk_binary_id)b) ? CAT_SYSTEM : CAT_APP;
	}
	w->bin_lib[0] = -1;
	str_add(w, "", 0, 0);
	size_t nf = tk_frame_count(p);
	w->frame_func = tk_xmalloc((nf + 1) * sizeof *w->frame_func);
	char hex[32];
	for (size_t i = 1; i <= nf; i++) {
		const tk_frame *f = tk_frame_get(p, (tk_frame_id)i);
		const char *label = tk_frame_label(p, (tk_frame_id)i, hex);
		uint32_t name = f->name ? str_model(w, f->name) : str_add(w, label, strlen(label), 1);
		func_key k = {name, f->binary};
		uint64_t h = tk_hash_u64(((uint64_t)name << 32) | f->binary);
		uint32_t fi = tk_hidx_find(&w->func_idx, h, func_eq, w, &k);
		if (fi == UINT32_MAX) {
			size_t cap = w->capfuncs;
			TK_GROW(w->funcs, w->capfuncs, w->nfuncs + 1);
			if (w->capfuncs != cap) /* not per function: ASan's realloc always copies */
				w->func_file = tk_xrealloc(w->func_file, w->capfuncs * sizeof *w->func_file);
			w->funcs[w->nfuncs] = k;
			w->func_file[w->nfuncs] = 0;
			tk_hidx_insert(&w->func_idx, h, (uint32_t)w->nfuncs);
			fi = (uint32_t)w->nfuncs++;
		}
		if (f->file && !w->func_file[fi])
			w->func_file[fi] = file_add(w, str_model(w, f->file)) + 1;
		w->frame_func[i] = fi;
	}
	for (size_t b = 1; b < w->nbins; b++) { /* names and paths of the libs */
		const tk_binary *bin = tk_binary_get(p, (tk_binary_id)b);
		str_model(w, bin->name);
	}
	for (size_t t = 0; t < tk_thread_count(p) && !w->nostack; t++) {
		size_t nc = 0;
		const tk_stack_weight *c = tk_thread_stacks(p, (tk_thread_id)t, &nc);
		for (size_t i = 0; i < nc && !w->nostack; i++)
			w->nostack = c[i].stack == 0;
	}
	if (w->nostack) { /* one more function, with no binary */
		func_key k = {str_add(w, "(no stack)", 10, 0), 0};
		uint64_t h = tk_hash_u64((uint64_t)k.name << 32);
		uint32_t fi = tk_hidx_find(&w->func_idx, h, func_eq, w, &k);
		if (fi == UINT32_MAX) {
			size_t cap = w->capfuncs;
			TK_GROW(w->funcs, w->capfuncs, w->nfuncs + 1);
			if (w->capfuncs != cap) /* not per function: ASan's realloc always copies */
				w->func_file = tk_xrealloc(w->func_file, w->capfuncs * sizeof *w->func_file);
			w->funcs[w->nfuncs] = k;
			w->func_file[w->nfuncs] = 0;
			tk_hidx_insert(&w->func_idx, h, (uint32_t)w->nfuncs);
			fi = (uint32_t)w->nfuncs++;
		}
		w->nostack_fn = fi;
	}
	build_inlines(w);
}

/* cpu_unit: the unit of samples.threadCPUDelta ("ns", "variable CPU cycles"), NULL when not written */
static void write_meta(gw *w, const tk_convert_options *o, int symbolicated, uint64_t interval_ns, const char *cpu_unit)
{
	FILE *out = w->out;
	const char *title = o && o->title ? o->title : "tracekit";
	put_str(out, "{\"meta\":{\"version\":30,\"preprocessedProfileVersion\":60,\"startTime\":0,\"interval\":");
	put_ms(out, interval_ns ? interval_ns : 1);
	if (cpu_unit) {
		put_str(out, ",\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"");
		put_str(out, cpu_unit);
		put_str(out, "\"}");
	}
	put_str(out, ",\"processType\":0,\"stackwalk\":1,\"debug\":false,\"product\":");
	/* The profiler calls every count "samples": the name the profiler shows says what they are. */
	tk_unit u = tk_profile_unit(w->p);
	if (u == TK_UNIT_CYCLES || u == TK_UNIT_EVENTS) {
		size_t tl = strlen(title);
		const char *what = u == TK_UNIT_CYCLES ? " (weights are CPU cycles: \"samples\" counts cycles)"
		                                       : " (weights are PMC events: \"samples\" counts events)";
		char *named = tk_xmalloc(tl + strlen(what) + 1);
		memcpy(named, title, tl);
		strcpy(named + tl, what);
		tk_wu_json_string(out, named);
		free(named);
	} else
		tk_wu_json_string(out, title);
	put_str(out, ",\"importedFrom\":\"tracekit\",\"symbolicated\":");
	put_str(out, symbolicated ? "true" : "false");
	put_str(out, ",\"categories\":["
	             "{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
	             "{\"name\":\"App\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
	             "{\"name\":\"System\",\"color\":\"orange\",\"subcategories\":[\"Other\"]}],"
	             "\"markerSchema\":[{\"name\":\"TracekitRecord\",\"display\":[\"marker-chart\",\"marker-table\","
	             "\"timeline-overview\"],\"chartLabel\":\"{marker.data.kind}\",\"tableLabel\":\"{marker.data.kind} "
	             "{marker.data.key}\",\"tooltipLabel\":\"{marker.data.kind}\",\"fields\":["
	             "{\"key\":\"kind\",\"label\":\"Record\",\"format\":\"string\"},"
	             "{\"key\":\"key\",\"label\":\"Key\",\"format\":\"string\"},"
	             "{\"key\":\"avgCpu\",\"label\":\"Average CPU\",\"format\":\"percentage\"},"
	             "{\"key\":\"samples\",\"label\":\"Samples\",\"format\":\"integer\"}]}]},\n\"libs\":[");
	for (size_t b = 1; b < w->nbins; b++) {
		const tk_binary *bin = tk_binary_get(w->p, (tk_binary_id)b);
		char bid[40];
		breakpad_id(tk_string(w->p, bin->uuid), bid);
		const char *name = tk_string(w->p, bin->name), *path = tk_string(w->p, bin->path);
		if (!*path)
			path = name;
		put_str(out, b > 1 ? ",\n{\"name\":" : "{\"name\":");
		tk_wu_json_string(out, name);
		put_str(out, ",\"path\":");
		tk_wu_json_string(out, path);
		put_str(out, ",\"debugName\":");
		tk_wu_json_string(out, name);
		put_str(out, ",\"debugPath\":");
		tk_wu_json_string(out, path);
		put_str(out, ",\"breakpadId\":\"");
		put_str(out, bid);
		put_str(out, "\",\"codeId\":null,\"arch\":");
		tk_wu_json_string(out, binary_arch(w->p, bin));
		/* Not read by the processed format (addresses are library-relative) but recorded so the
		 * file says where each image was: the load address as a hex string. */
		fprintf(out, ",\"start\":%llu}", (unsigned long long)bin->load_addr);
	}
	put_str(out, "],\n");
}

static void write_shared(gw *w)
{
	FILE *out = w->out;
	const tk_profile *p = w->p;
	size_t ns = tk_stack_count(p), nf = tk_frame_count(p);
	/* "(no stack)": frame nf and stack ns, after the model's (see the header) */
	size_t nsx = ns + (w->nostack != 0), nfx = nf + (w->nostack != 0);
	put_str(out, "\"shared\":{\"stackTable\":{\"length\":");
	put_u64(out, nsx);
	put_str(out, ",\"frame\":[");
	for (size_t i = 1; i <= nsx; i++) {
		if (i > 1)
			putc_unlocked(',', out);
		put_u64(out, i <= ns ? tk_stack_get(p, (tk_stack_id)i)->frame - 1 : nf);
	}
	put_str(out, "],\"prefix\":[");
	for (size_t i = 1; i <= nsx; i++) {
		if (i > 1)
			putc_unlocked(',', out);
		tk_stack_id parent = i <= ns ? tk_stack_get(p, (tk_stack_id)i)->parent : 0;
		if (parent)
			put_u64(out, parent - 1);
		else
			put_str(out, "null");
	}
	put_str(out, "]},\n\"frameTable\":{\"length\":");
	put_u64(out, nfx);
	put_str(out, ",\"address\":[");
	for (size_t i = 1; i <= nfx; i++) {
		if (i > 1)
			putc_unlocked(',', out);
		/* an inlined frame is at its outer frame's address, as the profiler's symbolication puts it */
		tk_frame_id at = i > nf ? 0 : w->inl_outer[i] ? w->inl_outer[i] : (tk_frame_id)i;
		int64_t a = at ? frame_rel_addr(p, tk_frame_get(p, at)) : -1;
		if (a < 0)
			put_str(out, "-1");
		else
			put_u64(out, (uint64_t)a);
	}
	put_str(out, "],\"inlineDepth\":[");
	for (size_t i = 1; i <= nfx; i++) {
		if (i > 1)
			putc_unlocked(',', out);
		put_u64(out, i <= nf ? w->inl_depth[i] : 0);
	}
	put_str(out, "],\"category\":[");
	for (size_t i = 1; i <= nfx; i++) {
		if (i > 1)
			putc_unlocked(',', out);
		put_u64(out, i <= nf ? w->bin_cat[tk_frame_get(p, (tk_frame_id)i)->binary] : CAT_OTHER);
	}
	put_str(out, "],\"subcategory\":[");
	for (size_t i = 1; i <= nfx; i++)
		put_str(out, i > 1 ? ",0" : "0");
	put_str(out, "],\"func\":[");
	for (size_t i = 1; i <= nfx; i++) {
		if (i > 1)
			putc_unlocked(',', out);
		put_u64(out, i <= nf ? w->frame_func[i] : w->nostack_fn);
	}
	put_str(out, "],\"nativeSymbol\":[");
	for (size_t i = 1; i <= nfx; i++) {
		if (i > 1)
			putc_unlocked(',', out);
		if (i <= nf && w->frame_sym[i] >= 0)
			put_u64(out, (uint64_t)w->frame_sym[i]);
		else
			put_str(out, "null");
	}
	put_str(out, "],\"innerWindowID\":[");
	for (size_t i = 1; i <= nfx; i++)
		put_str(out, i > 1 ? ",0" : "0");
	put_str(out, "],\"line\":[");
	for (size_t i = 1; i <= nfx; i++) {
		if (i > 1)
			putc_unlocked(',', out);
		uint32_t line = i <= nf ? tk_frame_get(p, (tk_frame_id)i)->line : 0;
		if (line)
			put_u64(out, line);
		else
			put_str(out, "null");
	}
	put_str(out, "],\"column\":[");
	for (size_t i = 1; i <= nfx; i++)
		put_str(out, i > 1 ? ",null" : "null");
	put_str(out, "]},\n\"funcTable\":{\"length\":");
	put_u64(out, w->nfuncs);
	put_str(out, ",\"name\":[");
	for (size_t i = 0; i < w->nfuncs; i++) {
		if (i)
			putc_unlocked(',', out);
		put_u64(out, w->funcs[i].name);
	}
	put_str(out, "],\"isJS\":[");
	for (size_t i = 0; i < w->nfuncs; i++)
		put_str(out, i ? ",false" : "false");
	put_str(out, "],\"relevantForJS\":[");
	for (size_t i = 0; i < w->nfuncs; i++)
		put_str(out, i ? ",false" : "false");
	put_str(out, "],\"resource\":[");
	for (size_t i = 0; i < w->nfuncs; i++) {
		if (i)
			putc_unlocked(',', out);
		int32_t lib = w->bin_lib[w->funcs[i].binary];
		if (lib < 0)
			put_str(out, "-1");
		else
			put_u64(out, (uint64_t)lib);
	}
	put_str(out, "],\"source\":[");
	for (size_t i = 0; i < w->nfuncs; i++) {
		if (i)
			putc_unlocked(',', out);
		if (w->func_file[i])
			put_u64(out, w->func_file[i] - 1);
		else
			put_str(out, "null");
	}
	put_str(out, "],\"lineNumber\":[");
	for (size_t i = 0; i < w->nfuncs; i++)
		put_str(out, i ? ",null" : "null");
	put_str(out, "],\"columnNumber\":[");
	for (size_t i = 0; i < w->nfuncs; i++)
		put_str(out, i ? ",null" : "null");
	/* One resource per binary, in binary order: resource k is lib k. */
	size_t nlibs = w->nbins - 1;
	put_str(out, "]},\n\"resourceTable\":{\"length\":");
	put_u64(out, nlibs);
	put_str(out, ",\"lib\":[");
	for (size_t i = 0; i < nlibs; i++) {
		if (i)
			putc_unlocked(',', out);
		put_u64(out, i);
	}
	put_str(out, "],\"name\":[");
	for (size_t i = 0; i < nlibs; i++) {
		if (i)
			putc_unlocked(',', out);
		put_u64(out, str_model(w, tk_binary_get(p, (tk_binary_id)(i + 1))->name));
	}
	put_str(out, "],\"host\":[");
	for (size_t i = 0; i < nlibs; i++)
		put_str(out, i ? ",null" : "null");
	put_str(out, "],\"type\":[");
	for (size_t i = 0; i < nlibs; i++)
		put_str(out, i ? ",1" : "1");
	put_str(out, "]},\n\"nativeSymbols\":{\"length\":");
	put_u64(out, w->nsyms);
	put_str(out, ",\"libIndex\":[");
	for (size_t i = 0; i < w->nsyms; i++) {
		if (i)
			putc_unlocked(',', out);
		put_u64(out, (uint64_t)w->sym_lib[i]);
	}
	put_str(out, "],\"address\":[");
	for (size_t i = 0; i < w->nsyms; i++) {
		if (i)
			putc_unlocked(',', out);
		put_u64(out, w->sym_addr[i]);
	}
	put_str(out, "],\"name\":[");
	for (size_t i = 0; i < w->nsyms; i++) {
		if (i)
			putc_unlocked(',', out);
		put_u64(out, w->sym_name[i]);
	}
	put_str(out, "],\"functionSize\":[");
	for (size_t i = 0; i < w->nsyms; i++)
		put_str(out, i ? ",null" : "null");
	put_str(out, "]},\n\"sources\":{\"length\":");
	put_u64(out, w->nfiles);
	put_str(out, ",\"id\":[");
	for (size_t i = 0; i < w->nfiles; i++)
		put_str(out, i ? ",null" : "null");
	put_str(out, "],\"filename\":[");
	for (size_t i = 0; i < w->nfiles; i++) {
		if (i)
			putc_unlocked(',', out);
		put_u64(out, w->files[i]);
	}
	put_str(out, "]},\n\"stringArray\":[");
	for (size_t i = 0; i < w->nstrs; i++) {
		if (i)
			putc_unlocked(',', out);
		put_json(out, &w->strs[i]);
	}
	put_str(out, "]},\n");
}

/* ---- threads ---- */

typedef struct thread_ord {
	tk_thread_id t;
	int main;
} thread_ord;

static const tk_profile *sort_p;

static int is_main_name(const char *n)
{
	return strcmp(n, "Main Thread") == 0 || strcmp(n, "com.apple.main-thread") == 0 || strcmp(n, "main") == 0;
}

static int cmp_threads(const void *a, const void *b)
{
	const thread_ord *x = a, *y = b;
	const tk_thread *tx = tk_thread_get(sort_p, x->t), *ty = tk_thread_get(sort_p, y->t);
	if (tx->pid != ty->pid)
		return tx->pid < ty->pid ? -1 : 1;
	if (x->main != y->main)
		return y->main - x->main;
	if (tx->weight != ty->weight)
		return tx->weight > ty->weight ? -1 : 1;
	return tx->tid < ty->tid ? -1 : tx->tid > ty->tid;
}

/* A sample of a thread whose rows arrived out of time order, with its arrival rank. */
typedef struct ord_sample {
	uint64_t time, weight;
	tk_stack_id stack;
	uint32_t seq;
} ord_sample;

static int cmp_sample_time(const void *a, const void *b)
{
	const ord_sample *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq; /* arrival order among equal times */
}

static void ob_weight(obuf *o, tk_unit u, uint64_t w)
{
	if (u == TK_UNIT_NS)
		ob_ms(o, w);
	else
		ob_u64(o, w);
}

/* none: the "(no stack)" row, for the empty stack */
static void ob_stack(obuf *o, tk_stack_id s, uint64_t none)
{
	ob_u64(o, s ? s - 1 : none);
}

/* One thread's samples in time order: the stack, time and weight arrays. Rows that arrived in
 * order (xctrace exports) are decoded from the compact list once per array, with no copy; only a
 * thread whose times go back is unpacked (24 bytes per row of that thread) and sorted. */
static void write_timed_samples(FILE *out, const tk_profile *p, tk_thread_id t, tk_unit unit, int cpu)
{
	uint64_t none = tk_stack_count(p);
	size_t n = tk_thread_sample_count(p, t);
	obuf *o = tk_xmalloc(sizeof *o);
	o->f = out;
	o->n = 0;
	ob_lit(o, ",\"length\":", 10);
	ob_u64(o, n);
	tk_sample s;
	if (tk_thread_samples_in_order(p, t)) {
		static const char *const head[4] = {",\"stack\":[", "],\"time\":[", "],\"weight\":[",
		                                    "],\"threadCPUDelta\":["};
		for (int pass = 0; pass < 3 + (cpu != 0); pass++) {
			ob_lit(o, head[pass], strlen(head[pass]));
			tk_sample_iter *it = tk_sample_iter_new(p, t);
			for (size_t i = 0; tk_sample_iter_next(it, &s); i++) {
				if (i)
					ob_lit(o, ",", 1);
				if (pass == 0)
					ob_stack(o, s.stack, none);
				else if (pass == 1)
					ob_ms(o, s.time);
				else if (pass == 2)
					ob_weight(o, unit, s.weight);
				else
					ob_u64(o, s.weight);
			}
			tk_sample_iter_free(it);
		}
	} else {
		ord_sample *v = tk_xmalloc((n ? n : 1) * sizeof *v);
		tk_sample_iter *it = tk_sample_iter_new(p, t);
		for (size_t i = 0; i < n && tk_sample_iter_next(it, &s); i++)
			v[i] = (ord_sample){s.time, s.weight, s.stack, (uint32_t)i};
		tk_sample_iter_free(it);
		qsort(v, n, sizeof *v, cmp_sample_time);
		ob_lit(o, ",\"stack\":[", 10);
		for (size_t i = 0; i < n; i++) {
			if (i)
				ob_lit(o, ",", 1);
			ob_stack(o, v[i].stack, none);
		}
		ob_lit(o, "],\"time\":[", 10);
		for (size_t i = 0; i < n; i++) {
			if (i)
				ob_lit(o, ",", 1);
			ob_ms(o, v[i].time);
		}
		ob_lit(o, "],\"weight\":[", 12);
		for (size_t i = 0; i < n; i++) {
			if (i)
				ob_lit(o, ",", 1);
			ob_weight(o, unit, v[i].weight);
		}
		if (cpu) {
			ob_lit(o, "],\"threadCPUDelta\":[", 20);
			for (size_t i = 0; i < n; i++) {
				if (i)
					ob_lit(o, ",", 1);
				ob_u64(o, v[i].weight);
			}
		}
		free(v);
	}
	ob_flush(o);
	free(o);
}

static void put_weight(FILE *out, tk_unit u, uint64_t w)
{
	if (u == TK_UNIT_NS)
		put_ms(out, w);
	else
		put_u64(out, w);
}

static void put_stack(FILE *out, tk_stack_id s, uint64_t none)
{
	put_u64(out, s ? s - 1 : none);
}

/* An event placed on the timeline: its thread starts at start_ns (from the earliest event) and
 * lasts dur_ns; name is its name in the string table. */
typedef struct rec_place {
	tk_event_id e;
	uint64_t start_ns, dur_ns;
	uint32_t name;
} rec_place;

static void thread_header(gw *w, const tk_thread *th, int main, int first, const rec_place *rec)
{
	FILE *out = w->out;
	const tk_profile *p = w->p;
	const char *name = tk_string(p, th->name), *proc = tk_string(p, th->process);
	if (!*name)
		name = "(unnamed)"; /* as every writer names a thread without a name */
	put_str(out, first ? "{" : ",\n{");
	put_str(out, "\"name\":");
	tk_wu_json_string(out, name);
	put_str(out, ",\"processName\":");
	tk_wu_json_string(out, *proc ? proc : name);
	put_str(out, ",\"processType\":\"default\",\"processStartupTime\":0,\"processShutdownTime\":null,"
	             "\"registerTime\":0,\"unregisterTime\":null,\"pausedRanges\":[],\"isMainThread\":");
	put_str(out, main ? "true" : "false");
	fprintf(out, ",\"pid\":\"%lld\",\"tid\":%llu,", (long long)th->pid, (unsigned long long)th->tid);
	if (rec) { /* one interval marker (phase 1) spanning the event, payload per markerSchema */
		const tk_event *ev = tk_event_get(p, rec->e);
		double avg = tk_event_num(p, rec->e, "cpu.average"), ns = tk_event_num(p, rec->e, "samples");
		put_str(out, "\"markers\":{\"length\":1,\"data\":[{\"type\":\"TracekitRecord\",\"kind\":");
		tk_wu_json_string(out, tk_string(p, ev->name));
		put_str(out, ",\"key\":");
		tk_wu_json_string(out, tk_string(p, ev->key));
		if (avg == avg) /* not NAN */
			fprintf(out, ",\"avgCpu\":%.6g", avg / 100.0);
		/* the count the input recorded, else the stacks the event owns */
		fprintf(out, ",\"samples\":%llu}],\"name\":[%u],\"startTime\":[",
		        ns == ns && ns >= 0 ? (unsigned long long)ns : (unsigned long long)ev->samples, rec->name);
		put_ms(out, rec->start_ns);
		put_str(out, "],\"endTime\":[");
		put_ms(out, rec->start_ns + rec->dur_ns);
		put_str(out, "],\"phase\":[1],\"category\":[0]},\n\"samples\":{\"weightType\":");
	} else
		put_str(out, "\"markers\":{\"length\":0,\"data\":[],\"name\":[],\"startTime\":[],\"endTime\":[],"
		             "\"phase\":[],\"category\":[]},\n\"samples\":{\"weightType\":");
	/* The profiler knows three weight types; cycles and events are counts like samples. */
	tk_unit u = tk_profile_unit(p);
	put_str(out, u == TK_UNIT_NS ? "\"tracing-ms\"" : u == TK_UNIT_BYTES ? "\"bytes\"" : "\"samples\"");
}

int tk_write_gecko(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err)
{
	if (tk_profile_weight_decimals(p))
		return tk_error_set(err,
		                    "gecko: the Firefox Profiler's sample weights are whole numbers, and these "
		                    "have %u decimals (folded counts such as 1.5): write speedscope, folded or SVG "
		                    "instead",
		                    tk_profile_weight_decimals(p));
	gw w = {.out = out, .p = p};
	build_tables(&w);
	tk_unit unit = tk_profile_unit(p);
	size_t nt = tk_thread_count(p);
	int timed = tk_profile_sample_count(p) > 0 && tk_profile_sample_times_known(p);
	/* Symbolicated unless a frame with an image has no name: then the profiler asks the symbol
	 * server (`tracekit open` answers) for the addresses of those libraries. */
	int symbolicated = 1;
	for (size_t i = 1; i <= tk_frame_count(p) && symbolicated; i++) {
		const tk_frame *f = tk_frame_get(p, (tk_frame_id)i);
		if (!f->name && frame_rel_addr(p, f) >= 0 && tk_binary_get(p, f->binary)->uuid)
			symbolicated = 0;
	}
	uint64_t interval = 1000000;
	if (unit == TK_UNIT_NS && tk_profile_samples(p))
		interval = tk_profile_weight(p) / tk_profile_samples(p);
	if (!interval)
		interval = 1;
	/* Events: each is placed at its wall-clock start relative to the earliest event's, on the thread
	 * it is drawn on, with one marker spanning its duration. */
	rec_place *recs = tk_xcalloc(nt ? nt : 1, sizeof *recs);
	int have_recs = 0;
	size_t ne = tk_event_count(p);
	double origin = 0;
	int any = 0;
	for (tk_event_id e = 1; e <= ne; e++) {
		double wall = tk_event_get(p, e)->wall;
		if (wall == wall && (!any || wall < origin))
			origin = wall, any = 1;
	}
	for (tk_event_id e = 1; e <= ne; e++) {
		const tk_event *ev = tk_event_get(p, e);
		if (ev->thread >= nt || recs[ev->thread].e)
			continue;
		double ds = tk_event_num(p, e, "duration"); /* seconds as recorded, when the input has them */
		if (ds != ds && ev->duration != UINT64_MAX)
			ds = (double)ev->duration / 1e9;
		double st = ev->wall == ev->wall && any ? (ev->wall - origin) * 1e9 : 0;
		double du = ds == ds && ds > 0 ? ds * 1e9 : 0;
		const char *nm = tk_string(p, ev->name);
		recs[ev->thread] = (rec_place){e, (uint64_t)st, (uint64_t)du, str_add(&w, nm, strlen(nm), 1)};
		have_recs = 1;
	}
	/* The CPU a sample stands for (its weight) since the thread's previous sample: in ns for time
	 * profiles, in cycles for cycle profiles (the profiler takes the busiest thread as 100 %). Events
	 * and plain counts are not CPU time. */
	const char *cpu_unit = !timed                   ? NULL
	                       : unit == TK_UNIT_NS     ? "ns"
	                       : unit == TK_UNIT_CYCLES ? "variable CPU cycles"
	                                                : NULL;
	write_meta(&w, o, symbolicated, unit == TK_UNIT_NS ? interval : 1000000, cpu_unit);
	write_shared(&w);

	thread_ord *ord = tk_xmalloc((nt ? nt : 1) * sizeof *ord);
	for (size_t t = 0; t < nt; t++) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
		ord[t] = (thread_ord){(tk_thread_id)t, is_main_name(tk_string(p, th->name)) ||
		                                           (th->pid >= 0 && (uint64_t)th->pid == th->tid)};
	}
	sort_p = p;
	qsort(ord, nt, sizeof *ord, cmp_threads);

	put_str(out, "\"threads\":[");
	for (size_t k = 0; k < nt; k++) {
		tk_thread_id t = ord[k].t;
		const tk_thread *th = tk_thread_get(p, t);
		const rec_place *rec = have_recs && recs[t].e ? &recs[t] : NULL;
		thread_header(&w, th, ord[k].main, k == 0, rec);
		if (timed) {
			write_timed_samples(out, p, t, unit, cpu_unit != NULL);
		} else {
			/* No per-sample times: one sample per distinct stack, laid end to end from the
			 * thread's first time so the Stack Chart shows each stack once with its width. */
			size_t nc = 0;
			const tk_stack_weight *c = tk_thread_stacks(p, t, &nc);
			uint64_t t0 = th->t_min <= th->t_max ? th->t_min : 0, at = t0;
			uint64_t cum = 0; /* a record's cells spread over its duration, by sample count */
			put_str(out, ",\"length\":");
			put_u64(out, nc);
			put_str(out, ",\"stack\":[");
			for (size_t i = 0; i < nc; i++) {
				if (i)
					putc_unlocked(',', out);
				put_stack(out, c[i].stack, tk_stack_count(p));
			}
			put_str(out, "],\"time\":[");
			for (size_t i = 0; i < nc; i++) {
				if (i)
					putc_unlocked(',', out);
				if (rec && rec->dur_ns && th->samples) {
					put_ms(out, rec->start_ns + (uint64_t)((double)rec->dur_ns * (double)cum /
					                                       (double)th->samples));
					cum += c[i].samples;
				} else {
					put_ms(out, at);
					at += unit == TK_UNIT_NS ? c[i].weight : c[i].samples * interval;
				}
			}
			put_str(out, "],\"weight\":[");
			for (size_t i = 0; i < nc; i++) {
				if (i)
					putc_unlocked(',', out);
				put_weight(out, unit, c[i].weight);
			}
		}
		put_str(out, "]}}");
	}
	put_str(out, "],\n\"pages\":[],\"counters\":[]}\n");
	free(ord);
	free(recs);
	for (size_t i = 0; i < w.nowned; i++)
		free(w.owned[i]);
	free(w.owned);
	free(w.strs);
	tk_hidx_free(&w.str_idx);
	free(w.funcs);
	free(w.func_file);
	tk_hidx_free(&w.func_idx);
	free(w.frame_func);
	free(w.bin_lib);
	free(w.bin_cat);
	free(w.inl_depth);
	free(w.frame_sym);
	free(w.inl_outer);
	free(w.sym_name);
	free(w.sym_lib);
	free(w.sym_addr);
	free(w.files);
	tk_hidx_free(&w.file_idx);
	return tk_wu_finish(out, "gecko", err);
}
