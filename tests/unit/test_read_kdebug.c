/* Image loads from kdebug / kdebug-strings nodes next to a profile table (read/kdebug.c), and the
 * inlined="1" frame tag, on small hand-written documents with hand-computed expectations, through
 * both tokenizers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tracekit/read.h"

#define HEAD                                                                                                           \
	"<?xml version=\"1.0\"?>\n<trace-query-result>\n"                                                              \
	"<node xpath='//trace-toc[1]/run[1]/data[1]/table[1]'><schema name=\"time-profile\">"                          \
	"<col><mnemonic>time</mnemonic></col><col><mnemonic>thread</mnemonic></col>"                                   \
	"<col><mnemonic>weight</mnemonic></col><col><mnemonic>stack</mnemonic></col></schema>"                         \
	"<row><sample-time id=\"1\" fmt=\"x\">5</sample-time><thread id=\"2\" fmt=\"Main Thread 0x1 (a, pid: 9)\">"    \
	"<tid id=\"3\" fmt=\"0x1\">1</tid><process id=\"4\" fmt=\"a (9)\"><pid id=\"5\" fmt=\"9\">9</pid></process>"   \
	"</thread><weight id=\"6\" fmt=\"1.00 ms\">1000000</weight>"

#define KD_SCHEMA                                                                                                      \
	"<node xpath='//trace-toc[1]/run[1]/data[1]/table[2]'><schema name=\"kdebug\">"                                \
	"<col><mnemonic>thread</mnemonic></col><col><mnemonic>class</mnemonic></col>"                                  \
	"<col><mnemonic>subclass</mnemonic></col><col><mnemonic>code</mnemonic></col>"                                 \
	"<col><mnemonic>func</mnemonic></col><col><mnemonic>arg1</mnemonic></col><col><mnemonic>arg2</mnemonic></col>" \
	"<col><mnemonic>arg3</mnemonic></col><col><mnemonic>arg4</mnemonic></col></schema>"

static tk_profile *read_doc(const char *xml, int tokenizer)
{
	tk_error err;
	tk_input *in = tk_input_open_mem(xml, strlen(xml), "k.xml", &err);
	assert_non_null(in);
	tk_profile *p = tk_profile_new();
	tk_read_options o;
	tk_read_options_init(&o);
	o.tokenizer = tokenizer;
	int rc = tk_read_input(p, in, &o, &err);
	if (rc < 0)
		fail_msg("%s", err.msg);
	tk_input_close(in);
	return p;
}

static void test_images(void **state)
{
	(void)state;
	/* MAP_A: arg1 0x0011223344556677 and arg2 0x8899aabbccddeeff hold the UUID bytes little-endian,
	 * so the bytes are 77 66 55 44 33 22 11 00 ff ee dd cc bb aa 99 88; load 0x104a8c000.
	 * MAP_B: string id 0x41 → the path. A MAP_B without a MAP_A before it, another subclass and a
	 * MAP_A whose args are refs (a second image, no MAP_B: no path) are there too. */
	static const char doc[] = HEAD
	    "<sentinel/></row>\n</node>" KD_SCHEMA
	    /* a lone MAP_B: ignored */
	    "<row><thread ref=\"2\"/><kdebug-class id=\"10\" fmt=\"0x1f\">31</kdebug-class>"
	    "<kdebug-subclass id=\"11\" fmt=\"0x5\">5</kdebug-subclass><kdebug-code id=\"12\" "
	    "fmt=\"0x1\">1</kdebug-code>"
	    "<kdebug-func id=\"13\" fmt=\"None\">0</kdebug-func><kdebug-arg id=\"14\" fmt=\"0x0\">0</kdebug-arg>"
	    "<kdebug-arg id=\"15\" fmt=\"0x99\">153</kdebug-arg><kdebug-arg ref=\"14\"/><kdebug-arg "
	    "ref=\"14\"/></row>\n"
	    /* MAP_A, args only in fmt */
	    "<row><thread ref=\"2\"/><kdebug-class ref=\"10\"/><kdebug-subclass ref=\"11\"/>"
	    "<kdebug-code id=\"16\" fmt=\"0x0\">0</kdebug-code><kdebug-func ref=\"13\"/>"
	    "<kdebug-arg id=\"17\" fmt=\"0x0011223344556677\"></kdebug-arg>"
	    "<kdebug-arg id=\"18\" fmt=\"0x8899aabbccddeeff\"></kdebug-arg>"
	    "<kdebug-arg id=\"19\" fmt=\"0x104a8c000\"></kdebug-arg><kdebug-arg ref=\"14\"/></row>\n"
	    /* its MAP_B: arg2 = string id 0x41 */
	    "<row><thread ref=\"2\"/><kdebug-class ref=\"10\"/><kdebug-subclass ref=\"11\"/><kdebug-code ref=\"12\"/>"
	    "<kdebug-func ref=\"13\"/><kdebug-arg id=\"20\" fmt=\"0x7\">7</kdebug-arg>"
	    "<kdebug-arg id=\"21\" fmt=\"0x41\">65</kdebug-arg><kdebug-arg ref=\"14\"/><kdebug-arg ref=\"14\"/></row>\n"
	    /* subclass 0x07: not a UUID map */
	    "<row><thread ref=\"2\"/><kdebug-class ref=\"10\"/><kdebug-subclass id=\"22\" "
	    "fmt=\"0x7\">7</kdebug-subclass>"
	    "<kdebug-code ref=\"16\"/><kdebug-func ref=\"13\"/><kdebug-arg ref=\"17\"/><kdebug-arg ref=\"18\"/>"
	    "<kdebug-arg id=\"23\" fmt=\"0x5000\">20480</kdebug-arg><kdebug-arg ref=\"14\"/></row>\n"
	    /* MAP_A with ref'd UUID words at another address: a second image */
	    "<row><thread ref=\"2\"/><kdebug-class ref=\"10\"/><kdebug-subclass ref=\"11\"/><kdebug-code ref=\"16\"/>"
	    "<kdebug-func ref=\"13\"/><kdebug-arg ref=\"18\"/><kdebug-arg ref=\"17\"/>"
	    "<kdebug-arg id=\"24\" fmt=\"0x2000\">8192</kdebug-arg><kdebug-arg ref=\"14\"/></row>\n"
	    "</node>"
	    "<node xpath='//trace-toc[1]/run[1]/data[1]/table[3]'><schema name=\"kdebug-strings\">"
	    "<col><mnemonic>id</mnemonic></col><col><mnemonic>string</mnemonic></col></schema>"
	    "<row><kdebug-string id=\"25\" fmt=\"0x40\">64</kdebug-string><raw-string id=\"26\" "
	    "fmt=\"/x\">/x</raw-string></row>\n"
	    "<row><kdebug-string id=\"27\" fmt=\"0x41\">65</kdebug-string>"
	    "<raw-string id=\"28\" "
	    "fmt=\"p\">/private/var/App.app/Frameworks/K&amp;K.framework/K&amp;K</raw-string></row>\n"
	    "</node></trace-query-result>\n";
	for (int tok = 0; tok < 2; tok++) {
		tk_profile *p = read_doc(doc, tok);
		size_t n;
		const tk_binary *im = tk_profile_images(p, &n);
		assert_int_equal(n, 2);
		assert_string_equal(tk_string(p, im[0].uuid), "77665544-3322-1100-FFEE-DDCCBBAA9988");
		assert_int_equal(im[0].load_addr, 0x104a8c000ULL);
		assert_string_equal(tk_string(p, im[0].path), "/private/var/App.app/Frameworks/K&K.framework/K&K");
		assert_string_equal(tk_string(p, im[0].name), "K&K");
		assert_string_equal(tk_string(p, im[1].uuid), "FFEEDDCC-BBAA-9988-7766-554433221100");
		assert_int_equal(im[1].load_addr, 0x2000);
		assert_int_equal(im[1].path, 0);
		assert_string_equal(tk_profile_meta(p, "kdebug-images"), "2");
		assert_null(tk_profile_meta(p, "skipped-tables"));
		assert_int_equal(tk_profile_samples(p), 1);
		tk_profile_free(p);
	}
}

static void test_inlined_tag(void **state)
{
	(void)state;
	/* leaf first: c (inlined into b) at the leaf PC, b, then a */
	static const char doc[] =
	    HEAD "<backtrace id=\"7\"><frame id=\"8\" name=\"c\" addr=\"0x1005\" inlined=\"1\"/>"
	         "<frame id=\"9\" name=\"b\" addr=\"0x1005\"/><frame id=\"10\" name=\"a\" addr=\"0x2000\"/>"
	         "</backtrace></row>\n</node></trace-query-result>\n";
	for (int tok = 0; tok < 2; tok++) {
		tk_profile *p = read_doc(doc, tok);
		size_t n;
		const tk_stack_weight *sw = tk_thread_stacks(p, 0, &n);
		assert_int_equal(n, 1);
		tk_frame_id fr[8];
		assert_int_equal(tk_stack_frames(p, sw[0].stack, fr, 8), 3);
		const tk_frame *a = tk_frame_get(p, fr[0]), *b = tk_frame_get(p, fr[1]), *c = tk_frame_get(p, fr[2]);
		assert_int_equal(a->flags, 0);
		/* the outer frame of the leaf's inline chain is the leaf PC too */
		assert_int_equal(b->flags, TK_FRAME_LEAF_PC);
		assert_int_equal(c->flags, TK_FRAME_LEAF_PC | TK_FRAME_INLINED);
		tk_profile_free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_images),
	    cmocka_unit_test(test_inlined_tag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
