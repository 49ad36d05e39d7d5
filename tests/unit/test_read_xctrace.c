/*
 * The xctrace reader against independent truth:
 *   - every real fixture: per-thread totals and folded stacks equal what a separate Python
 *     ElementTree reading computes (tests/oracle/xctrace_oracle.py), with both tokenizers;
 *   - JMH's per-row leaf table (oracles/ *.jmh-leaf.csv): Σ weight per leaf address and symbol;
 *   - inferno's folded output (oracles/ *.inferno.folded), after inferno's Rust-name cleanup;
 *   - hand-written documents for each stack encoding, thread-name form, ref rule and bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "tracekit/read.h"
#include "tracekit/toc.h"

#define FIX "tests/fixtures/xctrace/"

/* ---- helpers ---- */

static tk_profile *read_mem(const char *xml, size_t n, int tokenizer, tk_error *err)
{
	tk_profile *p = tk_profile_new();
	tk_read_options o;
	tk_read_options_init(&o);
	o.tokenizer = tokenizer;
	tk_input *in = tk_input_open_mem(xml, n, "t.xml", err);
	int rc = in ? tk_read_input(p, in, &o, err) : -1;
	tk_input_close(in);
	if (rc < 0) {
		tk_profile_free(p);
		return NULL;
	}
	return p;
}

/* Read with both tokenizers; they must agree on success/failure (and totals); returns the fast one. */
static tk_profile *rd(const char *xml, tk_error *err)
{
	tk_error e2;
	tk_profile *a = read_mem(xml, strlen(xml), TK_READ_TOKENIZER_FAST, err);
	tk_profile *b = read_mem(xml, strlen(xml), TK_READ_TOKENIZER_LIBXML2, &e2);
	if (!a != !b)
		fail_msg("tokenizers disagree: fast=%s libxml2=%s", a ? "ok" : err->msg, b ? "ok" : e2.msg);
	if (a && b) {
		assert_int_equal(tk_profile_weight(a), tk_profile_weight(b));
		assert_int_equal(tk_profile_samples(a), tk_profile_samples(b));
	}
	tk_profile_free(b);
	return a;
}

static tk_profile *must(const char *xml)
{
	tk_error err;
	tk_profile *p = rd(xml, &err);
	if (!p)
		fail_msg("unexpected error: %s", err.msg);
	return p;
}

/* The error for xml, which must fail; checks that it contains want. */
static void must_fail(const char *xml, const char *want)
{
	tk_error err;
	tk_profile *p = read_mem(xml, strlen(xml), TK_READ_TOKENIZER_FAST, &err);
	if (p)
		fail_msg("expected an error containing \"%s\", got success", want);
	if (!strstr(err.msg, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
	if (strchr(err.msg, '\n'))
		fail_msg("error is not one line: %s", err.msg);
	/* the reference tokenizer must refuse it too */
	p = read_mem(xml, strlen(xml), TK_READ_TOKENIZER_LIBXML2, &err);
	if (p)
		fail_msg("libxml2 accepted what the fast tokenizer refused (%s)", want);
}

typedef struct sbuf {
	char *s;
	size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char tmp[8192];
	int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (b->n + (size_t)k + 1 > b->cap) {
		b->cap = (b->n + (size_t)k + 1) * 2;
		b->s = realloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, tmp, (size_t)k + 1);
	b->n += (size_t)k;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the lines of s (in place, returns a new string). */
static char *sort_lines(char *s)
{
	size_t n = 0, cap = 16;
	char **v = malloc(cap * sizeof *v);
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		if (n == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		v[n++] = line;
	}
	qsort(v, n, sizeof *v, cmp_str);
	sbuf b = {0};
	sb_add(&b, "%s", "");
	for (size_t i = 0; i < n; i++)
		sb_add(&b, "%s\n", v[i]);
	free(v);
	return b.s;
}

static char *merge_counts(char *s);

typedef const char *(*label_fn)(const tk_profile *p, tk_frame_id f, char buf[512]);

static const char *plain_label(const tk_profile *p, tk_frame_id f, char buf[512])
{
	return tk_frame_label(p, f, buf);
}

/* "pid/tid;root;…;leaf weight" per (thread, stack), sorted; with_thread = 0 drops the prefix and
 * merges threads; unit_div divides weights (ns → ms samples for inferno). */
static char *folded(const tk_profile *p, int with_thread, label_fn lab, uint64_t unit_div)
{
	sbuf b = {0};
	sb_add(&b, "%s", "");
	tk_frame_id fr[1024];
	for (tk_thread_id t = 0; t < tk_thread_count(p); t++) {
		const tk_thread *th = tk_thread_get(p, t);
		size_t n;
		const tk_stack_weight *sw = tk_thread_stacks(p, t, &n);
		for (size_t i = 0; i < n; i++) {
			size_t d = tk_stack_frames(p, sw[i].stack, fr, 1024);
			assert_true(d <= 1024);
			if (with_thread)
				sb_add(&b, "%lld/%llu", (long long)th->pid, (unsigned long long)th->tid);
			for (size_t k = 0; k < d; k++) {
				char buf[512];
				sb_add(&b, "%s%s", (with_thread || k) ? ";" : "", lab(p, fr[k], buf));
			}
			sb_add(&b, " %llu\n", (unsigned long long)(sw[i].weight / unit_div));
		}
	}
	/* distinct frames can share a label (same symbol at two addresses): merge like the oracle */
	char *s = merge_counts(b.s);
	free(b.s);
	return s;
}

/* Merge equal lines' counts ("stack N") so that differently split inputs compare. */
static char *merge_counts(char *s)
{
	char *sorted = sort_lines(s);
	sbuf b = {0};
	sb_add(&b, "%s", "");
	char prev[8192] = "";
	unsigned long long acc = 0;
	int have = 0;
	for (char *line = strtok(sorted, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strrchr(line, ' ');
		assert_non_null(sp);
		*sp = 0;
		unsigned long long c = strtoull(sp + 1, NULL, 10);
		if (have && strcmp(prev, line) == 0) {
			acc += c;
			continue;
		}
		if (have)
			sb_add(&b, "%s %llu\n", prev, acc);
		snprintf(prev, sizeof prev, "%s", line);
		acc = c;
		have = 1;
	}
	if (have)
		sb_add(&b, "%s %llu\n", prev, acc);
	free(sorted);
	return b.s;
}

static char *run(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	sbuf b = {0};
	sb_add(&b, "%s", "");
	char line[8192];
	while (fgets(line, sizeof line, f))
		sb_add(&b, "%s", line);
	assert_int_equal(pclose(f), 0);
	return b.s;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long l = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)l + 1);
	assert_int_equal(fread(s, 1, (size_t)l, f), (size_t)l);
	s[l] = 0;
	fclose(f);
	*n = (size_t)l;
	return s;
}

static tk_profile *read_file(const char *path, int tokenizer)
{
	tk_profile *p = tk_profile_new();
	tk_read_options o;
	tk_read_options_init(&o);
	o.tokenizer = tokenizer;
	tk_error err;
	if (tk_read_path(p, path, &o, &err) < 0)
		fail_msg("%s", err.msg);
	return p;
}

static void assert_same_text(const char *what, const char *want, const char *got)
{
	if (strcmp(want, got) == 0)
		return;
	/* show the first differing line */
	const char *a = want, *b = got;
	while (*a && *a == *b)
		a++, b++;
	while (a > want && a[-1] != '\n')
		a--, b--;
	fail_msg("%s differs:\n want: %.300s\n got:  %.300s", what, a, b);
}

static const char *const table_fixtures[] = {
    "counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.xml",
    "cpu-profile_xcode26.4.1_tagged-backtrace_cycle-weight_unsymbolicated_macos-arm64.xml",
    "time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.xml",
    "time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml",
    "time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml",
    "time-profile_xcode14.3plus_frames-without-binary_macos-arm64_rust.xml",
    "time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.xml",
    "time-sample_xcode26.4_kperf-bt-text-addresses_macos-arm64.xml",
};

/* ---- real fixtures against the Python oracle ---- */

static void test_fixtures_vs_oracle(void **state)
{
	for (size_t i = 0; i < sizeof table_fixtures / sizeof table_fixtures[0]; i++) {
		char path[512], cmd[1024];
		snprintf(path, sizeof path, FIX "%s", table_fixtures[i]);
		snprintf(cmd, sizeof cmd, "python3 tests/oracle/xctrace_oracle.py folded '%s'", path);
		char *want_folded = run(cmd);
		snprintf(cmd, sizeof cmd, "python3 tests/oracle/xctrace_oracle.py threads '%s'", path);
		char *want_threads = run(cmd);
		/* python sorts numerically; compare as sorted text on both sides */
		char *wt = sort_lines(want_threads);
		for (int tok = 0; tok < 2; tok++) {
			tk_profile *p = read_file(path, tok);
			char *got = folded(p, 1, plain_label, 1);
			assert_same_text(table_fixtures[i], want_folded, got);
			sbuf b = {0};
			sb_add(&b, "%s", "");
			for (tk_thread_id t = 0; t < tk_thread_count(p); t++) {
				const tk_thread *th = tk_thread_get(p, t);
				sb_add(&b, "%lld %llu %llu %llu\n", (long long)th->pid, (unsigned long long)th->tid,
				       (unsigned long long)th->samples, (unsigned long long)th->weight);
			}
			char *gt = sort_lines(b.s);
			assert_same_text(table_fixtures[i], wt, gt);
			free(gt);
			free(b.s);
			free(got);
			tk_profile_free(p);
		}
		free(wt);
		free(want_folded);
		free(want_threads);
	}
}

/* ---- JMH's leaf table ---- */

static void jmh_case(const char *xml, const char *csv, int check_symbols)
{
	char path[512];
	snprintf(path, sizeof path, FIX "%s", xml);
	tk_profile *p = read_file(path, TK_READ_TOKENIZER_FAST);
	/* model: Σ weight per leaf "addr;symbol;binary" */
	sbuf b = {0};
	sb_add(&b, "%s", "");
	for (tk_thread_id t = 0; t < tk_thread_count(p); t++) {
		size_t n;
		const tk_stack_weight *sw = tk_thread_stacks(p, t, &n);
		for (size_t i = 0; i < n; i++) {
			const tk_stack_node *sn = tk_stack_get(p, sw[i].stack);
			if (!sn) {
				sb_add(&b, "0x0%s %llu\n", check_symbols ? ";;" : "", (unsigned long long)sw[i].weight);
				continue;
			}
			const tk_frame *f = tk_frame_get(p, sn->frame);
			assert_true(f->flags & TK_FRAME_LEAF_PC);
			char buf[32];
			const tk_binary *bin = tk_binary_get(p, f->binary);
			if (check_symbols)
				sb_add(&b, "0x%llx;%s;%s %llu\n", (unsigned long long)f->addr,
				       tk_frame_label(p, sn->frame, buf), bin ? tk_string(p, bin->name) : "",
				       (unsigned long long)sw[i].weight);
			else
				sb_add(&b, "0x%llx %llu\n", (unsigned long long)f->addr,
				       (unsigned long long)sw[i].weight);
		}
	}
	char *got = merge_counts(b.s);
	/* oracle: time;weight;addr;symbol;binary;pmc */
	snprintf(path, sizeof path, FIX "oracles/%s", csv);
	size_t n;
	char *text = slurp(path, &n);
	sbuf o = {0};
	sb_add(&o, "%s", "");
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *f[6] = {0};
		int k = 0;
		for (char *s = line; k < 6; k++) {
			f[k] = s;
			char *semi = strchr(s, ';');
			if (!semi)
				break;
			*semi = 0;
			s = semi + 1;
		}
		const char *bin = f[4] && strcmp(f[4], "[unknown]") != 0 ? f[4] : "";
		if (check_symbols)
			sb_add(&o, "%s;%s;%s %s\n", f[2], f[3] ? f[3] : "", bin, f[1]);
		else
			sb_add(&o, "%s %s\n", f[2], f[1]);
	}
	char *want = merge_counts(o.s);
	assert_same_text(csv, want, got);
	free(want);
	free(got);
	free(text);
	free(b.s);
	free(o.s);
	tk_profile_free(p);
}

static void test_jmh_leaves(void **state)
{
	jmh_case("time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.xml",
	         "time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.jmh-leaf.csv", 0);
	jmh_case("time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml",
	         "time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.jmh-leaf.csv",
	         1);
	jmh_case("time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.xml",
	         "time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.jmh-leaf.csv", 1);
	jmh_case("cpu-profile_xcode26.4.1_tagged-backtrace_cycle-weight_unsymbolicated_macos-arm64.xml",
	         "cpu-profile_xcode26.4.1_tagged-backtrace_cycle-weight_unsymbolicated_macos-arm64.jmh-leaf.csv", 1);
	jmh_case("counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.xml",
	         "counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.jmh-leaf.csv", 1);
}

/* ---- inferno's folded output ---- */

/* inferno-collapse-xctrace's cleanup of Rust legacy names: drop a leading "_" before "$",
 * decode $u7b$ $u7d$ $LT$ $GT$ $u20$ and "..", and drop the ::h<16 hex> hash. */
static const char *inferno_label(const tk_profile *p, tk_frame_id f, char out[512])
{
	char tmp[32];
	const char *s = tk_frame_label(p, f, tmp);
	if (s[0] == '_' && s[1] == '$')
		s++;
	static const struct {
		const char *from, *to;
	} rep[] = {{"$u7b$", "{"}, {"$u7d$", "}"}, {"$LT$", "<"}, {"$GT$", ">"}, {"$u20$", " "}, {"..", "::"}};
	size_t o = 0;
	while (*s && o < 500) {
		int done = 0;
		for (size_t k = 0; k < sizeof rep / sizeof rep[0]; k++) {
			size_t l = strlen(rep[k].from);
			if (strncmp(s, rep[k].from, l) == 0) {
				size_t tl = strlen(rep[k].to);
				memcpy(out + o, rep[k].to, tl);
				o += tl;
				s += l;
				done = 1;
				break;
			}
		}
		if (!done)
			out[o++] = *s++;
	}
	out[o] = 0;
	/* ::h + 16 hex digits at the end */
	if (o > 19 && strncmp(out + o - 19, "::h", 3) == 0) {
		int hex = 1;
		for (size_t k = o - 16; k < o; k++)
			hex &= (out[k] >= '0' && out[k] <= '9') || (out[k] >= 'a' && out[k] <= 'f');
		if (hex)
			out[o - 19] = 0;
	}
	return out;
}

static void test_inferno_folded(void **state)
{
	static const char *const cases[][2] = {
	    {"time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml",
	     "time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.inferno.folded"},
	    {"time-profile_xcode14.3plus_frames-without-binary_macos-arm64_rust.xml",
	     "time-profile_xcode14.3plus_frames-without-binary_macos-arm64_rust.inferno.folded"},
	};
	for (size_t i = 0; i < 2; i++) {
		char path[512];
		snprintf(path, sizeof path, FIX "%s", cases[i][0]);
		tk_profile *p = read_file(path, TK_READ_TOKENIZER_FAST);
		assert_int_equal(tk_profile_unit(p), TK_UNIT_NS);
		char *f = folded(p, 0, inferno_label, 1000000); /* 1 ms samples = inferno's counts */
		char *got = merge_counts(f);
		snprintf(path, sizeof path, FIX "oracles/%s", cases[i][1]);
		size_t n;
		char *want_raw = slurp(path, &n);
		char *want = merge_counts(want_raw);
		assert_same_text(cases[i][1], want, got);
		free(f);
		free(got);
		free(want);
		free(want_raw);
		tk_profile_free(p);
	}
}

/* ---- metadata of real files ---- */

static void test_fixture_meta(void **state)
{
	static const struct {
		const char *file, *schema, *enc, *sym;
		tk_unit unit;
		uint64_t rows;
	} cases[] = {
	    {"time-profile_pre-xcode14.3_text-addresses-fragments_macos-arm64_reindented.xml", "time-profile",
	     "text-addresses", "no", TK_UNIT_NS, 98},
	    {"time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml", "time-profile", "backtrace",
	     "partly", TK_UNIT_NS, 9581},
	    {"time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.xml", "time-profile", "tagged-backtrace",
	     "yes", TK_UNIT_NS, 85},
	    {"cpu-profile_xcode26.4.1_tagged-backtrace_cycle-weight_unsymbolicated_macos-arm64.xml", "cpu-profile",
	     "tagged-backtrace", "partly", TK_UNIT_CYCLES, 322},
	    {"counters-profile_xcode26.4.1_pmc-events_sentinel-stack_macos-arm64.xml", "counters-profile",
	     "tagged-backtrace", "yes", TK_UNIT_EVENTS, 324},
	    {"time-sample_xcode26.4_kperf-bt-text-addresses_macos-arm64.xml", "time-sample", "kperf-bt", "no",
	     TK_UNIT_SAMPLES, 39},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[512];
		snprintf(path, sizeof path, FIX "%s", cases[i].file);
		tk_profile *p = read_file(path, TK_READ_TOKENIZER_FAST);
		assert_string_equal(tk_profile_meta(p, "schema"), cases[i].schema);
		assert_string_equal(tk_profile_meta(p, "stack-encoding"), cases[i].enc);
		assert_string_equal(tk_profile_meta(p, "symbolicated"), cases[i].sym);
		assert_int_equal(tk_profile_unit(p), cases[i].unit);
		assert_int_equal(strtoull(tk_profile_meta(p, "rows"), NULL, 10), cases[i].rows);
		assert_int_equal(tk_profile_samples(p), cases[i].rows);
		assert_string_equal(tk_profile_meta(p, "run"), "1");
		tk_profile_free(p);
	}
	/* the x86_64 JMH file: 10 named threads of one java process */
	tk_profile *p =
	    read_file(FIX "time-profile_xcode14.3plus_frame-binary_sentinel_multithread_macos-x86_64_reindented.xml",
	              TK_READ_TOKENIZER_FAST);
	assert_int_equal(tk_thread_count(p), 10);
	int main_seen = 0, pthread_seen = 0;
	for (tk_thread_id t = 0; t < tk_thread_count(p); t++) {
		const tk_thread *th = tk_thread_get(p, t);
		assert_int_equal(th->pid, 23369);
		assert_string_equal(tk_string(p, th->process), "java");
		if (th->tid == 0xe7716) {
			assert_string_equal(tk_string(p, th->name), "Main Thread");
			main_seen = 1;
		}
		if (th->tid == 0xe787d) {
			assert_string_equal(tk_string(p, th->name), "_pthread_start");
			pthread_seen = 1;
		}
	}
	assert_true(main_seen && pthread_seen);
	tk_profile_free(p);
}

/* ---- hand-written documents ---- */

#define HEAD "<?xml version=\"1.0\"?>\n<trace-query-result>\n<node xpath='//trace-toc[1]/run[2]/data[1]/table[3]'>"
#define COLS7                                                                                                          \
	"<col><mnemonic>time</mnemonic></col><col><mnemonic>thread</mnemonic></col><col><mnemonic>process</"           \
	"mnemonic></col>"                                                                                              \
	"<col><mnemonic>core</mnemonic></col><col><mnemonic>thread-state</mnemonic></col><col><mnemonic>weight</"      \
	"mnemonic>"                                                                                                    \
	"</col><col><mnemonic>stack</mnemonic></col>"
#define TP "<schema name=\"time-profile\">" COLS7 "</schema>"
#define TAIL "</node></trace-query-result>\n"
/* thread 2 (pid 7, tid 0x10), process 4 */
#define THREAD1                                                                                                        \
	"<thread id=\"2\" fmt=\"Main Thread 0x10 (app, pid: 7)\"><tid id=\"3\" fmt=\"0x10\">16</tid><process "         \
	"id=\"4\" "                                                                                                    \
	"fmt=\"app (7)\"><pid id=\"5\" fmt=\"7\">7</pid></process></thread><process ref=\"4\"/>"
#define THREAD1_ONLY                                                                                                   \
	"<thread id=\"2\" fmt=\"Main Thread 0x10 (app, pid: 7)\"><tid id=\"3\" fmt=\"0x10\">16</tid><process "         \
	"id=\"4\" "                                                                                                    \
	"fmt=\"app (7)\"><pid id=\"5\" fmt=\"7\">7</pid></process></thread>"
#define CORE_STATE "<core id=\"6\" fmt=\"CPU 0\">0</core><thread-state id=\"7\" fmt=\"Running\">Running</thread-state>"
#define REFS "<thread ref=\"2\"/><process ref=\"4\"/><core ref=\"6\"/><thread-state ref=\"7\"/>"

static char *fold1(tk_profile *p)
{
	return folded(p, 0, plain_label, 1);
}

static void test_text_addresses(void **state)
{
	/* fragments concatenate leaf first; the trailing 0 goes; a ref'd first fragment is fine */
	tk_profile *p =
	    must(HEAD TP "<row><sample-time id=\"1\">100</sample-time>" THREAD1 CORE_STATE
	                 "<weight id=\"8\">1000000</weight><backtrace id=\"9\" fmt=\"x ← (3 other frames)\">"
	                 "<process ref=\"4\"/><text-addresses id=\"10\">4096 8194</text-addresses>"
	                 "<process ref=\"4\"/><text-addresses id=\"11\">12290 0</text-addresses></backtrace></row>\n"
	                 "<row><sample-time id=\"12\">200</sample-time>" REFS
	                 "<weight id=\"13\">2500000</weight><backtrace id=\"14\"><process ref=\"4\"/>"
	                 "<text-addresses ref=\"10\"/><process ref=\"4\"/><text-addresses id=\"15\">16386 "
	                 "0</text-addresses></backtrace></row>\n" TAIL);
	char *f = fold1(p);
	assert_string_equal(f, "0x3002;0x2002;0x1000 1000000\n0x4002;0x2002;0x1000 2500000\n");
	free(f);
	assert_string_equal(tk_profile_meta(p, "stack-encoding"), "text-addresses");
	assert_string_equal(tk_profile_meta(p, "symbolicated"), "no");
	assert_string_equal(tk_profile_meta(p, "run"), "2");
	assert_string_equal(tk_profile_meta(p, "table"), "3");
	/* the leaf carries TK_FRAME_LEAF_PC, callers do not */
	size_t n;
	const tk_stack_weight *sw = tk_thread_stacks(p, 0, &n);
	assert_int_equal(n, 2);
	const tk_stack_node *leaf = tk_stack_get(p, sw[0].stack);
	assert_true(tk_frame_get(p, leaf->frame)->flags & TK_FRAME_LEAF_PC);
	assert_int_equal(tk_frame_get(p, leaf->frame)->addr, 4096);
	const tk_stack_node *caller = tk_stack_get(p, leaf->parent);
	assert_false(tk_frame_get(p, caller->frame)->flags & TK_FRAME_LEAF_PC);
	assert_int_equal(tk_frame_get(p, caller->frame)->name, 0);
	tk_profile_free(p);
}

static void test_empty_fragment(void **state)
{
	/* an empty fragment (found by fuzzing), defined and then ref'd, gives the empty stack */
	tk_profile *p =
	    must(HEAD TP "<row><sample-time id=\"1\">1</sample-time>" THREAD1 CORE_STATE
	                 "<weight id=\"8\">2</weight><backtrace id=\"9\"><text-addresses id=\"10\">"
	                 "</text-addresses></backtrace></row><row><sample-time id=\"11\">2</sample-time>" REFS
	                 "<weight ref=\"8\"/><backtrace id=\"12\"><text-addresses ref=\"10\"/></backtrace>"
	                 "</row>" TAIL);
	char *f = fold1(p);
	assert_string_equal(f, " 4\n");
	free(f);
	tk_profile_free(p);
}

static void test_backtrace_frames(void **state)
{
	tk_profile *p = must(
	    HEAD TP
	    "<row><sample-time id=\"1\">100</sample-time>" THREAD1 CORE_STATE
	    "<weight id=\"8\">1000000</weight><backtrace id=\"9\"><frame id=\"10\" name=\"0x104bfc505\" "
	    "addr=\"0x104bfc505\"><binary id=\"11\" name=\"a.out\" UUID=\"B8D150D0-0000-0000-0000-000000000001\" "
	    "arch=\"arm64\" load-addr=\"0x104bfc000\" path=\"/tmp/a.out\"/></frame><frame id=\"12\" "
	    "name=\"main\" addr=\"0x104bfc574\"><binary ref=\"11\"/><source line=\"6\"><path "
	    "id=\"13\">/tmp/t.c</path></source></frame><frame id=\"14\" name=\"start\" addr=\"0x1882b3da4\"/>"
	    "</backtrace></row>\n"
	    "<row><sample-time id=\"15\">300</sample-time>" REFS "<weight ref=\"8\"/><backtrace id=\"16\">"
	    "<frame id=\"17\" name=\"f &amp; g&lt;int&gt;\" addr=\"0x104bfc600\"><binary ref=\"11\"/><source "
	    "line=\"9\"><path ref=\"13\"/></source></frame><frame ref=\"12\"/><frame ref=\"14\"/></backtrace></row>\n"
	    "<row><sample-time id=\"18\">400</sample-time>" REFS
	    "<weight ref=\"8\"/><backtrace ref=\"16\"/></row>\n" TAIL);
	char *f = fold1(p);
	assert_string_equal(f, "start;main;0x104bfc505 1000000\nstart;main;f & g<int> 2000000\n");
	free(f);
	assert_string_equal(tk_profile_meta(p, "symbolicated"), "partly");
	assert_string_equal(tk_profile_meta(p, "stack-encoding"), "backtrace");
	/* frame details */
	size_t n;
	const tk_stack_weight *sw = tk_thread_stacks(p, 0, &n);
	assert_int_equal(n, 2);
	const tk_stack_node *leaf = tk_stack_get(p, sw[1].stack);
	const tk_frame *lf = tk_frame_get(p, leaf->frame);
	assert_int_equal(lf->addr, 0x104bfc600);
	assert_int_equal(lf->line, 9);
	assert_string_equal(tk_string(p, lf->file), "/tmp/t.c");
	assert_true(lf->flags & TK_FRAME_LEAF_PC);
	const tk_binary *b = tk_binary_get(p, lf->binary);
	assert_non_null(b);
	assert_string_equal(tk_string(p, b->name), "a.out");
	assert_string_equal(tk_string(p, b->uuid), "B8D150D0-0000-0000-0000-000000000001");
	assert_string_equal(tk_string(p, b->arch), "arm64");
	assert_string_equal(tk_string(p, b->path), "/tmp/a.out");
	assert_int_equal(b->load_addr, 0x104bfc000);
	const tk_frame *mf = tk_frame_get(p, tk_stack_get(p, leaf->parent)->frame);
	assert_int_equal(mf->line, 6);
	assert_false(mf->flags & TK_FRAME_LEAF_PC);
	const tk_frame *sf = tk_frame_get(p, tk_stack_get(p, tk_stack_get(p, leaf->parent)->parent)->frame);
	assert_int_equal(sf->binary, 0);
	/* time bounds and thread identity */
	const tk_thread *th = tk_thread_get(p, 0);
	assert_int_equal(th->t_min, 100);
	assert_int_equal(th->t_max, 400);
	assert_int_equal(th->pid, 7);
	assert_int_equal(th->tid, 16);
	assert_string_equal(tk_string(p, th->name), "Main Thread");
	assert_string_equal(tk_string(p, th->process), "app");
	tk_profile_free(p);
}

static void test_tagged_forms(void **state)
{
	/* 26.4: <tagged-backtrace><backtrace>…</backtrace><uint64/></tagged-backtrace>; 27: frames directly */
	tk_profile *p = must(HEAD TP "<row><sample-time id=\"1\">1</sample-time>" THREAD1 CORE_STATE
	                             "<weight id=\"8\">5</weight><tagged-backtrace id=\"9\" fmt=\"c ← (1 other "
	                             "frames)\"><backtrace id=\"10\"><frame id=\"11\" name=\"c\" addr=\"0x11\"/><frame "
	                             "id=\"12\" name=\"main\" addr=\"0x20\"/></backtrace><uint64 id=\"13\">0</uint64>"
	                             "</tagged-backtrace></row>\n"
	                             "<row><sample-time id=\"14\">2</sample-time>" REFS
	                             "<weight ref=\"8\"/><tagged-backtrace ref=\"9\"/></row>\n" TAIL);
	char *f = fold1(p);
	assert_string_equal(f, "main;c 10\n");
	free(f);
	assert_string_equal(tk_profile_meta(p, "stack-encoding"), "tagged-backtrace");
	tk_profile_free(p);
	p = must(HEAD TP "<row><sample-time id=\"1\">1</sample-time>" THREAD1 CORE_STATE
	                 "<weight id=\"8\">5</weight><tagged-backtrace id=\"9\"><frame id=\"10\" name=\"hot_loop\" "
	                 "addr=\"0x100ed44c1\"><binary id=\"11\" name=\"w\" load-addr=\"0x100ed4000\"/></frame><frame "
	                 "id=\"12\" name=\"main\" addr=\"0x100ed4467\"><binary ref=\"11\"/></frame></tagged-backtrace>"
	                 "</row>\n<row><sample-time id=\"13\">2</sample-time>" REFS
	                 "<weight ref=\"8\"/><tagged-backtrace ref=\"9\"/></row>\n" TAIL);
	f = fold1(p);
	assert_string_equal(f, "main;hot_loop 10\n");
	free(f);
	assert_string_equal(tk_profile_meta(p, "stack-encoding"), "tagged-backtrace-frames");
	tk_profile_free(p);
}

static void test_kperf(void **state)
{
	static const char *const doc =
	    "<?xml version=\"1.0\"?><trace-query-result><node><schema "
	    "name=\"time-sample\"><col><mnemonic>time</mnemonic>"
	    "</col><col><mnemonic>thread</mnemonic></col><col><mnemonic>cp-kernel-callstack</mnemonic></col><col>"
	    "<mnemonic>cp-user-callstack</mnemonic></col><col><mnemonic>sample-type</mnemonic></col></schema>"
	    /* stackshot: text-addresses holds the PC itself */
	    "<row><sample-time id=\"1\">10</sample-time>" THREAD1_ONLY "<sentinel/><kperf-bt id=\"6\"><text-addresses "
	    "id=\"7\">4096</text-addresses><text-address id=\"8\">4096</text-address></kperf-bt><time-sample-kind "
	    "id=\"9\">3</time-sample-kind></row>"
	    /* same time (ref), same stack */
	    "<row><sample-time ref=\"1\"/><thread ref=\"2\"/><sentinel/><kperf-bt ref=\"6\"/><time-sample-kind "
	    "ref=\"9\"/></row>"
	    /* timer: PC + callers + 0 */
	    "<row><sample-time id=\"10\">20</sample-time><thread ref=\"2\"/><sentinel/><kperf-bt id=\"11\">"
	    "<text-addresses id=\"12\">8192 12288 0</text-addresses><text-address id=\"13\">5000</text-address>"
	    "</kperf-bt><time-sample-kind id=\"14\">0</time-sample-kind></row>"
	    /* only the 0 */
	    "<row><sample-time id=\"15\">30</sample-time><thread ref=\"2\"/><sentinel/><kperf-bt id=\"16\">"
	    "<text-addresses id=\"17\">0</text-addresses><text-address id=\"18\">6000</text-address>"
	    "</kperf-bt><time-sample-kind ref=\"14\"/></row>"
	    "</node></trace-query-result>";
	tk_profile *p = must(doc);
	assert_int_equal(tk_profile_unit(p), TK_UNIT_SAMPLES);
	assert_int_equal(tk_profile_weight(p), 4);
	char *f = fold1(p);
	assert_string_equal(f, "0x1000 2\n0x1770 1\n0x3000;0x2000;0x1388 1\n");
	free(f);
	assert_string_equal(tk_profile_meta(p, "stack-encoding"), "kperf-bt");
	tk_profile_free(p);
}

static void test_thread_names(void **state)
{
	static const struct {
		const char *fmt, *name, *proc;
	} cases[] = {
	    {"Main Thread  0xe7716 (java, pid: 23369)", "Main Thread", "java"},
	    {"main  0x8480c1 (rust_test2, pid: 49374)", "main", "rust_test2"},
	    {"Main Thread 0x6803c7 (msd_sim_bench, pid: 22391)", "Main Thread", "msd_sim_bench"},
	    {"Main Thread (0x13e4cf3) (a.out, pid: 34963)", "Main Thread", "a.out"},
	    {"idle #6 (0x4e3) (kernel, pid: 0)", "idle #6", "kernel"},
	    {"Java: DefaultDispatcher-worker-25 (0x11f92af) (idea, pid: 91511)", "Java: DefaultDispatcher-worker-25",
	     "idea"},
	    {"_pthread_start  0xe787d (java, pid: 23369)", "_pthread_start", "java"},
	    {"worker (x) (1) (my (odd) app, pid: 5)", "worker (x) (1)", "my (odd) app"},
	    {"0x1f (app, pid: 5)", "", "app"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char doc[4096];
		snprintf(doc, sizeof doc,
		         HEAD TP
		         "<row><sample-time id=\"1\">1</sample-time><thread id=\"2\" fmt=\"%s\"><tid id=\"3\">31"
		         "</tid><process id=\"4\" fmt=\"%s (5)\"><pid id=\"5\">5</pid></process></thread><process "
		         "ref=\"4\"/>" CORE_STATE "<weight id=\"8\">1</weight><sentinel/></row>" TAIL,
		         cases[i].fmt, cases[i].proc);
		tk_profile *p = must(doc);
		const tk_thread *th = tk_thread_get(p, 0);
		assert_string_equal(tk_string(p, th->name), cases[i].name);
		assert_string_equal(tk_string(p, th->process), cases[i].proc);
		assert_int_equal(th->tid, 31);
		assert_int_equal(th->pid, 5);
		tk_profile_free(p);
	}
}

static void test_multiple_nodes_and_refs(void **state)
{
	/* the second node refs the first node's thread, weight and backtrace (one id table per document) */
	tk_profile *p = must(HEAD TP "<row><sample-time id=\"1\">1</sample-time>" THREAD1 CORE_STATE
	                             "<weight id=\"8\">3</weight><backtrace id=\"9\"><frame id=\"10\" name=\"f\" "
	                             "addr=\"0x11\"/></backtrace></row></node>\n"
	                             "<node xpath='//trace-toc[1]/run[2]/data[1]/table[4]'>" TP
	                             "<row><sample-time id=\"11\">2</sample-time>" REFS
	                             "<weight ref=\"8\"/><backtrace ref=\"9\"/></row>\n"
	                             "<row><sample-time id=\"12\">3</sample-time>" REFS
	                             "<weight id=\"13\">4</weight><sentinel/></row>" TAIL);
	assert_int_equal(tk_thread_count(p), 1);
	assert_int_equal(tk_profile_weight(p), 10);
	assert_int_equal(tk_profile_samples(p), 3);
	char *f = fold1(p);
	assert_string_equal(f, " 4\nf 6\n"); /* the sentinel stack keeps its weight, with no frames */
	free(f);
	assert_non_null(strstr(tk_profile_meta(p, "xpath"), "table[3] | //trace-toc[1]/run[2]/data[1]/table[4]"));
	tk_profile_free(p);
	/* an xpath union with a table tracekit does not read: that node is skipped, its ids still count */
	p = must(HEAD "<schema name=\"os-signpost\"><col><mnemonic>time</mnemonic></col><col><mnemonic>thread"
	              "</mnemonic></col></schema><row><event-time id=\"1\">5</event-time>" THREAD1_ONLY "</row></node>"
	              "<node>" TP "<row><sample-time id=\"6\">9</sample-time><thread ref=\"2\"/><process ref=\"4\"/>"
	              "<sentinel/><sentinel/><weight id=\"7\">3</weight><sentinel/></row>" TAIL);
	assert_int_equal(tk_profile_weight(p), 3);
	assert_string_equal(tk_string(p, tk_thread_get(p, 0)->name), "Main Thread");
	assert_string_equal(tk_profile_meta(p, "skipped-tables"), "os-signpost");
	assert_string_equal(tk_profile_meta(p, "schema"), "time-profile");
	tk_profile_free(p);
}

static void test_columns_by_mnemonic(void **state)
{
	/* counters-profile order (stack before weight), an unknown extra column, unknown elements and
	 * attributes, whitespace between everything */
	tk_profile *p = must(
	    "<?xml version=\"1.0\"?>\n<trace-query-result>\n  <node xpath='x'>\n    <schema name=\"counters-profile\" "
	    "documentation=\"d\">\n      <col><mnemonic>thread</mnemonic><name>T</name></col>\n      "
	    "<col><mnemonic>stack"
	    "</mnemonic></col>\n      <col><mnemonic>weight</mnemonic></col>\n      "
	    "<col><mnemonic>future-thing</mnemonic>"
	    "</col>\n    </schema>\n    <future-element a=\"1\"><x/></future-element>\n"
	    "    <row> " THREAD1_ONLY " <tagged-backtrace id=\"6\" new-attr=\"z\"><backtrace id=\"7\"><frame id=\"8\" "
	    "name=\"k\" addr=\"0x5\" extra=\"1\"><unknown-child id=\"9\">q</unknown-child></frame></backtrace><uint64 "
	    "id=\"10\">0</uint64></tagged-backtrace> <pmc-event id=\"11\" fmt=\"1.00 M\">1000000</pmc-event> "
	    "<pmc-events id=\"12\">1 2</pmc-events> </row>\n"
	    "    <row><thread ref=\"2\"/><tagged-backtrace ref=\"6\"/><pmc-event ref=\"11\"/><unknown-child ref=\"9\"/>"
	    "</row>\n  </node>\n</trace-query-result>\n");
	assert_int_equal(tk_profile_unit(p), TK_UNIT_EVENTS);
	assert_int_equal(tk_profile_weight(p), 2000000);
	char *f = fold1(p);
	assert_string_equal(f, "k 2000000\n");
	free(f);
	tk_profile_free(p);
}

static void test_thread_without_process(void **state)
{
	/* the thread has no <process>: the row's process column supplies pid and name */
	tk_profile *p =
	    must(HEAD TP "<row><sample-time id=\"1\">1</sample-time><thread id=\"2\" fmt=\"w 0x9 (app, pid: "
	                 "7)\"><tid id=\"3\">9</tid></thread><process id=\"4\" fmt=\"app (7)\"><pid id=\"5\">7"
	                 "</pid></process>" CORE_STATE "<weight id=\"8\">1</weight><sentinel/></row>" TAIL);
	const tk_thread *th = tk_thread_get(p, 0);
	assert_int_equal(th->pid, 7);
	assert_int_equal(th->tid, 9);
	assert_string_equal(tk_string(p, th->process), "app");
	assert_string_equal(tk_string(p, th->name), "w");
	tk_profile_free(p);
}

typedef struct prog {
	uint64_t last_done, total, calls;
	int monotonic;
} prog;

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	prog *g = ctx;
	if (done < g->last_done)
		g->monotonic = 0;
	g->last_done = done;
	g->total = total;
	g->calls++;
}

static void test_progress(void **state)
{
	const char *path = FIX "time-profile_xcode14.3plus_frame-binary-source_macos-arm64_rust.xml";
	tk_profile *p = tk_profile_new();
	tk_read_options o;
	tk_read_options_init(&o);
	prog g = {0, 0, 0, 1};
	o.progress = on_progress;
	o.progress_ctx = &g;
	tk_error err;
	assert_int_equal(tk_read_path(p, path, &o, &err), 0);
	assert_true(g.calls >= 7); /* 1.8 MB in 256 KB chunks */
	assert_true(g.monotonic);
	assert_int_equal(g.total, 1838155);
	assert_int_equal(g.last_done, 1838155);
	tk_profile_free(p);
}

static void test_time_filter(void **state)
{
	const char *doc =
	    HEAD TP "<row><sample-time id=\"1\">100</sample-time>" THREAD1 CORE_STATE
	            "<weight id=\"8\">1</weight><sentinel/></row>"
	            "<row><sample-time id=\"9\">200</sample-time>" REFS "<weight id=\"10\">2</weight><sentinel/></row>"
	            "<row><sample-time id=\"11\">300</sample-time>" REFS "<weight ref=\"10\"/><sentinel/></row>"
	            "<row><sample-time ref=\"11\"/>" REFS "<weight id=\"12\">40</weight><sentinel/></row>" TAIL;
	tk_profile *p = tk_profile_new();
	tk_read_options o;
	tk_read_options_init(&o);
	o.time_from = 200;
	o.time_to = 300;
	tk_error err;
	tk_input *in = tk_input_open_mem(doc, strlen(doc), "t.xml", &err);
	assert_int_equal(tk_read_input(p, in, &o, &err), 0);
	tk_input_close(in);
	assert_int_equal(tk_profile_weight(p), 2);
	assert_int_equal(tk_profile_samples(p), 1);
	assert_string_equal(tk_profile_meta(p, "rows"), "4");
	assert_string_equal(tk_profile_meta(p, "rows-in-time-range"), "1");
	tk_profile_free(p);
	p = must(doc);
	assert_int_equal(tk_profile_weight(p), 45);
	assert_int_equal(tk_thread_get(p, 0)->t_max, 300);
	tk_profile_free(p);
}

static void test_preamble_and_gzip(void **state)
{
	const char *doc = "xctrace[1234:5678] Warning: something odd\nanother line\n" HEAD TP
	                  "<row><sample-time id=\"1\">1</sample-time>" THREAD1 CORE_STATE
	                  "<weight id=\"8\">7</weight><sentinel/></row>" TAIL;
	tk_profile *p = must(doc);
	assert_int_equal(tk_profile_weight(p), 7);
	tk_profile_free(p);
	/* line numbers count the skipped diagnostics: the dangling ref is on line 5 */
	must_fail("diag\n" HEAD TP "<row>\n<sample-time ref=\"99\"/>" TAIL, "t.xml:5:");
	/* gzip'd */
	size_t n = strlen(doc);
	z_stream z;
	memset(&z, 0, sizeof z);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	unsigned char out[8192];
	z.next_in = (unsigned char *)doc;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = sizeof out;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	size_t zn = z.total_out;
	deflateEnd(&z);
	tk_error err;
	p = read_mem((const char *)out, zn, TK_READ_TOKENIZER_FAST, &err);
	assert_non_null(p);
	assert_int_equal(tk_profile_weight(p), 7);
	tk_profile_free(p);
	/* truncated gzip: an error, not a partial profile */
	assert_null(read_mem((const char *)out, zn - 12, TK_READ_TOKENIZER_FAST, &err));
}

static void test_bad_input(void **state)
{
	const char *row1 = "<row><sample-time id=\"1\">1</sample-time>" THREAD1 CORE_STATE;
	char doc[8192];
	/* truncated: in the middle of a row */
	snprintf(doc, sizeof doc, HEAD TP "%s<weight id=\"8\">1</wei", row1);
	must_fail(doc, "t.xml:3:");
	snprintf(doc, sizeof doc, HEAD TP "%s<weight id=\"8\">1</weight><sentinel/></row>", row1);
	must_fail(doc, "not closed");
	/* malformed: mismatched tag, bad attribute syntax, unquoted value, duplicate attribute */
	must_fail(HEAD TP "<row></rows>" TAIL, "t.xml:3:");
	must_fail(HEAD TP "<row a=1></row>" TAIL, "t.xml:3:");
	must_fail(HEAD TP "<row a=\"1\"b=\"2\"></row>" TAIL, "t.xml:3:");
	must_fail(HEAD TP "<row a=\"1\" a=\"2\"></row>" TAIL, "t.xml:3:");
	must_fail(HEAD TP "<row>&bogus;</row>" TAIL, "t.xml:3:");
	/* many attributes take the sorted duplicate check: a duplicate is found, distinct names pass */
	must_fail(HEAD TP "<x a0=\"\" a1=\"\" a2=\"\" a3=\"\" a4=\"\" a5=\"\" a6=\"\" a7=\"\" a8=\"\" a9=\"\" b0=\"\" "
	                  "b1=\"\" b2=\"\" b3=\"\" b4=\"\" b5=\"\" b6=\"\" b7=\"\" a3=\"\"/>" TAIL,
	          "attribute 'a3' given twice");
	tk_profile *many = must(HEAD TP "<x a0=\"\" a1=\"\" a2=\"\" a3=\"\" a4=\"\" a5=\"\" a6=\"\" a7=\"\" a8=\"\" "
	                                "a9=\"\" b0=\"\" b1=\"\" b2=\"\" b3=\"\" b4=\"\" b5=\"\" b6=\"\" a=\"\" "
	                                "a00=\"\"/>" TAIL);
	tk_profile_free(many);
	must_fail(HEAD TP "<row>\xff\xfe</row>" TAIL, "t.xml:3:");
	/* unknown schema, with or without rows */
	must_fail(HEAD "<schema name=\"hitches\"><col><mnemonic>start</mnemonic></col></schema>" TAIL, "t.xml:3:");
	must_fail(HEAD "<schema name=\"hitches\"><col><mnemonic>start</mnemonic></col></schema><row><x/></row>" TAIL,
	          "unsupported table schema 'hitches'; supported: time-profile");
	/* dangling ref, ref to another tag, ref forwards */
	snprintf(doc, sizeof doc, HEAD TP "%s<weight ref=\"99\"/><sentinel/></row>" TAIL, row1);
	must_fail(doc, "t.xml:3:");
	must_fail(doc, "<weight ref=\"99\"> refers to id 99, which is not defined before this point");
	snprintf(doc, sizeof doc, HEAD TP "%s<weight ref=\"6\"/><sentinel/></row>" TAIL, row1);
	must_fail(doc, "<weight ref=\"6\"> refers to a <core>, not a <weight>");
	snprintf(doc, sizeof doc,
	         HEAD TP "%s<weight id=\"8\">1</weight><backtrace id=\"9\"><frame ref=\"10\"/>"
	                 "</backtrace></row>" TAIL,
	         row1);
	must_fail(doc, "refers to id 10");
	/* a ref to an element not yet closed (its own ancestor) */
	snprintf(doc, sizeof doc,
	         HEAD TP "%s<weight id=\"8\">1</weight><backtrace id=\"9\"><backtrace ref=\"9\"/>"
	                 "</backtrace></row>" TAIL,
	         row1);
	must_fail(doc, "refers to id 9");
	/* an id defined twice */
	snprintf(doc, sizeof doc, HEAD TP "%s<weight id=\"7\">1</weight><sentinel/></row>" TAIL, row1);
	must_fail(doc, "defined twice");
	/* non-numeric values */
	snprintf(doc, sizeof doc, HEAD TP "%s<weight id=\"8\">1.5</weight><sentinel/></row>" TAIL, row1);
	must_fail(doc, "<weight>: expected a non-negative integer, found \"1.5\"");
	must_fail(HEAD TP "<row><sample-time id=\"1\">-3</sample-time></row>" TAIL, "<sample-time>");
	snprintf(doc, sizeof doc,
	         HEAD TP "%s<weight id=\"8\">1</weight><backtrace id=\"9\"><frame id=\"10\" "
	                 "addr=\"0xZZ\"/></backtrace></row>" TAIL,
	         row1);
	must_fail(doc, "bad addr");
	snprintf(doc, sizeof doc,
	         HEAD TP "%s<weight id=\"8\">1</weight><backtrace id=\"9\"><text-addresses "
	                 "id=\"10\">12 abc</text-addresses></backtrace></row>" TAIL,
	         row1);
	must_fail(doc, "expected decimal addresses");
	must_fail(HEAD TP "<row><sample-time id=\"x1\">1</sample-time></row>" TAIL, "bad id");
	/* rows that do not match the schema */
	snprintf(doc, sizeof doc, HEAD TP "%s<weight id=\"8\">1</weight></row>" TAIL, row1);
	must_fail(doc, "<row> has 6 cells but the schema has 7 columns");
	snprintf(doc, sizeof doc, HEAD TP "%s<weight id=\"8\">1</weight><sentinel/><sentinel/></row>" TAIL, row1);
	must_fail(doc, "more cells than");
	must_fail(HEAD "<row/>" TAIL, "<row> before the table's <schema>");
	must_fail(HEAD "<schema name=\"time-profile\"><col><mnemonic>thread</mnemonic></col></schema>" TAIL,
	          "no 'stack' column");
	/* mixed units */
	must_fail(HEAD TP "</node><node><schema name=\"cpu-profile\">" COLS7 "</schema>" TAIL, "different units");
	/* binary junk, empty input, not xctrace, a toc, no table */
	must_fail("\x01\x02\x03garbage<\x00>", "");
	tk_error err;
	assert_null(read_mem("", 0, 0, &err));
	assert_non_null(strstr(err.msg, "empty"));
	must_fail("<?xml version=\"1.0\"?><html><body/></html>", "not an xctrace table export");
	must_fail("<?xml version=\"1.0\"?>\n<trace-toc><run number=\"1\"/></trace-toc>", "table of contents");
	must_fail("<?xml version=\"1.0\"?>\n<trace-query-result></trace-query-result>", "no table");
	/* an XML version other than 1.x (found by the differential fuzzer) */
	must_fail("<?xml version=\"0.02\"?>\n<trace-query-result/>", "t.xml:1:");
	/* stray text at the top level, two roots */
	must_fail("<?xml version=\"1.0\"?>\n<trace-query-result/>junk", "t.xml:2:");
	must_fail("<?xml version=\"1.0\"?>\n<trace-query-result/><trace-query-result/>", "t.xml:2:");
}

static void test_sample_time_window(void **state)
{
	/* a sample time refs the previous row: fine; one far older than the window: a clear error */
	sbuf b = {0};
	sb_add(&b, HEAD TP "<row><sample-time id=\"1\">1</sample-time>" THREAD1 CORE_STATE
	                   "<weight id=\"8\">1</weight><sentinel/></row>\n");
	uint32_t id = 9;
	for (int i = 0; i < 5000; i++, id++)
		sb_add(&b, "<row><sample-time id=\"%u\">%d</sample-time>" REFS "<weight ref=\"8\"/><sentinel/></row>\n",
		       id, 10 + i);
	sb_add(&b, "<row><sample-time ref=\"%u\"/>" REFS "<weight ref=\"8\"/><sentinel/></row>\n", id - 1);
	char *ok_doc = malloc(b.n + 64);
	memcpy(ok_doc, b.s, b.n);
	strcpy(ok_doc + b.n, TAIL);
	tk_profile *p = must(ok_doc);
	assert_int_equal(tk_profile_samples(p), 5002);
	tk_profile_free(p);
	sb_add(&b, "<row><sample-time ref=\"1\"/>" REFS "<weight ref=\"8\"/><sentinel/></row>\n" TAIL);
	tk_error err;
	assert_null(read_mem(b.s, b.n, TK_READ_TOKENIZER_FAST, &err));
	assert_non_null(strstr(err.msg, "sample time more than"));
	free(ok_doc);
	free(b.s);
}

/* ---- toc ---- */

static void test_toc(void **state)
{
	tk_error err;
	tk_toc *t =
	    tk_toc_read_path(FIX "toc_xcode26.4_instruments16.0-17E192_time-profiler-template_macos-arm64.xml", &err);
	if (!t)
		fail_msg("%s", err.msg);
	assert_int_equal(t->nruns, 1);
	tk_toc_run *r = &t->runs[0];
	assert_int_equal(r->number, 1);
	assert_string_equal(r->device_name, "caladan");
	assert_string_equal(r->device_model, "MacBook Pro");
	assert_string_equal(r->device_platform, "macOS");
	assert_string_equal(r->device_os, "26.4 (25E246)");
	assert_string_equal(r->template_name, "Time Profiler");
	assert_string_equal(r->instruments_version, "16.0 (17E192)");
	assert_string_equal(r->start_date, "2026-04-17T09:24:47.723-07:00");
	assert_string_equal(r->end_reason, "Target app exited");
	assert_true(r->duration > 0.8896 && r->duration < 0.8898);
	assert_string_equal(r->target.name, "profile_compress");
	assert_string_equal(r->target.type, "launched");
	assert_int_equal(r->target.pid, 83138);
	assert_int_equal(r->nprocesses, 2);
	assert_int_equal(r->processes[1].pid, 0);
	assert_string_equal(r->processes[1].name, "kernel");
	assert_int_equal(r->ntables, 40);
	/* table[13] is the time-profile table the matching export came from */
	assert_string_equal(r->tables[12].schema, "time-profile");
	assert_string_equal(r->tables[38].schema, "time-sample");
	int found = 0;
	for (size_t a = 0; a < r->tables[38].nattrs; a++)
		if (strcmp(r->tables[38].attrs[a].name, "sample-rate-micro-seconds") == 0) {
			assert_string_equal(r->tables[38].attrs[a].value, "1000");
			found = 1;
		}
	assert_true(found);
	tk_toc_free(t);

	/* environment and arguments are never kept */
	const char *doc = "<?xml version=\"1.0\"?>\n\n<trace-toc><run number=\"2\"><info><target><device name=\"d\"/>"
	                  "<process type=\"attached\" name=\"app\" pid=\"9\" arguments=\"--token=SECRET1\">"
	                  "<environment><item key=\"API_KEY\" value=\"SECRET2\"/></environment></process></target>"
	                  "<summary><duration>1.5</duration><template-name>T</template-name></summary></info><data>"
	                  "<table schema=\"cpu-profile\" x=\"1\"/></data></run><run number=\"3\"/></trace-toc>";
	tk_input *in = tk_input_open_mem(doc, strlen(doc), "toc.xml", &err);
	t = tk_toc_read(in, &err);
	tk_input_close(in);
	assert_non_null(t);
	assert_int_equal(t->nruns, 2);
	assert_int_equal(t->runs[0].number, 2);
	assert_int_equal(t->runs[1].number, 3);
	assert_true(t->runs[0].duration == 1.5);
	assert_int_equal(t->runs[1].duration, -1);
	assert_int_equal(t->runs[0].ntables, 1);
	assert_string_equal(t->runs[0].tables[0].schema, "cpu-profile");
	assert_string_equal(t->runs[0].target.type, "attached");
	tk_toc_free(t);
	/* a table export is not a toc; malformed tocs fail with a position */
	assert_null(tk_toc_read_path(FIX "time-profile_xcode26.4.1_tagged-backtrace_recursion_macos-arm64.xml", &err));
	assert_non_null(strstr(err.msg, "not a table of contents"));
	const char *bad = "<?xml version=\"1.0\"?>\n<trace-toc><run number=\"1\"><info><summary><duration>abc"
	                  "</duration></summary></info></run></trace-toc>";
	in = tk_input_open_mem(bad, strlen(bad), "toc.xml", &err);
	assert_null(tk_toc_read(in, &err));
	tk_input_close(in);
	assert_non_null(strstr(err.msg, "toc.xml:2:"));
	const char *cut = "<?xml version=\"1.0\"?>\n<trace-toc><run number=\"1\">";
	in = tk_input_open_mem(cut, strlen(cut), "toc.xml", &err);
	assert_null(tk_toc_read(in, &err));
	tk_input_close(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixtures_vs_oracle),
	    cmocka_unit_test(test_jmh_leaves),
	    cmocka_unit_test(test_inferno_folded),
	    cmocka_unit_test(test_fixture_meta),
	    cmocka_unit_test(test_text_addresses),
	    cmocka_unit_test(test_empty_fragment),
	    cmocka_unit_test(test_backtrace_frames),
	    cmocka_unit_test(test_tagged_forms),
	    cmocka_unit_test(test_kperf),
	    cmocka_unit_test(test_thread_names),
	    cmocka_unit_test(test_multiple_nodes_and_refs),
	    cmocka_unit_test(test_columns_by_mnemonic),
	    cmocka_unit_test(test_thread_without_process),
	    cmocka_unit_test(test_time_filter),
	    cmocka_unit_test(test_progress),
	    cmocka_unit_test(test_preamble_and_gzip),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_sample_time_window),
	    cmocka_unit_test(test_toc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
