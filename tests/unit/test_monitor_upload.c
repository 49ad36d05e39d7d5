/* Monitor uploader pieces: the zlib-free gzip writer (checked by zlib's own inflate), the config
 * rule (upload needs a directory) and the built-in HTTP uploader's URL checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "tracekit/monitor.h"

#include "../../monitor/internal.h"

static void roundtrip(size_t n)
{
	unsigned char *in = malloc(n ? n : 1);
	uint32_t x = 12345u + (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		in[i] = (unsigned char)(x >> 16);
	}
	tkm_buf gz = {0};
	assert_int_equal(tkm_gzip_stored(in, n, &gz), 0);
	/* zlib, as the server inflates it: one gzip member, CRC-32 and length checked by inflate */
	unsigned char *out = malloc(n + 16);
	z_stream s = {0};
	assert_int_equal(inflateInit2(&s, 15 + 16), Z_OK);
	s.next_in = (unsigned char *)gz.p;
	s.avail_in = (uInt)gz.n;
	s.next_out = out;
	s.avail_out = (uInt)(n + 16);
	assert_int_equal(inflate(&s, Z_FINISH), Z_STREAM_END);
	assert_int_equal(s.total_out, n);
	assert_int_equal(s.avail_in, 0);
	if (n)
		assert_memory_equal(out, in, n);
	inflateEnd(&s);
	/* a flipped byte of data must fail the CRC */
	if (n) {
		gz.p[10 + 5] ^= 1;
		assert_int_equal(inflateInit2(&s, 15 + 16), Z_OK);
		s.next_in = (unsigned char *)gz.p;
		s.avail_in = (uInt)gz.n;
		s.next_out = out;
		s.avail_out = (uInt)(n + 16);
		assert_int_equal(inflate(&s, Z_FINISH), Z_DATA_ERROR);
		inflateEnd(&s);
	}
	tkm_buf_free(&gz);
	free(out);
	free(in);
}

static void test_gzip_stored(void **state)
{
	(void)state;
	size_t sizes[] = {0, 1, 100, 65534, 65535, 65536, 65537, 131070, 300001};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		roundtrip(sizes[i]);
}

static tk_monitor_upload_result never(const char *path, const void *body, size_t n, void *ctx)
{
	(void)path, (void)body, (void)n, (void)ctx;
	return TK_MONITOR_UPLOAD_RETRY;
}

static void on_event(const tk_monitor_event *ev, void *ctx)
{
	(void)ev, (void)ctx;
}

static void test_upload_needs_dir(void **state)
{
	(void)state;
	tk_monitor_config c;
	tk_monitor_config_default(&c);
	c.callback = on_event; /* a sink, so only the upload rule fails */
	c.upload = never;
	c.cpu_enabled = 0;
	char err[256];
	assert_null(tk_monitor_start(&c, err, sizeof err));
	assert_non_null(strstr(err, "upload needs dir"));
}

static void test_http_urls(void **state)
{
	(void)state;
	char err[256];
	tk_monitor_http *h = tk_monitor_http_new("http://127.0.0.1:8470/v1/reports", "tok", err, sizeof err);
	assert_non_null(h);
	char reason[64];
	assert_int_equal(tk_monitor_http_last(h, reason, sizeof reason), 0);
	tk_monitor_http_free(h);
	assert_non_null(h = tk_monitor_http_new("http://localhost/v1/reports", "tok", err, sizeof err));
	tk_monitor_http_free(h);
	const char *bad[] = {"https://127.0.0.1:8470/v1/reports",
	                     "ftp://x/",
	                     "http://",
	                     "http://:80/x",
	                     "http://h:/x",
	                     "http://h:80a/x",
	                     NULL};
	for (int i = 0; bad[i]; i++) {
		err[0] = 0;
		assert_null(tk_monitor_http_new(bad[i], "tok", err, sizeof err));
		assert_non_null(strstr(err, "monitor: upload URL"));
	}
	assert_null(tk_monitor_http_new("http://h:1/x", "to\r\nX-Evil: 1", err, sizeof err));
	assert_non_null(strstr(err, "line break"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gzip_stored),
	    cmocka_unit_test(test_upload_needs_dir),
	    cmocka_unit_test(test_http_urls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
