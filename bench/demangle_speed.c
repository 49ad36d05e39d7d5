/*
 * demangle_speed: throughput of tk_swift_demangle on a list of names (one per line), repeated to
 * COUNT names; prints "names N seconds S (CPU) names_per_s R demangled D bytes B" for the full form,
 * then for the simplified form. Used by bench/bench_demangle.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracekit/symbol.h"

/* CPU time of the process: the bench machine is shared, wall time would measure the neighbours */
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: demangle_speed NAMES.txt COUNT\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f)
		return perror(argv[1]), 1;
	long count = atol(argv[2]);
	char **names = NULL;
	size_t *lens = NULL, n = 0;
	char line[8192];
	while (fgets(line, sizeof line, f)) {
		size_t l = strcspn(line, "\n");
		if (!l)
			continue;
		names = realloc(names, (n + 1) * sizeof *names);
		lens = realloc(lens, (n + 1) * sizeof *lens);
		names[n] = strndup(line, l);
		lens[n++] = l;
	}
	fclose(f);
	if (!n)
		return 1;
	static char out[16384];
	for (int flags = 0; flags < 2; flags++) {
		size_t ok = 0, bytes = 0;
		double t0 = now();
		for (long i = 0; i < count; i++) {
			size_t k = (size_t)i % n;
			size_t r = tk_swift_demangle(names[k], lens[k], out, sizeof out, flags);
			ok += r != 0;
			bytes += r;
		}
		double dt = now() - t0;
		printf("%s names %ld seconds %.3f names_per_s %.0f demangled %zu bytes %zu\n",
		       flags ? "simplified" : "full", count, dt, (double)count / dt, ok, bytes);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(lens);
	return 0;
}
