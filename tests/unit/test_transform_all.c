/* Every transform against hand-computed stacks, on a small profile built through the model API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_calltree_helpers.h"
#include "tracekit/transform.h"

#define DYLD "/usr/lib/dyld`"
#define KERN "/usr/lib/system/libsystem_kernel.dylib`"
#define OBJC "/usr/lib/libobjc.A.dylib`"
#define PTHR "/usr/lib/system/libsystem_pthread.dylib`"

static tk_profile *sample_profile(void)
{
	tk_profile *p = tk_profile_new();
	tk_profile_set_unit(p, TK_UNIT_CYCLES);
	tk_profile_set_meta(p, "schema", "time-profile");
	tk_thread_id t1 = th_thread(p, 1, 11, "main", "App");
	th_add(p, t1, DYLD "start;App`main;App`foo;" KERN "write", 1, 4);
	th_add(p, t1, DYLD "start;App`main;" OBJC "objc_msgSend;App`bar", 1, 3);
	th_add(p, t1, DYLD "start;App`main;App`bar;App`bar;App`bar;App`baz", 1, 2);
	th_add(p, t1, DYLD "start;App`main", 1, 1);
	th_add(p, t1, "", 1, 1);
	tk_sample_add(p, t1, 0, 0, 500); /* time bounds 500..900 ns, zero weight */
	tk_sample_add(p, t1, 0, 0, 900);
	tk_thread_id t2 = th_thread(p, 1, 12, "worker", "App");
	th_add(p, t2, PTHR "thread_start;" PTHR "_pthread_start;App`work;App`bar", 1, 5);
	tk_thread_id t3 = th_thread(p, 2, 21, "main", "Daemon");
	th_add(p, t3, "d`run", 1, 2);
	return p;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The thread's cells as "a;b;c weight" lines (labels, root first), sorted, joined by " | ". */
static const char *stacks_of(const tk_profile *p, uint64_t tid, char *out, size_t cap)
{
	out[0] = 0;
	for (tk_thread_id t = 0; t < tk_thread_count(p); t++) {
		if (tk_thread_get(p, t)->tid != tid)
			continue;
		size_t n;
		const tk_stack_weight *sw = tk_thread_stacks(p, t, &n);
		char **lines = calloc(n + 1, sizeof *lines);
		for (size_t i = 0; i < n; i++) {
			tk_frame_id fr[64];
			size_t d = tk_stack_frames(p, sw[i].stack, fr, 64);
			char line[1024] = "";
			for (size_t j = 0; j < d; j++) {
				char buf[32];
				if (j)
					strcat(line, ";");
				strcat(line, tk_frame_label(p, fr[j], buf));
			}
			char w[32];
			snprintf(w, sizeof w, "%s%llu", d ? " " : "", (unsigned long long)sw[i].weight);
			strcat(line, w);
			lines[i] = strdup(line);
		}
		qsort(lines, n, sizeof *lines, line_cmp);
		for (size_t i = 0; i < n; i++) {
			if (i)
				strncat(out, " | ", cap - strlen(out) - 1);
			strncat(out, lines[i], cap - strlen(out) - 1);
			free(lines[i]);
		}
		free(lines);
		return out;
	}
	return "(absent)";
}

static tk_profile *apply(tk_profile *in, const tk_transform_spec *specs, size_t n)
{
	tk_error err = {{0}};
	tk_profile *out = tk_transform(in, specs, n, &err);
	if (!out)
		fail_msg("transform failed: %s", err.msg);
	return out;
}

#define ONE(kind, pat) ((tk_transform_spec[]){{kind, pat}}), 1

static void test_identity(void **state)
{
	tk_profile *p = sample_profile();
	tk_profile *q = apply(p, NULL, 0);
	char a[2048], b[2048];
	for (uint64_t tid = 11; tid <= 21; tid++)
		assert_string_equal(stacks_of(p, tid, a, sizeof a), stacks_of(q, tid, b, sizeof b));
	assert_int_equal(tk_profile_unit(q), TK_UNIT_CYCLES);
	assert_string_equal(tk_profile_meta(q, "schema"), "time-profile");
	assert_int_equal(tk_thread_count(q), 3);
	const tk_thread *t = tk_thread_get(q, 0);
	assert_int_equal(t->t_min, 500);
	assert_int_equal(t->t_max, 900);
	assert_int_equal(t->weight, 11);
	assert_int_equal(t->samples, 13);
	assert_string_equal(tk_string(q, t->process), "App");
	tk_profile_free(q);
	tk_profile_free(p);
}

static void test_focus(void **state)
{
	tk_profile *p = sample_profile();
	char s[2048];
	tk_profile *q = apply(p, ONE(TK_TX_FOCUS, "bar"));
	/* re-rooted at the first (outermost) bar; recursion below it is kept */
	assert_string_equal(stacks_of(q, 11, s, sizeof s), "bar 3 | bar;bar;bar;baz 2");
	assert_string_equal(stacks_of(q, 12, s, sizeof s), "bar 5");
	assert_string_equal(stacks_of(q, 21, s, sizeof s), "(absent)"); /* no sample left */
	assert_int_equal(tk_thread_count(q), 2);
	tk_profile_free(q);

	q = apply(p, ONE(TK_TX_FOCUS, "App`bar"));
	assert_string_equal(stacks_of(q, 12, s, sizeof s), "bar 5");
	tk_profile_free(q);
	q = apply(p, ONE(TK_TX_FOCUS, "Other`bar"));
	assert_int_equal(tk_thread_count(q), 0);
	tk_profile_free(q);
	/* the input is untouched */
	assert_string_equal(stacks_of(p, 21, s, sizeof s), "run 2");
	tk_profile_free(p);
}

static void test_exclude(void **state)
{
	tk_profile *p = sample_profile();
	char s[2048];
	tk_profile *q = apply(p, ONE(TK_TX_EXCLUDE, "libobjc.A.dylib`objc_msgSend"));
	assert_string_equal(stacks_of(q, 11, s, sizeof s),
	                    "1 | start;main 1 | start;main;bar;bar;bar;baz 2 | start;main;foo;write 4");
	assert_string_equal(stacks_of(q, 12, s, sizeof s), "thread_start;_pthread_start;work;bar 5");
	tk_profile_free(q);
	q = apply(p, ONE(TK_TX_EXCLUDE, "bar"));
	assert_string_equal(stacks_of(q, 11, s, sizeof s), "1 | start;main 1 | start;main;foo;write 4");
	assert_int_equal(tk_thread_count(q), 2);
	tk_profile_free(q);
	tk_profile_free(p);
}

static void test_merge(void **state)
{
	tk_profile *p = sample_profile();
	char s[2048];
	tk_profile *q = apply(p, ONE(TK_TX_MERGE, "bar"));
	assert_string_equal(stacks_of(q, 11, s, sizeof s),
	                    "1 | start;main 1 | start;main;baz 2 | start;main;foo;write 4 | start;main;objc_msgSend 3");
	assert_string_equal(stacks_of(q, 12, s, sizeof s), "thread_start;_pthread_start;work 5");
	assert_int_equal(tk_thread_get(q, 0)->weight, 11);
	tk_profile_free(q);

	/* merging every frame of a stack leaves its weight on the thread (the empty stack) */
	q = apply(p, ((tk_transform_spec[]){{TK_TX_MERGE, "start"}, {TK_TX_MERGE, "main"}}), 2);
	assert_string_equal(stacks_of(q, 11, s, sizeof s), "2 | bar;bar;bar;baz 2 | foo;write 4 | objc_msgSend;bar 3");
	assert_int_equal(tk_thread_get(q, 0)->weight, 11);
	tk_profile_free(q);
	tk_profile_free(p);
}

static void test_merge_binary_and_system(void **state)
{
	tk_profile *p = sample_profile();
	char s[2048];
	tk_profile *q = apply(p, ONE(TK_TX_MERGE_BINARY, "libsystem_pthread.dylib"));
	assert_string_equal(stacks_of(q, 12, s, sizeof s), "work;bar 5");
	assert_string_equal(stacks_of(q, 11, s, sizeof s),
	                    "1 | start;main 1 | start;main;bar;bar;bar;baz 2 | start;main;foo;write 4 | "
	                    "start;main;objc_msgSend;bar 3");
	tk_profile_free(q);

	/* a full path names the binary too */
	q = apply(p, ONE(TK_TX_MERGE_BINARY, "/usr/lib/system/libsystem_pthread.dylib"));
	assert_string_equal(stacks_of(q, 12, s, sizeof s), "work;bar 5");
	tk_profile_free(q);
	q = apply(p, ONE(TK_TX_MERGE_BINARY, "/elsewhere/libsystem_pthread.dylib"));
	assert_string_equal(stacks_of(q, 12, s, sizeof s), "thread_start;_pthread_start;work;bar 5");
	tk_profile_free(q);

	q = apply(p, ONE(TK_TX_MERGE_SYSTEM, NULL));
	assert_string_equal(stacks_of(q, 11, s, sizeof s),
	                    "1 | main 1 | main;bar 3 | main;bar;bar;bar;baz 2 | main;foo 4");
	assert_string_equal(stacks_of(q, 12, s, sizeof s), "work;bar 5");
	assert_string_equal(stacks_of(q, 21, s, sizeof s), "run 2");
	tk_profile_free(q);
	tk_profile_free(p);
}

static void test_system_binaries(void **state)
{
	tk_profile *p = tk_profile_new();
	const char *sys[] = {"/System/Library/Frameworks/UIKit.framework/UIKit", "/usr/lib/libc++.1.dylib",
	                     "/usr/lib/system/libdispatch.dylib",
	                     "/private/preboot/Cryptexes/OS/usr/lib/libobjc.A.dylib", "kernel"};
	const char *app[] = {"/var/containers/Bundle/Application/X/App.app/App", "/Users/me/a.out",
	                     "/Applications/Xcode.app/x", "/usr/local/lib/libfoo.dylib"};
	for (size_t i = 0; i < 5; i++) {
		tk_binary b = {.name = tk_intern_cstr(p, "x"), .path = tk_intern_cstr(p, sys[i])};
		assert_true(tk_binary_is_system(p, tk_binary_add(p, &b)));
	}
	for (size_t i = 0; i < 4; i++) {
		tk_binary b = {.name = tk_intern_cstr(p, "x"), .path = tk_intern_cstr(p, app[i])};
		assert_false(tk_binary_is_system(p, tk_binary_add(p, &b)));
	}
	tk_binary nopath = {.name = tk_intern_cstr(p, "libsystem_kernel.dylib")};
	assert_true(tk_binary_is_system(p, tk_binary_add(p, &nopath)));
	assert_false(tk_binary_is_system(p, 0));
	tk_profile_free(p);
}

static void test_hide_unsymbolicated(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_thread_id t = th_thread(p, 1, 1, "t", "p");
	th_add(p, t, "App`main;0x1f;App`foo;0x20", 1, 2);
	/* xctrace names some unsymbolicated frames with their hex address: those count too, "0xZ" does not */
	tk_frame named_hex = {.addr = 0x31, .name = tk_intern_cstr(p, "0x30")};
	tk_frame not_hex = {.addr = 0x40, .name = tk_intern_cstr(p, "0xZ")};
	tk_stack_id s = tk_stack_push(p, th_stack(p, "App`main"), tk_frame_add(p, &named_hex));
	tk_sample_add_n(p, t, tk_stack_push(p, s, tk_frame_add(p, &not_hex)), 3, 1);
	th_add(p, t, "0x50", 4, 1);
	char out[512];
	tk_profile *q = apply(p, ONE(TK_TX_MERGE_UNSYMBOLICATED, NULL));
	assert_string_equal(stacks_of(q, 1, out, sizeof out), "4 | main;0xZ 3 | main;foo 2");
	tk_profile_free(q);
	tk_profile_free(p);
}

static void test_flatten_and_order(void **state)
{
	tk_profile *p = sample_profile();
	char s[2048];
	tk_profile *q = apply(p, ONE(TK_TX_FLATTEN_RECURSION, NULL));
	assert_string_equal(stacks_of(q, 11, s, sizeof s),
	                    "1 | start;main 1 | start;main;bar;baz 2 | start;main;foo;write 4 | "
	                    "start;main;objc_msgSend;bar 3");
	tk_profile_free(q);

	/* transforms apply in order: f;g;f → merge g → f;f → flatten → f, but not the other way */
	tk_profile *r = tk_profile_new();
	tk_thread_id t = th_thread(r, 1, 1, "t", "p");
	th_add(r, t, "f;g@0x1;f@0x2;f@0x3", 1, 1); /* call sites differ, still one function */
	q = apply(r, ((tk_transform_spec[]){{TK_TX_MERGE, "g"}, {TK_TX_FLATTEN_RECURSION, NULL}}), 2);
	assert_string_equal(stacks_of(q, 1, s, sizeof s), "f 1");
	tk_profile_free(q);
	q = apply(r, ((tk_transform_spec[]){{TK_TX_FLATTEN_RECURSION, NULL}, {TK_TX_MERGE, "g"}}), 2);
	assert_string_equal(stacks_of(q, 1, s, sizeof s), "f;f 1");
	tk_profile_free(q);
	/* focus then exclude: focus on bar, drop what reaches baz */
	q = apply(p, ((tk_transform_spec[]){{TK_TX_FOCUS, "bar"}, {TK_TX_EXCLUDE, "baz"}}), 2);
	assert_string_equal(stacks_of(q, 11, s, sizeof s), "bar 3");
	tk_profile_free(q);
	tk_profile_free(r);
	tk_profile_free(p);
}

static size_t kept_threads(tk_profile *p, const tk_transform_spec *specs, size_t n, uint64_t *tids)
{
	tk_profile *q = apply(p, specs, n);
	size_t m = tk_thread_count(q);
	for (size_t i = 0; i < m; i++)
		tids[i] = tk_thread_get(q, (tk_thread_id)i)->tid;
	tk_profile_free(q);
	return m;
}

static void test_thread_and_process_filters(void **state)
{
	tk_profile *p = sample_profile();
	uint64_t tids[8];
	assert_int_equal(kept_threads(p, ONE(TK_TX_THREAD, "worker"), tids), 1);
	assert_int_equal(tids[0], 12);
	assert_int_equal(kept_threads(p, ONE(TK_TX_THREAD, "12"), tids), 1);
	assert_int_equal(kept_threads(p, ONE(TK_TX_THREAD, "0xc"), tids), 1);
	assert_int_equal(tids[0], 12);
	assert_int_equal(kept_threads(p, ONE(TK_TX_THREAD, "main"), tids), 2);
	assert_int_equal(tids[0], 11);
	assert_int_equal(tids[1], 21);
	assert_int_equal(kept_threads(p, ONE(TK_TX_PROCESS, "Daemon"), tids), 1);
	assert_int_equal(tids[0], 21);
	assert_int_equal(kept_threads(p, ONE(TK_TX_PROCESS, "1"), tids), 2);
	/* several of one kind: any; of both kinds: both */
	assert_int_equal(kept_threads(p, ((tk_transform_spec[]){{TK_TX_THREAD, "11"}, {TK_TX_THREAD, "21"}}), 2, tids),
	                 2);
	assert_int_equal(
	    kept_threads(p, ((tk_transform_spec[]){{TK_TX_THREAD, "main"}, {TK_TX_PROCESS, "Daemon"}}), 2, tids), 1);
	assert_int_equal(tids[0], 21);
	assert_int_equal(kept_threads(p, ONE(TK_TX_THREAD, "nope"), tids), 0);
	tk_profile_free(p);
}

static void test_errors(void **state)
{
	tk_profile *p = sample_profile();
	tk_error err = {{0}};
	assert_null(tk_transform(p, ONE(TK_TX_FOCUS, ""), &err));
	assert_non_null(strstr(err.msg, "empty pattern"));
	assert_null(tk_transform(p, ONE(TK_TX_MERGE, "`foo"), &err));
	assert_non_null(strstr(err.msg, "`foo"));
	assert_null(tk_transform(p, ONE(TK_TX_EXCLUDE, "lib`"), &err));
	assert_null(tk_transform(p, ONE(TK_TX_THREAD, NULL), &err));
	assert_null(tk_transform(p, ONE((tk_transform_kind)99, "x"), &err));
	assert_non_null(strstr(err.msg, "unknown"));
	tk_profile_free(p);
}

/* The opt-in per-sample list: kept in arrival order by tk_sample_add, off by default, and carried
 * through transforms with each sample's stack rewritten like its cell (dropped with it). */
static void sample_line(const tk_profile *p, const tk_sample *s, char *out, size_t cap)
{
	tk_frame_id fr[64];
	size_t d = tk_stack_frames(p, s->stack, fr, 64);
	int n = snprintf(out, cap, "t=%llu tid=%llu w=%llu ", (unsigned long long)s->time,
	                 (unsigned long long)tk_thread_get(p, s->thread)->tid, (unsigned long long)s->weight);
	for (size_t j = 0; j < d && (size_t)n < cap; j++) {
		char buf[32];
		n += snprintf(out + n, cap - (size_t)n, "%s%s", j ? ";" : "", tk_frame_label(p, fr[j], buf));
	}
}

static void test_sample_list(void **state)
{
	(void)state;
	tk_profile *off = tk_profile_new();
	tk_thread_id t0 = th_thread(off, 1, 11, "main", "App");
	tk_sample_add(off, t0, th_stack(off, "App`main"), 1, 5);
	size_t n = 99;
	assert_null(tk_profile_sample_list(off, &n));
	assert_int_equal(n, 0);
	tk_profile_free(off);

	tk_profile *p = tk_profile_new();
	tk_profile_keep_samples(p, 1);
	tk_thread_id a = th_thread(p, 1, 11, "main", "App"), b = th_thread(p, 1, 12, "worker", "App");
	tk_stack_id s1 = th_stack(p, "App`main;App`foo;" KERN "write"), s2 = th_stack(p, "App`main;App`bar"),
	            s3 = th_stack(p, "App`work;App`bar;App`bar");
	tk_sample_add(p, a, s1, 10, 300); /* out of time order on purpose: arrival order is kept */
	tk_sample_add(p, b, s3, 20, 100);
	tk_sample_add(p, a, s2, 30, 200);
	tk_sample_add(p, a, s1, 40, 400);
	tk_sample_add(p, a, 0, 50, 500);
	tk_sample_add_n(p, a, s2, 60, 2); /* aggregated only */
	const tk_sample *sl = tk_profile_sample_list(p, &n);
	assert_int_equal(n, 5);
	assert_int_equal(sl[1].time, 100);
	assert_int_equal(sl[1].thread, b);
	assert_int_equal(sl[1].stack, s3);
	assert_int_equal(tk_thread_get(p, a)->samples, 6);

	tk_transform_spec specs[] = {{TK_TX_MERGE_BINARY, "libsystem_kernel.dylib"}, {TK_TX_EXCLUDE, "App`bar"}};
	tk_error err;
	tk_profile *q = tk_transform(p, specs, 1, &err);
	assert_non_null(q);
	sl = tk_profile_sample_list(q, &n);
	assert_int_equal(n, 5);
	char line[256];
	sample_line(q, &sl[0], line, sizeof line);
	assert_string_equal(line, "t=300 tid=11 w=10 main;foo");
	sample_line(q, &sl[4], line, sizeof line);
	assert_string_equal(line, "t=500 tid=11 w=50 ");
	tk_profile_free(q);

	q = tk_transform(p, specs, 2, &err); /* exclude bar: samples 2 and 3 go, thread 12 with them */
	assert_non_null(q);
	sl = tk_profile_sample_list(q, &n);
	assert_int_equal(n, 3);
	sample_line(q, &sl[0], line, sizeof line);
	assert_string_equal(line, "t=300 tid=11 w=10 main;foo");
	sample_line(q, &sl[1], line, sizeof line);
	assert_string_equal(line, "t=400 tid=11 w=40 main;foo");
	sample_line(q, &sl[2], line, sizeof line);
	assert_string_equal(line, "t=500 tid=11 w=50 ");
	assert_int_equal(tk_thread_count(q), 1);
	tk_profile_free(q);

	tk_transform_spec focus = {TK_TX_FOCUS, "foo"};
	q = tk_transform(p, &focus, 1, &err);
	assert_non_null(q);
	sl = tk_profile_sample_list(q, &n);
	assert_int_equal(n, 2);
	sample_line(q, &sl[1], line, sizeof line);
	assert_string_equal(line, "t=400 tid=11 w=40 foo;write");
	tk_profile_free(q);

	tk_profile_keep_samples(p, 0);
	assert_null(tk_profile_sample_list(p, &n));
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_identity),
	    cmocka_unit_test(test_focus),
	    cmocka_unit_test(test_exclude),
	    cmocka_unit_test(test_merge),
	    cmocka_unit_test(test_merge_binary_and_system),
	    cmocka_unit_test(test_system_binaries),
	    cmocka_unit_test(test_hide_unsymbolicated),
	    cmocka_unit_test(test_flatten_and_order),
	    cmocka_unit_test(test_thread_and_process_filters),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_sample_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
