/*
 * heaviest — the smallest program on libtracekit's public API: read any profile tracekit reads,
 * print its unit, total weight, the version of the library it runs with, and the heaviest thread.
 *
 *   cc -Iinclude heaviest.c build/libtracekit.a <LIB_LDLIBS> -o heaviest
 *
 * It links the analysis library alone: no SQLite, curl, microhttpd or OpenSSL (those are in
 * libtracekit-store.a, for programs that use the fleet store). make builds it that way.
 */
#include <stdio.h>

#include "tracekit/tracekit.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: heaviest PROFILE\n");
		return 2;
	}
	tk_profile *p = tk_profile_new();
	tk_error err = {{0}};
	if (tk_read_path(p, argv[1], NULL, &err) < 0) {
		fprintf(stderr, "heaviest: %s\n", err.msg);
		tk_profile_free(p);
		return 1;
	}
	size_t best = SIZE_MAX;
	for (size_t t = 0; t < tk_thread_count(p); t++)
		if (best == SIZE_MAX || tk_thread_get(p, (tk_thread_id)t)->weight > tk_thread_get(p, (tk_thread_id)best)->weight)
			best = t;
	printf("libtracekit %s (%u)\n", tk_version_string(), tk_version_number());
	printf("unit %s, weight %llu, %zu threads\n", tk_unit_name(tk_profile_unit(p)),
	       (unsigned long long)tk_profile_weight(p), tk_thread_count(p));
	if (best != SIZE_MAX) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)best);
		printf("heaviest thread: %s (tid %llu), weight %llu\n", th->name ? tk_string(p, th->name) : "(unnamed)",
		       (unsigned long long)th->tid, (unsigned long long)th->weight);
	}
	tk_profile_free(p);
	return 0;
}
