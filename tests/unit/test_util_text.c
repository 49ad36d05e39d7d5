/* util/text.h: the terminal escaper and the one JSON escaper, against hand-written expectations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/text.h"

static void terminal(void **state)
{
	char out[256];
	tk_text_escape("plain é € 𝄞", out, sizeof out, 0);
	assert_string_equal(out, "plain é € 𝄞"); /* printable UTF-8 untouched */
	tk_text_escape("a\033[2Jb\x7f", out, sizeof out, 0);
	assert_string_equal(out, "a\\x1b[2Jb\\x7f");
	tk_text_escape("csi \xc2\x9b x", out, sizeof out, 0); /* U+009B, a C1 control */
	assert_string_equal(out, "csi \\xc2\\x9b x");
	tk_text_escape("bad \xff\xc3 end", out, sizeof out, 0); /* not UTF-8; a cut sequence */
	assert_string_equal(out, "bad \\xff\\xc3 end");
	tk_text_escape("two\nlines\tand\r", out, sizeof out, 1); /* messages: one line */
	assert_string_equal(out, "two lines and ");
	tk_text_escape("two\nlines", out, sizeof out, 0);
	assert_string_equal(out, "two\\x0alines");
	tk_text_escape("\033\033\033", out, 9, 0); /* cut at a whole escape */
	assert_string_equal(out, "\\x1b\\x1b");
	assert_true(tk_text_is_clean("ok é"));
	assert_false(tk_text_is_clean("no\n"));
}

static void json(void **state)
{
	char out[256];
	size_t n = tk_json_quote(out, "q\" b\\ n\n t\t r\r c\001 é");
	assert_string_equal(out, "\"q\\\" b\\\\ n\\n t\\t r\\r c\\u0001 é\"");
	assert_int_equal(n, strlen(out));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char big[1000];
	memset(big, 'x', sizeof big - 1);
	big[500] = '\n';
	big[sizeof big - 1] = 0;
	tk_json_fput(f, big); /* longer than one slice */
	fclose(f);
	assert_int_equal(len, 1000 + 2);
	assert_memory_equal(buf + 501, "\\n", 2);
	free(buf);
}

/* Ill-formed UTF-8 becomes one U+FFFD per maximal subpart (Unicode's recommended practice, which
 * Python's and browsers' decoders follow): checked against the table of Unicode 15 §3.9 (D93b). */
static void utf8(void **state)
{
	size_t n;
	assert_int_equal(tk_utf8_next("\xf0\x9d\x84\x9e", &n), 0x1d11e);
	assert_int_equal(n, 4);
	assert_int_equal(tk_utf8_next("\xed\x9f\xbf", &n), 0xd7ff);
	assert_int_equal(tk_utf8_next("\xf4\x8f\xbf\xbf", &n), 0x10ffff);
	assert_int_equal(tk_utf8_next("\xed\xa0\x80", &n), -1); /* a surrogate: 3 subparts of 1 */
	assert_int_equal(n, 1);
	assert_int_equal(tk_utf8_next("\xf4\x90\x80\x80", &n), -1); /* above U+10FFFF */
	assert_int_equal(n, 1);
	assert_int_equal(tk_utf8_next("\xe2\x82", &n), -1); /* cut: one subpart of 2 */
	assert_int_equal(n, 2);
	assert_int_equal(tk_utf8_next("\xf1\x80\x80x", &n), -1);
	assert_int_equal(n, 3);
	char out[256];
	/* the example of Unicode 15 Table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 */
	tk_json_quote(out, "a\xf1\x80\x80\xe1\x80\xc2"
	                   "b\x80"
	                   "c\x80\xbf"
	                   "d");
	assert_string_equal(out, "\"a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	                         "b\xef\xbf\xbd"
	                         "c\xef\xbf\xbd\xef\xbf\xbd"
	                         "d\"");
	char *d = tk_utf8_dup("\xc0\xafok\xe2\x82\xac");
	assert_string_equal(d, "\xef\xbf\xbd\xef\xbf\xbdok\xe2\x82\xac");
	free(d);
	assert_true(tk_utf8_valid("\xe2\x82\xac \xef\xbf\xbe"));
	assert_false(tk_utf8_valid("\xed\xbf\xbf"));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tk_xml_fput(f, "<a&\x01\tb\xef\xbf\xbe\xff\xc3\xa9>", SIZE_MAX), 10);
	tk_xml_fput(f, "abc", 2);
	fclose(f);
	assert_string_equal(buf, "&lt;a&amp;\xef\xbf\xbd\tb\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9&gt;ab");
	free(buf);
	/* a JSON string built in slices never splits a character (was: 256-byte slices) */
	char big[600];
	memset(big, 'x', sizeof big);
	memcpy(big + 254, "\xe2\x82\xac", 3);
	big[sizeof big - 1] = 0;
	buf = NULL;
	f = open_memstream(&buf, &len);
	tk_json_fput(f, big);
	fclose(f);
	assert_memory_equal(buf + 255, "\xe2\x82\xac", 3);
	free(buf);
}

/* tk_fmt_u64 / tk_fmt_hex write what printf's %llu and 0x%llx write: edges, every power of two and of
 * ten around it, and a spread of values. */
static void numbers(void **state)
{
	uint64_t v[200];
	size_t n = 0;
	v[n++] = 0, v[n++] = UINT64_MAX;
	for (int i = 0; i < 64; i++)
		v[n++] = (uint64_t)1 << i, v[n++] = ((uint64_t)1 << i) - 1;
	for (uint64_t p = 1; p <= UINT64_MAX / 10 && n < 190; p *= 10)
		v[n++] = p, v[n++] = p * 10 - 1;
	for (uint64_t x = 88172645463325252ULL; n < 200;) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[n++] = x >> (x & 63);
	}
	for (size_t i = 0; i < n; i++) {
		char got[32], want[32];
		size_t len = tk_fmt_u64(got, v[i]);
		got[len] = 0;
		snprintf(want, sizeof want, "%llu", (unsigned long long)v[i]);
		assert_string_equal(got, want);
		len = tk_fmt_hex(got, v[i]);
		got[len] = 0;
		snprintf(want, sizeof want, "0x%llx", (unsigned long long)v[i]);
		assert_string_equal(got, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(terminal), cmocka_unit_test(json), cmocka_unit_test(utf8),
	                                   cmocka_unit_test(numbers)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
