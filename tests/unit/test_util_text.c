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

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(terminal), cmocka_unit_test(json)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
