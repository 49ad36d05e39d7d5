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

#include "test_symbol_fixture.h"

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

/* Look-ups are made in address order, the symbol cache going on from where the previous one stopped,
 * and a look-up landing in the previous one's function takes its names as they are: the answers must
 * be those of each address looked up alone. Every instruction of the dylib's __text (most in inline
 * chains) as a return address (looked up at address − 1) and as a leaf (PC + 1 as xctrace gives it;
 * the instruction itself), each under one root frame in a shuffled order and with its own weight; the
 * truth is tk_symbol_image_lookup of each address after a look-up at the other end of __text (so none
 * continues from its neighbour), through a second symbolicator. */
static void chain_text(char *buf, size_t cap, const tk_symbol_result *r, size_t n, uint64_t addr)
{
	size_t len = strlen(buf);
	if (!n) {
		snprintf(buf + len, cap - len, "%s0x%llx", len ? " > " : "", (unsigned long long)addr);
		return;
	}
	for (size_t i = n; i-- > 0;) {
		const tk_symbol_frame *sf = &r->frames[i];
		len = strlen(buf);
		if (strcmp(sf->function, "??") == 0)
			snprintf(buf + len, cap - len, "%s0x%llx", len ? " > " : "", (unsigned long long)addr);
		else
			snprintf(buf + len, cap - len, "%s%s", len ? " > " : "", sf->function);
		len = strlen(buf);
		snprintf(buf + len, cap - len, "@%s:%u%s", sf->file ? sf->file : "", sf->file ? sf->line : 0,
		         i + 1 < n ? "i" : "");
	}
}

static size_t lookup_alone(tk_symbol_image *im, uint64_t file_addr, tk_symbol_result *r)
{
	tk_symbol_result far;
	tk_symbol_image_lookup(im, file_addr < TEXT_OFF + TEXT_SIZE / 2 ? TEXT_OFF + TEXT_SIZE - 4 : TEXT_OFF, &far);
	size_t n = tk_symbol_image_lookup(im, file_addr, r);
	if (n == 1 && !r->frames[0].file && strcmp(r->frames[0].function, "??") == 0)
		n = 0; /* as tk_symbolicate_profile: kept as it was */
	return n;
}

enum { NINSN = TEXT_SIZE / 4 };

static tk_profile *every_instruction(void)
{
	tk_profile *p = tk_profile_new();
	tk_binary b = {tk_intern_cstr(p, "libtks-arm64.dylib"), 0, tk_intern_cstr(p, DYLIB_UUID),
	               tk_intern_cstr(p, "arm64"), LOAD};
	tk_binary_id bi = tk_binary_add(p, &b);
	tk_frame root = {LOAD + TEXT_OFF + 0x100, 0, bi, 0, 0, 0};
	tk_stack_id rs = tk_stack_push(p, 0, tk_frame_add(p, &root));
	tk_thread_id t = tk_thread_get_or_add(p, 1, 1, 0, 0);
	uint32_t x = 12345;
	static uint32_t order[2 * NINSN];
	for (uint32_t i = 0; i < 2 * NINSN; i++)
		order[i] = i;
	for (uint32_t i = 2 * NINSN; i-- > 1;) { /* a fixed shuffle */
		x = x * 1103515245u + 12345u;
		uint32_t j = (x >> 8) % (i + 1), k = order[i];
		order[i] = order[j], order[j] = k;
	}
	for (uint32_t i = 0; i < 2 * NINSN; i++) {
		uint32_t k = order[i];
		uint64_t insn = LOAD + TEXT_OFF + 4ull * (k / 2);
		tk_frame f = {k & 1 ? insn + 1 : insn + 4, 0, bi, 0, 0, k & 1 ? TK_FRAME_LEAF_PC : 0};
		tk_sample_add_n(p, t, tk_stack_push(p, rs, tk_frame_add(p, &f)), k + 1, 1);
	}
	return p;
}

static void test_address_order_same_as_alone(void **state)
{
	tk_symbolicator *s = sym(), *s2 = sym();
	tk_error err;
	tk_symbol_image *im = tk_symbolicator_image(s2, DYLIB_UUID, NULL, NULL, &err);
	assert_non_null(im);
	static char want[2 * NINSN][1024];
	char root_chain[1024] = "";
	tk_symbol_result r;
	size_t n = lookup_alone(im, TEXT_OFF + 0x100 - 1, &r);
	chain_text(root_chain, sizeof root_chain, &r, n, LOAD + TEXT_OFF + 0x100);
	size_t inlined = 0, unresolved = 0;
	for (uint32_t k = 0; k < 2 * NINSN; k++) {
		uint64_t insn = TEXT_OFF + 4ull * (k / 2);
		n = lookup_alone(im, k & 1 ? insn : insn + 4 - 1, &r);
		inlined += n > 1;
		unresolved += n == 0;
		strcpy(want[k], root_chain);
		chain_text(want[k], sizeof want[k], &r, n, LOAD + (k & 1 ? insn + 1 : insn + 4));
	}
	assert_true(inlined > NINSN / 4); /* the chains are exercised (most addresses are inlined code) */
	for (int take = 0; take < 2; take++) {
		tk_profile *p = every_instruction();
		tk_profile *q =
		    take ? tk_symbolicate_profile_take(p, s, NULL, &err) : tk_symbolicate_profile(p, s, NULL, &err);
		assert_non_null(q);
		if (take)
			assert_ptr_equal(q, p);
		else
			tk_profile_free(p);
		size_t nc = 0, seen = 0;
		const tk_stack_weight *c = tk_thread_stacks(q, 0, &nc);
		for (size_t i = 0; i < nc; i++) {
			if (!c[i].weight)
				continue;
			assert_true(c[i].weight >= 1 && c[i].weight <= 2 * NINSN);
			tk_frame_id fr[80];
			size_t d = tk_stack_frames(q, c[i].stack, fr, 80);
			char got[1024] = "";
			for (size_t j = 0; j < d; j++) {
				const tk_frame *f = tk_frame_get(q, fr[j]);
				char lb[32];
				size_t len = strlen(got);
				snprintf(got + len, sizeof got - len, "%s%s@%s:%u%s", j ? " > " : "",
				         tk_frame_label(q, fr[j], lb), f->file ? tk_string(q, f->file) : "", f->line,
				         f->flags & TK_FRAME_INLINED ? "i" : "");
			}
			size_t k = (size_t)c[i].weight - 1;
			/* an unresolved frame keeps its address and no file: "0x…@:0" */
			if (strcmp(got, want[k]) != 0)
				fail_msg("%s, address %zu (%s): got '%s', alone '%s'", take ? "in place" : "derived",
				         k / 2, k & 1 ? "leaf" : "return", got, want[k]);
			seen++;
		}
		assert_int_equal(seen, 2 * NINSN); /* every frame on its own stack */
		tk_profile_free(q);
	}
	tk_symbolicator_free(s);
	tk_symbolicator_free(s2);
}

/* Frames that come out equal once symbolicated, against the derived profile (which numbers frames and
 * stacks through the frame table's hash): one address as a return address and as a leaf (a chain's
 * outer function can be shared), under two line numbers (whole chains equal: their stacks meet and
 * the weights add), and with pointer-authentication bits (masked for the look-up, kept in the frame:
 * never equal to the others), each under two parents, and a leaf under its caller's two lines (met
 * again below the stack where they meet). variant 1 adds 70
 * frames at one address (more equal frames than are compared one by one); variant 2 a second binary
 * of the same image labelled x86_64 (no mask) with a frame 2^63 away (its look-ups not in address
 * order). Both must print what the derived profile prints. */
static tk_profile *shared_addresses(int variant, size_t *cells)
{
	tk_profile *p = tk_profile_new();
	tk_str u = tk_intern_cstr(p, DYLIB_UUID), nm = tk_intern_cstr(p, "libtks-arm64.dylib");
	tk_binary b = {nm, 0, u, tk_intern_cstr(p, "arm64"), LOAD};
	tk_binary_id bi = tk_binary_add(p, &b);
	tk_thread_id t = tk_thread_get_or_add(p, 1, 1, 0, 0);
	tk_frame r1 = {LOAD + TEXT_OFF + 0x100, 0, bi, 0, 0, 0}, r2 = {LOAD + TEXT_OFF + 0x200, 0, bi, 0, 0, 0};
	tk_stack_id rs[2] = {tk_stack_push(p, 0, tk_frame_add(p, &r1)), tk_stack_push(p, 0, tk_frame_add(p, &r2))};
	uint64_t w = 1;
	for (uint32_t k = 0; k < NINSN; k += 2) {
		uint64_t a = LOAD + TEXT_OFF + 4ull * k + 4;
		tk_frame fr[4] = {{a, 0, bi, 0, 0, 0},
		                  {a, 0, bi, 0, 0, TK_FRAME_LEAF_PC},
		                  {a, 0, bi, 0, 7, 0},
		                  {a | 0x5a0000000000000ull, 0, bi, 0, 0, 0}};
		tk_frame_id id[4];
		for (int i = 0; i < 4; i++) {
			id[i] = tk_frame_add(p, &fr[i]);
			for (int r = 0; r < 2; r++)
				tk_sample_add_n(p, t, tk_stack_push(p, rs[r], id[i]), w++, 1);
		}
		tk_sample_add_n(p, t, tk_stack_push(p, tk_stack_push(p, rs[0], id[0]), id[1]), w++, 1);
		tk_sample_add_n(p, t, tk_stack_push(p, tk_stack_push(p, rs[0], id[2]), id[1]), w++, 1);
	}
	if (variant == 1)
		for (uint32_t i = 0; i < 70; i++) {
			tk_frame f = {LOAD + TEXT_OFF + 0x804, 0, bi, 0, 100 + i, 0};
			tk_sample_add_n(p, t, tk_stack_push(p, rs[1], tk_frame_add(p, &f)), w++, 1);
		}
	if (variant == 2) {
		tk_binary b2 = {nm, 0, u, tk_intern_cstr(p, "x86_64"), LOAD};
		tk_binary_id bi2 = tk_binary_add(p, &b2);
		tk_frame f1 = {LOAD + TEXT_OFF + 0x44, 0, bi2, 0, 0, 0}, f2 = {LOAD + (1ull << 63), 0, bi2, 0, 0, 0};
		tk_sample_add_n(p, t, tk_stack_push(p, rs[1], tk_frame_add(p, &f1)), w++, 1);
		tk_sample_add_n(p, t, tk_stack_push(p, rs[1], tk_frame_add(p, &f2)), w++, 1);
	}
	tk_thread_stacks(p, 0, cells);
	return p;
}

static void test_equal_frames_same_as_derived(void **state)
{
	tk_symbolicator *s = sym();
	tk_error err;
	for (int variant = 0; variant < 3; variant++) {
		size_t cells = 0, la, lb, nc = 0;
		tk_profile *a = shared_addresses(variant, &cells), *b = shared_addresses(variant, &cells);
		tk_profile *derived = tk_symbolicate_profile(a, s, NULL, &err);
		assert_non_null(derived);
		tk_profile *inplace = tk_symbolicate_profile_take(b, s, NULL, &err);
		assert_ptr_equal(inplace, b);
		tk_thread_stacks(inplace, 0, &nc);
		assert_true(nc < cells); /* stacks met: the two line numbers' chains are one */
		char *oa = all_output(derived, &la), *ob = all_output(inplace, &lb);
		if (la != lb || memcmp(oa, ob, la) != 0) {
			size_t i = 0;
			while (i < la && i < lb && oa[i] == ob[i])
				i++;
			fail_msg("variant %d: outputs differ at byte %zu: derived '%.80s' / in place '%.80s'", variant, i,
			         oa + (i > 20 ? i - 20 : 0), ob + (i > 20 ? i - 20 : 0));
		}
		/* the tables stay usable: every frame and stack is found again, none added */
		size_t nf = tk_frame_count(inplace), ns = tk_stack_count(inplace);
		for (size_t i = 1; i <= nf; i++) {
			tk_frame f = *tk_frame_get(inplace, (tk_frame_id)i);
			assert_int_equal(tk_frame_add(inplace, &f), i);
		}
		for (size_t i = 1; i <= ns; i++) {
			tk_stack_node sn = *tk_stack_get(inplace, (tk_stack_id)i);
			assert_int_equal(tk_stack_push(inplace, sn.parent, sn.frame), i);
		}
		assert_int_equal(tk_frame_count(inplace), nf);
		assert_int_equal(tk_stack_count(inplace), ns);
		free(oa);
		free(ob);
		tk_profile_free(derived);
		tk_profile_free(a);
		tk_profile_free(inplace);
	}
	tk_symbolicator_free(s);
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
	    cmocka_unit_test_setup_teardown(test_address_order_same_as_alone, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_equal_frames_same_as_derived, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
