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

static int add_profile(const char *path, const tk_report_meta *given, tk_report_set *out, tk_error *err)
{
	tk_profile *p = tk_profile_new();
	tk_read_options ro;
	tk_read_options_init(&ro);
	if (tk_read_path(p, path, &ro, err) < 0 || tk_elf_name_session(&p, NULL, err) < 0) {
		tk_profile_free(p);
		return -1;
	}
	/* the function table `tracekit stats --metric fn.…` builds for one input, so the values agree */
	tk_fntable *ft = tk_fntable_new();
	if (tk_fntable_add(ft, p, path, err) < 0) {
		tk_fntable_free(ft);
		tk_profile_free(p);
		return -1;
	}
	tk_profile_report r = {0};
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		r.keys[k] = tk_report_set_keep(out, given && given->keys[k] ? given->keys[k] : "");
	struct stat st;
	r.time = stat(path, &st) == 0 ? (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9 : 0;
	int rc = profile_id(path, r.keys, r.id, err);
	if (rc == 0) {
		r.source = tk_report_set_keep(out, path);
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
	}
	tk_fntable_free(ft);
	tk_profile_free(p);
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
