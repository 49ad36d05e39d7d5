/*
 * xml_speed FILE [fast|libxml2|model] — throughput of a tokenizer alone (no-op callbacks) or of
 * the whole reader (XML → model), in MB/s. Not a test: a measuring tool for the tokenizer choice
 * (`make read-speed`; numbers are recorded in docs, not asserted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "read/xml.h"
#include "tracekit/read.h"

static unsigned long long nev;
static int on_start(void *c, const char *n, size_t l, const tk_xml_attr *a, size_t na)
{
	nev++;
	return 0;
}
static int on_text(void *c, const char *s, size_t n)
{
	return 0;
}
static int on_end(void *c, const char *n, size_t l)
{
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		return 1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		return 1;
	fclose(f);
	struct timespec t0, t1;
	struct rusage u0, u1;
	getrusage(RUSAGE_SELF, &u0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	tk_error err;
	int rc = 0;
	if (strcmp(argv[2], "model") == 0 || strcmp(argv[2], "model-libxml2") == 0) {
		tk_profile *p = tk_profile_new();
		tk_read_options o;
		tk_read_options_init(&o);
		o.tokenizer = strcmp(argv[2], "model") == 0 ? TK_READ_TOKENIZER_FAST : TK_READ_TOKENIZER_LIBXML2;
		tk_input *in = tk_input_open_mem(buf, (size_t)n, argv[1], &err);
		rc = in ? tk_read_input(p, in, &o, &err) : -1;
		tk_input_close(in);
		tk_profile_free(p);
	} else {
		static const tk_xml_events ev = {on_start, on_text, on_end};
		tk_xml *x =
		    tk_xml_new(strcmp(argv[2], "libxml2") == 0 ? TK_XML_LIBXML2 : TK_XML_FAST, &ev, NULL, argv[1], 1);
		for (long off = 0; off <= n && rc == 0; off += 256 * 1024) {
			long k = n - off < 256 * 1024 ? n - off : 256 * 1024;
			rc = tk_xml_feed(x, buf + off, (size_t)k, off + k >= n, &err);
			if (off + k >= n)
				break;
		}
		tk_xml_free(x);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &u1);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	double cpu = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) + (u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) / 1e6 +
	             (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) + (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) / 1e6;
	printf("%-14s %8.1f MB in %6.3f s wall = %7.1f MB/s; %6.3f s CPU = %7.1f MB/s\n", argv[2], n / 1e6, s,
	       n / 1e6 / s, cpu, n / 1e6 / cpu);
	free(buf);
	return 0;
}
