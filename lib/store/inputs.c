/* Inputs → reports: Records files and sessions (reports.c), and every other input the readers take
 * (xctrace exports …) as one profile report; many inputs on several threads. Apart from reports.c so
 * the upload-bundle fuzzer, which parses Records only, links without the readers. */
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/internal.h"
#include "tracekit/apple_report.h"
#include "tracekit/metrickit.h"
#include "tracekit/read.h"
#include "tracekit/stats.h"
#include "tracekit/symbol.h"
#include "util/mem.h"

/* ---- profiles (xctrace exports and whatever else the readers take) → one profile report ---- */

/* The id: SHA-256 over "profile", the keys and the input's bytes, streamed. */
static int profile_id(const char *path, const char *const keys[TK_STORE_NKEYS], char hex[65], tk_error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return tk_error_set(err, "%s: %s", path, strerror(errno));
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	EVP_DigestUpdate(ctx, "profile", 8);
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		EVP_DigestUpdate(ctx, keys[k], strlen(keys[k]) + 1);
	static const size_t chunk = 1 << 16;
	char *buf = tk_xmalloc(chunk);
	size_t got;
	while ((got = fread(buf, 1, chunk, f)) > 0)
		EVP_DigestUpdate(ctx, buf, got);
	int bad = ferror(f);
	fclose(f);
	free(buf);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdn = 0;
	EVP_DigestFinal_ex(ctx, md, &mdn);
	EVP_MD_CTX_free(ctx);
	if (bad)
		return tk_error_set(err, "%s: read error", path);
	for (unsigned i = 0; i < 32 && i < mdn; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	return 0;
}

/* One profile report from an opened input: keys, time and id are the caller's (from the file on
 * disk for `tracekit ingest`, from the bundle for `tracekit serve --ingest`), so both give the
 * same stored row for the same file. */
typedef struct bounded_read {
	tk_bundle_bounds *b;
	const tk_profile *p;
	const char *name;
} bounded_read;

/* Before each read of an uploaded profile: the stacks built so far and the time taken. */
static int bound_check(void *ctx, tk_error *err)
{
	bounded_read *r = ctx;
	if (r->b->max_stacks && tk_stack_count(r->p) > r->b->max_stacks) {
		r->b->over = 1;
		return tk_error_set(err,
		                    "%s: the profile has more than %zu distinct stacks (the server's --max-stacks)",
		                    r->name, r->b->max_stacks);
	}
	if (r->b->deadline > 0 && tk_store_now() > r->b->deadline) {
		r->b->over = 1;
		return tk_error_set(err, "%s: the profile takes too long to read (the server's --max-seconds)",
		                    r->name);
	}
	return 0;
}

/* An Apple report is one incident, whatever form it came in (the .ips, the .crash text Xcode made of
 * it, symbolicated or not): its id is the SHA-256 of its kind, app and incident identifier, so the
 * same incident is stored once. Reports without an incident id keep their content hash. */
static int is_apple_report(const tk_profile *p)
{
	const char *f = tk_profile_meta(p, "format");
	return f && (!strcmp(f, "ips") || !strcmp(f, "crash") || !strcmp(f, "spindump"));
}

static void incident_id(tk_report *r)
{
	if (!r->rkey || !*r->rkey)
		return;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	EVP_DigestUpdate(ctx, "apple-report", 13);
	EVP_DigestUpdate(ctx, r->kind, strlen(r->kind) + 1);
	EVP_DigestUpdate(ctx, r->keys[TK_STORE_APP], strlen(r->keys[TK_STORE_APP]) + 1);
	EVP_DigestUpdate(ctx, r->rkey, strlen(r->rkey) + 1);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdn = 0;
	EVP_DigestFinal_ex(ctx, md, &mdn);
	EVP_MD_CTX_free(ctx);
	for (unsigned i = 0; i < 32 && i < mdn; i++)
		sprintf(r->id + 2 * i, "%02x", md[i]);
}

static int add_profile_input(tk_input *in, const char *source, const char *const keys[TK_STORE_NKEYS], double time,
                             const char id[65], tk_bundle_bounds *b, const tk_report_meta *given, tk_report_set *out,
                             tk_error *err)
{
	tk_profile *p = tk_profile_new();
	tk_read_options ro;
	tk_read_options_init(&ro);
	ro.event_context = 1;
	bounded_read br = {b, p, source};
	if (b)
		tk_input_set_check(in, bound_check, &br);
	int rc;
	size_t hn;
	const unsigned char *head = tk_input_head(in, &hn);
	if (given && given->read_report && tk_apple_report_sniff(head, hn))
		rc = given->read_report(given->read_report_ctx, in, p, err); /* frames named from dSYMs */
	else
		rc = tk_read_input(p, in, &ro, err);
	if (b)
		tk_input_set_check(in, NULL, NULL);
	if (!rc && b && bound_check(&br, err)) /* the last read's stacks too */
		rc = -1;
	if (rc < 0) {
		tk_profile_free(p);
		return -1;
	}
	if (tk_event_count(p)) { /* diagnostics, crash reports …: one report per event */
		char *mkeys[TK_STORE_NKEYS];
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			mkeys[k] = (char *)keys[k];
		size_t first = out->n;
		rc = tk_store_event_reports(&p, mkeys, NULL, out, err);
		if (!rc && is_apple_report(p))
			for (size_t i = first; i < out->n; i++)
				incident_id(&out->v[i]);
		tk_profile_free(p);
		return rc;
	}
	if (tk_elf_name_session(&p, NULL, err) < 0) {
		tk_profile_free(p);
		return -1;
	}
	/* the function table `tracekit stats --metric fn.…` builds for one input, so the values agree */
	tk_fntable *ft = tk_fntable_new();
	if (tk_fntable_add(ft, p, source, err) < 0) {
		tk_fntable_free(ft);
		tk_profile_free(p);
		return -1;
	}
	tk_profile_report r = {0};
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		r.keys[k] = tk_report_set_keep(out, keys[k]);
	r.time = time;
	memcpy(r.id, id, 65);
	r.source = tk_report_set_keep(out, source);
	r.unit = tk_report_set_keep(out, tk_unit_name(tk_profile_unit(p)));
	r.weight = (double)tk_profile_weight(p);
	r.threads = tk_thread_count(p);
	r.nfns = tk_fntable_nfunctions(ft);
	r.fns = tk_xcalloc(r.nfns ? r.nfns : 1, sizeof *r.fns);
	for (size_t f = 0; f < r.nfns; f++) {
		r.fns[f].name = tk_report_set_keep(out, tk_fntable_name(ft, f));
		r.fns[f].binary = tk_report_set_keep(out, tk_fntable_binary(ft, f));
		tk_fntable_values(ft, f, 0, &r.fns[f].self);
		tk_fntable_values(ft, f, 1, &r.fns[f].total);
	}
	TK_GROW(out->pv, out->pcap, out->pn + 1);
	out->pv[out->pn++] = r;
	tk_fntable_free(ft);
	tk_profile_free(p);
	return 0;
}

/* MetricKit payloads in JSON Lines (as servers keep them): each line read into a profile of its own
 * and turned into reports before the next, so memory is bounded by one payload and the model never
 * grows with the file. The reports are those of reading the file whole (MetricKit events carry
 * nothing of their position). Returns 0, -1 with err, or 2 when the file is not one payload a line
 * (read it whole then; out is left as it was). */
/* Reports a JSON Lines file hands to given->flush at a time (~5 KB each with their stacks). */
#define TK_LINES_FLUSH 4096

static int add_metrickit_lines(const char *path, const char *const keys[TK_STORE_NKEYS], const tk_report_meta *given,
                               tk_report_set *out, tk_error *err)
{
	tk_input *in = tk_input_open(path, err);
	if (!in)
		return -1;
	size_t hn;
	const unsigned char *head = tk_input_head(in, &hn);
	if (!tk_reader_metrickit.sniff(head, hn)) {
		tk_input_close(in);
		return 2;
	}
	size_t had = out->n, cap = 1 << 20, len = 0, lineno = 0, start = 0;
	char *buf = tk_xmalloc(cap);
	char *mkeys[TK_STORE_NKEYS];
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		mkeys[k] = (char *)keys[k];
	int rc = 0, eof = 0;
	int (*flush)(void *, const tk_report_set *, tk_error *) = given ? given->flush : NULL;
	tk_report_set part = {0}; /* with flush: the reports not yet handed over */
	tk_report_set *to = flush ? &part : out;
	size_t flushed = 0;
	while (!rc) {
		char *nl = memchr(buf + start, '\n', len - start);
		if (!nl && !eof) { /* more bytes: keep the partial line, read on */
			memmove(buf, buf + start, len - start);
			len -= start, start = 0;
			TK_GROW(buf, cap, len + (1 << 20));
			ptrdiff_t got = tk_input_read(in, buf + len, cap - len, err);
			if (got < 0)
				rc = -1;
			eof = got == 0;
			len += got > 0 ? (size_t)got : 0;
			continue;
		}
		size_t end = nl ? (size_t)(nl - buf) : len;
		char *line = buf + start;
		size_t ll = end - start;
		start = nl ? end + 1 : len;
		lineno++;
		while (ll && (line[ll - 1] == '\r' || line[ll - 1] == ' ' || line[ll - 1] == '\t'))
			ll--;
		size_t lead = 0;
		while (lead < ll && (line[lead] == ' ' || line[lead] == '\t'))
			lead++;
		if (lead < ll && !(line[lead] == '{' && line[ll - 1] == '}')) {
			rc = 2; /* pretty-printed, an array …: not one payload a line */
			if (flushed) /* some are stored already: reading it whole would repeat them */
				rc = tk_error_set(err,
				                  "%s:%zu: not a MetricKit payload on one line (the lines before were)",
				                  path, lineno);
			break;
		}
		if (lead < ll) {
			char name[4200];
			snprintf(name, sizeof name, "%s line %zu", path, lineno);
			tk_profile *p = tk_profile_new();
			tk_read_options ro;
			tk_read_options_init(&ro);
			ro.event_context = 1;
			tk_input *li = tk_input_open_mem(line + lead, ll - lead, name, err);
			rc = li ? tk_reader_metrickit.read(p, li, &ro, err) : -1;
			tk_input_close(li);
			if (!rc && tk_event_count(p))
				rc = tk_store_event_reports(&p, mkeys, NULL, to, err);
			tk_profile_free(p);
			if (!rc && flush && part.n >= TK_LINES_FLUSH) {
				flushed += part.n;
				rc = flush(given->flush_ctx, &part, err);
				tk_report_set_free(&part);
			}
		}
		if (!nl && eof)
			break;
	}
	if (!rc && flush && part.n)
		rc = flush(given->flush_ctx, &part, err);
	tk_report_set_free(&part);
	free(buf);
	tk_input_close(in);
	if (rc == 2) /* undo: the caller reads the file whole */
		out->n = had;
	return rc;
}

static int add_profile(const char *path, const tk_report_meta *given, tk_report_set *out, tk_error *err)
{
	const char *keys[TK_STORE_NKEYS];
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		keys[k] = given && given->keys[k] ? given->keys[k] : "";
	int lines = add_metrickit_lines(path, keys, given, out, err);
	if (lines != 2)
		return lines;
	struct stat st;
	double time = stat(path, &st) == 0 ? (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9 : 0;
	char id[65];
	if (profile_id(path, keys, id, err))
		return -1;
	tk_input *in = tk_input_open(path, err);
	if (!in)
		return -1;
	int rc = add_profile_input(in, path, keys, time, id, NULL, given, out, err);
	tk_input_close(in);
	return rc;
}

/* A plain file that is not a Records file is a profile input. */
static int is_profile_input(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
		return 0;
	tk_error err;
	tk_input *in = tk_input_open(path, &err);
	if (!in)
		return 0;
	size_t n;
	const unsigned char *head = tk_input_head(in, &n);
	int records = tk_reader_records.sniff(head, n);
	tk_input_close(in);
	return !records;
}

int tk_store_is_profile_input(const char *path)
{
	return is_profile_input(path);
}

/* ---- a profile uploaded in a bundle (docs/store.md) ---- */

static int keys_from_meta(const char *data, size_t n, const char *name, char *keys[TK_STORE_NKEYS], tk_error *err)
{
	json_error_t je;
	json_t *root = json_loadb(data, n, 0, &je);
	if (!root || !json_is_object(root)) {
		json_decref(root);
		return tk_error_set(err, "%s: meta.json is not a JSON object", name);
	}
	int rc = 0;
	for (int k = 0; k < TK_STORE_NKEYS && !rc; k++) {
		json_t *v = json_object_get(root, tk_store_key_names[k]);
		if (v && !json_is_string(v))
			rc = tk_error_set(err, "%s: meta.json: \"%s\" is not a string", name, tk_store_key_names[k]);
		else if (v)
			keys[k] = tk_xstrdup(json_string_value(v));
	}
	json_decref(root);
	return rc;
}

int tk_profile_from_bundle(const void *data, size_t n, const char *pjson, size_t pn, const char *meta, size_t mn,
                           const char *name, tk_bundle_bounds *b, const tk_report_meta *given, tk_report_set *out,
                           tk_error *err)
{
	size_t max_inflated = b->max_inflated;
	/* profile.json: {"name":…, "mtime_sec":…, "mtime_nsec":…, "encoding":"gzip"|"none"} */
	json_error_t je;
	json_t *root = json_loadb(pjson, pn, 0, &je);
	json_t *jname = json_object_get(root, "name"), *jsec = json_object_get(root, "mtime_sec"),
	       *jnsec = json_object_get(root, "mtime_nsec"), *jenc = json_object_get(root, "encoding");
	if (!root || !json_is_object(root) || !json_is_string(jname) || !json_is_integer(jsec) ||
	    !json_is_integer(jnsec) || !json_is_string(jenc) || json_integer_value(jnsec) < 0 ||
	    json_integer_value(jnsec) > 999999999 ||
	    (strcmp(json_string_value(jenc), "gzip") != 0 && strcmp(json_string_value(jenc), "none") != 0)) {
		json_decref(root);
		return tk_error_set(err,
		                    "%s: bundle: profile.json must be {\"name\":STRING, \"mtime_sec\":INT, "
		                    "\"mtime_nsec\":0..999999999, \"encoding\":\"gzip\"|\"none\"}",
		                    name);
	}
	char *source = tk_xstrdup(json_string_value(jname));
	int uploader_gzip = strcmp(json_string_value(jenc), "gzip") == 0;
	double time = (double)json_integer_value(jsec) + (double)json_integer_value(jnsec) / 1e9;
	json_decref(root);

	char *mkeys[TK_STORE_NKEYS] = {0};
	const char *keys[TK_STORE_NKEYS];
	int rc = meta ? keys_from_meta(meta, mn, name, mkeys, err) : 0;
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		keys[k] = mkeys[k] ? mkeys[k] : "";
	tk_input *in = NULL;
	/* First pass: the id (SHA-256 of the file as it was on the device: the bytes sent, or, when the
	 * uploader gzip'd it, the inflated bytes), the inflated size bounded, and what it is. The
	 * profile is streamed from memory twice, never inflated whole. */
	if (!rc && !(in = tk_input_open_mem(data, n, source, err)))
		rc = -1;
	if (!rc && uploader_gzip && !tk_input_is_gzip(in))
		rc = tk_error_set(err, "%s: bundle: profile.json says gzip but the profile is not gzip'd", name);
	if (!rc) {
		size_t hn;
		const unsigned char *head = tk_input_head(in, &hn);
		if (tk_reader_records.sniff(head, hn))
			rc = tk_error_set(
			    err, "%s: bundle: the profile is a Records file (send it as a session's records)", name);
		else if (!tk_reader_find(head, hn))
			rc = tk_error_set(err, "%s: bundle: the profile is in no format tracekit reads", name);
	}
	char id[65] = "";
	if (!rc) {
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
		EVP_DigestUpdate(ctx, "profile", 8);
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			EVP_DigestUpdate(ctx, keys[k], strlen(keys[k]) + 1);
		if (!uploader_gzip)
			EVP_DigestUpdate(ctx, data, n);
		static const size_t chunk = 1 << 16;
		char *buf = tk_xmalloc(chunk);
		size_t total = 0;
		ptrdiff_t got;
		while ((got = tk_input_read(in, buf, chunk, err)) > 0) {
			total += (size_t)got;
			if (total > max_inflated) {
				b->over = 1;
				rc = tk_error_set(err, "%s: the profile inflates past %zu bytes", name, max_inflated);
				break;
			}
			if (uploader_gzip)
				EVP_DigestUpdate(ctx, buf, (size_t)got);
		}
		if (got < 0)
			rc = -1;
		free(buf);
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned int mdn = 0;
		EVP_DigestFinal_ex(ctx, md, &mdn);
		EVP_MD_CTX_free(ctx);
		for (unsigned i = 0; i < 32 && i < mdn; i++)
			sprintf(id + 2 * i, "%02x", md[i]);
	}
	if (in)
		tk_input_close(in);
	in = NULL;
	if (!rc && !(in = tk_input_open_mem(data, n, source, err)))
		rc = -1;
	if (!rc)
		rc = add_profile_input(in, source, keys, time, id, b, given, out, err);
	if (in)
		tk_input_close(in);
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		free(mkeys[k]);
	free(source);
	return rc;
}

int tk_reports_from_path(const char *path, const tk_report_meta *given, tk_report_set *out, tk_error *err)
{
	if (is_profile_input(path))
		return add_profile(path, given, out, err);
	return tk_reports_from_records_path(path, given, out, err);
}

/* ---- many inputs at once ---- */

typedef struct par {
	const char *const *paths;
	size_t n;
	const tk_report_meta *given;
	tk_report_set *out;
	tk_error *errs;
	int *rc;
	size_t next; /* guarded by mu */
	pthread_mutex_t mu;
} par;

static void *worker(void *arg)
{
	par *P = arg;
	for (;;) {
		pthread_mutex_lock(&P->mu);
		size_t i = P->next++;
		pthread_mutex_unlock(&P->mu);
		if (i >= P->n)
			return NULL;
		P->rc[i] = tk_reports_from_path(P->paths[i], P->given, &P->out[i], &P->errs[i]);
	}
}

void tk_reports_from_paths(const char *const *paths, size_t n, const tk_report_meta *given, unsigned threads,
                           tk_report_set *out, int *rc, tk_error *errs)
{
	par P = {.paths = paths, .n = n, .given = given, .out = out, .errs = errs, .rc = rc};
	if (given && given->name_frames)
		threads = 1;
	memset(out, 0, n * sizeof *out);
	if (threads > 64)
		threads = 64;
	pthread_mutex_init(&P.mu, NULL);
	json_object_seed(0); /* jansson's hash seed is set once, before threads use it */
	pthread_t tid[64];
	unsigned started = 0;
	for (unsigned t = 1; t < threads; t++)
		if (pthread_create(&tid[started], NULL, worker, &P) == 0)
			started++;
	worker(&P); /* this thread works too */
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	pthread_mutex_destroy(&P.mu);
}

/* ---- MetricKit payloads POSTed as the app has them (docs/metrickit.md) ---- */

int tk_payload_reports(const void *body, size_t n, const tk_bundle_limits *lim, const char *name,
                       const tk_report_meta *given, tk_report_set *out, tk_error *err)
{
	tk_input *in = tk_input_open_mem(body, n, name, err);
	if (!in)
		return -1;
	size_t hn;
	const unsigned char *head = tk_input_head(in, &hn);
	if (!tk_reader_metrickit.sniff(head, hn)) {
		tk_input_close(in);
		return 2;
	}
	const char *keys[TK_STORE_NKEYS];
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		keys[k] = given && given->keys[k] ? given->keys[k] : "";
	tk_bundle_bounds b = {.max_inflated = lim->max_inflated, .max_stacks = lim->max_stacks};
	if (lim->max_seconds > 0)
		b.deadline = tk_store_now() + lim->max_seconds;
	static const char no_id[65] = "";
	size_t had = out->pn;
	int rc = add_profile_input(in, name, keys, 0, no_id, &b, given, out, err);
	tk_input_close(in);
	if (!rc && out->pn != had) /* payloads with no diagnostic and no metrics: nothing to store */
		rc = tk_error_set(err, "%s: the MetricKit payloads hold no diagnostic or metrics", name);
	return rc ? (b.over ? 1 : -1) : 0;
}
