/* The symbolication step alone, in process (bench/bench_metrickit.sh): read a payload, then
 * symbolicate it both ways, best CPU time of 3 each (MX_ROUNDS) — tk_symbolicate_profile (a derived profile,
 * as before) and tk_symbolicate_profile_take (in place, what --symbols runs). Prints
 * "derive SECONDS take SECONDS frames-resolved N first-take SECONDS faults N", the first in-place
 * round's time and page faults (what a `tracekit … --symbols` process pays: its tables' memory is new
 * to the process; on a virtual machine a fault can cost ~20 us).
 *
 *   mx_symstep PAYLOAD SYMBOL_PATH */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "tracekit/read.h"
#include "tracekit/symbol.h"

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long minor_faults(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_minflt;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: mx_symstep PAYLOAD SYMBOL_PATH\n");
		return 2;
	}
	double best[2] = {1e9, 1e9}, first_take = -1;
	long first_faults = -1;
	size_t resolved = 0;
	const char *r = getenv("MX_ROUNDS"); /* best of MX_ROUNDS (3) each: a loaded machine needs more */
	int rounds = r && atoi(r) > 0 ? atoi(r) : 3;
	for (int round = 0; round < 2 * rounds; round++) {
		int take = round & 1;
		tk_error err;
		tk_profile *p = tk_profile_new();
		if (tk_read_path(p, argv[1], NULL, &err) != 0) {
			fprintf(stderr, "mx_symstep: %s\n", err.msg);
			return 1;
		}
		tk_symbolicator *s = tk_symbolicator_new(NULL);
		if (tk_symbolicator_add_path(s, argv[2], &err) < 0) {
			fprintf(stderr, "mx_symstep: %s\n", err.msg);
			return 1;
		}
		tk_symbolicate_options o;
		tk_symbolicate_options_init(&o);
		o.resolved = &resolved;
		long f0 = minor_faults();
		double t0 = cpu_now();
		tk_profile *q =
		    take ? tk_symbolicate_profile_take(p, s, &o, &err) : tk_symbolicate_profile(p, s, &o, &err);
		if (!take)
			tk_profile_free(p);
		double t = cpu_now() - t0;
		long faults = minor_faults() - f0;
		if (!q) {
			fprintf(stderr, "mx_symstep: %s\n", err.msg);
			return 1;
		}
		if (t < best[take])
			best[take] = t;
		if (take && first_take < 0)
			first_take = t, first_faults = faults;
		tk_profile_free(q);
		tk_symbolicator_free(s);
	}
	printf("derive %.4f take %.4f frames-resolved %zu first-take %.4f faults %ld\n", best[0], best[1], resolved,
	       first_take, first_faults);
	return 0;
}
