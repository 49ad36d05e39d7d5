/*
 * The Firefox Profiler's symbolication API, version 5 (what `tracekit open` answers at
 * /symbolicate/v5; the protocol is Mozilla's Tecken API as the profiler's
 * mozilla-symbolication-api.ts reads it):
 *
 * Request:  {"jobs":[{"memoryMap":[[debugName, breakpadId], …], "stacks":[[[moduleIndex, offset], …]]}]}
 * Response: {"results":[{"found_modules":{"name/id":true|false}, "stacks":[[{"frame":i,
 *           "module_offset":"0x…", "module":name, "function":…, "function_offset":"0x…", "file":…,
 *           "line":…, "inlines":[{function, file, line} innermost first]}]]}]}
 *
 * The offset is relative to the image's load address (the gecko writer's frame addresses), already
 * adjusted for return addresses, so it is looked up as is. The request is bounded before it is
 * parsed (bytes, then JSON arrays: one per frame, stack and module), and the answer is written as
 * text, a frame at a time, so its cost grows with the frames and nothing else. Names from a dSYM
 * that are not valid UTF-8 are answered with U+FFFD in place of the bad bytes.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symint.h"
#include "util/mem.h"
#include "util/text.h"

typedef struct out {
	char *b;
	size_t n, cap;
	char *scratch; /* for one string: repaired, then quoted */
	size_t scap;
	size_t max; /* the answer's bound */
} out;

static void put(out *o, const char *s, size_t n)
{
	TK_GROW(o->b, o->cap, o->n + n + 1);
	memcpy(o->b + o->n, s, n);
	o->n += n;
	o->b[o->n] = 0;
}

static void puts_(out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* "key":"value" as a JSON member, value repaired to UTF-8 and escaped. */
static void put_str(out *o, const char *key, const char *v)
{
	size_t len = strlen(v), need = 3 * len + 1 + 6 * 3 * len + 3;
	TK_GROW(o->scratch, o->scap, need);
	char *fixed = o->scratch, *quoted = o->scratch + 3 * len + 1;
	tk_utf8_repair(fixed, v);
	size_t q = tk_json_quote(quoted, fixed);
	put(o, "\"", 1);
	puts_(o, key);
	put(o, "\":", 2);
	put(o, quoted, q);
}

static void put_fmt(out *o, const char *fmt, unsigned long long v)
{
	char buf[64];
	int n = snprintf(buf, sizeof buf, fmt, v);
	put(o, buf, (size_t)n);
}

/* "4C4C44D755553144A1A5753F1442BA460" (breakpad: UUID + age) → the UUID's 16 bytes */
static int uuid_from_breakpad(const char *id, uint8_t uuid[16])
{
	if (strlen(id) < 32)
		return -1;
	char hex[33];
	memcpy(hex, id, 32);
	hex[32] = 0;
	for (int i = 0; i < 32; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'A' && hex[i] <= 'F') ||
		      (hex[i] >= 'a' && hex[i] <= 'f')))
			return -1;
	return tk_uuid_parse(hex, uuid);
}

typedef struct named {
	uint64_t hash, off;
	json_int_t module;
	size_t frame;
} named;

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a, 64 bits: names are compared by hash within one stack */
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h;
}

/* by module, name, then offset: the first of each run is the function's lowest requested address */
static int cmp_named(const void *a, const void *b)
{
	const named *x = a, *y = b;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The frames of r worth answering: none for an address in no function. */
static size_t lookup(tk_symbol_image *im, json_int_t off, tk_symbol_result *r)
{
	r->nframes = 0;
	if (!im || off < 0)
		return 0;
	tk_symbol_image_lookup(im, tk_symbol_image_file_addr(im, 0, (uint64_t)off), r);
	if (r->nframes == 1 && !r->frames[0].file && strcmp(r->frames[0].function, "??") == 0)
		r->nframes = 0;
	return r->nframes;
}

static int job(tk_symbolicator *s, json_t *jb, out *o)
{
	json_t *mm = json_object_get(jb, "memoryMap"), *stacks = json_object_get(jb, "stacks");
	if (!json_is_array(mm) || !json_is_array(stacks))
		return -1;
	size_t nmod = json_array_size(mm);
	tk_symbol_image **ims = tk_xcalloc(nmod ? nmod : 1, sizeof *ims);
	puts_(o, "{\"found_modules\":{");
	int first = 1;
	for (size_t m = 0; m < nmod; m++) {
		json_t *e = json_array_get(mm, m);
		const char *name = json_string_value(json_array_get(e, 0)),
		           *id = json_string_value(json_array_get(e, 1));
		if (!name || !id)
			continue;
		uint8_t uuid[16];
		tk_error err;
		if (uuid_from_breakpad(id, uuid) == 0) {
			char u[37];
			tk_uuid_format(uuid, u);
			ims[m] = tk_symbolicator_image(s, u, NULL, NULL, &err);
			if (!ims[m] && tk_symbolicator_add_cached(s, uuid))
				ims[m] = tk_symbolicator_image(s, u, NULL, NULL, &err);
		}
		size_t kl = strlen(name) + strlen(id) + 2;
		char *key = tk_xmalloc(kl);
		snprintf(key, kl, "%s/%s", name, id);
		if (!first)
			put(o, ",", 1);
		first = 0;
		TK_GROW(o->scratch, o->scap, 3 * kl + 1 + 6 * 3 * kl + 3);
		tk_utf8_repair(o->scratch, key);
		char *quoted = o->scratch + 3 * kl + 1;
		put(o, quoted, tk_json_quote(quoted, o->scratch));
		puts_(o, ims[m] ? ":true" : ":false");
		free(key);
	}
	puts_(o, "},\"stacks\":[");
	tk_symbol_result r;
	for (size_t si = 0; si < json_array_size(stacks); si++) {
		json_t *st = json_array_get(stacks, si);
		size_t nf = json_array_size(st), nnamed = 0;
		named *nm = tk_xmalloc((nf ? nf : 1) * sizeof *nm);
		uint64_t *base = tk_xcalloc(nf ? nf : 1, sizeof *base);
		/* pass 1: which function each address is in, for its function_offset. The profiler merges
		 * frames into one function by (library, address - function_offset), and the symbol cache
		 * keeps line ranges, not function starts: a function's base is its lowest requested address
		 * in this stack. Names are hashed, not kept: looking an image up may unmap another's. */
		for (size_t f = 0; f < nf; f++) {
			json_t *fr = json_array_get(st, f);
			json_int_t mi = json_integer_value(json_array_get(fr, 0));
			json_int_t off = json_integer_value(json_array_get(fr, 1));
			if (mi >= 0 && (size_t)mi < nmod && lookup(ims[mi], off, &r))
				nm[nnamed++] =
				    (named){name_hash(r.frames[r.nframes - 1].function), (uint64_t)off, mi, f};
		}
		qsort(nm, nnamed, sizeof *nm, cmp_named);
		for (size_t k = 0; k < nnamed;) {
			size_t e = k + 1;
			while (e < nnamed && nm[e].module == nm[k].module && nm[e].hash == nm[k].hash)
				e++;
			for (size_t q = k; q < e; q++)
				base[nm[q].frame] = nm[q].off - nm[k].off;
			k = e;
		}
		free(nm);
		/* pass 2: the answer, a frame at a time */
		put(o, si ? ",[" : "[", si ? 2 : 1);
		for (size_t f = 0; f < nf; f++) {
			json_t *fr = json_array_get(st, f);
			json_int_t mi = json_integer_value(json_array_get(fr, 0));
			json_int_t off = json_integer_value(json_array_get(fr, 1));
			int known = mi >= 0 && (size_t)mi < nmod;
			const char *modname =
			    known ? json_string_value(json_array_get(json_array_get(mm, mi), 0)) : NULL;
			put_fmt(o, f ? ",{\"frame\":%llu" : "{\"frame\":%llu", (unsigned long long)f);
			put_fmt(o, ",\"module_offset\":\"0x%llx\"", (unsigned long long)off);
			put(o, ",", 1);
			put_str(o, "module", modname ? modname : "");
			if (known && lookup(ims[mi], off, &r)) {
				const tk_symbol_frame *outer = &r.frames[r.nframes - 1];
				put(o, ",", 1);
				put_str(o, "function", outer->function);
				put_fmt(o, ",\"function_offset\":\"0x%llx\"", (unsigned long long)base[f]);
				if (outer->file) {
					put(o, ",", 1);
					put_str(o, "file", outer->file);
				}
				if (outer->line)
					put_fmt(o, ",\"line\":%llu", outer->line);
				if (r.nframes > 1) {
					puts_(o, ",\"inlines\":[");
					for (size_t k = 0; k + 1 < r.nframes; k++) {
						put(o, k ? ",{" : "{", k ? 2 : 1);
						put_str(o, "function", r.frames[k].function);
						if (r.frames[k].file) {
							put(o, ",", 1);
							put_str(o, "file", r.frames[k].file);
						}
						if (r.frames[k].line)
							put_fmt(o, ",\"line\":%llu", r.frames[k].line);
						put(o, "}", 1);
					}
					put(o, "]", 1);
				}
			}
			put(o, "}", 1);
			if (o->n > o->max) { /* long module names repeat in every frame */
				free(base);
				free(ims);
				return 1;
			}
		}
		put(o, "]", 1);
		free(base);
	}
	puts_(o, "]}");
	free(ims);
	return 0;
}

int tk_symbolicate_v5(tk_symbolicator *s, const void *request, size_t n, const tk_symbolicate_v5_limits *lim,
                      char **response, size_t *response_n, tk_error *err)
{
	*response = NULL;
	*response_n = 0;
	size_t max_request = lim && lim->max_request ? lim->max_request : TK_SYMBOLICATE_V5_MAX_REQUEST;
	size_t max_arrays = lim && lim->max_arrays ? lim->max_arrays : TK_SYMBOLICATE_V5_MAX_ARRAYS;
	if (n > max_request) {
		tk_error_set(err, "symbolication request of %zu bytes: the limit is %zu", n, max_request);
		return 1;
	}
	/* Every frame, stack and module is a JSON array: counting '[' bounds the parsed request (and the
	 * answer) before jansson builds it. Brackets inside strings count too, which only errs low. */
	size_t arrays = 0;
	for (const char *p = request, *end = p + n; (p = memchr(p, '[', (size_t)(end - p))) != NULL; p++)
		arrays++;
	if (arrays > max_arrays) {
		tk_error_set(err, "symbolication request with %zu frames, stacks and modules: the limit is %zu", arrays,
		             max_arrays);
		return 1;
	}
	json_error_t jerr;
	json_t *req = json_loadb(request, n, 0, &jerr);
	json_t *jobs = req ? json_object_get(req, "jobs") : NULL;
	if (!json_is_array(jobs)) {
		json_decref(req);
		tk_error_set(err, "expected a /symbolicate/v5 JSON request ({\"jobs\":[…]})%s%s", req ? "" : ": ",
		             req ? "" : jerr.text);
		return -1;
	}
	out o = {.max = lim && lim->max_response ? lim->max_response : TK_SYMBOLICATE_V5_MAX_RESPONSE};
	puts_(&o, "{\"results\":[");
	for (size_t i = 0; i < json_array_size(jobs); i++) {
		if (i)
			put(&o, ",", 1);
		int rc = job(s, json_array_get(jobs, i), &o);
		if (rc) {
			free(o.b);
			free(o.scratch);
			json_decref(req);
			if (rc > 0)
				tk_error_set(err, "the answer to this symbolication request would pass %zu bytes",
				             o.max);
			else
				tk_error_set(err, "job %zu: expected {\"memoryMap\":[…], \"stacks\":[…]}", i);
			return rc;
		}
	}
	puts_(&o, "]}");
	free(o.scratch);
	json_decref(req);
	*response = o.b;
	*response_n = o.n;
	return 0;
}
