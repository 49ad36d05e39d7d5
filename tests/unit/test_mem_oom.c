/* Running out of memory: inside a reader it is an error value naming the input; elsewhere the
 * program's handler runs; the library never prints. Failures are injected at every allocation
 * position of a real read (tk_mem_fail_after), so each reader state meets one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracekit/tracekit.h"
#include "util/mem.h"

/* The jump out of an interrupted reader skips its clean-up by design (util/mem.h): what it held is
 * not freed, so LeakSanitizer would report it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

#define FIXTURE "tests/fixtures/xctrace/time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml"

/* Fail the k-th allocation of a read, for ever later k until the read succeeds: every failure must
 * be an error naming the input, and the profile must stay usable. Returns the full read's weight. */
static uint64_t read_with_failures(const char *path, const char *name_part, size_t dense)
{
	size_t failures = 0, k;
	uint64_t weight = 0;
	for (k = 1; k < 1000000; k += (k < dense ? 1 : k / 8)) {
		tk_profile *p = tk_profile_new();
		tk_error err = {{0}};
		tk_mem_fail_after(k);
		int rc = tk_read_path(p, path, NULL, &err);
		tk_mem_fail_after(0);
		if (rc == 0) {
			weight = tk_profile_weight(p);
			tk_profile_free(p);
			break;
		}
		failures++;
		if (!strstr(err.msg, "out of memory") || !strstr(err.msg, name_part))
			fail_msg("allocation %zu of %s: %s", k, path, err.msg);
		/* the profile is still consistent: it can be read and freed */
		for (size_t t = 0; t < tk_thread_count(p); t++)
			(void)tk_thread_stacks(p, (tk_thread_id)t, &(size_t){0});
		(void)tk_profile_weight(p);
		tk_profile_free(p);
	}
	assert_true(failures > 10); /* the injection reached the reader many times */
	assert_true(k < 1000000);   /* and a read with enough memory succeeded */
	return weight;
}

static void test_reader_oom_is_an_error(void **state)
{
	assert_int_equal(read_with_failures(FIXTURE, "time-profile_xcode14.3plus", 400), 105000000);
	/* the text readers and gzip'd input, through the same entry point */
	static const char *const others[] = {
	    "tests/fixtures/other/perf-script_linux6.1_spin-userspace_generated.txt",
	    "tests/fixtures/other/sample_macos10.14_firefox-plugin-container_full.txt.gz",
	    "tests/fixtures/other/deep-copy_instruments16.0_time-profile_speedscope.txt",
	    "tests/fixtures/mthawkeye/cpu-highload-stackframe.doc-example.json",
	};
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
		tk_profile *p = tk_profile_new();
		tk_error err = {{0}};
		int ok = tk_read_path(p, others[i], NULL, &err) == 0;
		uint64_t want = tk_profile_weight(p);
		tk_profile_free(p);
		if (!ok)
			continue; /* not a whole input on its own (e.g. a Records fragment) */
		assert_int_equal(read_with_failures(others[i], strrchr(others[i], '/') + 1, 100), want);
	}
}

static jmp_buf out;
static size_t handled;

static void handler(size_t bytes)
{
	handled = bytes + 1;
	longjmp(out, 1);
}

static void test_handler_outside_guards(void **state)
{
	tk_set_oom_handler(handler);
	handled = 0;
	if (setjmp(out) == 0) {
		tk_mem_fail_after(1);
		tk_profile *p = tk_profile_new(); /* no guard here: the handler runs */
		tk_profile_free(p);
		fail_msg("the allocation did not fail");
	}
	tk_mem_fail_after(0);
	assert_true(handled > 0);
	tk_set_oom_handler(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reader_oom_is_an_error),
	    cmocka_unit_test(test_handler_outside_guards),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
