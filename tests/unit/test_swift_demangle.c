/*
 * The Swift demangler against the Swift project's own test vectors (tests/fixtures/swift-demangle,
 * Swift 6.2.3, Apache-2.0; see SOURCES.md there), plus the C++/Rust entry point.
 *
 * All 715 vectors pass. expected-pass.txt lists those that do ("FILE<TAB>INPUT"): each of them
 * must give exactly the expected text, so the pass count can only go up; every vector whose
 * expected output is its input ("not a valid mangling") must come back unchanged. The {T:…}/{C}
 * classification prefixes of the expected outputs are stripped, as SOURCES.md says.
 * TK_SWIFT_PASS_LIST_OUT=FILE writes the current pass list (to update expected-pass.txt).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracekit/symbol.h"

#define DIR "tests/fixtures/swift-demangle/"

typedef struct vec {
	char *file, *in, *want;
} vec;

static vec *vecs;
static size_t nvecs;

static void load(const char *file)
{
	char path[256];
	snprintf(path, sizeof path, DIR "%s", file);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[8192];
	while (fgets(line, sizeof line, f)) {
		char *sep = strstr(line, " ---> ");
		if (!sep || line[0] == '/')
			continue;
		*sep = 0;
		char *want = sep + 6;
		want[strcspn(want, "\n")] = 0;
		size_t il = strlen(line);
		while (il && line[il - 1] == ' ')
			line[--il] = 0;
		if (want[0] == '{' && (want[1] == 'T' || want[1] == 'C')) {
			char *e = strstr(want, "} ");
			if (e)
				want = e + 2;
		}
		vecs = realloc(vecs, (nvecs + 1) * sizeof *vecs);
		assert_non_null(vecs);
		vecs[nvecs++] = (vec){strdup(file), strdup(line), strdup(want)};
	}
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	load("manglings.txt");
	load("simplified-manglings.txt");
	load("manglings-with-clang-types.txt");
	load("experimental-manglings.txt");
	return nvecs > 700 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < nvecs; i++)
		free(vecs[i].file), free(vecs[i].in), free(vecs[i].want);
	free(vecs);
	return 0;
}

/* Demangle from an exact-size heap copy (no NUL), so ASan sees any read past the input. */
static int passes(const vec *v, char *out, size_t cap)
{
	size_t len = strlen(v->in);
	char *in = malloc(len ? len : 1);
	memcpy(in, v->in, len);
	int simp = strcmp(v->file, "simplified-manglings.txt") == 0;
	size_t n = tk_swift_demangle(in, len, out, cap, simp ? TK_DEMANGLE_SIMPLIFIED : TK_DEMANGLE_FULL);
	free(in);
	return strcmp(n ? out : v->in, v->want) == 0;
}

static void test_vectors(void **state)
{
	(void)state;
	static char out[16384];
	/* the pass list */
	FILE *f = fopen(DIR "expected-pass.txt", "r");
	assert_non_null(f);
	char line[8192];
	size_t listed = 0, missing = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = 0;
		int found = 0;
		for (size_t i = 0; i < nvecs; i++)
			if (!strcmp(vecs[i].file, line) && !strcmp(vecs[i].in, tab + 1)) {
				found = 1;
				if (!passes(&vecs[i], out, sizeof out)) {
					print_error("regressed: %s %s\n  want %s\n  got  %s\n", line, tab + 1,
					            vecs[i].want, out);
					missing++;
				}
				break;
			}
		assert_true(found);
		listed++;
	}
	fclose(f);
	/* per-file counts */
	const char *files[] = {"manglings.txt", "simplified-manglings.txt", "manglings-with-clang-types.txt",
	                       "experimental-manglings.txt"};
	size_t total_pass = 0;
	FILE *lo = getenv("TK_SWIFT_PASS_LIST_OUT") ? fopen(getenv("TK_SWIFT_PASS_LIST_OUT"), "w") : NULL;
	for (size_t k = 0; k < 4; k++) {
		size_t p = 0, t = 0;
		for (size_t i = 0; i < nvecs; i++) {
			if (strcmp(vecs[i].file, files[k]))
				continue;
			t++;
			if (passes(&vecs[i], out, sizeof out)) {
				p++;
				if (lo)
					fprintf(lo, "%s\t%s\n", vecs[i].file, vecs[i].in);
			}
		}
		printf("swift vectors %-32s %3zu of %3zu pass\n", files[k], p, t);
		total_pass += p;
	}
	if (lo)
		fclose(lo);
	assert_int_equal(missing, 0);
	assert_true(total_pass >= listed);
}

static void test_invalid_unchanged(void **state)
{
	(void)state;
	char out[4096];
	size_t n = 0;
	for (size_t i = 0; i < nvecs; i++) {
		if (strcmp(vecs[i].in, vecs[i].want))
			continue;
		n++;
		size_t len = strlen(vecs[i].in);
		char *in = malloc(len ? len : 1);
		memcpy(in, vecs[i].in, len);
		size_t r = tk_swift_demangle(in, len, out, sizeof out, TK_DEMANGLE_FULL);
		if (r)
			print_error("should stay unchanged: %s -> %s\n", vecs[i].in, out);
		assert_int_equal(r, 0);
		free(in);
	}
	assert_true(n > 60);
}

/* Every prefix of every vector (truncated names) and a too-small output buffer: no crash, no
 * read past the input, and a result that does not fit is a failure, never a cut-off name. */
static void test_truncations_and_small_buffers(void **state)
{
	(void)state;
	char out[16384];
	for (size_t i = 0; i < nvecs; i++) {
		size_t len = strlen(vecs[i].in);
		for (size_t l = 0; l < len; l++) {
			char *in = malloc(l ? l : 1);
			memcpy(in, vecs[i].in, l);
			size_t r = tk_swift_demangle(in, l, out, sizeof out, TK_DEMANGLE_FULL);
			assert_true(r < sizeof out);
			free(in);
		}
		size_t full = tk_swift_demangle(vecs[i].in, len, out, sizeof out, TK_DEMANGLE_FULL);
		if (full > 1) {
			char small[8];
			size_t cap = full < sizeof small ? full : sizeof small; /* one byte short of the NUL at most */
			assert_int_equal(tk_swift_demangle(vecs[i].in, len, small, cap, TK_DEMANGLE_FULL), 0);
			assert_int_equal(tk_swift_demangle(vecs[i].in, len, out, full, TK_DEMANGLE_FULL), 0);
			assert_int_equal(tk_swift_demangle(vecs[i].in, len, out, full + 1, TK_DEMANGLE_FULL), full);
		}
	}
	/* deep nesting is refused, not recursed into */
	char deep[20000];
	size_t k = 0;
	k += (size_t)snprintf(deep + k, sizeof deep - k, "$s");
	for (int i = 0; i < 3000; i++)
		k += (size_t)snprintf(deep + k, sizeof deep - k, "Sayx");
	assert_int_equal(tk_swift_demangle(deep, k, out, sizeof out, TK_DEMANGLE_FULL), 0);
}

/* Names as apps have them (full form checked against the grammar by hand; the simplified form is
 * what atos and Instruments print). */
static void test_app_names(void **state)
{
	(void)state;
	static const struct {
		const char *in, *full, *simple;
	} t[] = {
	    {"$s5MyApp14ViewControllerC11viewDidLoadyyF", "MyApp.ViewController.viewDidLoad() -> ()",
	     "ViewController.viewDidLoad()"},
	    {"_$s5MyApp14ViewControllerC11viewDidLoadyyFyycfU_",
	     "closure #1 () -> () in MyApp.ViewController.viewDidLoad() -> ()",
	     "closure #1 in ViewController.viewDidLoad()"},
	    {"$s5MyApp14ViewControllerC4nameSSvg", "MyApp.ViewController.name.getter : Swift.String",
	     "ViewController.name.getter"},
	    {"$s5MyApp7ManagerC5fetch3url10completionySS_ySbctF",
	     "MyApp.Manager.fetch(url: Swift.String, completion: (Swift.Bool) -> ()) -> ()",
	     "Manager.fetch(url:completion:)"},
	    {"$s5MyApp7ManagerC5fetchyySSYaKF", "MyApp.Manager.fetch(Swift.String) async throws -> ()",
	     "Manager.fetch(_:)"},
	    {"$s5MyApp3fooyySaySiGF", "MyApp.foo([Swift.Int]) -> ()", "foo(_:)"},
	};
	char out[1024];
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		assert_true(tk_swift_demangle(t[i].in, strlen(t[i].in), out, sizeof out, TK_DEMANGLE_FULL) > 0);
		assert_string_equal(out, t[i].full);
		assert_true(tk_swift_demangle(t[i].in, strlen(t[i].in), out, sizeof out, TK_DEMANGLE_SIMPLIFIED) > 0);
		assert_string_equal(out, t[i].simple);
	}
}

static void test_demangle_any(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want;
		int flags;
	} t[] = {
	    {"_ZN3foo3barEv", "foo::bar()", 0},
	    {"__ZN3foo3barEv", "foo::bar()", 0},
	    /* Rust legacy: the hash goes (as rustfilt and inferno show it); v0 without the crate hash */
	    {"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write", 0},
	    {"_RNvCs1234_7mycrate3foo", "mycrate::foo", 0},
	    {"_$s5MyApp14ViewControllerC11viewDidLoadyyF", "ViewController.viewDidLoad()", TK_DEMANGLE_SIMPLIFIED},
	    {"$s5MyApp14ViewControllerC11viewDidLoadyyF", "MyApp.ViewController.viewDidLoad() -> ()", 0},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char *d = tk_demangle_any(t[i].in, t[i].flags);
		assert_non_null(d);
		assert_string_equal(d, t[i].want);
		free(d);
	}
	assert_null(tk_demangle_any("main", 0));
	assert_null(tk_demangle_any("$s", 0));
	assert_null(tk_demangle_any("_T", 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors),
	    cmocka_unit_test(test_invalid_unchanged),
	    cmocka_unit_test(test_truncations_and_small_buffers),
	    cmocka_unit_test(test_app_names),
	    cmocka_unit_test(test_demangle_any),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
