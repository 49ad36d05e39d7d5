/* Text readers (Deep Copy, `sample`, folded, `perf script`): every sniffer accepts its own fixtures
 * and rejects every other fixture; exact weights from hand-computed inputs; one-line errors with
 * FILE:LINE for malformed input. Run from the repository root (tests/run.sh does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glob.h>

#include "read/lines.h"
#include "tracekit/read.h"

static const char *expected_reader(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (strstr(b, ".folded")) /* peers' expected outputs beside their inputs */
		return "folded";
	if (strncmp(b, "deep-copy_", 10) == 0)
		return "instruments-deep-copy";
	if (strncmp(b, "sample_", 7) == 0)
		return "macos-sample";
	if (strncmp(b, "perf-script_", 12) == 0 || strncmp(b, "simpleperf-report_sample-py", 27) == 0)
		return "perf-script";
	if (strncmp(b, "simpleperf-report-sample", 24) == 0)
		return "simpleperf";
	if (strncmp(b, "dtrace-", 7) == 0)
		return "dtrace";
	if (strstr(b, ".folded"))
		return "folded";
	if (strstr(b, ".xml"))
		return "xctrace";
	return NULL;
}

static void check_head(const char *name, const unsigned char *head, size_t n, const char *want)
{
	for (size_t i = 0; tk_reader_at(i); i++) {
		const tk_reader *r = tk_reader_at(i);
		int accepts = r->sniff(head, n) != 0;
		int should = strcmp(r->name, want) == 0;
		if (accepts != should)
			fail_msg("%s: reader %s %s it (expected only %s)", name, r->name,
			         accepts ? "accepts" : "rejects", want);
	}
}

static void sniff_file(const char *path, const char *want)
{
	tk_error err;
	tk_input *in = tk_input_open(path, &err);
	if (!in)
		fail_msg("%s", err.msg);
	size_t n, bom;
	const unsigned char *head = tk_input_head(in, &n);
	/* as the registry sees it: a UTF-16 file (byte-order mark) decoded to UTF-8 */
	unsigned char dec[TK_INPUT_HEAD * 3 / 2];
	int enc = tk_text_bom(head, n, &bom);
	if (enc != TK_TEXT_UTF8)
		n = tk_text_head_utf8(head + bom, n - bom, enc, dec, sizeof dec), head = dec;
	check_head(path, head, n, want);
	tk_input_close(in);
}

static void test_sniffers_exclusive(void **state)
{
	(void)state;
	const char *pats[] = {
	    "tests/fixtures/other/*",       "tests/fixtures/xctrace/*.xml", "tests/fixtures/xctrace/oracles/*.folded",
	    "tests/fixtures/symbol/*.xml",  "tests/fuzz/corpus/folded/*",   "tests/fuzz/corpus/perf/*",
	    "tests/fuzz/corpus/deepcopy/*", "tests/fuzz/corpus/sample/*",
	    "tests/fixtures/perf/*",        "tests/fuzz/corpus/dtrace/*",   "tests/fuzz/corpus/simpleperf/*"};
	size_t checked = 0;
	for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
		glob_t g;
		if (glob(pats[k], 0, NULL, &g) != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			if (strstr(g.gl_pathv[i], "/regress-"))
				continue; /* fuzzer-made inputs: only their reader must survive them */
			const char *want = expected_reader(g.gl_pathv[i]);
			if (!want && strstr(pats[k], "corpus/"))
				want = strstr(pats[k], "folded")       ? "folded"
				       : strstr(pats[k], "simpleperf") ? "simpleperf"
				       : strstr(pats[k], "dtrace")     ? "dtrace"
				       : strstr(pats[k], "perf")       ? "perf-script"
				       : strstr(pats[k], "deepcopy") ? "instruments-deep-copy"
				                                     : "macos-sample";
			if (!want)
				continue; /* SOURCES.md, the .c of a recorded program */
			sniff_file(g.gl_pathv[i], want);
			checked++;
		}
		globfree(&g);
	}
	assert_true(checked >= 20);
	/* forms that are not files here */
	struct {
		const char *text, *want;
	} mem[] = {
	    {"Main Thread tid=259;start;main;work 1000000\nMain Thread tid=259;start;main 5\n", "folded"},
	    {"java;start_thread;func_[k] 12\njava;interp_[j];x_[i] 3\n", "folded"},
	    {"cpu-highload,817045387.08,{\"start\":817045387.08}\n", "records"},
	    {"Web Content 123/124 [001] 1.000000: 1 cycles: ffffffff81000000 do_idle+0x1 ([kernel.kallsyms])\n"
	     "Web Content 123/124 [001] 1.001000: 1 cycles: ffffffff81000000 do_idle+0x1 ([kernel.kallsyms])\n",
	     "perf-script"},
	    {"Weight\tSelf Weight\t\tSymbol Name\n1.00 ms  100.0%\t1.00 ms\t \tmain\n", "instruments-deep-copy"},
	    {"<?xml version=\"1.0\"?>\n<trace-query-result>\n", "xctrace"},
	};
	for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
		check_head(mem[i].text, (const unsigned char *)mem[i].text, strlen(mem[i].text), mem[i].want);
	/* text no reader should take */
	const char *none[] = {"hello world\n", "a;b;c\n", "Weight\tSelf\n", "  12 frame\n", "# comment only\n"};
	for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
		assert_null(tk_reader_find((const unsigned char *)none[i], strlen(none[i])));
}

static tk_profile *read_mem(const char *text, tk_error *err)
{
	tk_profile *p = tk_profile_new();
	tk_input *in = tk_input_open_mem(text, strlen(text), "mem.txt", err);
	assert_non_null(in);
	int rc = tk_read_input(p, in, NULL, err);
	tk_input_close(in);
	if (rc < 0) {
		tk_profile_free(p);
		return NULL;
	}
	return p;
}

static tk_profile *must_read(const char *text)
{
	tk_error err = {{0}};
	tk_profile *p = read_mem(text, &err);
	if (!p)
		fail_msg("%s", err.msg);
	return p;
}

/* The weight of the stack given root first as "a;b;c" in thread t (0 if absent). */
static uint64_t stack_weight(tk_profile *p, tk_thread_id t, const char *path)
{
	size_t n;
	const tk_stack_weight *c = tk_thread_stacks(p, t, &n);
	for (size_t i = 0; i < n; i++) {
		tk_frame_id fr[64];
		size_t d = tk_stack_frames(p, c[i].stack, fr, 64);
		char buf[1024] = "", hex[32];
		for (size_t j = 0; j < d; j++) {
			strcat(buf, j ? ";" : "");
			strcat(buf, tk_frame_label(p, fr[j], hex));
		}
		if (strcmp(buf, path) == 0)
			return c[i].weight;
	}
	return 0;
}

static void test_deepcopy_exact_units(void **state)
{
	(void)state;
	/* µs and s with fractions that binary floating point cannot hold; hand-computed in ns */
	tk_profile *p = must_read("Weight\tSelf Weight\tSymbol Names\n"
	                          "2.18 s  100.0%\t0.1 \xc2\xb5s\t   main\n"
	                          "2.179999999 s  99.9%\t2.179999999 s\t    work\n"
	                          "0.9 \xc2\xb5s   0.0%\t0.9 \xc2\xb5s\t    tiny\n");
	assert_int_equal(tk_profile_unit(p), TK_UNIT_NS);
	assert_int_equal(stack_weight(p, 0, "main"), 100);
	assert_int_equal(stack_weight(p, 0, "main;work"), 2179999999ull);
	assert_int_equal(stack_weight(p, 0, "main;tiny"), 900);
	assert_int_equal(tk_profile_weight(p), 2180000999ull);
	tk_profile_free(p);
	/* Allocations: self = total - children, in bytes (1 KB = 1024) and counts */
	p = must_read("Bytes Used\tCount\t\tSymbol Name\n"
	              " 1.50 KB     100.0%\t10\t \tmain\n"
	              " 512 Bytes    33.3%\t4\t \t malloc\n");
	assert_int_equal(tk_profile_unit(p), TK_UNIT_BYTES);
	assert_int_equal(stack_weight(p, 0, "main"), 1024);
	assert_int_equal(stack_weight(p, 0, "main;malloc"), 512);
	assert_int_equal(tk_profile_samples(p), 10);
	tk_profile_free(p);
	/* process and thread rows become the thread, not frames */
	p = must_read("Weight\tSelf Weight\t\tSymbol Name\n"
	              "3.00 ms  100.0%\t-\t \tMyApp (412)\n"
	              "3.00 ms  100.0%\t1.00 ms\t \t Main Thread  0x1ee7\n"
	              "2.00 ms  66.6%\t2.00 ms\t \t  0x104a8dab4\n");
	assert_int_equal(tk_thread_count(p), 2); /* (412, 0) for the process row, (412, 0x1ee7) */
	const tk_thread *t = tk_thread_get(p, 1);
	assert_int_equal(t->pid, 412);
	assert_int_equal(t->tid, 0x1ee7);
	assert_string_equal(tk_string(p, t->name), "Main Thread");
	assert_int_equal(stack_weight(p, 1, "0x104a8dab4"), 2000000);
	assert_int_equal(t->weight, 3000000);
	tk_profile_free(p);
}

static void test_perf_forms(void **state)
{
	(void)state;
	tk_profile *p =
	    must_read("Web Content 123/124 [001] 10.000000: 1 cycles: 7f00 do_work+0x1 (/tmp/lib (deleted))\n"
	              "Web Content 123/124 [001] 10.001000: 1 cycles: 7f00 do_work+0x1 (/tmp/lib (deleted))\n"
	              "\n"
	              "# comment\n"
	              "bash 7 10.4: PERF_RECORD_COMM exec: bash:7/7\n"
	              "bash 7 10.5: 250000 cycles:ppp: \n" /* the same event as "cycles:" */
	              "\t  4010 leaf+0x10 (/bin/bash)\n"
	              "\t     0 [unknown] ([unknown])\n"
	              "\n");
	assert_int_equal(tk_profile_unit(p), TK_UNIT_SAMPLES);
	assert_int_equal(tk_thread_count(p), 2);
	const tk_thread *t = tk_thread_get(p, 0);
	assert_int_equal(t->pid, 123);
	assert_int_equal(t->tid, 124);
	assert_string_equal(tk_string(p, t->name), "Web Content");
	assert_int_equal(stack_weight(p, 0, "do_work"), 2);
	assert_int_equal(t->t_max - t->t_min, 1000000);
	assert_int_equal(stack_weight(p, 1, "0x0;leaf"), 1);
	tk_profile_free(p);
}

static void test_folded_forms(void **state)
{
	(void)state;
	tk_profile *p = must_read("java;start_[k];inl_[i] 3\njava;0x1a2b;0x00ff 4\njava;start_[k];inl_[i] 2\n");
	assert_int_equal(stack_weight(p, 0, "java;start_[k];inl_[i]"), 5);
	/* canonical hex is an address (label unchanged), a zero-padded one stays a name */
	assert_int_equal(stack_weight(p, 0, "java;0x1a2b;0x00ff"), 4);
	assert_string_equal(tk_profile_meta(p, "folded-threads"), "none");
	int inl = 0, addr = 0;
	for (tk_frame_id f = 1; f <= tk_frame_count(p); f++) {
		const tk_frame *fr = tk_frame_get(p, f);
		inl += (fr->flags & TK_FRAME_INLINED) != 0;
		addr += fr->addr == 0x1a2b && fr->name == 0;
	}
	assert_int_equal(inl, 1);
	assert_int_equal(addr, 1);
	tk_profile_free(p);
	p = must_read("Main Thread tid=259;a;b 7\nworker tid=300 2\n");
	assert_int_equal(tk_thread_count(p), 2);
	assert_int_equal(tk_thread_get(p, 0)->tid, 259);
	assert_string_equal(tk_string(p, tk_thread_get(p, 0)->name), "Main Thread");
	assert_int_equal(tk_thread_get(p, 1)->weight, 2);
	assert_null(tk_profile_meta(p, "folded-threads"));
	tk_profile_free(p);
	/* two names with one tid are two threads (the lines tell them apart), found again by name */
	p = must_read("MyApp tid=0;a 1\nthread tid=0;b 2\nMyApp tid=0;c 4\n");
	assert_int_equal(tk_thread_count(p), 2);
	assert_int_equal(tk_thread_get(p, 0)->weight, 5);
	assert_int_equal(tk_thread_get(p, 1)->weight, 2);
	assert_string_equal(tk_string(p, tk_thread_get(p, 1)->name), "thread");
	tk_profile_free(p);
	/* decimal counts: the whole profile rescaled to the finest fraction seen, exactly */
	p = must_read("a;b 19\na;c 0.25\na;b 6.\nd 31.0\n");
	assert_string_equal(tk_profile_meta(p, "weight-decimals"), "2");
	assert_int_equal(stack_weight(p, 0, "a;b"), 2500);
	assert_int_equal(stack_weight(p, 0, "a;c"), 25);
	assert_int_equal(stack_weight(p, 0, "d"), 3100);
	tk_profile_free(p);
	/* empty frames and a differential line (the second count by default) */
	p = must_read("a;;b 1 2\n;c 3 4\n");
	assert_int_equal(tk_profile_weight(p), 6);
	assert_non_null(tk_profile_meta(p, "differential"));
	tk_profile_free(p);
}

static void test_sample_binary_images(void **state)
{
	(void)state;
	/* hand-made from the layout of the real reports: two threads, a merged call site, an unknown
	 * frame, and the Binary Images that come after the call graph */
	tk_profile *p =
	    must_read("Analysis of sampling app (pid 77) every 1 millisecond\n"
	              "Process:         app [77]\n"
	              "Code Type:       ARM64\n"
	              "----\n\n"
	              "Call graph:\n"
	              "    10 Thread_501   DispatchQueue_1: com.apple.main-thread  (serial)\n"
	              "    + 10 start  (in libdyld.dylib) + 1  [0x180001001]\n"
	              "    +   7 main  (in app) + 20,24  [0x100004014,0x100004018]\n"
	              "    +   ! 3 ???  (in <unknown binary>)  [0x5555]\n"
	              "    5 Thread_502: worker\n"
	              "    + 5 work  (in app) + 0  [0x100004100]\n"
	              "\n"
	              "Total number in stack (recursive counted multiple, when >=5):\n"
	              "        10       start  (in libdyld.dylib) + 1  [0x180001001]\n"
	              "\n"
	              "Binary Images:\n"
	              "       0x100000000 -        0x100007fff +app (1.0) <11111111-2222-3333-4444-555555555555> "
	              "/Applications/My App.app/Contents/MacOS/app\n"
	              "       0x180000000 -        0x180003fff  libdyld.dylib (852) "
	              "<AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE> /usr/lib/system/libdyld.dylib\n");
	assert_int_equal(tk_profile_unit(p), TK_UNIT_SAMPLES);
	assert_int_equal(tk_thread_count(p), 2);
	const tk_thread *t = tk_thread_get(p, 0);
	assert_int_equal(t->pid, 77);
	assert_int_equal(t->tid, 501);
	assert_int_equal(t->weight, 10);
	assert_string_equal(tk_string(p, t->process), "app");
	assert_string_equal(tk_string(p, tk_thread_get(p, 1)->name), "worker");
	/* self = count - children: start 3, main 4, ??? 3 */
	assert_int_equal(stack_weight(p, 0, "start"), 3);
	assert_int_equal(stack_weight(p, 0, "start;main"), 4);
	assert_int_equal(stack_weight(p, 0, "start;main;0x5555"), 3);
	assert_int_equal(stack_weight(p, 1, "work"), 5);
	int seen = 0;
	for (tk_frame_id f = 1; f <= tk_frame_count(p); f++) {
		const tk_frame *fr = tk_frame_get(p, f);
		const tk_binary *b = tk_binary_get(p, fr->binary);
		if (fr->name && strcmp(tk_string(p, fr->name), "main") == 0) {
			assert_int_equal(fr->addr, 0x100004014); /* the first of the merged call sites */
			assert_non_null(b);
			assert_string_equal(tk_string(p, b->uuid), "11111111-2222-3333-4444-555555555555");
			assert_string_equal(tk_string(p, b->path), "/Applications/My App.app/Contents/MacOS/app");
			assert_string_equal(tk_string(p, b->arch), "arm64");
			assert_int_equal(b->load_addr, 0x100000000);
			seen++;
		}
		if (fr->addr == 0x5555) {
			assert_int_equal(fr->name, 0);
			assert_null(b);
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	size_t ni;
	tk_profile_images(p, &ni);
	assert_int_equal(ni, 2);
	tk_profile_free(p);
}

static void test_errors(void **state)
{
	(void)state;
	struct {
		const char *text, *msg;
	} bad[] = {
	    {"Weight\tSelf Weight\tSymbol Names\n1.00 ms  100.0%\t1.00 ms\tmain\n2.00 ms  1.0%\t1.00 ms\t  deep\n",
	     "mem.txt:3: indented 2 levels below the previous row's"},
	    {"Weight\tSelf Weight\tSymbol Names\n1.00 parsecs  100.0%\t1.00 ms\tmain\n",
	     "mem.txt:2: unknown weight unit \"parsecs\""},
	    {"Weight\tSelf Weight\tSymbol Names\n1.00 ms  100.0%\t1.00 Mc\tmain\n",
	     "mem.txt:2: weight unit \"Mc\" mixes cycles with the earlier rows' time"},
	    {"Weight\tSelf Weight\tSymbol Names\n1.00 ms  100.0%\tmain\n",
	     "mem.txt:2: 2 tab-separated cells, the header has 3"},
	    {"Weight\tSelf Weight\tSymbol Names\n", "mem.txt: a Deep Copy header but no rows"},
	    {"Weight\tSelf Weight\tSymbol Names\nabc\t1 ms\tmain\n",
	     "mem.txt:2: expected a weight like \"4.93 s\", found \"abc\""},
	    {"Analysis of sampling x (pid 1) every 1 millisecond\nCall graph:\n    5 Thread_1\n    + 6 main  (in x) + "
	     "1  [0x10]\n",
	     "mem.txt:4: count 6 is more than the 5 left of its caller's (line 3)"},
	    {"Analysis of sampling x (pid 1) every 1 millisecond\nCall graph:\n    5 main  (in x)  [0x10]\n",
	     "mem.txt:3: a call graph root that is not a `Thread_ID` row"},
	    {"Analysis of sampling x (pid 1) every 1 millisecond\nProcess: x [1]\n",
	     "mem.txt: no `Call graph:` section"},
	    {"Analysis of sampling x (pid 1) every 1 millisecond\nCall graph:\n    5 Thread_1\n    + x main\n",
	     "mem.txt:4: expected `COUNT FRAME` after the guides (`+ ! : |`) in the call graph"},
	    /* folded: the sniffer already rejects a bad line in the head, so these come after 700 good ones */
	    {"PAD"
	     "a;b5\n",
	     "mem.txt:701: expected `frame;frame;… COUNT` (a count such as 12 or 1.5 after the last blank)"},
	    {"PAD"
	     "a;b\n",
	     "mem.txt:701: expected `frame;frame;… COUNT` (a count such as 12 or 1.5 after the last blank)"},
	    {"PAD"
	     "a;b 1 3\n",
	     "mem.txt:701: two counts (`STACK BEFORE AFTER`), but line 1 has one"},
	    {"PAD"
	     "a;b 1.0000000001\n",
	     "mem.txt:701: a count with more than 9 decimals or above 2^64 - 1"},
	    {"sleep 27215   435.267174:     250000 cpu-clock:ppp: \n\t1 a (b)\n\nsleep 27215 435.3: 1 cpu-clock: "
	     "\n\tzzz not a frame\n",
	     "mem.txt:5: expected a frame `ADDR SYMBOL+0xOFF (DSO)`"},
	    {"sleep 27215   435.267174:     250000 cpu-clock:ppp: \n\t1 a (b)\n\nnot a header\n\t2 c (d)\n",
	     "mem.txt:4: expected a sample header `COMM TID [CPU] [SECONDS:] [PERIOD] EVENT:` or an indented frame "
	     "`ADDR SYMBOL (DSO)`"},
	    {"sleep 27215   435.267174: 1 cpu-clock: \n\t1 a (b)\n\x01\x02\0junk\n",
	     "mem.txt:3: NUL byte: not a text file"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tk_error err = {{0}};
		tk_profile *p = tk_profile_new();
		/* some cases hold a NUL: give the length explicitly */
		size_t len = strlen(bad[i].text);
		if (strstr(bad[i].msg, "NUL"))
			len += 1 + strlen(bad[i].text + len + 1);
		char *buf = malloc(700 * 6 + len + 1);
		size_t off = 0;
		if (strncmp(bad[i].text, "PAD", 3) == 0) {
			for (int k = 0; k < 700; k++, off += 6)
				memcpy(buf + off, "a;b 1\n", 6);
			memcpy(buf + off, bad[i].text + 3, len - 3);
			len = off + len - 3;
		} else
			memcpy(buf, bad[i].text, len);
		tk_input *in = tk_input_open_mem(buf, len, "mem.txt", &err);
		assert_non_null(in);
		int rc = tk_read_input(p, in, NULL, &err);
		tk_input_close(in);
		tk_profile_free(p);
		free(buf);
		if (rc != -1 || strcmp(err.msg, bad[i].msg) != 0)
			fail_msg("case %zu: rc %d, error [%s], expected [%s]", i, rc, err.msg, bad[i].msg);
		assert_null(strchr(err.msg, '\n'));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sniffers_exclusive),   cmocka_unit_test(test_deepcopy_exact_units),
	    cmocka_unit_test(test_perf_forms),           cmocka_unit_test(test_folded_forms),
	    cmocka_unit_test(test_sample_binary_images), cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
