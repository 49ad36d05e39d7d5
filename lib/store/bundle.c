/* Upload bundles: a session directory's files in one gzip'd body (docs/store.md).
 *
 *   tracekit-bundle 1\n
 *   records 1234\n<1234 bytes>\n
 *   meta.json 56\n<56 bytes>\n
 *   images.json 789\n<789 bytes>\n
 *
 * A plain framing rather than tar: three known files, sizes up front, nothing to unpack to disk,
 * and a decoder small enough to read whole. A gzip'd bare Records file is accepted too.
 *
 * A profile (an xctrace export or any other input `tracekit ingest` stores as a profile report)
 * travels as "profile" (the file, gzip'd by the uploader unless it already was) with
 * "profile.json" (its name, modification time and that encoding) and meta.json (the --set keys),
 * so the server stores exactly what a local ingest of the same file stores. */
#include <errno.h>
#include <jansson.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "store/internal.h"
#include "util/mem.h"

static const char magic[] = "tracekit-bundle 1\n";
static const char *const files[] = {"records", "meta.json", "images.json", "profile", "profile.json"};
enum { F_RECORDS, F_META, F_IMAGES, F_PROFILE, F_PROFILE_JSON, NFILES };
enum { NSESSION = 3 }; /* the files tk_bundle_make reads from a session directory */

static char *slurp(const char *path, size_t *n, int *missing)
{
	FILE *f = fopen(path, "rb");
	*missing = !f && errno == ENOENT;
	if (!f)
		return NULL;
	char *b = NULL;
	size_t cap = 0, len = 0, got;
	do {
		TK_GROW(b, cap, len + 65536);
		got = fread(b + len, 1, cap - len, f);
		len += got;
	} while (got);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(b);
		return NULL;
	}
	*n = len;
	return b;
}

/* Append "NAME SIZE\n" + data + "\n" to the bundle text. */
static void put_part(char **raw, size_t *rcap, size_t *rn, const char *name, const void *data, size_t n)
{
	char head[64];
	int hl = snprintf(head, sizeof head, "%s %zu\n", name, n);
	TK_GROW(*raw, *rcap, *rn + (size_t)hl + n + 1);
	memcpy(*raw + *rn, head, (size_t)hl);
	memcpy(*raw + *rn + hl, data, n);
	(*raw)[*rn + (size_t)hl + n] = '\n';
	*rn += (size_t)hl + n + 1;
}

/* The uploader's --set keys as a meta.json (for inputs that have none). */
static char *meta_from_given(const tk_report_meta *given, size_t *n)
{
	char m[4096];
	size_t ml = (size_t)snprintf(m, sizeof m, "{");
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		if (given->keys[k]) {
			ml += (size_t)snprintf(m + ml, sizeof m - ml, "%s\"%s\":\"", ml > 1 ? "," : "",
			                       tk_store_key_names[k]);
			for (const char *c = given->keys[k]; *c && ml < sizeof m - 8; c++) {
				if (*c == '"' || *c == '\\')
					m[ml++] = '\\';
				if ((unsigned char)*c >= 0x20)
					m[ml++] = *c;
			}
			ml += (size_t)snprintf(m + ml, sizeof m - ml, "\"");
		}
	ml += (size_t)snprintf(m + ml, sizeof m - ml, "}");
	*n = ml;
	return tk_xstrndup(m, ml);
}

/* libdeflate's whole-buffer gzip (a member as zlib's deflate writes, read by any gzip reader): at
 * level 1 it takes a quarter of zlib's level-1 CPU and writes ~8 % fewer bytes (a pack of 32 sessions,
 * 662 kB of Records: 4.2 → 1.1 ms, 69.6 → 64.0 kB), and its CRC-32 uses the CPU's carry-less multiply.
 * A compressor holds its tables (hundreds of kB): each thread keeps its own (uploads run on --jobs
 * threads). */
static pthread_key_t gz_key;
static int gz_keyed;
static pthread_once_t gz_once = PTHREAD_ONCE_INIT;
static void gz_free(void *c)
{
	libdeflate_free_compressor(c);
}
static void gz_key_make(void)
{
	gz_keyed = pthread_key_create(&gz_key, gz_free) == 0;
}

/* The thread's level-1 compressor (NULL without memory: the caller falls back to zlib). */
static struct libdeflate_compressor *gz_compressor(void)
{
	pthread_once(&gz_once, gz_key_make);
	struct libdeflate_compressor *c = gz_keyed ? pthread_getspecific(gz_key) : NULL;
	if (!c && gz_keyed && (c = libdeflate_alloc_compressor(1)) && pthread_setspecific(gz_key, c) != 0) {
		libdeflate_free_compressor(c);
		c = NULL;
	}
	return c;
}

/* gzip n bytes (one member) into a new buffer: libdeflate, else zlib at the same level. */
static int gzip_bytes(const void *in, size_t n, int level, const char *name, void **out, size_t *outn, tk_error *err)
{
	struct libdeflate_compressor *c = level == 1 ? gz_compressor() : NULL;
	if (c) {
		size_t cn = libdeflate_gzip_compress_bound(c, n);
		unsigned char *z = tk_xmalloc(cn);
		size_t got = libdeflate_gzip_compress(c, in, n, z, cn);
		if (got) {
			*out = z;
			*outn = got;
			return 0;
		}
		free(z); /* cannot happen within the bound: zlib below */
	}
	uLongf zn = compressBound((uLong)n) + 32;
	unsigned char *z = tk_xmalloc(zn);
	z_stream s = {0};
	if (deflateInit2(&s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(z);
		return tk_error_set(err, "%s: zlib: cannot start compressing", name);
	}
	s.next_in = (unsigned char *)in;
	s.avail_in = (uInt)n;
	s.next_out = z;
	s.avail_out = (uInt)zn;
	int rc = deflate(&s, Z_FINISH);
	deflateEnd(&s);
	if (rc != Z_STREAM_END) {
		free(z);
		return tk_error_set(err, "%s: zlib: compression failed", name);
	}
	*out = z;
	*outn = s.total_out;
	return 0;
}

/* Append "NAME SIZE\n" + the file at path + "\n" to raw, read straight into place (to its end, as
 * slurp does: a live session's records may grow meanwhile). Returns 0, 1 if it does not exist, -1. */
static int put_file(char **raw, size_t *rcap, size_t *rn, const char *name, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT ? 1 : -1;
	struct stat st;
	size_t guess = fstat(fileno(f), &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
	enum { HEAD = 64 }; /* room for "NAME SIZE\n", moved down once the size is known */
	size_t at = *rn + HEAD, len = 0, got;
	do {
		TK_GROW(*raw, *rcap, at + len + (len < guess ? guess - len : 65536) + 2);
		got = fread(*raw + at + len, 1, *rcap - at - len - 2, f);
		len += got;
	} while (got);
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return -1;
	char head[HEAD];
	int hl = snprintf(head, sizeof head, "%s %zu\n", name, len);
	memcpy(*raw + *rn, head, (size_t)hl);
	memmove(*raw + *rn + hl, *raw + at, len);
	(*raw)[*rn + (size_t)hl + len] = '\n';
	*rn += (size_t)hl + len + 1;
	return 0;
}

/* Append a session directory's bundle text (the magic line and its files) to raw. */
static int append_session(const char *dir, const tk_report_meta *given, char **raw, size_t *rcap, size_t *rn,
                          tk_error *err)
{
	TK_GROW(*raw, *rcap, *rn + sizeof magic);
	memcpy(*raw + *rn, magic, sizeof magic - 1);
	*rn += sizeof magic - 1;
	for (int i = 0; i < NSESSION; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		int rc = put_file(raw, rcap, rn, files[i], path);
		if (rc < 0 || (rc > 0 && i == F_RECORDS))
			return tk_error_set(err, "%s: %s", path, strerror(rc > 0 ? ENOENT : errno));
		if (rc > 0 && i == F_META && given) { /* no meta.json: the uploader's --set keys travel as one */
			size_t n;
			char *data = meta_from_given(given, &n);
			put_part(raw, rcap, rn, files[i], data, n);
			free(data);
		}
	}
	return 0;
}

int tk_bundle_make(const char *dir, const tk_report_meta *given, void **out, size_t *outn, tk_error *err)
{
	return tk_bundle_make_pack(&dir, 1, given, out, outn, err);
}

int tk_bundle_make_pack(const char *const *dirs, size_t n, const tk_report_meta *given, void **out, size_t *outn,
                        tk_error *err)
{
	char *raw = NULL;
	size_t rn = 0, rcap = 0;
	TK_GROW(raw, rcap, (size_t)1 << 20); /* most packs fit: fewer copies as it grows */
	for (size_t i = 0; i < n; i++)
		if (append_session(dirs[i], given, &raw, &rcap, &rn, err)) {
			free(raw);
			return -1;
		}
	int rc = gzip_bytes(raw, rn, 1, n == 1 ? dirs[0] : "a pack of sessions", out, outn, err);
	free(raw);
	return rc;
}

int tk_bundle_make_profile(const char *path, const tk_report_meta *given, void **out, size_t *outn, tk_error *err)
{
	struct stat st;
	size_t n = 0;
	int missing;
	char *data = stat(path, &st) == 0 ? slurp(path, &n, &missing) : NULL;
	if (!data)
		return tk_error_set(err, "%s: %s", path, strerror(errno));
	int gz = n >= 2 && (unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b;
	void *part = data;
	size_t pn = n;
	if (!gz && gzip_bytes(data, n, 1, path, &part, &pn, err)) {
		free(data);
		return -1;
	}
	json_t *pj = json_pack("{s:s, s:I, s:I, s:s}", "name", path, "mtime_sec", (json_int_t)st.st_mtim.tv_sec,
	                       "mtime_nsec", (json_int_t)st.st_mtim.tv_nsec, "encoding", gz ? "none" : "gzip");
	char *pjson = pj ? json_dumps(pj, JSON_COMPACT) : NULL;
	json_decref(pj);
	if (!pjson) {
		if (part != data)
			free(part);
		free(data);
		return tk_error_set(err, "%s: cannot describe the profile (its name is not UTF-8?)", path);
	}
	char *raw = NULL;
	size_t rn = 0, rcap = 0;
	TK_GROW(raw, rcap, sizeof magic);
	memcpy(raw, magic, sizeof magic - 1);
	rn = sizeof magic - 1;
	put_part(&raw, &rcap, &rn, "profile.json", pjson, strlen(pjson));
	free(pjson);
	if (given) {
		size_t mn;
		char *m = meta_from_given(given, &mn);
		put_part(&raw, &rcap, &rn, "meta.json", m, mn);
		free(m);
	}
	put_part(&raw, &rcap, &rn, "profile", part, pn);
	if (part != data)
		free(part);
	free(data);
	/* the profile part is compressed already: the outer layer only has to be gzip */
	int rc = gzip_bytes(raw, rn, 1, path, out, outn, err);
	free(raw);
	return rc;
}

/* The common case in one call: a single gzip member whose trailer's size (ISIZE, the last 4 bytes)
 * is at most max and possible for its length (deflate expands at most 1032:1), inflated by libdeflate
 * into a buffer of exactly that size (a quarter of zlib's CPU, measured on the uploaders' packs),
 * its CRC-32 and size checked. Anything else (several members, a lying or wrapped size, corrupt data,
 * no memory) returns -1 and the streaming zlib reader below decides, with its own error messages. */
static int inflate_one(const void *body, size_t n, size_t max, char **out, size_t *outn)
{
	if (n < 18) /* a gzip header and trailer */
		return -1;
	const unsigned char *t = (const unsigned char *)body + n - 4;
	size_t isize = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
	if (isize > max || isize / 1032 > n)
		return -1;
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	if (!d)
		return -1;
	char *b = tk_xmalloc(isize + 1);
	size_t in_used = 0, got = 0;
	enum libdeflate_result r = libdeflate_gzip_decompress_ex(d, body, n, b, isize, &in_used, &got);
	libdeflate_free_decompressor(d);
	if (r != LIBDEFLATE_SUCCESS || in_used != n || got != isize) {
		free(b);
		return -1;
	}
	b[got] = 0;
	*out = b;
	*outn = got;
	return 0;
}

/* Inflate a whole gzip member (one or more, as gzip allows), at most max bytes out. */
static int inflate_all(const void *body, size_t n, size_t max, const char *name, char **out, size_t *outn,
                       tk_error *err)
{
	if (n < 2 || ((const unsigned char *)body)[0] != 0x1f || ((const unsigned char *)body)[1] != 0x8b)
		return tk_error_set(err, "%s: the body is not gzip'd (send the bundle with gzip)", name);
	if (inflate_one(body, n, max, out, outn) == 0)
		return 0;
	z_stream s = {0};
	if (inflateInit2(&s, 15 + 16) != Z_OK)
		return tk_error_set(err, "%s: zlib: cannot start", name);
	char *b = NULL;
	size_t cap = 0, len = 0;
	s.next_in = (unsigned char *)body;
	s.avail_in = (uInt)n;
	int rc = Z_OK;
	for (;;) {
		TK_GROW(b, cap, len + 65536);
		s.next_out = (unsigned char *)b + len;
		s.avail_out = (uInt)(cap - len);
		rc = inflate(&s, Z_NO_FLUSH);
		len = cap - s.avail_out;
		if (len > max) {
			inflateEnd(&s);
			free(b);
			return tk_error_set(err, "%s: the bundle inflates past %zu bytes", name, max);
		}
		if (rc == Z_STREAM_END) {
			if (s.avail_in == 0)
				break;
			inflateReset(&s); /* concatenated members */
			continue;
		}
		if (rc == Z_BUF_ERROR && s.avail_in == 0) {
			inflateEnd(&s);
			free(b);
			return tk_error_set(err, "%s: truncated gzip (the body ends inside the compressed stream)",
			                    name);
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			inflateEnd(&s);
			free(b);
			return tk_error_set(err, "%s: corrupt gzip: %s", name, s.msg ? s.msg : "bad data");
		}
	}
	inflateEnd(&s);
	b[len] = 0;
	*out = b;
	*outn = len;
	return 0;
}

double tk_store_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int tk_bundle_reports(const void *body, size_t n, size_t max_inflated, const char *name, const tk_report_meta *given,
                      tk_report_set *out, tk_error *err)
{
	tk_bundle_limits lim = {.max_inflated = max_inflated};
	return tk_bundle_decode(body, n, &lim, name, given, out, err) ? -1 : 0;
}

int tk_bundle_decode(const void *body, size_t n, const tk_bundle_limits *lim, const char *name,
                     const tk_report_meta *given, tk_report_set *out, tk_error *err)
{
	tk_bundle_bounds bounds = {.max_inflated = lim->max_inflated, .max_stacks = lim->max_stacks};
	if (lim->max_seconds > 0)
		bounds.deadline = tk_store_now() + lim->max_seconds;
	size_t max_inflated = lim->max_inflated;
	char *raw = NULL;
	size_t rn = 0;
	if (inflate_all(body, n, max_inflated, name, &raw, &rn, err))
		return strstr(err->msg, "inflates past") ? 1 : -1;
	int rc = 0;
	if (rn >= sizeof magic - 1 && memcmp(raw, magic, sizeof magic - 1) == 0) {
		/* one bundle, or several sessions' bundles back to back (a pack, `tracekit upload`): each
		 * decoded with its own meta.json and images.json, their reports in one set */
		size_t at = sizeof magic - 1;
		int nb = 0;
		while (!rc) {
			const char *part[NFILES] = {0};
			size_t plen[NFILES] = {0};
			size_t first = at;
			while (at < rn && !rc) {
				const char *line = raw + at, *nl = memchr(line, '\n', rn - at);
				if (nl && (size_t)(nl - line) + 1 == sizeof magic - 1 &&
				    memcmp(line, magic, sizeof magic - 1) == 0)
					break; /* the next bundle of a pack */
				char fname[32];
				unsigned long long size;
				int used = 0, got = 0;
				if (nl) { /* sscanf on the line alone: on raw it measured the rest of the pack each time */
					size_t ll = (size_t)(nl - line);
					char lb[256], *lp = ll < sizeof lb ? lb : tk_xmalloc(ll + 1);
					memcpy(lp, line, ll);
					lp[ll] = 0;
					got = sscanf(lp, "%31s %llu%n", fname, &size, &used);
					got = got == 2 && (size_t)used == ll;
					if (lp != lb)
						free(lp);
				}
				if (!got) {
					rc = tk_error_set(err, "%s: bundle byte %zu: expected \"NAME SIZE\"", name, at);
					break;
				}
				at = (size_t)(nl - raw) + 1;
				if (size > rn - at || rn - at - size < 1 || raw[at + size] != '\n') {
					rc = tk_error_set(err,
					                  "%s: bundle: %s: %llu bytes announced, the bundle ends first",
					                  name, fname, size);
					break;
				}
				int f = -1;
				for (int i = 0; i < NFILES; i++)
					if (strcmp(fname, files[i]) == 0)
						f = i;
				if (f < 0 || part[f]) {
					rc = tk_error_set(err,
					                  "%s: bundle: %s file '%s' (expected records, meta.json, "
					                  "images.json, profile, "
					                  "profile.json once each)",
					                  name, f < 0 ? "unknown" : "repeated", fname);
					break;
				}
				part[f] = raw + at;
				plen[f] = size;
				at += size + 1;
			}
			int more = !rc && at < rn; /* stopped at the next bundle's magic line */
			nb++;
			if (!rc && part[F_PROFILE] && (part[F_RECORDS] || part[F_IMAGES]))
				rc = tk_error_set(
				    err, "%s: bundle holds a profile and a session's files: send them apart", name);
			else if (!rc && !part[F_PROFILE] != !part[F_PROFILE_JSON])
				rc = tk_error_set(err, "%s: bundle: profile and profile.json go together", name);
			else if (!rc && !part[F_RECORDS] && !part[F_PROFILE])
				rc = tk_error_set(err, "%s: bundle %d (byte %zu) has no records or profile file", name,
				                  nb, first);
			else if (!rc && part[F_PROFILE] && (nb > 1 || more))
				rc = tk_error_set(err, "%s: a profile's bundle travels alone, not in a pack of bundles",
				                  name);
			/* a profile inflates again as it is read (streamed, never whole): bounded by the same
			 * size, and what its reader builds by lim's stacks and time */
			else if (!rc && part[F_PROFILE])
				rc = tk_profile_from_bundle(part[F_PROFILE], plen[F_PROFILE], part[F_PROFILE_JSON],
				                            plen[F_PROFILE_JSON], part[F_META], plen[F_META], name,
				                            &bounds, given, out, err);
			else if (!rc)
				rc = tk_reports_from_bytes(part[F_RECORDS], plen[F_RECORDS], part[F_META], plen[F_META],
				                           part[F_IMAGES], plen[F_IMAGES], name, given, out, err);
			if (!more)
				break;
			at += sizeof magic - 1;
		}
	} else {
		rc = tk_reports_from_bytes(raw, rn, NULL, 0, NULL, 0, name, given, out, err);
	}
	free(raw);
	return rc && bounds.over ? 1 : rc;
}
