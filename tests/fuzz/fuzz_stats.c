/* libFuzzer harness over the two parsers of untrusted text in lib/stats: files of numbers
 * (tk_values_read_input, exact and past a tiny memory limit) and the sketch's text form
 * (tk_sketch_read, then every query on what it accepted). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracekit/read.h"
#include "tracekit/stats.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	tk_error err;
	for (int limit = 0; limit < 2; limit++) {
		tk_input *in = tk_input_open_mem(data, n, "fuzz", &err);
		if (!in)
			continue;
		tk_values *v = tk_values_new(limit ? 64 : 0);
		if (tk_values_read_input(v, in, NULL, NULL, &err) >= 0) {
			tk_summary s;
			if (tk_values_summary(v, &s, &err) == 0 && s.count && !(s.min <= s.pct[0] && s.pct[4] <= s.max))
				abort(); /* percentiles outside [min, max] */
		}
		tk_values_free(v);
		tk_input_close(in);
	}
	FILE *f = fmemopen((void *)data, n ? n : 1, "r");
	if (f) {
		char *m = NULL, *u = NULL;
		tk_sketch *s = n ? tk_sketch_read(f, "fuzz", &m, &u, &err) : NULL;
		if (s) {
			tk_summary sum;
			tk_sketch_summary(s, &sum);
			for (double q = 0; q <= 1; q += 0.125)
				(void)tk_sketch_quantile(s, q);
			(void)tk_sketch_rank(s, 1);
			tk_sketch *t = tk_sketch_new();
			tk_sketch_merge(t, s, &err);
			tk_sketch_free(t);
			FILE *o = fopen("/dev/null", "w");
			if (o) {
				tk_sketch_write(o, s, m, u, &err);
				fclose(o);
			}
			tk_sketch_free(s);
		}
		free(m), free(u);
		fclose(f);
	}
	return 0;
}
