/* dash_get — the dashboard answered in-process (tk_dashboard_get), no HTTP: each request's first
 * answer's CPU time and its body written to a file, so two builds' answers on copies of one store
 * can be compared byte for byte and timed without curl or a server.
 *
 *   dash_get URL NOW OUTDIR PATH?ARGS…     one line per request: "CPU ms  bytes  status  PATH?ARGS",
 *                                          its body in OUTDIR/N.body (N from 0, in argument order)
 *
 * NOW is the present (Unix seconds) the pages take since= from, fixed so two runs agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracekit/dashboard.h"

typedef struct args {
	char *k[32], *v[32];
	int n;
} args;

static int hexval(int c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
	                              : -1;
}

static char *decode(const char *s, size_t n)
{
	char *o = malloc(n + 1), *w = o;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n + 0 + 1 && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			*w++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			*w++ = s[i] == '+' ? ' ' : s[i];
		}
	}
	*w = 0;
	return o;
}

static const char *arg(void *ctx, const char *name)
{
	args *a = ctx;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->k[i], name) == 0)
			return a->v[i];
	return NULL;
}

static double cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return fprintf(stderr, "usage: dash_get URL NOW OUTDIR PATH?ARGS…\n"), 2;
	tk_error err = {0};
	double t0 = cpu();
	tk_store *s = tk_store_open(argv[1], &err);
	if (!s)
		return fprintf(stderr, "%s\n", err.msg), 1;
	printf("%8.0f  open\n", (cpu() - t0) * 1e3);
	tk_dashboard_options o = {.rules = NULL, .now = atof(argv[2])};
	for (int i = 4; i < argc; i++) {
		char *path = strdup(argv[i]), *q = strchr(path, '?');
		args a = {0};
		if (q) {
			*q++ = 0;
			for (char *p = q; *p && a.n < 32;) {
				size_t len = strcspn(p, "&"), eq = strcspn(p, "=");
				if (eq > len)
					eq = len;
				a.k[a.n] = decode(p, eq);
				a.v[a.n++] = decode(p + eq + (eq < len), len - eq - (eq < len));
				p += len + (p[len] == '&');
			}
		}
		tk_dashboard_response r = {0};
		t0 = cpu();
		unsigned st = tk_dashboard_get(s, &o, path, arg, &a, &r);
		double ms = (cpu() - t0) * 1e3;
		char fn[4096];
		snprintf(fn, sizeof fn, "%s/%d.body", argv[3], i - 4);
		FILE *f = fopen(fn, "wb");
		if (f) {
			fwrite(r.body, 1, r.n, f);
			fclose(f);
		}
		printf("%8.0f  %9zu  %u  %s\n", ms, r.n, st, argv[i]);
		fflush(stdout);
		tk_dashboard_response_free(&r);
		for (int k = 0; k < a.n; k++)
			free(a.k[k]), free(a.v[k]);
		free(path);
	}
	tk_store_close(s);
	return 0;
}
