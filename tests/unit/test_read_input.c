/* tk_input: plain and gzip'd streams (one and several members), truncation, sniff head, registry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "tracekit/read.h"

static unsigned char *gz(const void *data, size_t n, size_t *out_n)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	size_t cap = deflateBound(&z, n) + 64;
	unsigned char *out = malloc(cap);
	z.next_in = (unsigned char *)data;
	z.avail_in = n;
	z.next_out = out;
	z.avail_out = cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_n = z.total_out;
	deflateEnd(&z);
	return out;
}

/* Read the whole stream with odd-sized reads. */
static char *slurp(tk_input *in, size_t *n, int *rc)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	tk_error err;
	for (;;) {
		if (len + 7777 > cap)
			buf = realloc(buf, cap *= 2);
		ptrdiff_t r = tk_input_read(in, buf + len, 7777, &err);
		if (r < 0) {
			*rc = -1;
			break;
		}
		if (r == 0) {
			*rc = 0;
			break;
		}
		len += (size_t)r;
	}
	*n = len;
	return buf;
}

static char *make_doc(size_t n)
{
	char *d = malloc(n);
	for (size_t i = 0; i < n; i++)
		d[i] = "<?xml abcdefghij\n"[i % 17];
	return d;
}

static void test_plain_and_gzip(void **state)
{
	size_t n = 1000003, gn, got;
	int rc;
	char *doc = make_doc(n);
	tk_error err;
	tk_input *in = tk_input_open_mem(doc, n, "plain.xml", &err);
	assert_non_null(in);
	assert_false(tk_input_is_gzip(in));
	size_t hn;
	const unsigned char *h = tk_input_head(in, &hn);
	assert_int_equal(hn, TK_INPUT_HEAD);
	assert_memory_equal(h, doc, hn);
	char *back = slurp(in, &got, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(got, n);
	assert_memory_equal(back, doc, n);
	assert_int_equal(tk_input_consumed(in), n);
	free(back);
	tk_input_close(in);

	unsigned char *z = gz(doc, n, &gn);
	in = tk_input_open_mem(z, gn, "doc.xml.gz", &err);
	assert_non_null(in);
	assert_true(tk_input_is_gzip(in));
	h = tk_input_head(in, &hn);
	assert_memory_equal(h, doc, hn);
	back = slurp(in, &got, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(got, n);
	assert_memory_equal(back, doc, n);
	assert_int_equal(tk_input_consumed(in), gn);
	assert_int_equal(tk_input_total(in), gn);
	free(back);
	tk_input_close(in);

	/* two members back to back, as `cat a.gz b.gz` makes */
	unsigned char *two = malloc(2 * gn);
	memcpy(two, z, gn);
	memcpy(two + gn, z, gn);
	in = tk_input_open_mem(two, 2 * gn, "two.gz", &err);
	back = slurp(in, &got, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(got, 2 * n);
	assert_memory_equal(back + n, doc, n);
	free(back);
	tk_input_close(in);

	/* truncated: must fail, not end quietly */
	in = tk_input_open_mem(z, gn - 10, "cut.gz", &err);
	assert_non_null(in);
	back = slurp(in, &got, &rc);
	assert_int_equal(rc, -1);
	free(back);
	tk_input_close(in);
	/* junk after a complete member */
	memcpy(two + gn, "JUNK", 4);
	in = tk_input_open_mem(two, gn + 4, "junk.gz", &err);
	back = slurp(in, &got, &rc);
	assert_int_equal(rc, -1);
	free(back);
	tk_input_close(in);

	free(two);
	free(z);
	free(doc);
}

static void test_open_errors(void **state)
{
	tk_error err;
	assert_null(tk_input_open("/nonexistent/file.xml", &err));
	assert_non_null(strstr(err.msg, "/nonexistent/file.xml"));
	assert_null(tk_input_open("/", &err));
	assert_non_null(strstr(err.msg, "directory"));
	/* a corrupt gzip header fails at open (the head is decoded eagerly) */
	unsigned char bad[] = {0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	assert_null(tk_input_open_mem(bad, sizeof bad, "bad.gz", &err));
	assert_non_null(strstr(err.msg, "bad.gz"));
}

static void test_registry(void **state)
{
	tk_error err;
	tk_profile *p = tk_profile_new();
	tk_input *in = tk_input_open_mem("", 0, "empty.xml", &err);
	assert_non_null(in);
	assert_int_equal(tk_read_input(p, in, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "empty.xml: empty input"));
	tk_input_close(in);
	in = tk_input_open_mem("hello world", 11, "junk.bin", &err);
	assert_int_equal(tk_read_input(p, in, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "junk.bin: unrecognised"));
	tk_input_close(in);
	const char *diag = "xctrace[123] warning: something\n<?xml version=\"1.0\"?>\n<trace-query-result/>";
	assert_ptr_equal(tk_reader_find((const unsigned char *)diag, strlen(diag)), &tk_reader_xctrace);
	assert_ptr_equal(tk_reader_at(0) ? tk_reader_at(0) : NULL, tk_reader_at(0));
	tk_read_options o;
	tk_read_options_init(&o);
	assert_int_equal(o.time_from, 0);
	assert_int_equal(o.time_to, UINT64_MAX);
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_and_gzip),
	    cmocka_unit_test(test_open_errors),
	    cmocka_unit_test(test_registry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
