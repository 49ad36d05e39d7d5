/* tk_symbolicate_profile on a committed generated dSYM (tests/fixtures/symbol): inline expansion,
 * addr−1 for return addresses, PC+1 leaves, PAC stripping, image lists for address-only frames,
 * unresolved frames kept, weights and threads preserved. Expected chains come from llvm-symbolizer
 * (see tests/fixtures/symbol/SOURCES.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tracekit/symbol.h"

#define FIX "tests/fixtures/symbol/libtks-arm64.dylib.dwarf"
#define UUID "4C4C44D7-5555-3144-A1A5-753F1442BA46"
#define LOAD 0x104a8c000ULL

#include "test_symbol_fixture.h"

static const char *names_root_first(const tk_profile *p, tk_stack_id st, char *buf, size_t cap)
{
	tk_frame_id fr[64];
	size_t n = tk_stack_frames(p, st, fr, 64);
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const tk_frame *f = tk_frame_get(p, fr[i]);
		char lb[32];
		size_t len = strlen(buf);
		snprintf(buf + len, cap - len, "%s%s%s:%u%s", i ? " > " : "", tk_frame_label(p, fr[i], lb),
		         f->file ? "@" : "", f->line, f->flags & TK_FRAME_INLINED ? "i" : "");
	}
	return buf;
}

static void warn_count(void *ctx, const char *msg)
{
	++*(int *)ctx;
}

static void test_expand(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_binary b = {tk_intern_cstr(p, "libtks-arm64.dylib"), tk_intern_cstr(p, "/usr/lib/libtks-arm64.dylib"),
	               tk_intern_cstr(p, UUID), tk_intern_cstr(p, "arm64e"), LOAD};
	tk_binary_id bid = tk_binary_add(p, &b);
	tk_binary missing = {tk_intern_cstr(p, "Missing"), 0, tk_intern_cstr(p, "00000000-0000-0000-0000-000000000001"),
	                     tk_intern_cstr(p, "arm64"), 0x200000000};
	tk_binary_id mid = tk_binary_add(p, &missing);
	/* xctrace 14.3+: leaf = PC + 1; callers = return addresses, one with PAC bits */
	tk_frame leaf = {LOAD + 0x1ab4 + 1, tk_intern_cstr(p, "old_leaf_name"), bid, 0, 0, TK_FRAME_LEAF_PC};
	tk_frame caller = {(LOAD + 0x1264) | 0x002a000000000000ULL, 0, bid, 0, 0, 0};
	tk_frame gone = {0x200001000, tk_intern_cstr(p, "kept_as_is"), mid, 0, 0, 0};
	tk_frame root = {0x1000, tk_intern_cstr(p, "start"), 0, 0, 0, 0};
	tk_frame_id leaf_first[] = {tk_frame_add(p, &leaf), tk_frame_add(p, &caller), tk_frame_add(p, &gone),
	                            tk_frame_add(p, &root)};
	tk_stack_id st = tk_stack_from_leaf_first(p, leaf_first, 4);
	tk_thread_id t = tk_thread_get_or_add(p, 7, 42, tk_intern_cstr(p, "Main Thread"), 0);
	tk_sample_add(p, t, st, 1000000, 5);
	tk_sample_add(p, t, st, 1000000, 9);
	tk_sample_add(p, t, tk_stack_from_leaf_first(p, leaf_first + 3, 1), 250, 7);

	tk_symbolicator *s = sym();
	tk_symbolicate_options o;
	tk_symbolicate_options_init(&o);
	size_t res = 0, unres = 0;
	int warnings = 0;
	o.resolved = &res;
	o.unresolved = &unres;
	o.warn = warn_count;
	o.warn_ctx = &warnings;
	tk_error err;
	tk_profile *q = tk_symbolicate_profile(p, s, &o, &err);
	assert_non_null(q);
	assert_int_equal(res, 2);
	assert_int_equal(unres, 1);
	assert_int_equal(warnings, 1);
	assert_int_equal(tk_thread_count(q), 1);
	const tk_thread *th = tk_thread_get(q, 0);
	assert_int_equal(th->weight, 2000250);
	assert_int_equal(th->samples, 3);
	assert_int_equal(th->t_min, 5);
	assert_int_equal(th->t_max, 9);
	assert_string_equal(tk_profile_meta(q, "symbolicated"), "tracekit");
	size_t n = 0;
	const tk_stack_weight *c = tk_thread_stacks(q, 0, &n);
	assert_int_equal(n, 2);
	char buf[1024];
	names_root_first(q, c[0].stack, buf, sizeof buf);
	/* caller: return address 0x1264 starts u0_f11…; the call is at 0x1263, in u0_f10 line 196 */
	assert_string_equal(buf, "start:0 > kept_as_is:0 > u0_f10@:196 > u0_f15@:323 > u0_f15_in0@:315i > "
	                         "u0_f15_in1@:308i > hdr_2@:19i");
	assert_int_equal(c[0].weight, 2000000);
	/* the leaf keeps TK_FRAME_LEAF_PC and its original address; files are the DWARF paths */
	tk_frame_id fr[16];
	size_t d = tk_stack_frames(q, c[0].stack, fr, 16);
	const tk_frame *lf = tk_frame_get(q, fr[d - 1]);
	assert_true(lf->flags & TK_FRAME_LEAF_PC);
	assert_true(lf->addr == LOAD + 0x1ab5);
	assert_string_equal(tk_string(q, lf->file), "./src/tksymgen.h");
	assert_string_equal(tk_string(q, tk_binary_get(q, lf->binary)->uuid), UUID);
	assert_false(tk_frame_get(q, fr[d - 4])->flags & TK_FRAME_LEAF_PC);
	tk_profile_free(q);

	/* TK_ADJUST_NONE looks the return address up as is: u0_f11 instead of u0_f10 */
	o.adjust = TK_ADJUST_NONE;
	q = tk_symbolicate_profile(p, s, &o, &err);
	c = tk_thread_stacks(q, 0, &n);
	names_root_first(q, c[0].stack, buf, sizeof buf);
	assert_non_null(strstr(buf, "u0_f11_queue_glyph_merge@:204"));
	tk_profile_free(q);
	o.adjust = 99;
	assert_null(tk_symbolicate_profile(p, s, &o, &err));
	tk_symbolicator_free(s);
	tk_profile_free(p);
}

static void test_image_list(void **state)
{
	/* pre-14.3 text-addresses: frames with only an address; the user gives the image and load address */
	tk_profile *p = tk_profile_new();
	tk_frame leaf = {LOAD + 0x1ab4, 0, 0, 0, 0, TK_FRAME_LEAF_PC};
	tk_frame caller = {LOAD + 0x1264, 0, 0, 0, 0, 0};
	tk_frame outside = {0x7000, 0, 0, 0, 0, 0};
	tk_frame_id lf[] = {tk_frame_add(p, &leaf), tk_frame_add(p, &caller), tk_frame_add(p, &outside)};
	tk_thread_id t = tk_thread_get_or_add(p, 1, 1, 0, 0);
	tk_sample_add(p, t, tk_stack_from_leaf_first(p, lf, 3), 10, UINT64_MAX);
	tk_symbolicator *s = sym();
	tk_image_spec spec = {FIX, NULL, "arm64", LOAD};
	tk_symbolicate_options o;
	tk_symbolicate_options_init(&o);
	o.images = &spec;
	o.nimages = 1;
	tk_error err;
	tk_profile *q = tk_symbolicate_profile(p, s, &o, &err);
	assert_non_null(q);
	size_t n;
	const tk_stack_weight *c = tk_thread_stacks(q, 0, &n);
	char buf[1024];
	names_root_first(q, c[0].stack, buf, sizeof buf);
	assert_string_equal(buf, "0x7000:0 > u0_f10@:196 > u0_f15@:323 > u0_f15_in0@:315i > u0_f15_in1@:308i > "
	                         "hdr_2@:19i");
	tk_frame_id fr[16];
	size_t d = tk_stack_frames(q, c[0].stack, fr, 16);
	const tk_binary *b = tk_binary_get(q, tk_frame_get(q, fr[d - 1])->binary);
	assert_non_null(b);
	assert_true(b->load_addr == LOAD);
	assert_string_equal(tk_string(q, b->uuid), UUID);
	tk_profile_free(q);
	tk_symbolicator_free(s);
	tk_profile_free(p);
}

static void test_eviction(void **state)
{
	/* at most one mapped cache: alternating between two images unmaps and reopens them */
	char copy[128];
	snprintf(copy, sizeof copy, "%s/copy.dwarf", cache_dir);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "cp %s %s", FIX, copy);
	assert_int_equal(system(cmd), 0);
	tk_symbol_options so;
	tk_symbol_options_init(&so);
	so.cache_dir = cache_dir;
	so.max_open = 1;
	tk_symbolicator *s = tk_symbolicator_new(&so);
	tk_error err;
	tk_symbol_image *a = tk_symbolicator_image(s, NULL, FIX, NULL, &err);
	tk_symbol_image *b = tk_symbolicator_image(s, NULL, copy, NULL, &err);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	for (int i = 0; i < 6; i++) {
		tk_symbol_result r;
		assert_int_equal(tk_symbol_image_lookup(i & 1 ? b : a, 0x1ab4, &r), 4);
		assert_string_equal(r.frames[0].function, "hdr_2");
		assert_string_equal(r.frames[3].function, "u0_f15");
		assert_int_equal(r.frames[3].line, 323);
		assert_string_equal(tk_symbol_image_name(i & 1 ? b : a),
		                    i & 1 ? "copy.dwarf" : "libtks-arm64.dylib.dwarf");
	}
	tk_symbolicator_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_expand), cmocka_unit_test(test_image_list),
	                                   cmocka_unit_test(test_eviction)};
	return cmocka_run_group_tests(tests, setup, teardown);
}
