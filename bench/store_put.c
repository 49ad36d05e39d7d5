/* store_put — the store's own ingest rate: N generated reports (already parsed) put in batches.
 *
 *   store_put URL N [BATCH]      prints "put N reports in S s = R reports/s"
 *   store_put URL DIR [BATCH]    the reports of DIR's session directories (storegen's, with their
 *                                stacks), read first, then put: the store's CPU per report alone
 *
 * The end-to-end rate of `tracekit ingest` also includes parsing the Records files (bench_store.sh
 * measures both); this isolates what one SQLite file or one ClickHouse node takes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#include "tracekit/store.h"

static unsigned long long rng = 88172645463325252ull;
static unsigned long long next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}
static double unif(void)
{
	return (double)(next() >> 11) / 9007199254740992.0;
}

void tk_report_set_id(tk_report *r); /* lib/store/internal.h */

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static double thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The reports of dir's sessions (in name order), read on 2 threads, put in batches; the putting
 * thread's CPU time is the store's cost. */
static int put_sessions(const char *url, const char *dir, size_t batch)
{
	DIR *d = opendir(dir);
	if (!d)
		return perror(dir), 1;
	char **paths = NULL;
	size_t np = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		size_t len = strlen(dir) + strlen(e->d_name) + 2;
		char *path = malloc(len);
		snprintf(path, len, "%s/%s", dir, e->d_name);
		struct stat ps;
		if (stat(path, &ps) != 0 || !S_ISDIR(ps.st_mode)) { /* storegen's truth.tsv beside them */
			free(path);
			continue;
		}
		paths = realloc(paths, (np + 1) * sizeof *paths);
		paths[np++] = path;
	}
	closedir(d);
	qsort(paths, np, sizeof *paths, cmp_path);
	tk_report_set *sets = calloc(np ? np : 1, sizeof *sets);
	int *rc = calloc(np ? np : 1, sizeof *rc);
	tk_error *errs = calloc(np ? np : 1, sizeof *errs);
	tk_reports_from_paths((const char *const *)paths, np, NULL, 2, sets, rc, errs);
	size_t n = 0;
	for (size_t i = 0; i < np; i++) {
		if (rc[i])
			return fprintf(stderr, "%s\n", errs[i].msg), 1;
		n += sets[i].n;
	}
	tk_report *v = malloc((n ? n : 1) * sizeof *v);
	for (size_t i = 0, k = 0; i < np; k += sets[i++].n)
		memcpy(v + k, sets[i].v, sets[i].n * sizeof *v);
	tk_error err;
	tk_store *st = tk_store_open(url, &err);
	if (!st)
		return fprintf(stderr, "%s\n", err.msg), 1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double c0 = thread_cpu();
	size_t added = 0;
	for (size_t at = 0; at < n; at += batch) {
		size_t k = n - at < batch ? n - at : batch, a;
		if (tk_store_put(st, v + at, k, &a, &err))
			return fprintf(stderr, "%s\n", err.msg), 1;
		added += a;
	}
	double cpu = thread_cpu() - c0;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("put %zu reports of %zu sessions (%zu new) in %.2f s = %.0f reports/s; CPU %.3f s = %.1f us/report\n", n,
	       np, added, dt, (double)n / dt, cpu, n ? cpu * 1e6 / (double)n : 0.0);
	tk_store_close(st);
	for (size_t i = 0; i < np; i++)
		tk_report_set_free(&sets[i]), free(paths[i]);
	free(sets), free(rc), free(errs), free(paths), free(v);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: store_put URL N [BATCH]\n");
		return 2;
	}
	struct stat sd;
	if (stat(argv[2], &sd) == 0 && S_ISDIR(sd.st_mode))
		return put_sessions(argv[1], argv[2], argc > 3 ? strtoull(argv[3], NULL, 10) : 100000);
	size_t n = strtoull(argv[2], NULL, 10), batch = argc > 3 ? strtoull(argv[3], NULL, 10) : 50000;
	static const char *const versions[] = {"5.0", "5.1", "5.2"};
	static const char *const devices[] = {"iPhone12,1", "iPhone13,2", "iPhone14,5", "iPhone15,3", "iPad13,4"};
	static const char *const oses[] = {"iOS 16.7", "iOS 17.2", "iOS 17.5"};
	char sigs[24][160];
	for (int s = 0; s < 24; s++)
		snprintf(sigs[s], sizeof sigs[s], "Atlas+0x%llx;Atlas+0x%llx;Atlas+0x%llx;Atlas+0x%llx;Atlas+0x%llx",
		         next() % 0x200000, next() % 0x200000, next() % 0x200000, next() % 0x200000, next() % 0x200000);
	char(*sess)[24] = malloc(n / 10 + 1 ? (n / 10 + 1) * 24 : 24);
	char(*keys)[24] = malloc(n * 24);
	tk_report *v = calloc(n, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		size_t s = i / 10;
		if (i % 10 == 0)
			snprintf(sess[s], 24, "bench-%zu", s);
		int ver = (int)(s % 3);
		tk_report *r = &v[i];
		r->kind = "hang";
		r->keys[TK_STORE_APP] = "Atlas";
		r->keys[TK_STORE_VERSION] = versions[ver];
		r->keys[TK_STORE_BUILD] = "";
		r->keys[TK_STORE_DEVICE] = devices[s % 5];
		r->keys[TK_STORE_OS] = oses[(s / 5) % 3];
		r->keys[TK_STORE_SESSION] = sess[s];
		snprintf(keys[i], 24, "%zu", i);
		r->rkey = keys[i];
		r->time = 1795000000.0 + unif() * 7 * 86400;
		double z = sqrt(-2 * log(unif() + 1e-300)) * cos(2 * M_PI * unif());
		r->duration = (double)(250 + (long)floor(exp(log(400.0) + 0.25 * ver + 0.8 * z))) / 1000;
		r->avg_cpu = NAN;
		r->samples = 10;
		r->thread = "main";
		r->signature = sigs[(int)floor(pow(unif(), 2.0) * 24)];
		tk_report_set_id(r);
	}
	tk_error err;
	tk_store *st = tk_store_open(argv[1], &err);
	if (!st) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t at = 0; at < n; at += batch) {
		size_t k = n - at < batch ? n - at : batch;
		if (tk_store_put(st, v + at, k, NULL, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("put %zu reports in %.2f s = %.0f reports/s\n", n, dt, (double)n / dt);
	tk_store_close(st);
	free(v), free(keys), free(sess);
	return 0;
}
