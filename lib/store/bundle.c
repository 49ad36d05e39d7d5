/* Upload bundles: a session directory's files in one gzip'd body (docs/store.md).
 *
 *   tracekit-bundle 1\n
 *   records 1234\n<1234 bytes>\n
 *   meta.json 56\n<56 bytes>\n
 *   images.json 789\n<789 bytes>\n
 *
 * A plain framing rather than tar: three known files, sizes up front, nothing to unpack to disk,
 * and a decoder small enough to read whole. A gzip'd bare Records file is accepted too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "store/internal.h"
#include "util/mem.h"

static const char magic[] = "tracekit-bundle 1\n";
static const char *const files[] = {"records", "meta.json", "images.json"};
enum { F_RECORDS, F_META, F_IMAGES, NFILES };

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

int tk_bundle_make(const char *dir, const tk_report_meta *given, void **out, size_t *outn, tk_error *err)
{
	char *raw = NULL;
	size_t rn = 0, rcap = 0;
	TK_GROW(raw, rcap, sizeof magic);
	memcpy(raw, magic, sizeof magic - 1);
	rn = sizeof magic - 1;
	for (int i = 0; i < NFILES; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		size_t n = 0;
		int missing;
		char *data = slurp(path, &n, &missing);
		if (!data && (i == F_RECORDS || !missing)) {
			free(raw);
			return tk_error_set(err, "%s: %s", path, strerror(missing ? ENOENT : errno));
		}
		if (!data && i == F_META && given) {
			/* no meta.json: the uploader's --set keys travel as one */
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
			data = tk_xstrndup(m, ml);
			n = ml;
		}
		if (!data)
			continue;
		char head[64];
		int hl = snprintf(head, sizeof head, "%s %zu\n", files[i], n);
		TK_GROW(raw, rcap, rn + (size_t)hl + n + 1);
		memcpy(raw + rn, head, (size_t)hl);
		memcpy(raw + rn + hl, data, n);
		raw[rn + (size_t)hl + n] = '\n';
		rn += (size_t)hl + n + 1;
		free(data);
	}
	uLongf zn = compressBound(rn) + 32;
	unsigned char *z = tk_xmalloc(zn);
	z_stream s = {0};
	if (deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(raw), free(z);
		return tk_error_set(err, "%s: zlib: cannot start compressing", dir);
	}
	s.next_in = (unsigned char *)raw;
	s.avail_in = (uInt)rn;
	s.next_out = z;
	s.avail_out = (uInt)zn;
	int rc = deflate(&s, Z_FINISH);
	deflateEnd(&s);
	free(raw);
	if (rc != Z_STREAM_END) {
		free(z);
		return tk_error_set(err, "%s: zlib: compression failed", dir);
	}
	*out = z;
	*outn = s.total_out;
	return 0;
}

/* Inflate a whole gzip member (one or more, as gzip allows), at most max bytes out. */
static int inflate_all(const void *body, size_t n, size_t max, const char *name, char **out, size_t *outn,
                       tk_error *err)
{
	if (n < 2 || ((const unsigned char *)body)[0] != 0x1f || ((const unsigned char *)body)[1] != 0x8b)
		return tk_error_set(err, "%s: the body is not gzip'd (send the bundle with gzip)", name);
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

int tk_bundle_reports(const void *body, size_t n, size_t max_inflated, const char *name, const tk_report_meta *given,
                      tk_report_set *out, tk_error *err)
{
	char *raw = NULL;
	size_t rn = 0;
	if (inflate_all(body, n, max_inflated, name, &raw, &rn, err))
		return -1;
	const char *part[NFILES] = {0};
	size_t plen[NFILES] = {0};
	int rc = 0;
	if (rn >= sizeof magic - 1 && memcmp(raw, magic, sizeof magic - 1) == 0) {
		size_t at = sizeof magic - 1;
		while (at < rn && !rc) {
			const char *line = raw + at, *nl = memchr(line, '\n', rn - at);
			char fname[32];
			unsigned long long size;
			int used = 0;
			if (!nl || sscanf(line, "%31s %llu%n", fname, &size, &used) != 2 || line + used != nl) {
				rc = tk_error_set(err, "%s: bundle byte %zu: expected \"NAME SIZE\"", name, at);
				break;
			}
			at = (size_t)(nl - raw) + 1;
			if (size > rn - at || rn - at - size < 1 || raw[at + size] != '\n') {
				rc = tk_error_set(err, "%s: bundle: %s: %llu bytes announced, the bundle ends first",
				                  name, fname, size);
				break;
			}
			int f = -1;
			for (int i = 0; i < NFILES; i++)
				if (strcmp(fname, files[i]) == 0)
					f = i;
			if (f < 0 || part[f]) {
				rc = tk_error_set(
				    err,
				    "%s: bundle: %s file '%s' (expected records, meta.json, images.json once each)",
				    name, f < 0 ? "unknown" : "repeated", fname);
				break;
			}
			part[f] = raw + at;
			plen[f] = size;
			at += size + 1;
		}
		if (!rc && !part[F_RECORDS])
			rc = tk_error_set(err, "%s: bundle has no records file", name);
	} else {
		part[F_RECORDS] = raw;
		plen[F_RECORDS] = rn;
	}
	if (!rc)
		rc = tk_reports_from_bytes(part[F_RECORDS], plen[F_RECORDS], part[F_META], plen[F_META], part[F_IMAGES],
		                           plen[F_IMAGES], name, given, out, err);
	free(raw);
	return rc;
}
