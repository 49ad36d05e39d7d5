/* tk_symbolicate_profile_take (frames renamed in place, the stack tree respelled only for inline
 * chains) against tk_symbolicate_profile (a derived profile: the way every profile was symbolicated
 * before) on the real MetricKit payloads of tests/fixtures/metrickit: every writer's bytes, `info`,
 * and the resolved/unresolved counts must be the same. The payloads' frames are pointed into the
 * committed generated dylib (tests/fixtures/symbol, UUID and __text from small-layout.tsv): each
 * binaryUUID becomes the dylib's, each offset is folded into its __text and the address moved with
 * it, so most frames resolve (many to inline chains) while the trees stay the real ones. The truth
 * for the names themselves is llvm-symbolizer (tests/cli/metrickit_symbols.sh). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tracekit/read.h"
#include "tracekit/symbol.h"
#include "tracekit/write.h"

#define DYLIB_UUID "4C4C44D7-5555-3144-A1A5-753F1442BA46"
#define TEXT_OFF 0x510u /* __text: vmaddr 0, at 0x510, 0x229c bytes */
#define TEXT_SIZE 0x229cu
#define LOAD 0x104a8c000ULL

static char cache_dir[64];

static int setup(void **state)
{
	strcpy(cache_dir, "/tmp/tk-syminplace-XXXXXX");
	return mkdtemp(cache_dir) ? 0 : -1;
}
static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static tk_symbolicator *sym(void)
{
	tk_symbol_options o;
	tk_symbol_options_init(&o);
	o.cache_dir = cache_dir;
	tk_symbolicator *s = tk_symbolicator_new(&o);
	tk_error err;
	assert_int_equal(tk_symbolicator_add_path(s, "tests/fixtures/symbol", &err), 0);
	return s;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)len + 1);
	assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
	b[len] = 0;
	fclose(f);
	*n = (size_t)len;
	return b;
}

/* The number after `"key" :` at s (a JSON member value), its end in *end; -1 if not a number. */
static long long number_after(const char *s, const char **end)
{
	const char *p = strchr(s, ':');
	if (!p)
		return -1;
	p++;
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	char *e;
	long long v = strtoll(p, &e, 10);
	*end = e;
	return v;
}

/* The payload with its frames pointed into the dylib (see the header). Each frame's members come as
 * binaryUUID … offsetIntoBinaryTextSegment … address in Apple's and the SDKs' files; the address is
 * rewritten from the offset last seen. */
static char *retarget(const char *in, size_t *nframes)
{
	size_t cap = strlen(in) * 2 + 64, n = 0;
	char *out = malloc(cap);
	unsigned long long off = 0;
	*nframes = 0;
	for (const char *p = in; *p;) {
		const char *u = strstr(p, "\"binaryUUID\"");
		const char *o = strstr(p, "\"offsetIntoBinaryTextSegment\"");
		const char *a = strstr(p, "\"address\"");
		const char *k = u;
		if (!k || (o && o < k))
			k = o;
		if (!k || (a && a < k))
			k = a;
		if (!k) {
			size_t r = strlen(p);
			memcpy(out + n, p, r);
			n += r;
			break;
		}
		const char *colon = strchr(k, ':');
		memcpy(out + n, p, (size_t)(colon + 1 - p));
		n += (size_t)(colon + 1 - p);
		p = colon + 1;
		if (k == u) {
			const char *q1 = strchr(p, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
			if (q1 && q2 && q2 - q1 - 1 == 36 && strspn(p, " ") == (size_t)(q1 - p)) {
				n += (size_t)sprintf(out + n, " \"%s\"", DYLIB_UUID);
				p = q2 + 1;
			}
			continue;
		}
		const char *end;
		long long v = number_after(k, &end);
		if (v < 0)
			continue;
		if (k == o) {
			off = TEXT_OFF + (unsigned long long)v % (TEXT_SIZE - 8);
			n += (size_t)sprintf(out + n, " %llu", off);
			(*nframes)++;
		} else
			n += (size_t)sprintf(out + n, " %llu", LOAD + off);
		p = end;
	}
	out[n] = 0;
	return out;
}

static tk_profile *read_mem(const char *text, const char *name)
{
	tk_error err;
	tk_input *in = tk_input_open_mem(text, strlen(text), name, &err);
	assert_non_null(in);
	tk_profile *p = tk_profile_new();
	if (tk_read_input(p, in, NULL, &err) != 0)
		fail_msg("%s: %s", name, err.msg);
	tk_input_close(in);
	return p;
}

/* Everything the writers and `info` print of p, one buffer. */
static char *all_output(const tk_profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	tk_error err;
	size_t nw = 0;
	const tk_writer *w = tk_writers(&nw);
	for (size_t i = 0; i < nw; i++) {
		tk_convert_options co;
		tk_convert_options_init(&co);
		fprintf(f, "== %s\n", w[i].name);
		if (w[i].write(f, p, &co, &err) != 0)
			fprintf(f, "error: %s\n", err.msg);
	}
	fprintf(f, "== info\n");
	tk_write_info_text(f, p, "x", &err);
	fclose(f);
	return buf;
}

static void test_fixtures_same_as_derived(void **state)
{
	DIR *d = opendir("tests/fixtures/metrickit");
	assert_non_null(d);
	struct dirent *e;
	size_t files = 0, total_resolved = 0, chains_seen = 0;
	tk_symbolicator *s = sym();
	while ((e = readdir(d)) != NULL) {
		size_t nl = strlen(e->d_name);
		if (nl < 5 || strcmp(e->d_name + nl - 5, ".json") != 0)
			continue;
		char path[512];
		snprintf(path, sizeof path, "tests/fixtures/metrickit/%s", e->d_name);
		size_t n, nframes;
		char *raw = slurp(path, &n);
		char *text = retarget(raw, &nframes);
		free(raw);
		tk_profile *a = tk_profile_new(), *b;
		tk_error err;
		{
			tk_input *in = tk_input_open_mem(text, strlen(text), path, &err);
			assert_non_null(in);
			if (tk_read_input(a, in, NULL, &err) != 0) {
				/* a fixture the reader refuses (the garbage tree) has nothing to symbolicate */
				tk_input_close(in);
				tk_profile_free(a);
				free(text);
				continue;
			}
			tk_input_close(in);
		}
		b = read_mem(text, path);
		size_t ra = 0, ua = 0, rb = 0, ub = 0;
		tk_symbolicate_options oa, ob;
		tk_symbolicate_options_init(&oa);
		tk_symbolicate_options_init(&ob);
		oa.resolved = &ra, oa.unresolved = &ua;
		ob.resolved = &rb, ob.unresolved = &ub;
		tk_profile *derived = tk_symbolicate_profile(a, s, &oa, &err);
		assert_non_null(derived);
		size_t nf_before = tk_frame_count(b);
		tk_profile *inplace = tk_symbolicate_profile_take(b, s, &ob, &err);
		assert_non_null(inplace);
		/* MetricKit frames carry their binary: the in-place path is the one taken */
		assert_ptr_equal(inplace, b);
		assert_int_equal(ra, rb);
		assert_int_equal(ua, ub);
		total_resolved += ra;
		if (tk_frame_count(inplace) > nf_before)
			chains_seen++;
		size_t la, lb;
		char *oa_txt = all_output(derived, &la), *ob_txt = all_output(inplace, &lb);
		if (la != lb || memcmp(oa_txt, ob_txt, la) != 0) {
			size_t i = 0;
			while (i < la && i < lb && oa_txt[i] == ob_txt[i])
				i++;
			fail_msg("%s (%zu frames retargeted): outputs differ at byte %zu: derived '%.80s' / in place "
			         "'%.80s'",
			         path, nframes, i, oa_txt + (i > 20 ? i - 20 : 0), ob_txt + (i > 20 ? i - 20 : 0));
		}
		free(oa_txt);
		free(ob_txt);
		tk_profile_free(derived);
		tk_profile_free(a);
		tk_profile_free(inplace);
		free(text);
		files++;
	}
	closedir(d);
	tk_symbolicator_free(s);
	assert_true(files >= 10);          /* the real payloads were read */
	assert_true(total_resolved >= 60); /* and their frames resolved (80 today), not left as they were */
	assert_true(chains_seen >= 3);     /* inline chains respelled the stack tree (4 files today) */
}

/* A profile keeping its per-sample list is derived (its rows name stacks), with the same answer. */
static void test_sample_list_derived(void **state)
{
	tk_profile *p = tk_profile_new();
	tk_profile_keep_samples(p, 1);
	tk_str u = tk_intern_cstr(p, DYLIB_UUID), ar = tk_intern_cstr(p, "arm64"), nm = tk_intern_cstr(p, "lib");
	tk_binary b = {nm, 0, u, ar, LOAD};
	tk_binary_id bi = tk_binary_add(p, &b);
	tk_frame f1 = {LOAD + TEXT_OFF + 0x40, 0, bi, 0, 0, 0}, f2 = {LOAD + TEXT_OFF + 0x400, 0, bi, 0, 0, 0};
	tk_stack_id st = tk_stack_push(p, tk_stack_push(p, 0, tk_frame_add(p, &f1)), tk_frame_add(p, &f2));
	tk_thread_id t = tk_thread_get_or_add(p, 1, 1, 0, 0);
	tk_sample_add(p, t, st, 5, 100);
	tk_sample_add(p, t, st, 7, 200);
	tk_symbolicator *s = sym();
	tk_error err;
	tk_profile *q = tk_symbolicate_profile_take(p, s, NULL, &err);
	assert_non_null(q);
	assert_ptr_not_equal(q, p); /* derived; p was freed */
	assert_int_equal(tk_profile_sample_count(q), 2);
	assert_int_equal(tk_thread_get(q, 0)->weight, 12);
	tk_profile_free(q);
	tk_symbolicator_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_fixtures_same_as_derived, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sample_list_derived, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
