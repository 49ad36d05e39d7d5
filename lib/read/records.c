/*
 * Records files (MTHawkeye's `collection,key,value` lines, also written by libtracekit-monitor):
 * CPU high-load and hang records with their proportion trees, into the profile model.
 * The format and its quirks are described in include/tracekit/records.h and
 * docs/records-format.md; MTHawkeye's own reading rules are followed where they matter
 * (.mtlog before .mmap2, the .mmap2 cut at its first NUL or CR, last line wins).
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tracekit/read.h"
#include "read/records.h"
#include "util/hidx.h"
#include "util/mem.h"

/* CFAbsoluteTime counts from 2001-01-01 00:00:00 UTC. */
#define CF_EPOCH_UNIX 978307200.0

/* One stored line (the last one for its collection and key). */
typedef struct entry {
	char *coll, *key, *value;
	size_t vlen;
	uint32_t file, line;
	uint32_t voff; /* column (0-based) where the value starts, for JSON error columns */
} entry;

/* A hang's thread at detection, from hang_fast (the common shape, without jansson). */
typedef struct hthread {
	double tid;
	char *name; /* NULL when the object has none */
	uint64_t *frames;
	size_t nframes;
} hthread;

typedef struct rec {
	tk_record_info info;
	json_t *meta; /* cpu-highload / hang object, anr first chunk; may be NULL */
	hthread *ths; /* a hang read by hang_fast: its "threads" (meta is NULL then) */
	size_t nths;
	char *tree_src; /* the tree's JSON text, validated; NULL if none (or when flat holds it) */
	size_t tree_len;
	struct fnode *flat; /* a tree of the fast shape, checked and kept as its pre-order nodes */
	size_t nflat;
	int has_flat;
	json_t *stacks; /* anr: all snapshots, chunks merged in index order */
	char *key, *thread, *where;
	char *images; /* a hang read by hang_fast: its "images" (its run's images file), else NULL */
	int set;      /* index of its run's own images file in tk_records.sets, -1 = the session's */
} rec;

typedef struct seg {
	uint64_t lo, hi;
	uint32_t image;
} seg;

typedef struct segvec {
	seg *v;
	size_t n, cap;
} segvec;

/* One run's own images file (images-<pid>-<µs>.json), named by the records of that run so that a
 * session directory reused by several runs resolves each record with its own load addresses. */
typedef struct imgset {
	char *name;
	segvec segs;
	long long pid; /* -1 if unknown */
} imgset;

typedef struct image {
	char *path, *build_id, *uuid;
	uint64_t base;
	int dyld; /* from MTHawkeye dyld-images: no sizes, symbolicated later from dSYMs */
} image;

struct tk_records {
	char **files;
	size_t nfiles, capfiles;
	entry *ents;
	size_t nents, capents;
	tk_hidx index;
	rec *recs;
	size_t nrecs, caprecs;
	image *images;
	size_t nimages, capimages;
	segvec segs;  /* the session's images (images.json, dyld-images, tk_records_load_images) */
	segvec *cur;  /* where add_seg adds: &segs, or a run's set while it is being loaded */
	imgset *sets; /* per-run images files, loaded with the session */
	size_t nsets, capsets;
	entry *fgs; /* the runs' foreground lines (taken from ents, which build frees) */
	size_t nfgs, capfgs;
	char **launches; /* every launch-time value, in file order (records point at their run's) */
	size_t nlaunches, caplaunches;
	char *meta_kv[16][2];
	size_t nmeta;
	char **warnings;
	size_t nwarnings, capwarnings;
	int mthawkeye;
	char *arch;
	/* while tk_records_load_all fills bin_p: each image's binary there (0: not added yet), and
	 * whether the image list was given (interning an image's four strings per record was ~5 % of
	 * ingesting a session; tk_binary_add and tk_profile_image_add would give the same answers) */
	tk_profile *bin_p;
	tk_binary_id *bin_ids;
	int listed;
};

/* ---- small helpers ---- */

static void set_meta(tk_records *r, const char *k, const char *v)
{
	for (size_t i = 0; i < r->nmeta; i++)
		if (strcmp(r->meta_kv[i][0], k) == 0) {
			free(r->meta_kv[i][1]);
			r->meta_kv[i][1] = tk_xstrdup(v);
			return;
		}
	if (r->nmeta < sizeof r->meta_kv / sizeof r->meta_kv[0]) {
		r->meta_kv[r->nmeta][0] = tk_xstrdup(k);
		r->meta_kv[r->nmeta][1] = tk_xstrdup(v);
		r->nmeta++;
	}
}

const char *tk_records_meta(const tk_records *r, const char *key)
{
	for (size_t i = 0; i < r->nmeta; i++)
		if (strcmp(r->meta_kv[i][0], key) == 0)
			return r->meta_kv[i][1];
	return NULL;
}

size_t tk_records_warning_count(const tk_records *r)
{
	return r->nwarnings;
}

const char *tk_records_warning(const tk_records *r, size_t i)
{
	return i < r->nwarnings ? r->warnings[i] : NULL;
}

/* Parse "0x1a2b" (the 0x is optional) fully; 0 on success. */
static int parse_hex(const char *s, size_t n, uint64_t *out)
{
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (n == 0 || n > 16)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* A leading number in a string ("132.60", "132.60 s", "106.00 percent of one core") or a JSON
 * number. Returns 0 and sets *out, 1 if absent (or null), -1 if present but not a number. */
static int get_num(json_t *obj, const char *name, double *out)
{
	json_t *v = json_object_get(obj, name);
	if (!v || json_is_null(v))
		return 1;
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return isfinite(*out) ? 0 : -1;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		errno = 0;
		double d = strtod(s, &end);
		if (end == s || errno || !isfinite(d))
			return -1;
		while (*end == ' ')
			end++;
		/* Allow a unit word after the number, nothing that looks like more digits. */
		if (*end && !isalpha((unsigned char)*end) && *end != '%')
			return -1;
		*out = d;
		return 0;
	}
	return -1;
}

static int get_bool(json_t *obj, const char *name)
{
	json_t *v = json_object_get(obj, name);
	return v && json_is_true(v);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* ---- the line table ---- */

typedef struct ekey {
	const char *coll, *key;
} ekey;

static uint64_t ent_hash(const char *coll, const char *key)
{
	return tk_hash_bytes(key, strlen(key), tk_hash_bytes(coll, strlen(coll), 7));
}

static int ent_eq(const void *ctx, uint32_t idx, const void *k)
{
	const tk_records *r = ctx;
	const ekey *e = k;
	return strcmp(r->ents[idx].coll, e->coll) == 0 && strcmp(r->ents[idx].key, e->key) == 0;
}

static entry *find_ent(const tk_records *r, const char *coll, const char *key)
{
	ekey k = {coll, key};
	uint32_t i = tk_hidx_find(&r->index, ent_hash(coll, key), ent_eq, r, &k);
	return i == UINT32_MAX ? NULL : &r->ents[i];
}

static void put_ent(tk_records *r, const char *coll, size_t clen, const char *key, size_t klen, const char *value,
                    size_t vlen, uint32_t file, uint32_t line, uint32_t voff)
{
	char *c = tk_xstrndup(coll, clen), *k = tk_xstrndup(key, klen);
	entry *e = find_ent(r, c, k);
	if (e) { /* the living record is rewritten while it lasts: the last line wins */
		free(c);
		free(k);
		free(e->value);
	} else {
		TK_GROW(r->ents, r->capents, r->nents + 1);
		e = &r->ents[r->nents];
		e->coll = c;
		e->key = k;
		tk_hidx_insert(&r->index, ent_hash(c, k), (uint32_t)r->nents);
		r->nents++;
	}
	e->value = tk_xstrndup(value, vlen);
	e->vlen = vlen;
	e->file = file;
	e->line = line;
	e->voff = voff;
}

static const char *const wanted[] = {"cpu-highload", "cpu-highload-stackframe", "hang",      "hang-stackframe", "anr",
                                     "launch-time",  "monitor-event",           "foreground"};

static int is_wanted(const char *c, size_t n)
{
	for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
		if (strlen(wanted[i]) == n && memcmp(wanted[i], c, n) == 0)
			return 1;
	return 0;
}

static uint32_t add_file(tk_records *r, const char *name)
{
	TK_GROW(r->files, r->capfiles, r->nfiles + 1);
	r->files[r->nfiles] = tk_xstrdup(name);
	return (uint32_t)r->nfiles++;
}

/* Split data into lines and store the ones we understand. */
static int parse_lines(tk_records *r, const char *data, size_t n, const char *name, tk_error *err)
{
	uint32_t file = add_file(r, name);
	size_t pos = 0;
	uint32_t lineno = 0;
	while (pos < n) {
		lineno++;
		const char *line = data + pos;
		const char *nl = memchr(line, '\n', n - pos);
		if (!nl)
			return tk_error_set(err, "%s:%u: truncated line (no newline at the end of the file)", name,
			                    lineno);
		size_t len = (size_t)(nl - line);
		pos += len + 1;
		if (len && line[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		if (memchr(line, '\0', len))
			return tk_error_set(err, "%s:%u: NUL byte inside a line: not a Records file", name, lineno);
		const char *c1 = memchr(line, ',', len);
		const char *c2 = c1 ? memchr(c1 + 1, ',', len - (size_t)(c1 + 1 - line)) : NULL;
		if (!c2)
			return tk_error_set(err, "%s:%u: expected collection,key,value", name, lineno);
		size_t clen = (size_t)(c1 - line), klen = (size_t)(c2 - c1 - 1);
		if (clen == 0 || klen == 0)
			return tk_error_set(err, "%s:%u: empty %s in collection,key,value", name, lineno,
			                    clen == 0 ? "collection" : "key");
		if (!is_wanted(line, clen))
			continue;
		const char *v = c2 + 1;
		put_ent(r, line, clen, c1 + 1, klen, v, (size_t)(line + len - v), file, lineno, (uint32_t)(v - line));
	}
	return 0;
}

/* MTHawkeye writes trees of 15 KiB and more to cpu-highload-stackframe-ext as `key,json` parts
 * separated by U+00B7 (and then cannot read them back). We can. */
static int parse_ext(tk_records *r, const char *data, size_t n, const char *name, tk_error *err)
{
	uint32_t file = add_file(r, name);
	size_t pos = 0;
	uint32_t part = 0;
	while (pos < n) {
		part++;
		const char *s = data + pos, *end = data + n;
		for (const char *q = s; q + 1 < data + n; q++)
			if ((unsigned char)q[0] == 0xC2 && (unsigned char)q[1] == 0xB7) {
				end = q;
				break;
			}
		size_t len = (size_t)(end - s);
		pos += len + (end < data + n ? 2 : 0);
		while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		const char *c = memchr(s, ',', len);
		if (!c || c == s)
			return tk_error_set(err, "%s: part %u: expected key,json", name, part);
		/* read before the Records lines, so a line for the same key still wins */
		put_ent(r, "cpu-highload-stackframe", strlen("cpu-highload-stackframe"), s, (size_t)(c - s), c + 1,
		        (size_t)(s + len - c - 1), file, part, (uint32_t)(c + 1 - s));
	}
	return 0;
}

/* ---- files ---- */

/* The whole (gunzipped, if need be) file in memory. */
static char *slurp(const char *path, size_t *n, tk_error *err)
{
	tk_input *in = tk_input_open(path, err);
	if (!in)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *buf = tk_xmalloc(cap);
	for (;;) {
		if (len == cap)
			buf = tk_xrealloc(buf, cap *= 2);
		ptrdiff_t got = tk_input_read(in, buf + len, cap - len, err);
		if (got < 0) {
			free(buf);
			tk_input_close(in);
			return NULL;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	tk_input_close(in);
	*n = len;
	return buf;
}

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *s = tk_xmalloc(a + b + 2);
	memcpy(s, dir, a);
	s[a] = '/';
	memcpy(s + a + 1, name, b + 1);
	return s;
}

static int read_file(tk_records *r, const char *path, int mmap2, int ext, tk_error *err)
{
	size_t n;
	char *data = slurp(path, &n, err);
	if (!data)
		return -1;
	if (mmap2) { /* MTHawkeye's reader: an unused buffer starts with NUL; the text ends at the first NUL or CR */
		size_t cut = 0;
		while (cut < n && data[cut] != '\0' && data[cut] != '\r')
			cut++;
		n = cut;
	}
	int rc = ext ? parse_ext(r, data, n, path, err) : parse_lines(r, data, n, path, err);
	free(data);
	return rc;
}

/* ---- images ---- */

static int seg_cmp(const void *a, const void *b)
{
	const seg *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static const image *image_of(const tk_records *r, const segvec *sv, uint64_t addr)
{
	size_t lo = 0, hi = sv->n;
	while (lo < hi) { /* last segment with seg.lo <= addr */
		size_t mid = (lo + hi) / 2;
		if (sv->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= sv->v[lo - 1].hi)
		return NULL;
	return &r->images[sv->v[lo - 1].image];
}

/* The binary a frame of image im carries: ELF images by build-id, dyld images by UUID. */
static void image_binary(const tk_records *r, tk_profile *p, const image *im, tk_binary *b)
{
	*b = (tk_binary){.name = tk_intern_cstr(p, base_name(im->path)),
	                 .path = tk_intern_cstr(p, im->path),
	                 .uuid = tk_intern_cstr(p, im->dyld ? im->uuid : im->build_id),
	                 .arch = tk_intern_cstr(p, r->arch),
	                 .load_addr = im->base};
}

static int hex_field(json_t *o, const char *name, uint64_t *out, int required)
{
	json_t *v = json_object_get(o, name);
	if (!v)
		return required ? -1 : 0;
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return -1;
	return parse_hex(json_string_value(v), json_string_length(v), out);
}

static void add_image(tk_records *r, const char *path, const char *build_id, const char *uuid, uint64_t base, int dyld)
{
	TK_GROW(r->images, r->capimages, r->nimages + 1);
	image *im = &r->images[r->nimages++];
	memset(im, 0, sizeof *im);
	im->path = tk_xstrdup(path ? path : "");
	im->build_id = build_id ? tk_xstrdup(build_id) : NULL;
	im->uuid = uuid ? tk_xstrdup(uuid) : NULL;
	im->base = base;
	im->dyld = dyld;
}

static void add_seg(tk_records *r, uint64_t lo, uint64_t hi)
{
	segvec *sv = r->cur ? r->cur : &r->segs;
	TK_GROW(sv->v, sv->cap, sv->n + 1);
	sv->v[sv->n++] = (seg){lo, hi, (uint32_t)(r->nimages - 1)};
}

/* A JSON file, or its content when data is not NULL (path then only names it). */
static int json_file(const char *path, const void *data, size_t n, json_t **out, tk_error *err)
{
	json_error_t je;
	char *own = NULL;
	if (!data && !(data = own = slurp(path, &n, err)))
		return -1;
	*out = json_loadb(data, n, 0, &je);
	free(own);
	if (!*out)
		return tk_error_set(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
	return 0;
}

/* An images file (or its content: data, n): a JSON object whose KEY holds the image array (ours:
 * "images", MTHawkeye's: "dyld_images"). On success the caller owns *root and *imgs points into it. */
static int images_file(const char *path, const void *data, size_t n, const char *key, json_t **root, json_t **imgs,
                       tk_error *err)
{
	if (json_file(path, data, n, root, err))
		return -1;
	*imgs = json_object_get(*root, key);
	if (!json_is_object(*root) || !json_is_array(*imgs)) {
		json_decref(*root);
		return tk_error_set(err, "%s: expected a JSON object with the \"%s\" array", path, key);
	}
	return 0;
}

/* Our images.json (docs/records-format.md). */
static int load_images_json(tk_records *r, const char *path, const void *data, size_t n, tk_error *err)
{
	json_t *root, *imgs;
	if (images_file(path, data, n, "images", &root, &imgs, err))
		return -1;
	const char *os = json_string_value(json_object_get(root, "os"));
	const char *arch = json_string_value(json_object_get(root, "arch"));
	json_t *pid = json_object_get(root, "pid");
	segvec *sv = r->cur ? r->cur : &r->segs;
	int session = sv == &r->segs; /* a run's own file leaves the session's facts alone */
	if (!session) {
		r->sets[r->nsets - 1].pid = json_is_integer(pid) ? (long long)json_integer_value(pid) : -1;
		if (!r->arch && arch)
			r->arch = tk_xstrdup(arch);
		os = arch = NULL;
		pid = NULL;
	}
	if (os)
		set_meta(r, "os", os);
	if (arch) {
		set_meta(r, "arch", arch);
		free(r->arch);
		r->arch = tk_xstrdup(arch);
	}
	if (json_is_integer(pid)) {
		char buf[32];
		snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(pid));
		set_meta(r, "pid", buf);
	}
	size_t i;
	json_t *im;
	json_array_foreach(imgs, i, im)
	{
		uint64_t base = 0;
		const char *p = json_string_value(json_object_get(im, "path"));
		json_t *loads = json_object_get(im, "loads");
		if (!json_is_object(im) || !p || hex_field(im, "base", &base, 1) || !json_is_array(loads)) {
			json_decref(root);
			return tk_error_set(err, "%s: images[%zu]: expected path, base (hex) and loads", path, i);
		}
		add_image(r, p, json_string_value(json_object_get(im, "build_id")), NULL, base, 0);
		if (i == 0 && session) /* dl_iterate_phdr lists the executable first */
			set_meta(r, "process", base_name(p));
		size_t j;
		json_t *ld;
		json_array_foreach(loads, j, ld)
		{
			uint64_t vaddr = 0, memsz = 0;
			if (hex_field(ld, "vaddr", &vaddr, 1) || hex_field(ld, "memsz", &memsz, 1)) {
				json_decref(root);
				return tk_error_set(err, "%s: images[%zu].loads[%zu]: expected vaddr and memsz (hex)",
				                    path, i, j);
			}
			if (memsz && base + vaddr >= base && base + vaddr + memsz > base + vaddr)
				add_seg(r, base + vaddr, base + vaddr + memsz);
		}
	}
	json_decref(root);
	if (sv->n)
		qsort(sv->v, sv->n, sizeof *sv->v, seg_cmp);
	if (session)
		set_meta(r, "images", path);
	return 0;
}

/* MTHawkeye's dyld-images: mach header addresses and UUIDs, no sizes. An image is taken to run
 * up to the next image's header; the symbolicator checks against the dSYM's own extent. */
static int load_dyld_images(tk_records *r, const char *path, tk_error *err)
{
	json_t *root, *imgs;
	if (images_file(path, NULL, 0, "dyld_images", &root, &imgs, err))
		return -1;
	const char *os = json_string_value(json_object_get(root, "os_version"));
	const char *app = json_string_value(json_object_get(root, "name"));
	if (app && *app)
		set_meta(r, "process", app);
	const char *arch = json_string_value(json_object_get(root, "arch"));
	if (os)
		set_meta(r, "os", os);
	if (arch) {
		set_meta(r, "arch", arch);
		free(r->arch);
		/* "arm64 v8" → "arm64": the first word is the architecture name */
		r->arch = tk_xstrndup(arch, strcspn(arch, " "));
	}
	segvec *sv = &r->segs;
	size_t first = sv->n, i;
	json_t *im;
	json_array_foreach(imgs, i, im)
	{
		uint64_t base = 0;
		const char *name = json_string_value(json_object_get(im, "name"));
		const char *uuid = json_string_value(json_object_get(im, "uuid"));
		if (!json_is_object(im) || hex_field(im, "base_addr", &base, 1)) {
			json_decref(root);
			return tk_error_set(err, "%s: dyld_images[%zu]: expected base_addr (hex)", path, i);
		}
		/* 32 hex digits → the UUID form binaries carry elsewhere in the model (upper case, dashes) */
		char ufmt[40] = "";
		if (uuid && strlen(uuid) == 32) {
			size_t k = 0;
			for (size_t j = 0; j < 32; j++) {
				if (j == 8 || j == 12 || j == 16 || j == 20)
					ufmt[k++] = '-';
				ufmt[k++] = (char)toupper((unsigned char)uuid[j]);
			}
			ufmt[k] = 0;
		}
		add_image(r, name, NULL, *ufmt ? ufmt : uuid, base, 1);
		add_seg(r, base, UINT64_MAX);
	}
	json_decref(root);
	if (sv->n > first)
		qsort(sv->v + first, sv->n - first, sizeof *sv->v, seg_cmp);
	for (size_t k = first; k + 1 < sv->n; k++)
		sv->v[k].hi = sv->v[k + 1].lo;
	set_meta(r, "images", path);
	return 0;
}

int tk_records_load_images(tk_records *r, const char *path, tk_error *err)
{
	const char *b = base_name(path);
	if (strcmp(b, "dyld-images") == 0)
		return load_dyld_images(r, path, err);
	return load_images_json(r, path, NULL, 0, err);
}

/* ---- building records from the lines ---- */

static int json_value(const tk_records *r, const entry *e, json_t **out, tk_error *err)
{
	json_error_t je;
	*out = json_loadb(e->value, e->vlen, 0, &je);
	if (*out)
		return 0;
	const char *hint = "";
	if (strstr(e->value, " = ") && strchr(e->value, ';'))
		hint = " (this looks like an NSDictionary description, not JSON)";
	else if (strstr(e->value, "//"))
		hint = " (comments are not JSON)";
	return tk_error_set(err, "%s:%u:%u: %s value for key %s is not valid JSON: %s%s", r->files[e->file], e->line,
	                    e->voff + (je.column > 0 ? (unsigned)je.column : 1), e->coll, e->key, je.text, hint);
}

static char *where_of(const tk_records *r, const entry *e)
{
	char buf[600];
	snprintf(buf, sizeof buf, "%s:%u", r->files[e->file], e->line);
	return tk_xstrdup(buf);
}

/* Validate one proportion-tree node and its subtree; *count gets its count. Nesting is bounded
 * by jansson's parser depth (2048), so plain recursion is safe. */
static int check_node(const tk_records *r, const entry *e, json_t *node, int depth, uint64_t *count, tk_error *err)
{
	const char *where = r->files[e->file];
	json_t *fr = json_object_get(node, "frame"), *cn = json_object_get(node, "count"),
	       *ch = json_object_get(node, "children");
	uint64_t addr;
	if (!json_is_object(node))
		return tk_error_set(err, "%s:%u: %s %s: a tree node (depth %d) is not an object", where, e->line,
		                    e->coll, e->key, depth);
	if (!json_is_string(fr) || parse_hex(json_string_value(fr), json_string_length(fr), &addr))
		return tk_error_set(err, "%s:%u: %s %s: node at depth %d has no hex \"frame\" address", where, e->line,
		                    e->coll, e->key, depth);
	double c = json_is_number(cn) ? json_number_value(cn) : -1;
	if (!(c >= 0 && c <= 4e18 && c == floor(c)))
		return tk_error_set(err, "%s:%u: %s %s: node %s has no count (a whole number >= 0)", where, e->line,
		                    e->coll, e->key, json_string_value(fr));
	*count = (uint64_t)c;
	if (ch && !json_is_null(ch)) {
		if (!json_is_array(ch))
			return tk_error_set(err, "%s:%u: %s %s: node %s: \"children\" is not an array", where, e->line,
			                    e->coll, e->key, json_string_value(fr));
		uint64_t sum = 0, sub;
		size_t i;
		json_t *k;
		json_array_foreach(ch, i, k)
		{
			if (check_node(r, e, k, depth + 1, &sub, err))
				return -1;
			sum += sub;
		}
		if (sum > *count)
			return tk_error_set(err,
			                    "%s:%u: %s %s: counts do not add up: node %s counts %llu samples but its "
			                    "children count %llu",
			                    where, e->line, e->coll, e->key, json_string_value(fr),
			                    (unsigned long long)*count, (unsigned long long)sum);
	}
	return 0;
}

static int check_tree(const tk_records *r, const entry *e, json_t *tree, uint64_t *total, tk_error *err)
{
	if (!json_is_array(tree))
		return tk_error_set(err, "%s:%u: %s %s: expected a JSON array of tree nodes", r->files[e->file],
		                    e->line, e->coll, e->key);
	*total = 0;
	size_t i;
	json_t *n;
	json_array_foreach(tree, i, n)
	{
		uint64_t c;
		if (check_node(r, e, n, 1, &c, err))
			return -1;
		*total += c;
	}
	return 0;
}

static rec *new_rec(tk_records *r, tk_record_kind kind, const char *key)
{
	TK_GROW(r->recs, r->caprecs, r->nrecs + 1);
	rec *x = &r->recs[r->nrecs++];
	memset(x, 0, sizeof *x);
	x->set = -1;
	x->info.kind = kind;
	x->info.kind_name = kind == TK_RECORD_CPU ? "cpu-highload" : kind == TK_RECORD_HANG ? "hang" : "anr";
	x->key = tk_xstrdup(key);
	x->info.key = x->key;
	x->info.duration = NAN;
	x->info.avg_cpu = NAN;
	x->info.thread = "";
	x->info.run_pid = -1;
	return x;
}

static int parse_start_key(const char *key, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(key, &end);
	return end == key || errno || !isfinite(*out) ? -1 : 0;
}

static int field_error(const tk_records *r, const entry *e, const char *field, tk_error *err)
{
	return tk_error_set(err, "%s:%u: %s %s: \"%s\" is not a number", r->files[e->file], e->line, e->coll, e->key,
	                    field);
}

/* ---- a fast path for well-formed proportion trees ----
 * Checking a tree with jansson builds a DOM (a hash table per node) only to look at three fields:
 * most of the CPU of ingesting a hang report. tree_fast checks the common shape directly: nodes are
 * objects with the keys frame (a plain ASCII string), count (digits), proportion (a plain decimal)
 * and children (an array or null), each at most once, JSON whitespace between tokens. It accepts
 * only text jansson accepts and computes what check_tree would; anything else (escapes, other keys
 * or value types, exponents, signs, long numbers, deep nesting, any error) returns "not sure" and
 * the jansson path decides, with its error messages. So validation stays complete. */
typedef struct fast {
	const char *p, *end;
} fast;

static void fast_ws(fast *f)
{
	while (f->p < f->end && (*f->p == ' ' || *f->p == '\t' || *f->p == '\n' || *f->p == '\r'))
		f->p++;
}

/* The bytes of a plain string: printable ASCII but quote and backslash (a table: one load and one
 * test a byte, where three comparisons were the most frequent work of reading a tree). */
static const unsigned char plain_byte[256] = {[0x20] = 1, [0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7e] = 1};

/* A plain string: printable ASCII without quote or backslash. */
static int fast_str(fast *f, const char **s, size_t *n)
{
	if (f->p >= f->end || *f->p != '"')
		return 0;
	const char *a = ++f->p;
	while (f->p < f->end && plain_byte[(unsigned char)*f->p])
		f->p++;
	if (f->p >= f->end || *f->p != '"')
		return 0;
	*s = a;
	*n = (size_t)(f->p++ - a);
	return 1;
}

/* Digits (no leading zero unless alone, at most 18: a JSON integer jansson holds), optionally
 * a fraction when frac is allowed. *v gets the integer part. */
static int fast_num(fast *f, int frac, uint64_t *v)
{
	const char *a = f->p;
	uint64_t x = 0;
	while (f->p < f->end && *f->p >= '0' && *f->p <= '9')
		x = x * 10 + (uint64_t)(*f->p++ - '0');
	size_t nd = (size_t)(f->p - a);
	if (nd == 0 || nd > 18 || (nd > 1 && *a == '0'))
		return 0;
	if (f->p < f->end && *f->p == '.') {
		if (!frac)
			return 0;
		const char *b = ++f->p;
		while (f->p < f->end && *f->p >= '0' && *f->p <= '9')
			f->p++;
		if (f->p == b || f->p - b > 17)
			return 0;
	}
	if (f->p < f->end && (*f->p == 'e' || *f->p == 'E' || *f->p == '-' || *f->p == '+'))
		return 0;
	*v = x;
	return 1;
}

/* After a member: 1 at ',' (more follow), 2 at the closing bracket, 0 otherwise. */
static int fast_next(fast *f, char close)
{
	fast_ws(f);
	if (f->p >= f->end)
		return 0;
	char c = *f->p++;
	return c == ',' ? 1 : c == close ? 2 : 0;
}

/* A flat list of nodes in pre-order (address, count, parent, children's counts): what a tree kept by
 * keep_tree becomes when it is loaded into a profile (below), instead of a jansson document. */
typedef struct fnode {
	uint64_t addr, count, kids;
	uint32_t parent; /* index + 1; 0 for a root */
} fnode;

typedef struct fnodes {
	fnode *v;
	size_t n, cap;
} fnodes;

static int fast_nodes(fast *f, int depth, uint32_t parent, fnodes *out, uint64_t *sum);

/* One node "{frame, count, proportion?, children?}": *count gets its count. With out, the node and
 * its subtree are appended in pre-order (parent = the index + 1 of the node above, 0 for a root);
 * without, the tree is only checked. */
static int fast_node(fast *f, int depth, uint32_t parent, fnodes *out, uint64_t *count)
{
	if (f->p >= f->end || *f->p != '{')
		return 0;
	f->p++;
	size_t me = 0;
	if (out) {
		TK_GROW(out->v, out->cap, out->n + 1);
		me = out->n++;
		out->v[me] = (fnode){0, 0, 0, parent};
	}
	int seen = 0; /* bits: frame, count, proportion, children */
	uint64_t c = 0, kids = 0, addr = 0, ignored;
	fast_ws(f);
	if (f->p < f->end && *f->p == '}')
		return 0; /* no frame: an error jansson's path words */
	for (;;) {
		const char *k, *v;
		size_t kn, vn;
		fast_ws(f);
		if (!fast_str(f, &k, &kn))
			return 0;
		fast_ws(f);
		if (f->p >= f->end || *f->p++ != ':')
			return 0;
		fast_ws(f);
		int bit = kn == 5 && memcmp(k, "frame", 5) == 0          ? 1
		          : kn == 5 && memcmp(k, "count", 5) == 0        ? 2
		          : kn == 10 && memcmp(k, "proportion", 10) == 0 ? 4
		          : kn == 8 && memcmp(k, "children", 8) == 0     ? 8
		                                                         : 0;
		if (!bit || (seen & bit))
			return 0;
		seen |= bit;
		if (bit == 1) {
			if (!fast_str(f, &v, &vn) || parse_hex(v, vn, &addr))
				return 0;
		} else if (bit == 2) {
			if (!fast_num(f, 0, &c))
				return 0;
		} else if (bit == 4) {
			if (!fast_num(f, 1, &ignored))
				return 0;
		} else if (f->end - f->p >= 4 && memcmp(f->p, "null", 4) == 0) {
			f->p += 4;
		} else if (!fast_nodes(f, depth + 1, (uint32_t)me + 1, out, &kids)) {
			return 0;
		}
		int m = fast_next(f, '}');
		if (!m)
			return 0;
		if (m == 2)
			break;
	}
	if (!(seen & 1) || !(seen & 2) || kids > c)
		return 0;
	if (out) {
		out->v[me].addr = addr;
		out->v[me].count = c;
		out->v[me].kids = kids;
	}
	*count = c;
	return 1;
}

/* "[node, …]": *sum gets the nodes' counts added up. */
static int fast_nodes(fast *f, int depth, uint32_t parent, fnodes *out, uint64_t *sum)
{
	if (depth > 512 || f->p >= f->end || *f->p != '[')
		return 0;
	f->p++;
	*sum = 0;
	fast_ws(f);
	if (f->p < f->end && *f->p == ']') {
		f->p++;
		return 1;
	}
	for (;;) {
		uint64_t c;
		fast_ws(f);
		if (!fast_node(f, depth, parent, out, &c))
			return 0;
		*sum += c; /* each count < 10^18; a wrapped sum goes to jansson's path */
		if (*sum < c)
			return 0;
		int m = fast_next(f, ']');
		if (m != 1)
			return m == 2;
	}
}

/* ---- loading a tree without jansson ----
 * A tree of the fast shape is kept by keep_tree as fnodes, loaded in that order, which is the order
 * load_node visits. Anything else keeps its text and is loaded through jansson as before. */

/* The tree's nodes in pre-order and *total its roots' counts, 1 when it has the fast shape (else 0:
 * use jansson). */
static int tree_flat_total(const char *s, size_t n, fnodes *out, uint64_t *total)
{
	fast f = {s, s + n};
	out->n = 0;
	fast_ws(&f);
	if (!fast_nodes(&f, 1, 0, out, total))
		return 0;
	fast_ws(&f);
	return f.p == f.end;
}

static int tree_flat(const char *s, size_t n, fnodes *out)
{
	uint64_t total;
	return tree_flat_total(s, n, out, &total);
}

/* Validate the tree now (so opening reports every error and knows the sample count) but keep only
 * its text: a parsed jansson tree costs ~10× the text, and a session may hold hundreds of trees of
 * thousands of nodes. Loading parses it again. */
static int keep_tree(tk_records *r, rec *x, entry *te, tk_error *err)
{
	/* the fast shape is checked and kept as its nodes in one pass (32 bytes a node, less than its
	 * text): loading reads them, not the text again */
	uint64_t fast_total;
	fnodes fl = {0};
	int fast_ok = tree_flat_total(te->value, te->vlen, &fl, &fast_total);
#ifndef TK_RECORDS_TREE_DIFF
	if (fast_ok) {
		x->info.samples = fast_total;
		x->flat = fl.v;
		x->nflat = fl.n;
		x->has_flat = 1;
		return 0;
	}
#endif
	json_t *tree;
	if (json_value(r, te, &tree, err)) {
#ifdef TK_RECORDS_TREE_DIFF
		if (fast_ok) /* the fuzzer's differential build: the fast path accepted what jansson refuses */
			abort();
#endif
		free(fl.v);
		return -1;
	}
	int rc = check_tree(r, te, tree, &x->info.samples, err);
	json_decref(tree);
#ifdef TK_RECORDS_TREE_DIFF
	if (fast_ok && (rc || x->info.samples != fast_total))
		abort();
	if (fast_ok) { /* then loaded from the nodes, as the plain build does */
		x->flat = fl.v;
		x->nflat = fl.n;
		x->has_flat = 1;
		return 0;
	}
#endif
	free(fl.v);
	if (rc)
		return -1;
	x->tree_src = te->value; /* taken over from the line table */
	x->tree_len = te->vlen;
	te->value = NULL;
	return 0;
}

/* ---- the hang object without jansson ----
 * A hang's own object is parsed once per report, and jansson's document for it cost ~40 % of the
 * instructions of `tracekit ingest` (measured with callgrind: 68 k + 14 k to free, of ~200 k a
 * report). hang_fast reads the shape the monitors write — known keys once each, plain strings,
 * non-negative plain numbers, booleans, threads of {tid, name, frames of hex strings} — into plain
 * fields; anything else (escapes, exponents, other keys, "error" threads, null, bad input) returns 0
 * and jansson decides, errors and all. The fuzzer's build (TK_RECORDS_TREE_DIFF) runs both on every
 * hang and aborts when they disagree. */
typedef struct hang_fields {
	double start, ms, tid, samples, suppressed;
	int has_start, has_ms, has_tid, has_samples, has_suppressed, live, truncated;
	const char *thread, *images;
	size_t thread_len, images_len;
	int has_thread, has_threads, has_images;
	hthread *ths;
	size_t nths;
} hang_fields;

static void hang_fields_free(hang_fields *h)
{
	for (size_t t = 0; t < h->nths; t++) {
		free(h->ths[t].name);
		free(h->ths[t].frames);
	}
	free(h->ths);
	h->ths = NULL;
	h->nths = 0;
}

/* A plain non-negative number as jansson reads it: an integer (≤ 18 digits) exactly, a real
 * through strtod. */
static int fast_double(fast *f, double *out)
{
	const char *a = f->p;
	uint64_t v;
	if (!fast_num(f, 1, &v))
		return 0;
	if (memchr(a, '.', (size_t)(f->p - a))) {
		char buf[48];
		size_t n = (size_t)(f->p - a);
		if (n >= sizeof buf)
			return 0;
		memcpy(buf, a, n);
		buf[n] = 0;
		*out = strtod(buf, NULL);
	} else {
		*out = (double)v;
	}
	return 1;
}

static int fast_lit(fast *f, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(f->end - f->p) < n || memcmp(f->p, lit, n) != 0)
		return 0;
	f->p += n;
	return 1;
}

/* "key": — the key's text in *k, *kn. */
static int fast_key(fast *f, const char **k, size_t *kn)
{
	fast_ws(f);
	if (!fast_str(f, k, kn))
		return 0;
	fast_ws(f);
	if (f->p >= f->end || *f->p++ != ':')
		return 0;
	fast_ws(f);
	return 1;
}

#define KEY_IS(lit) (kn == sizeof lit - 1 && memcmp(k, lit, kn) == 0)

/* A hang's "blocked_in": {"syscall": N (-1 = running in user space), "wchan": "…"}. The reader
 * does not use it; it is only validated, so that Linux hangs (which all carry it) stay on the
 * fast path. */
static int fast_blocked(fast *f)
{
	if (f->p >= f->end || *f->p++ != '{')
		return 0;
	fast_ws(f);
	if (f->p < f->end && *f->p == '}')
		return f->p++, 1;
	int seen = 0;
	for (int more = 1; more == 1;) {
		const char *k, *v;
		size_t kn, vn;
		double d;
		if (!fast_key(f, &k, &kn))
			return 0;
		int bit = KEY_IS("syscall") ? 1 : KEY_IS("wchan") ? 2 : 0;
		if (!bit || (seen & bit))
			return 0;
		seen |= bit;
		if (bit == 1) {
			if (f->p < f->end && *f->p == '-')
				f->p++;
			if (!fast_double(f, &d))
				return 0;
		} else if (!fast_str(f, &v, &vn)) {
			return 0;
		}
		if (!(more = fast_next(f, '}')))
			return 0;
	}
	return 1;
}

static int fast_thread(fast *f, hthread *t)
{
	if (f->p >= f->end || *f->p++ != '{')
		return 0;
	int seen = 0;
	fast_ws(f);
	if (f->p < f->end && *f->p == '}')
		return 0;
	for (int more = 1; more == 1;) {
		const char *k, *v;
		size_t kn, vn;
		if (!fast_key(f, &k, &kn))
			return 0;
		int bit = KEY_IS("tid") ? 1 : KEY_IS("name") ? 2 : KEY_IS("frames") ? 4 : 0;
		if (!bit || (seen & bit))
			return 0;
		seen |= bit;
		if (bit == 1) {
			if (!fast_double(f, &t->tid))
				return 0;
		} else if (bit == 2) {
			if (!fast_str(f, &v, &vn))
				return 0;
			t->name = tk_xstrndup(v, vn);
		} else {
			if (f->p >= f->end || *f->p++ != '[')
				return 0;
			size_t cap = 0;
			fast_ws(f);
			if (f->p < f->end && *f->p == ']') {
				f->p++;
			} else {
				for (int m = 1; m == 1;) {
					uint64_t a;
					fast_ws(f);
					if (!fast_str(f, &v, &vn) || parse_hex(v, vn, &a))
						return 0;
					TK_GROW(t->frames, cap, t->nframes + 1);
					t->frames[t->nframes++] = a;
					if (!(m = fast_next(f, ']')))
						return 0;
				}
			}
		}
		if (!(more = fast_next(f, '}')))
			return 0;
	}
	/* a tid that is a whole number below 2^64 and frames, as check_threads requires */
	return (seen & 5) == 5 && t->tid == (double)(uint64_t)t->tid && t->tid < 18446744073709551616.0;
}

static int hang_fast(const char *s, size_t n, hang_fields *h)
{
	fast f = {s, s + n};
	memset(h, 0, sizeof *h);
	fast_ws(&f);
	if (f.p >= f.end || *f.p++ != '{')
		return 0;
	fast_ws(&f);
	if (f.p < f.end && *f.p == '}')
		return 0;
	unsigned seen = 0;
	for (int more = 1; more == 1;) {
		const char *k;
		size_t kn;
		if (!fast_key(&f, &k, &kn))
			goto no;
		unsigned bit = KEY_IS("start")          ? 1u
		               : KEY_IS("duration_ms")  ? 2u
		               : KEY_IS("threshold_ms") ? 4u
		               : KEY_IS("tid")          ? 8u
		               : KEY_IS("thread")       ? 16u
		               : KEY_IS("samples")      ? 32u
		               : KEY_IS("live")         ? 64u
		               : KEY_IS("suppressed")   ? 128u
		               : KEY_IS("threads")      ? 256u
		               : KEY_IS("truncated")    ? 512u
		               : KEY_IS("images")       ? 1024u
		               : KEY_IS("blocked_in")   ? 2048u
		               : KEY_IS("unsampled")    ? 4096u
		                                        : 0;
		if (!bit || (seen & bit))
			goto no;
		seen |= bit;
		double ignored;
		int ok = 1;
		switch (bit) {
		case 1: ok = h->has_start = fast_double(&f, &h->start); break;
		case 2: ok = h->has_ms = fast_double(&f, &h->ms); break;
		case 4: ok = fast_double(&f, &ignored); break;
		case 8: ok = h->has_tid = fast_double(&f, &h->tid); break;
		case 16: ok = h->has_thread = fast_str(&f, &h->thread, &h->thread_len); break;
		case 32: ok = h->has_samples = fast_double(&f, &h->samples); break;
		case 64:
		case 512: {
			int v = fast_lit(&f, "true");
			ok = v || fast_lit(&f, "false");
			if (bit == 64)
				h->live = v;
			else
				h->truncated = v;
			break;
		}
		case 128: ok = h->has_suppressed = fast_double(&f, &h->suppressed); break;
		case 1024: ok = h->has_images = fast_str(&f, &h->images, &h->images_len); break;
		case 2048: ok = fast_blocked(&f); break;
		case 4096: ok = fast_double(&f, &ignored); break;
		case 256: {
			h->has_threads = 1;
			if (f.p >= f.end || *f.p++ != '[')
				goto no;
			size_t cap = 0;
			fast_ws(&f);
			if (f.p < f.end && *f.p == ']') {
				f.p++;
				break;
			}
			for (int m = 1; m == 1;) {
				TK_GROW(h->ths, cap, h->nths + 1);
				hthread *t = &h->ths[h->nths++];
				memset(t, 0, sizeof *t);
				fast_ws(&f);
				if (!fast_thread(&f, t) || !(m = fast_next(&f, ']')))
					goto no;
			}
			break;
		}
		}
		if (!ok || !(more = fast_next(&f, '}')))
			goto no;
	}
	fast_ws(&f);
	if (f.p == f.end && isfinite(h->start) && isfinite(h->ms) && isfinite(h->samples))
		return 1;
no:
	hang_fields_free(h);
	return 0;
}

#undef KEY_IS

static int build_cpu(tk_records *r, entry *me, entry *te, tk_error *err)
{
	const entry *any = me ? me : te;
	rec *x = new_rec(r, TK_RECORD_CPU, any->key);
	double start;
	if (parse_start_key(any->key, &start))
		return tk_error_set(err, "%s:%u: %s key %s is not a time (CFAbsoluteTime seconds)", r->files[any->file],
		                    any->line, any->coll, any->key);
	if (me) {
		if (json_value(r, me, &x->meta, err))
			return -1;
		if (!json_is_object(x->meta))
			return tk_error_set(err, "%s:%u: cpu-highload %s: expected a JSON object", r->files[me->file],
			                    me->line, me->key);
		if (get_num(x->meta, "start", &start) < 0)
			return field_error(r, me, "start", err);
		if (get_num(x->meta, "lasting", &x->info.duration) < 0)
			return field_error(r, me, "lasting", err);
		if (get_num(x->meta, "average", &x->info.avg_cpu) < 0)
			return field_error(r, me, "average", err);
		x->info.live = get_bool(x->meta, "live");
		x->info.truncated = get_bool(x->meta, "truncated");
	}
	x->info.start = start + CF_EPOCH_UNIX;
	if (te) {
		if (keep_tree(r, x, te, err))
			return -1;
		x->info.has_tree = 1;
	}
	x->where = where_of(r, te ? te : me);
	x->info.where = x->where;
	return 0;
}

/* A hang's "threads": every thread's stack at detection, frames leaf first as hex strings. */
static int check_threads(const tk_records *r, const entry *e, json_t *meta, size_t *n, tk_error *err)
{
	json_t *ths = json_object_get(meta, "threads");
	*n = 0;
	if (!ths || json_is_null(ths))
		return 0;
	size_t i, j;
	json_t *t, *f;
	if (!json_is_array(ths))
		return tk_error_set(err, "%s:%u: hang %s: \"threads\" is not an array", r->files[e->file], e->line,
		                    e->key);
	json_array_foreach(ths, i, t)
	{
		json_t *fr = json_object_get(t, "frames");
		double tid;
		/* a thread the monitor could not capture has "error" (e.g. "timeout") instead of frames */
		if (!json_is_object(t) || get_num(t, "tid", &tid) != 0 || !(tid >= 0 && tid < 18446744073709551616.0) ||
		    tid != (double)(uint64_t)tid ||
		    !(json_is_array(fr) || (!fr && json_is_string(json_object_get(t, "error")))))
			return tk_error_set(err,
			                    "%s:%u: hang %s: threads[%zu] needs a tid (a whole number) and a frames "
			                    "array (or an error)",
			                    r->files[e->file], e->line, e->key, i);
		json_array_foreach(fr, j, f)
		{
			uint64_t a;
			if (!json_is_string(f) || parse_hex(json_string_value(f), json_string_length(f), &a))
				return tk_error_set(err,
				                    "%s:%u: hang %s: threads[%zu].frames[%zu] is not a hex address",
				                    r->files[e->file], e->line, e->key, i, j);
		}
	}
	*n = json_array_size(ths);
	return 0;
}

/* In the fuzzer's differential build, jansson refusing a hang that hang_fast read is a bug. */
#ifdef TK_RECORDS_TREE_DIFF
#define HANG_FAIL(fast_ok) (fast_ok ? abort() : (void)0),
#else
#define HANG_FAIL(fast_ok)
#endif

static int build_hang(tk_records *r, entry *me, entry *te, tk_error *err)
{
	const entry *any = me ? me : te;
	rec *x = new_rec(r, TK_RECORD_HANG, any->key);
	double start, ms = NAN, tid = 0, samples = 0;
	if (parse_start_key(any->key, &start))
		return tk_error_set(err, "%s:%u: %s key %s is not a time (Unix seconds)", r->files[any->file],
		                    any->line, any->coll, any->key);
	hang_fields hf;
	int fast_ok = me && hang_fast(me->value, me->vlen, &hf), json_me = me != NULL;
#ifdef TK_RECORDS_TREE_DIFF
	if (fast_ok) { /* the fuzzer's build: jansson reads it too, below, and must agree */
		if (hf.has_start)
			start = hf.start;
		if (hf.has_tid)
			tid = hf.tid;
		if (hf.has_samples)
			samples = hf.samples;
		ms = hf.has_ms ? hf.ms : NAN;
	}
	double fstart = start, fms = ms, ftid = tid, fsamples = samples;
	start = NAN, ms = NAN, tid = 0, samples = 0;
	if (parse_start_key(any->key, &start))
		abort();
#else
	if (fast_ok) {
		if (hf.has_start)
			start = hf.start;
		if (hf.has_ms)
			ms = hf.ms;
		if (hf.has_tid)
			tid = hf.tid;
		if (hf.has_samples)
			samples = hf.samples;
		x->thread = hf.has_thread ? tk_xstrndup(hf.thread, hf.thread_len) : tk_xstrdup("");
		x->info.thread = x->thread;
		x->info.tid = (uint64_t)tid;
		x->info.live = hf.live;
		x->info.truncated = hf.truncated;
		double sup = hf.has_suppressed ? hf.suppressed : 0;
		x->info.suppressed = sup < 4e9 ? (uint32_t)sup : UINT32_MAX;
		x->ths = hf.ths;
		x->nths = hf.nths;
		x->images = hf.has_images ? tk_xstrndup(hf.images, hf.images_len) : NULL;
		x->info.nthreads = hf.nths;
		json_me = 0; /* read */
	}
#endif
	if (json_me) {
		if (json_value(r, me, &x->meta, err))
			return HANG_FAIL(fast_ok) - 1;
		if (!json_is_object(x->meta))
			return HANG_FAIL(fast_ok) tk_error_set(err, "%s:%u: hang %s: expected a JSON object",
			                                       r->files[me->file], me->line, me->key);
		if (get_num(x->meta, "start", &start) < 0)
			return HANG_FAIL(fast_ok) field_error(r, me, "start", err);
		if (get_num(x->meta, "duration_ms", &ms) < 0)
			return HANG_FAIL(fast_ok) field_error(r, me, "duration_ms", err);
		if (get_num(x->meta, "tid", &tid) < 0 || tid < 0)
			return HANG_FAIL(fast_ok) field_error(r, me, "tid", err);
		if (get_num(x->meta, "samples", &samples) < 0)
			return HANG_FAIL(fast_ok) field_error(r, me, "samples", err);
		const char *th = json_string_value(json_object_get(x->meta, "thread"));
		x->thread = tk_xstrdup(th ? th : "");
		x->info.thread = x->thread;
		x->info.tid = (uint64_t)tid;
		x->info.live = get_bool(x->meta, "live");
		x->info.truncated = get_bool(x->meta, "truncated");
		double sup = 0;
		if (get_num(x->meta, "suppressed", &sup) < 0 || sup < 0)
			return HANG_FAIL(fast_ok) field_error(r, me, "suppressed", err);
		x->info.suppressed = sup < 4e9 ? (uint32_t)sup : UINT32_MAX;
		if (check_threads(r, me, x->meta, &x->info.nthreads, err))
			return HANG_FAIL(fast_ok) - 1;
	}
#ifdef TK_RECORDS_TREE_DIFF
	if (fast_ok) {
		int same = fstart == start && (fms == ms || (isnan(fms) && isnan(ms))) && ftid == tid &&
		           fsamples == samples && x->info.live == hf.live && x->info.truncated == hf.truncated &&
		           x->info.nthreads == hf.nths && strlen(x->thread) == (hf.has_thread ? hf.thread_len : 0) &&
		           (!hf.has_thread || memcmp(x->thread, hf.thread, hf.thread_len) == 0);
		double sup = hf.has_suppressed ? hf.suppressed : 0;
		same = same && x->info.suppressed == (sup < 4e9 ? (uint32_t)sup : UINT32_MAX);
		const char *jim = json_string_value(json_object_get(x->meta, "images"));
		same = same && (hf.has_images
		                    ? jim && strlen(jim) == hf.images_len && memcmp(jim, hf.images, hf.images_len) == 0
		                    : !jim);
		json_t *ths = json_object_get(x->meta, "threads");
		for (size_t t = 0; same && t < hf.nths; t++) {
			json_t *jt = json_array_get(ths, t), *fr = json_object_get(jt, "frames");
			double jtid = 0;
			get_num(jt, "tid", &jtid);
			const char *nm = json_string_value(json_object_get(jt, "name"));
			same = jtid == hf.ths[t].tid && json_array_size(fr) == hf.ths[t].nframes &&
			       (nm ? hf.ths[t].name && strcmp(nm, hf.ths[t].name) == 0 : !hf.ths[t].name);
			for (size_t j = 0; same && j < hf.ths[t].nframes; j++) {
				uint64_t a = 0;
				json_t *fj = json_array_get(fr, j);
				parse_hex(json_string_value(fj), json_string_length(fj), &a);
				same = a == hf.ths[t].frames[j];
			}
		}
		if (!same)
			abort();
		hang_fields_free(&hf);
	}
#endif
	x->info.start = start;
	x->info.duration = ms / 1000.0;
	x->info.samples = samples > 0 && samples < 1e18 ? (uint64_t)samples : 0;
	if (te) {
		if (keep_tree(r, x, te, err))
			return -1;
		x->info.has_tree = 1;
	}
	x->where = where_of(r, te ? te : me);
	x->info.where = x->where;
	return 0;
}

/* Validate one anr snapshot's comma-joined frames; returns the frame count or -1. */
static long check_frames(const char *s, size_t n)
{
	long count = 0;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		size_t a = i, b = j;
		while (a < b && s[a] == ' ')
			a++;
		uint64_t v;
		if (parse_hex(s + a, b - a, &v))
			return -1;
		count++;
		i = j + 1;
	}
	return count;
}

typedef struct anr_part {
	entry *e;
	char *prefix;
	long index;
} anr_part;

static int anr_cmp(const void *a, const void *b)
{
	const anr_part *x = a, *y = b;
	int c = strcmp(x->prefix, y->prefix);
	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int build_anr(tk_records *r, anr_part *parts, size_t n, tk_error *err)
{
	rec *x = new_rec(r, TK_RECORD_ANR, parts[0].prefix);
	x->stacks = json_array();
	x->thread = tk_xstrdup("main");
	x->info.thread = x->thread;
	double start = NAN, ms = NAN;
	for (size_t i = 0; i < n; i++) {
		entry *e = parts[i].e;
		json_t *v;
		if (json_value(r, e, &v, err))
			return -1;
		json_t *st = json_object_get(v, "stacks");
		if (!json_is_object(v) || (st && !json_is_array(st))) {
			json_decref(v);
			return tk_error_set(err, "%s:%u: anr %s: expected an object with a \"stacks\" array",
			                    r->files[e->file], e->line, e->key);
		}
		if (i == 0 || isnan(start)) {
			if (get_num(v, "startFrom", &start) < 0 || get_num(v, "duration", &ms) < 0) {
				json_decref(v);
				return field_error(r, e, "startFrom/duration", err);
			}
		}
		size_t k;
		json_t *s;
		json_array_foreach(st, k, s)
		{
			json_t *fr = json_object_get(s, "stackframes");
			double cc = 1;
			if (!json_is_object(s) || !json_is_string(fr) ||
			    check_frames(json_string_value(fr), json_string_length(fr)) < 0 ||
			    get_num(s, "capturedCount", &cc) < 0 || cc < 0 || cc > 1e15 || cc != floor(cc)) {
				json_decref(v);
				return tk_error_set(
				    err,
				    "%s:%u: anr %s: stacks[%zu] needs \"stackframes\" (comma-joined hex "
				    "addresses) and a whole \"capturedCount\"",
				    r->files[e->file], e->line, e->key, k);
			}
			x->info.samples += (uint64_t)cc;
			json_array_append(x->stacks, s);
		}
		if (!x->meta)
			x->meta = v;
		else
			json_decref(v);
	}
	if (isnan(start) && parse_start_key(parts[0].prefix, &start))
		start = NAN;
	x->info.start = start;
	x->info.duration = ms / 1000.0;
	x->info.has_tree = json_array_size(x->stacks) > 0;
	x->where = where_of(r, parts[0].e);
	x->info.where = x->where;
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	const rec *x = a, *y = b;
	/* records without a start time go last (NaN compares false with everything) */
	int xn = isnan(x->info.start), yn = isnan(y->info.start);
	if (xn != yn)
		return xn - yn;
	if (!xn && x->info.start != y->info.start)
		return x->info.start < y->info.start ? -1 : 1;
	if (x->info.kind != y->info.kind)
		return (int)x->info.kind - (int)y->info.kind;
	return strcmp(x->key, y->key);
}

/* Something the monitor says about its own run (docs/records-format.md): the latest one's message
 * becomes the meta "monitor-event". Not a record; a malformed one is ignored. */
static void monitor_event(tk_records *r, const entry *e)
{
	json_t *v = json_loadb(e->value, e->vlen, 0, NULL);
	const char *msg = v ? json_string_value(json_object_get(v, "message")) : NULL;
	if (msg)
		set_meta(r, "monitor-event", msg);
	json_decref(v);
}

static int build(tk_records *r, tk_error *err)
{
	anr_part *parts = NULL;
	size_t nparts = 0, capparts = 0;
	int rc = 0;
	const char *launch = NULL; /* the run being read: its launch-time line precedes its records */
	for (size_t i = 0; i < r->nents && rc == 0; i++) {
		entry *e = &r->ents[i];
		size_t had = r->nrecs;
		if (strcmp(e->coll, "cpu-highload") == 0)
			rc = build_cpu(r, e, find_ent(r, "cpu-highload-stackframe", e->key), err);
		else if (strcmp(e->coll, "cpu-highload-stackframe") == 0 && !find_ent(r, "cpu-highload", e->key))
			rc = build_cpu(r, NULL, e, err);
		else if (strcmp(e->coll, "hang") == 0)
			rc = build_hang(r, e, find_ent(r, "hang-stackframe", e->key), err);
		else if (strcmp(e->coll, "hang-stackframe") == 0 && !find_ent(r, "hang", e->key))
			rc = build_hang(r, NULL, e, err);
		else if (strcmp(e->coll, "launch-time") == 0) {
			set_meta(r, "launch-time", e->value);
			TK_GROW(r->launches, r->caplaunches, r->nlaunches + 1);
			launch = r->launches[r->nlaunches++] = tk_xstrdup(e->value);
		} else if (strcmp(e->coll, "monitor-event") == 0)
			monitor_event(r, e);
		else if (strcmp(e->coll, "foreground") == 0) {
			TK_GROW(r->fgs, r->capfgs, r->nfgs + 1);
			entry *k = &r->fgs[r->nfgs++]; /* kept: the lines are freed below */
			*k = *e;
			k->coll = tk_xstrdup(e->coll);
			k->key = tk_xstrdup(e->key);
			k->value = tk_xstrndup(e->value, e->vlen);
		} else if (strcmp(e->coll, "anr") == 0) {
			TK_GROW(parts, capparts, nparts + 1);
			const char *us = strrchr(e->key, '_');
			char *end = NULL;
			long idx = us ? strtol(us + 1, &end, 10) : 0;
			if (us && (end == us + 1 || *end))
				us = NULL, idx = 0; /* not <time>_<index>: a record of its own */
			parts[nparts++] =
			    (anr_part){e, us ? tk_xstrndup(e->key, (size_t)(us - e->key)) : tk_xstrdup(e->key), idx};
		}
		for (size_t k = had; k < r->nrecs; k++)
			r->recs[k].info.launch_time = launch;
	}
	if (rc == 0 && nparts) {
		qsort(parts, nparts, sizeof *parts, anr_cmp);
		for (size_t i = 0; i < nparts && rc == 0;) {
			size_t j = i + 1;
			while (j < nparts && strcmp(parts[j].prefix, parts[i].prefix) == 0)
				j++;
			rc = build_anr(r, parts + i, j - i, err);
			i = j;
		}
	}
	for (size_t i = 0; i < nparts; i++)
		free(parts[i].prefix);
	free(parts);
	if (rc == 0 && r->nrecs)
		qsort(r->recs, r->nrecs, sizeof *r->recs, rec_cmp);
	/* the raw lines are no longer needed: the records hold what they parsed */
	for (size_t i = 0; i < r->nents; i++) {
		free(r->ents[i].coll);
		free(r->ents[i].key);
		free(r->ents[i].value);
	}
	free(r->ents);
	r->ents = NULL;
	r->nents = r->capents = 0;
	tk_hidx_free(&r->index);
	return rc;
}

/* ---- opening ---- */

static tk_records *new_records(void)
{
	return tk_xcalloc(1, sizeof(tk_records));
}

void tk_records_free(tk_records *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	for (size_t i = 0; i < r->nents; i++) {
		free(r->ents[i].coll);
		free(r->ents[i].key);
		free(r->ents[i].value);
	}
	free(r->ents);
	tk_hidx_free(&r->index);
	for (size_t i = 0; i < r->nfgs; i++) {
		free(r->fgs[i].coll);
		free(r->fgs[i].key);
		free(r->fgs[i].value);
	}
	free(r->fgs);
	for (size_t i = 0; i < r->nrecs; i++) {
		json_decref(r->recs[i].meta);
		for (size_t t = 0; t < r->recs[i].nths; t++) {
			free(r->recs[i].ths[t].name);
			free(r->recs[i].ths[t].frames);
		}
		free(r->recs[i].ths);
		free(r->recs[i].tree_src);
		free(r->recs[i].flat);
		json_decref(r->recs[i].stacks);
		free(r->recs[i].key);
		free(r->recs[i].thread);
		free(r->recs[i].images);
		free(r->recs[i].where);
	}
	free(r->recs);
	for (size_t i = 0; i < r->nimages; i++) {
		free(r->images[i].path);
		free(r->images[i].build_id);
		free(r->images[i].uuid);
	}
	free(r->images);
	free(r->segs.v);
	for (size_t i = 0; i < r->nsets; i++) {
		free(r->sets[i].name);
		free(r->sets[i].segs.v);
	}
	free(r->sets);
	for (size_t i = 0; i < r->nlaunches; i++)
		free(r->launches[i]);
	free(r->launches);
	for (size_t i = 0; i < r->nmeta; i++) {
		free(r->meta_kv[i][0]);
		free(r->meta_kv[i][1]);
	}
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	free(r->arch);
	free(r);
}

tk_records *tk_records_parse(const void *data, size_t n, const char *name, tk_error *err)
{
	tk_records *r = new_records();
	set_meta(r, "format", "tracekit");
	if (parse_lines(r, data, n, name, err) || build(r, err)) {
		tk_records_free(r);
		return NULL;
	}
	return r;
}

static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s)
		return tk_xstrdup(".");
	if (s == path)
		return tk_xstrdup("/");
	return tk_xstrndup(path, (size_t)(s - path));
}

/* A run's images file as a record names it: a plain file name in the session directory, nothing
 * that could lead elsewhere. */
static int run_images_name(const char *n)
{
	if (!n || strncmp(n, "images-", 7) != 0 || strlen(n) > 128 || strchr(n, '/'))
		return 0;
	for (const char *c = n; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.' && *c != '_')
			return 0;
	return 1;
}

/* The images of the session in dir: images.json for ours, dyld-images for MTHawkeye's; then each
 * run's own file named by its records ("images" in the record; the session's images.json serves
 * records without one, or whose file is missing). */
static int session_images(tk_records *r, const char *dir, tk_error *err)
{
	char *imgs = join(dir, "images.json"), *dyld = join(dir, "dyld-images");
	int rc = 0;
	if (!r->mthawkeye && is_file(imgs))
		rc = load_images_json(r, imgs, NULL, 0, err);
	else if (r->mthawkeye && is_file(dyld))
		rc = load_dyld_images(r, dyld, err);
	free(imgs);
	free(dyld);
	for (size_t i = 0; i < r->nrecs && rc == 0 && !r->mthawkeye; i++) {
		rec *x = &r->recs[i];
		const char *name = x->images ? x->images
		                   : x->meta ? json_string_value(json_object_get(x->meta, "images"))
		                             : NULL;
		if (!run_images_name(name))
			continue;
		size_t k = 0;
		while (k < r->nsets && strcmp(r->sets[k].name, name) != 0)
			k++;
		if (k == r->nsets) {
			char *path = join(dir, name);
			if (!is_file(path)) {
				free(path);
				continue;
			}
			TK_GROW(r->sets, r->capsets, r->nsets + 1);
			r->sets[r->nsets++] = (imgset){.name = tk_xstrdup(name), .pid = -1};
			r->cur = &r->sets[k].segs;
			rc = load_images_json(r, path, NULL, 0, err);
			r->cur = NULL;
			free(path);
		}
		x->set = (int)k;
		x->info.run_pid = r->sets[k].pid;
	}
	return rc;
}

tk_records *tk_records_open(const char *path, tk_error *err)
{
	if (strcmp(path, "-") == 0) { /* a Records file on standard input: no session files beside it */
		tk_records *r = new_records();
		int rc = read_file(r, path, 0, 0, err);
		set_meta(r, "format", "tracekit");
		if (rc == 0)
			rc = build(r, err);
		if (rc) {
			tk_records_free(r);
			return NULL;
		}
		return r;
	}
	struct stat st;
	if (stat(path, &st) != 0) {
		tk_error_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	tk_records *r = new_records();
	char *dir = S_ISDIR(st.st_mode) ? tk_xstrdup(path) : dir_of(path);
	char *ours = join(dir, "records"), *mtlog = join(dir, "records.mtlog"), *mmap2 = join(dir, "records.mmap2"),
	     *ext = join(dir, "cpu-highload-stackframe-ext"), *imgs = join(dir, "images.json"),
	     *dyld = join(dir, "dyld-images");
	int rc = 0;
	if (S_ISDIR(st.st_mode)) {
		if (is_file(ours)) {
			rc = read_file(r, ours, 0, 0, err);
		} else if (is_file(mtlog) || is_file(mmap2)) {
			r->mthawkeye = 1;
			if (is_file(ext))
				rc = read_file(r, ext, 0, 1, err);
			if (rc == 0 && is_file(mtlog))
				rc = read_file(r, mtlog, 0, 0, err);
			if (rc == 0 && is_file(mmap2))
				rc = read_file(r, mmap2, 1, 0, err);
		} else {
			rc = tk_error_set(
			    err, "%s: not a session directory (no records, records.mtlog or records.mmap2)", path);
		}
	} else {
		const char *b = base_name(path);
		r->mthawkeye = strncmp(b, "records.m", 9) == 0 || (is_file(dyld) && !is_file(imgs));
		rc = read_file(r, path, strcmp(b, "records.mmap2") == 0, 0, err);
	}
	set_meta(r, "format", r->mthawkeye ? "mthawkeye" : "tracekit");
	if (rc == 0) {
		/* records.mtlog's session may still hold a tree the app could not write into Records */
		rc = build(r, err);
	}
	if (rc == 0)
		rc = session_images(r, dir, err);
	free(ours);
	free(mtlog);
	free(mmap2);
	free(ext);
	free(imgs);
	free(dyld);
	free(dir);
	if (rc) {
		tk_records_free(r);
		return NULL;
	}
	return r;
}

size_t tk_records_count(const tk_records *r)
{
	return r->nrecs;
}

const tk_record_info *tk_records_get(const tk_records *r, size_t i)
{
	return i < r->nrecs ? &r->recs[i].info : NULL;
}

ptrdiff_t tk_records_find(const tk_records *r, const char *key)
{
	ptrdiff_t found = -1;
	size_t n = strlen(key);
	for (size_t i = 0; i < r->nrecs; i++)
		if (strcmp(r->recs[i].key, key) == 0)
			return (ptrdiff_t)i;
	for (size_t i = 0; i < r->nrecs; i++)
		if (n && strncmp(r->recs[i].key, key, n) == 0) {
			if (found >= 0)
				return -2;
			found = (ptrdiff_t)i;
		}
	return found;
}

/* ---- loading into a profile ---- */

typedef struct loader {
	tk_records *r;
	tk_profile *p;
	tk_thread_id t;
	unsigned flags;
	const segvec *segs; /* the record's images */
	/* the binary of each of the first images, once added: interning an image's four strings for
	 * every frame was half of loading a hang's stacks (tk_binary_add gives the same id anyway) */
	tk_binary_id bins[64];
} loader;

/* Push the frame for a recorded address under parent and return its stack. Both MTHawkeye and our
 * monitor store a stack as the interrupted PC followed by return addresses minus one (addresses
 * inside the call instructions), so every address is to be looked up as it is
 * (docs/records-format.md); only the leaf is flagged as a sampled PC. Frames carry their image
 * (path, build-id or UUID, load address) and stay unnamed: naming them from the ELF files of this
 * machine is a pass of its own (tk_elf_name_profile), so reading links no symbol code. */
static tk_stack_id push_frames(loader *L, tk_stack_id parent, uint64_t addr, int leaf)
{
	tk_profile *p = L->p;
	tk_frame f = {.addr = addr, .flags = leaf ? TK_FRAME_LEAF_PC : 0};
	const image *im = image_of(L->r, L->segs, addr);
	if (im && L->r->bin_p == p) { /* loading a whole session: one binary per image for all records */
		size_t k = (size_t)(im - L->r->images);
		if (!L->r->bin_ids[k]) {
			tk_binary b;
			image_binary(L->r, p, im, &b);
			L->r->bin_ids[k] = tk_binary_add(p, &b);
		}
		f.binary = L->r->bin_ids[k];
	} else if (im) {
		size_t k = (size_t)(im - L->r->images);
		if (k < sizeof L->bins / sizeof L->bins[0] && L->bins[k]) {
			f.binary = L->bins[k];
		} else {
			tk_binary b;
			image_binary(L->r, p, im, &b);
			f.binary = tk_binary_add(p, &b);
			if (k < sizeof L->bins / sizeof L->bins[0])
				L->bins[k] = f.binary;
		}
	}
	return tk_stack_push(p, parent, tk_frame_add(p, &f));
}

static void load_node(loader *L, json_t *node, tk_stack_id parent)
{
	json_t *fr = json_object_get(node, "frame"), *ch = json_object_get(node, "children");
	uint64_t addr = 0;
	parse_hex(json_string_value(fr), json_string_length(fr), &addr);
	uint64_t count = (uint64_t)json_number_value(json_object_get(node, "count")), sum = 0;
	size_t nch = json_is_array(ch) ? json_array_size(ch) : 0;
	for (size_t i = 0; i < nch; i++)
		sum += (uint64_t)json_number_value(json_object_get(json_array_get(ch, i), "count"));
	/* a node whose samples all continue into children was never a sampled PC */
	tk_stack_id s = push_frames(L, parent, addr, count > sum);
	if (count > sum)
		tk_sample_add_n(L->p, L->t, s, count - sum, count - sum);
	for (size_t i = 0; i < nch; i++)
		load_node(L, json_array_get(ch, i), s);
}

static void load_anr(loader *L, json_t *stacks)
{
	size_t i;
	json_t *s;
	uint64_t *addrs = NULL;
	size_t cap = 0;
	json_array_foreach(stacks, i, s)
	{
		const char *str = json_string_value(json_object_get(s, "stackframes"));
		size_t n = json_string_length(json_object_get(s, "stackframes")), nf = 0;
		double cc = 1;
		get_num(s, "capturedCount", &cc);
		for (size_t a = 0; a < n;) {
			size_t b = a;
			while (b < n && str[b] != ',')
				b++;
			size_t x = a;
			while (x < b && str[x] == ' ')
				x++;
			TK_GROW(addrs, cap, nf + 1);
			addrs[nf] = 0;
			parse_hex(str + x, b - x, &addrs[nf]);
			nf++;
			a = b + 1;
		}
		if (cc <= 0)
			continue;
		/* a snapshot without frames still counts: it becomes a sample with no stack */
		tk_stack_id st = 0; /* snapshots are leaf first: push from the outermost frame */
		for (size_t k = nf; k-- > 0;)
			st = push_frames(L, st, addrs[k], k == 0);
		tk_sample_add_n(L->p, L->t, st, (uint64_t)cc, (uint64_t)cc);
	}
	free(addrs);
}

static void utc(double unix_s, char *buf, size_t n)
{
	if (!isfinite(unix_s) || unix_s < 0 || unix_s > 1e11) {
		snprintf(buf, n, "?");
		return;
	}
	time_t t = (time_t)unix_s;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* The profile's image list gets every image of the session that is a file of this machine (not
 * MTHawkeye's dyld images, named later from dSYMs): the ELF naming pass (tk_elf_name_profile) names
 * the frames of these images and reports the ones it cannot use, referenced or not. */
static void list_images(tk_records *r, tk_profile *p)
{
	if (r->bin_p == p && r->listed++) /* once per session loaded whole (the list would not change) */
		return;
	for (size_t i = 0; i < r->nimages; i++)
		if (!r->images[i].dyld) {
			tk_binary b;
			image_binary(r, p, &r->images[i], &b);
			tk_profile_image_add(p, &b);
		}
}

static int load_threads(tk_records *r, size_t i, tk_profile *p, unsigned flags, tk_event_id ev, tk_error *err);

/* The record as an event of p (profile.h): every fact of its tk_record_info is a field or an
 * attribute, so consumers read the profile alone. Its synthetic thread t is its own (ATTRIBUTED). */
static tk_event_id add_event(const tk_records *r, const rec *x, tk_profile *p, tk_thread_id t)
{
	const tk_record_info *ri = &x->info;
	double d = ri->duration;
	tk_event e = {.kind = ri->kind == TK_RECORD_CPU ? TK_EVENT_CPU_HIGHLOAD : TK_EVENT_HANG,
	              .name = tk_intern_cstr(p, ri->kind_name),
	              .key = tk_intern_cstr(p, ri->key),
	              .start = UINT64_MAX, /* records know only wall-clock time */
	              .duration = isfinite(d) && d >= 0 && d < 1.8e10 ? (uint64_t)(d * 1e9) : UINT64_MAX,
	              .wall = ri->start,
	              .flags = (ri->live ? TK_EVENT_LIVE : 0u) | (ri->truncated ? TK_EVENT_TRUNCATED : 0u),
	              .thread = t};
	tk_event_id id = tk_event_add(p, &e);
	tk_thread_set_event(p, t, id, TK_ROLE_ATTRIBUTED);
	if (isfinite(d))
		tk_event_set_num(p, id, "duration", d);
	if (isfinite(ri->avg_cpu))
		tk_event_set_num(p, id, "cpu.average", ri->avg_cpu);
	tk_event_set_num(p, id, "samples", (double)ri->samples);
	tk_event_set_num(p, id, "tree", ri->has_tree ? 1 : 0);
	if (ri->tid)
		tk_event_set_num(p, id, "tid", (double)ri->tid);
	if (*ri->thread)
		tk_event_set_str(p, id, "thread", ri->thread);
	if (ri->kind == TK_RECORD_HANG) {
		tk_event_set_num(p, id, "suppressed", ri->suppressed);
		tk_event_set_num(p, id, "threads", (double)ri->nthreads);
	}
	tk_event_set_str(p, id, "where", ri->where);
	if (ri->launch_time)
		tk_event_set_str(p, id, "launch.time", ri->launch_time);
	if (ri->run_pid >= 0)
		tk_event_set_num(p, id, "run.pid", (double)ri->run_pid);
	/* the session's facts, on each of its events */
	static const char *const from_meta[] = {"process", "os", "arch", "format", "images"};
	for (size_t k = 0; k < sizeof from_meta / sizeof from_meta[0]; k++) {
		const char *v = tk_records_meta(r, from_meta[k]);
		if (v)
			tk_event_set_str(p, id, from_meta[k], v);
	}
	const char *pid = tk_records_meta(r, "pid"), *lt = tk_records_meta(r, "launch-time");
	if (pid)
		tk_event_set_num(p, id, "pid", strtod(pid, NULL));
	if (lt)
		tk_event_set_str(p, id, "session.launch.time", lt);
	return id;
}

int64_t tk_records_load(tk_records *r, size_t i, tk_profile *p, unsigned flags, tk_error *err)
{
	if (i >= r->nrecs)
		return tk_error_set(err, "record %zu does not exist (%zu records)", i, r->nrecs);
	if (!(flags & TK_RECORDS_NO_SYMBOLS))
		list_images(r, p);
	rec *x = &r->recs[i];
	char when[64], name[256];
	utc(x->info.start, when, sizeof when);
	char dur[32] = "? s";
	if (isfinite(x->info.duration))
		snprintf(dur, sizeof dur, x->info.kind == TK_RECORD_CPU ? "%.1f s" : "%.2f s", x->info.duration);
	if (x->info.kind == TK_RECORD_CPU)
		snprintf(name, sizeof name, "cpu-highload %s %s", when, dur);
	else
		snprintf(name, sizeof name, "%s %s %s %s", x->info.kind_name, *x->info.thread ? x->info.thread : "?",
		         when, dur);
	const char *pid = tk_records_meta(r, "pid");
	tk_profile_set_unit(p, TK_UNIT_SAMPLES);
	/* a record's thread is numbered by the record's position, not a real tid (writers say so) */
	tk_profile_set_meta(p, "thread-tid", "record");
	loader L = {.r = r, .p = p, .flags = flags, .segs = x->set >= 0 ? &r->sets[x->set].segs : &r->segs};
	long long run_pid = x->set >= 0 ? r->sets[x->set].pid : -1;
	L.t = tk_thread_get_or_add(p,
	                           run_pid >= 0 ? run_pid
	                           : pid        ? strtoll(pid, NULL, 10)
	                                        : -1,
	                           i + 1, tk_intern_cstr(p, name), tk_intern_cstr(p, tk_records_meta(r, "process")));
	fnodes fl = {0};
	int flat = x->has_flat || (x->tree_src && tree_flat(x->tree_src, x->tree_len, &fl));
	if (flat) {
		const fnode *nodes = x->has_flat ? x->flat : fl.v;
		size_t nn = x->has_flat ? x->nflat : fl.n;
		/* pre-order, as load_node visits: a node's own samples, then its children */
		tk_stack_id *st = tk_xmalloc((nn ? nn : 1) * sizeof *st);
		for (size_t k = 0; k < nn; k++) {
			const fnode *nd = &nodes[k];
			int leaf = nd->count > nd->kids; /* its samples did not all continue into children */
			st[k] = push_frames(&L, nd->parent ? st[nd->parent - 1] : 0, nd->addr, leaf);
			if (leaf)
				tk_sample_add_n(p, L.t, st[k], nd->count - nd->kids, nd->count - nd->kids);
		}
		free(st);
		free(fl.v);
	} else if (x->tree_src) {
		free(fl.v);
		json_error_t je;
		json_t *tree = json_loadb(x->tree_src, x->tree_len, 0, &je);
		if (!tree) /* validated at open: only running out of memory gets here */
			return tk_error_set(err, "%s: %s", x->where, je.text);
		size_t k;
		json_t *n;
		json_array_foreach(tree, k, n) load_node(&L, n, 0);
		json_decref(tree);
	} else if (x->stacks) {
		load_anr(&L, x->stacks);
	}
	add_event(r, x, p, L.t);
	return L.t;
}

/* Each run's foreground line (docs/records-format.md) → a marker event "foreground" with the run's
 * facts (launch.time, run.pid, process …: the session key its records get) and its foreground
 * seconds as duration, for the store's hang rate. Not a record; a malformed line is ignored. */
static void add_foreground_events(const tk_records *r, tk_profile *p)
{
	for (size_t i = 0; i < r->nfgs; i++) {
		const entry *en = &r->fgs[i];
		json_t *v = json_loadb(en->value, en->vlen, 0, NULL);
		json_t *sec = json_object_get(v, "seconds"), *live = json_object_get(v, "live"),
		       *pid = json_object_get(v, "pid");
		char *end;
		double lt = strtod(en->key, &end);
		double d = json_is_number(sec) ? json_number_value(sec) : NAN;
		if (!json_is_object(v) || !isfinite(d) || d < 0 || d > 1e12 || *end || !isfinite(lt)) {
			json_decref(v);
			continue;
		}
		tk_event e = {.kind = TK_EVENT_MARKER,
		              .name = tk_intern_cstr(p, "foreground"),
		              .key = tk_intern_cstr(p, en->key),
		              .start = UINT64_MAX,
		              .duration = (uint64_t)(d * 1e9),
		              .wall = lt,
		              .flags = json_is_true(live) ? TK_EVENT_LIVE : 0u,
		              .thread = TK_NO_THREAD};
		tk_event_id id = tk_event_add(p, &e);
		tk_event_set_num(p, id, "duration", d);
		tk_event_set_num(p, id, "foreground.time", d);
		tk_event_set_str(p, id, "launch.time", en->key);
		if (json_is_integer(pid))
			tk_event_set_num(p, id, "run.pid", (double)json_integer_value(pid));
		char where[600];
		snprintf(where, sizeof where, "%s:%u", r->files[en->file], en->line);
		tk_event_set_str(p, id, "where", where);
		static const char *const from_meta[] = {"process", "os", "arch", "format", "images"};
		for (size_t k = 0; k < sizeof from_meta / sizeof from_meta[0]; k++) {
			const char *m = tk_records_meta(r, from_meta[k]);
			if (m)
				tk_event_set_str(p, id, from_meta[k], m);
		}
		const char *mpid = tk_records_meta(r, "pid"), *mlt = tk_records_meta(r, "launch-time");
		if (mpid)
			tk_event_set_num(p, id, "pid", strtod(mpid, NULL));
		if (mlt)
			tk_event_set_str(p, id, "session.launch.time", mlt);
		json_decref(v);
	}
}

int tk_records_load_all(tk_records *r, tk_profile *p, unsigned flags, tk_error *err)
{
	tk_profile_set_unit(p, TK_UNIT_SAMPLES);
	tk_profile_set_meta(p, "format", tk_records_meta(r, "format"));
	if (tk_records_meta(r, "monitor-event")) /* the monitor's note about its own run (not an event) */
		tk_profile_set_meta(p, "monitor-event", tk_records_meta(r, "monitor-event"));
	r->bin_p = p;
	r->bin_ids = tk_xcalloc(r->nimages ? r->nimages : 1, sizeof *r->bin_ids);
	r->listed = 0;
	int rc = 0;
	for (size_t i = 0; i < r->nrecs && !rc; i++) {
		int64_t t = tk_records_load(r, i, p, flags, err);
		if (t < 0)
			rc = -1;
		else if ((flags & TK_RECORDS_CONTEXT) &&
		         load_threads(r, i, p, flags, tk_thread_get(p, (tk_thread_id)t)->event, err) < 0)
			rc = -1;
	}
	free(r->bin_ids);
	r->bin_ids = NULL;
	r->bin_p = NULL;
	if (!rc)
		add_foreground_events(r, p);
	return rc;
}

/* What the read options ask of a Records reading: flags, and images from another file. */
static unsigned read_flags(const tk_read_options *o)
{
	return o ? (o->no_images ? TK_RECORDS_NO_SYMBOLS : 0u) | (o->event_context ? TK_RECORDS_CONTEXT : 0u) : 0u;
}

static int load_read(tk_records *r, tk_profile *p, const tk_read_options *o, tk_error *err)
{
	if (o && o->images_data) {
		if (load_images_json(r, o->images ? o->images : "images.json", o->images_data, o->images_len, err))
			return -1;
	} else if (o && o->images && tk_records_load_images(r, o->images, err))
		return -1;
	return tk_records_load_all(r, p, read_flags(o), err);
}

int tk_records_read_with(tk_profile *p, const char *path, const tk_read_options *o, tk_error *err)
{
	tk_records *r = tk_records_open(path, err);
	if (!r)
		return -1;
	int rc = load_read(r, p, o, err);
	tk_records_free(r);
	return rc;
}

int tk_records_read(tk_profile *p, const char *path, unsigned flags, tk_error *err)
{
	tk_records *r = tk_records_open(path, err);
	if (!r)
		return -1;
	int rc = tk_records_load_all(r, p, flags, err);
	tk_records_free(r);
	return rc;
}

/* ---- the tk_reader for tk_read_path ---- */

static const char *const known_collections[] = {"collection",    "launch-time",
                                                "cpu-highload",  "cpu-highload-stackframe",
                                                "hang",          "hang-stackframe",
                                                "anr",           "cpu",
                                                "r-mem",         "avl-mem",
                                                "threads-count", "thermal-state",
                                                "fps",           "gl-fps",
                                                "gl-mem",        "app-launch",
                                                "view-ctrl",     "custom-time-event",
                                                "call-trace",    "mem",
                                                "monitor-event", "foreground"};

/* A Records file starts with its header line, or (when the head of the file was cut) with a line
 * of a collection MTHawkeye or our monitor writes, followed by a key and a value. */
static int sniff_records(const unsigned char *head, size_t n)
{
	const char *h = (const char *)head;
	size_t line = 0;
	while (line < n && h[line] != '\n')
		line++;
	const char *c1 = memchr(h, ',', line);
	if (!c1 || !memchr(c1 + 1, ',', line - (size_t)(c1 + 1 - h)))
		return 0;
	size_t clen = (size_t)(c1 - h);
	for (size_t i = 0; i < sizeof known_collections / sizeof known_collections[0]; i++)
		if (strlen(known_collections[i]) == clen && memcmp(known_collections[i], h, clen) == 0)
			return 1;
	return 0;
}

static int read_records(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	/* records carry no per-sample times: a time range keeps or drops nothing */
	size_t cap = 1 << 16, len = 0;
	char *buf = tk_xmalloc(cap);
	for (;;) {
		if (len == cap)
			buf = tk_xrealloc(buf, cap *= 2);
		ptrdiff_t got = tk_input_read(in, buf + len, cap - len, err);
		if (got < 0) {
			free(buf);
			return -1;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	const char *name = tk_input_name(in);
	tk_records *r = new_records();
	/* a file of a session: its images are next to it (bytes in memory have no session) */
	char *dir = !tk_input_in_memory(in) && is_file(name) ? dir_of(name) : NULL;
	char *dyld = dir ? join(dir, "dyld-images") : NULL, *imgs = dir ? join(dir, "images.json") : NULL;
	r->mthawkeye = strncmp(base_name(name), "records.m", 9) == 0 || (dir && is_file(dyld) && !is_file(imgs));
	free(dyld);
	free(imgs);
	int mmap2 = strcmp(base_name(name), "records.mmap2") == 0;
	size_t n = len;
	if (mmap2)
		for (n = 0; n < len && buf[n] && buf[n] != '\r'; n++)
			;
	int rc = parse_lines(r, buf, n, name, err);
	free(buf);
	set_meta(r, "format", r->mthawkeye ? "mthawkeye" : "tracekit");
	if (rc == 0)
		rc = build(r, err);
	if (rc == 0 && dir)
		rc = session_images(r, dir, err);
	free(dir);
	if (rc == 0)
		rc = load_read(r, p, o, err);
	tk_records_free(r);
	return rc;
}

const tk_reader tk_reader_records = {"records", sniff_records, read_records};

int tk_records_snapshot(const tk_records *r, size_t i, size_t k, uint64_t *tid, uint64_t *frames, size_t cap,
                        size_t *nframes)
{
	if (i >= r->nrecs)
		return -1;
	const rec *x = &r->recs[i];
	/* read as tk_records_load_threads reads it, in either of its two loops */
	json_t *ths = x->meta && x->info.kind == TK_RECORD_HANG ? json_object_get(x->meta, "threads") : NULL;
	if (ths) {
		if (!json_is_array(ths) || json_array_size(ths) > INT_MAX)
			return -1;
		json_t *t = json_array_get(ths, k);
		if (t) {
			double d = 0;
			get_num(t, "tid", &d);
			*tid = (uint64_t)d;
			json_t *fr = json_object_get(t, "frames");
			size_t n = json_array_size(fr);
			for (size_t j = 0; j < n && j < cap; j++) {
				uint64_t addr = 0;
				json_t *f = json_array_get(fr, j);
				parse_hex(json_string_value(f), json_string_length(f), &addr);
				frames[j] = addr;
			}
			*nframes = n;
		}
		return (int)json_array_size(ths);
	}
	if (!x->ths || x->nths > INT_MAX)
		return -1;
	if (k < x->nths) {
		const hthread *h = &x->ths[k];
		*tid = (uint64_t)h->tid;
		size_t n = h->nframes < cap ? h->nframes : cap;
		if (n) /* a thread without frames may have no array */
			memcpy(frames, h->frames, n * sizeof *frames);
		*nframes = h->nframes;
	}
	return (int)x->nths;
}

const char *tk_records_image_at(const tk_records *r, size_t i, uint64_t addr, uint64_t *base)
{
	if (i >= r->nrecs)
		return NULL;
	const rec *x = &r->recs[i];
	const image *im = image_of(r, x->set >= 0 ? &r->sets[x->set].segs : &r->segs, addr);
	if (!im)
		return NULL;
	*base = im->base;
	return im->path;
}

/* A snapshot thread: with ev, a thread of its own given to event ev as context (threads of one tid
 * within the snapshot still merge, as they do in a profile of the snapshot alone); else the
 * profile's thread (pid, tid). */
static tk_thread_id snap_thread(tk_profile *p, tk_event_id ev, int64_t pid, uint64_t tid, tk_str name, tk_str proc,
                                tk_thread_id first)
{
	if (!ev)
		return tk_thread_get_or_add(p, pid, tid, name, proc);
	for (size_t t = first; t < tk_thread_count(p); t++) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
		if (th->tid == tid && th->pid == pid && th->event == ev) {
			if (name)
				tk_thread_set_name(p, (tk_thread_id)t, name);
			return (tk_thread_id)t;
		}
	}
	tk_thread_id t = tk_thread_add(p, pid, tid, name, proc);
	tk_thread_set_event(p, t, ev, TK_ROLE_CONTEXT);
	return t;
}

int tk_records_load_threads(tk_records *r, size_t i, tk_profile *p, unsigned flags, tk_error *err)
{
	return load_threads(r, i, p, flags, 0, err);
}

static int load_threads(tk_records *r, size_t i, tk_profile *p, unsigned flags, tk_event_id ev, tk_error *err)
{
	if (i >= r->nrecs)
		return tk_error_set(err, "record %zu does not exist (%zu records)", i, r->nrecs);
	rec *x = &r->recs[i];
	json_t *ths = x->meta && x->info.kind == TK_RECORD_HANG ? json_object_get(x->meta, "threads") : NULL;
	if (!json_is_array(ths) && !x->ths)
		return 0;
	if (!(flags & TK_RECORDS_NO_SYMBOLS))
		list_images(r, p);
	const char *pid = tk_records_meta(r, "pid");
	tk_profile_set_unit(p, TK_UNIT_SAMPLES);
	loader L = {.r = r, .p = p, .flags = flags, .segs = x->set >= 0 ? &r->sets[x->set].segs : &r->segs};
	char run_pid[32];
	if (x->set >= 0 && r->sets[x->set].pid >= 0) {
		snprintf(run_pid, sizeof run_pid, "%lld", r->sets[x->set].pid);
		pid = run_pid;
	}
	tk_thread_id first = (tk_thread_id)tk_thread_count(p);
	for (size_t k = 0; k < x->nths && !ths; k++) { /* read by hang_fast: the loop below, plainly */
		const hthread *h = &x->ths[k];
		L.t = snap_thread(p, ev, pid ? strtoll(pid, NULL, 10) : -1, (uint64_t)h->tid, tk_intern_cstr(p, h->name),
		                  tk_intern_cstr(p, tk_records_meta(r, "process")), first);
		tk_stack_id st = 0;
		for (size_t j = h->nframes; j-- > 0;)
			st = push_frames(&L, st, h->frames[j], j == 0);
		tk_sample_add_n(p, L.t, st, 1, 1);
	}
	if (!ths)
		return (int)x->nths;
	size_t k;
	json_t *t;
	json_array_foreach(ths, k, t)
	{
		double tid = 0;
		get_num(t, "tid", &tid);
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *terr = json_string_value(json_object_get(t, "error"));
		char label[300];
		if (terr) /* say so where the stack would be */
			snprintf(label, sizeof label, "%s (not captured: %s)", name ? name : "", terr);
		L.t = snap_thread(p, ev, pid ? strtoll(pid, NULL, 10) : -1, (uint64_t)tid,
		                  tk_intern_cstr(p, terr ? label : name), tk_intern_cstr(p, tk_records_meta(r, "process")),
		                  first);
		json_t *fr = json_object_get(t, "frames");
		size_t n = json_array_size(fr);
		tk_stack_id st = 0; /* leaf first: push from the outermost frame */
		for (size_t j = n; j-- > 0;) {
			uint64_t a = 0;
			json_t *f = json_array_get(fr, j);
			parse_hex(json_string_value(f), json_string_length(f), &a);
			st = push_frames(&L, st, a, j == 0);
		}
		tk_sample_add_n(p, L.t, st, 1, 1);
	}
	return (int)json_array_size(ths);
}
