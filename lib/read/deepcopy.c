/*
 * Instruments "Deep Copy" call-tree text (Edit ▸ Deep Copy of a call tree), every version seen:
 *
 *   Weight\tSelf Weight\tSymbol Names               (Instruments 16: "4.93 s  100.0%", self "846.00 ms")
 *   Weight\tSelf Weight\t\tSymbol Name              (13.4: "96.08 Gc  100.0%", self "-" when zero)
 *   Running Time\tSelf (ms)\t\tSymbol Name          (Xcode 7: "4273.0ms   99.9%", self a bare ms count)
 *   Bytes Used\tCount\t\tSymbol Name                (Allocations: " 429.93 MB     100.0%", count)
 *
 * One row per call-tree node in depth-first order; the depth is the number of spaces before the
 * symbol, relative to the first row. Each node's self weight becomes one aggregated sample on its
 * root path, so the tree we rebuild has the text's totals. Weights are decimal strings scaled to
 * integers exactly (ns for time, cycles, bytes); percentages are ignored (Instruments 16 prints
 * 0.0% on rows that are half the total). Where the text gives a self column we use it (it has
 * more digits than the rounded totals); Allocations has none, so self = total − Σ children, in
 * bytes and in allocation counts (the count becomes the sample count). The other versions give no
 * sample counts, so each node with self weight counts as one sample. Root rows may be processes
 * ("example_app (40414)") and threads ("Main Thread  0x1ee7", "Main Thread (0x9ec1)"): they become
 * the profile's processes and threads instead of frames. The format is in
 * docs/xctrace-format.md §13.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/internal.h"
#include "read/lines.h"
#include "tracekit/read.h"
#include "util/mem.h"

typedef enum { FAM_TIME, FAM_CYCLES, FAM_BYTES } family;

typedef struct unit_def {
	const char *name;
	family fam;
	uint64_t mult;
} unit_def;

static const unit_def units[] = {
    {"s", FAM_TIME, 1000000000ull},    {"ms", FAM_TIME, 1000000ull},      {"\xc2\xb5s", FAM_TIME, 1000ull},
    {"\xce\xbcs", FAM_TIME, 1000ull},  {"us", FAM_TIME, 1000ull},         {"ns", FAM_TIME, 1ull},
    {"min", FAM_TIME, 60000000000ull}, {"Gc", FAM_CYCLES, 1000000000ull}, {"Mc", FAM_CYCLES, 1000000ull},
    {"Kc", FAM_CYCLES, 1000ull},       {"cycles", FAM_CYCLES, 1ull},      {"GB", FAM_BYTES, 1ull << 30},
    {"MB", FAM_BYTES, 1ull << 20},     {"KB", FAM_BYTES, 1ull << 10},     {"Bytes", FAM_BYTES, 1ull},
    {"bytes", FAM_BYTES, 1ull},        {"TB", FAM_BYTES, 1ull << 40},
};

typedef enum { SELF_WEIGHT, SELF_MS, SELF_COUNT } self_kind;

typedef enum { ROW_FRAME, ROW_PROCESS, ROW_THREAD } row_kind;

typedef struct node {
	row_kind kind;
	uint32_t depth;
	uint64_t total, child_total;
	uint64_t self; /* from the self column (SELF_WEIGHT, SELF_MS) */
	uint64_t count, child_count;
	tk_stack_id stack;
	tk_thread_id thread;
	int64_t pid;
	tk_str process;
	uint64_t line;
} node;

typedef struct dc {
	tk_profile *p;
	const char *name;
	size_t wcol, scol, ncols; /* weight, self and symbol cells; symbol is the last */
	self_kind sk;
	int have_family;
	family fam;
	uint32_t base; /* leading spaces of the first row's symbol */
	node *st;
	size_t nst, capst;
	tk_thread_id default_thread;
	int have_default;
	uint64_t rows;
} dc;

static int is_space(char c)
{
	return c == ' ';
}

/* U+2007 FIGURE SPACE pads some percentages in Instruments 16. */
static size_t skip_spaces(const char *s, size_t n, size_t i)
{
	for (;;) {
		if (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		else if (i + 2 < n && (unsigned char)s[i] == 0xe2 && (unsigned char)s[i + 1] == 0x80 &&
		         (unsigned char)s[i + 2] == 0x87)
			i += 3;
		else
			return i;
	}
}

/* value × mult exactly (rounded half up below the unit's smallest step); -1 on overflow. */
static int scale(uint64_t ip, uint64_t frac9, uint64_t mult, uint64_t *out)
{
	if (ip && mult > UINT64_MAX / ip)
		return -1;
	uint64_t a = ip * mult;
	/* frac9 < 1e9 and mult <= 2^40 would overflow; split mult into 1e9 quotient and remainder */
	uint64_t q = mult / 1000000000ull, r = mult % 1000000000ull;
	uint64_t b = frac9 * q + (frac9 * r + 500000000ull) / 1000000000ull;
	if (a > UINT64_MAX - b)
		return -1;
	*out = a + b;
	return 0;
}

/* "4.93 s  100.0%", "4273.0ms   99.9%", "532 cycles    0.0%", "0 s", "-". */
static int parse_weight(dc *d, const char *s, size_t n, uint64_t line, uint64_t *out, tk_error *err)
{
	size_t i = skip_spaces(s, n, 0);
	if (i < n && s[i] == '-' && skip_spaces(s, n, i + 1) == n) {
		*out = 0;
		return 0;
	}
	uint64_t ip, frac;
	unsigned fd;
	size_t k = tk_parse_decimal(s + i, n - i, &ip, &frac, &fd);
	if (!k)
		return tk_error_set(err, "%s:%llu: expected a weight like \"4.93 s\", found \"%.*s\"", d->name,
		                    (unsigned long long)line, (int)(n > 40 ? 40 : n), s);
	i = skip_spaces(s, n, i + k);
	size_t u = i;
	while (u < n && s[u] != ' ' && s[u] != '\t')
		u++;
	for (size_t j = 0; j < sizeof units / sizeof units[0]; j++) {
		if (strlen(units[j].name) != u - i || memcmp(units[j].name, s + i, u - i) != 0)
			continue;
		if (d->have_family && units[j].fam != d->fam)
			return tk_error_set(err, "%s:%llu: weight unit \"%s\" mixes %s with the earlier rows' %s",
			                    d->name, (unsigned long long)line, units[j].name,
			                    units[j].fam == FAM_TIME     ? "time"
			                    : units[j].fam == FAM_CYCLES ? "cycles"
			                                                 : "bytes",
			                    d->fam == FAM_TIME     ? "time"
			                    : d->fam == FAM_CYCLES ? "cycles"
			                                           : "bytes");
		d->have_family = 1;
		d->fam = units[j].fam;
		if (scale(ip, frac, units[j].mult, out) < 0)
			return tk_error_set(err, "%s:%llu: weight too large", d->name, (unsigned long long)line);
		return 0;
	}
	return tk_error_set(err, "%s:%llu: unknown weight unit \"%.*s\"", d->name, (unsigned long long)line,
	                    (int)(u - i > 20 ? 20 : u - i), s + i);
}

static int parse_uint(const char *s, size_t n, uint64_t *out)
{
	size_t i = skip_spaces(s, n, 0);
	uint64_t ip, frac;
	unsigned fd;
	size_t k = tk_parse_decimal(s + i, n - i, &ip, &frac, &fd);
	if (!k || fd || skip_spaces(s, n, i + k) != n)
		return -1;
	*out = ip;
	return 0;
}

static int is_hex_digit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* "example_app (40414)" → name, pid. */
static int match_process(const char *s, size_t n, size_t *name_len, int64_t *pid)
{
	if (n < 4 || s[n - 1] != ')')
		return 0;
	size_t i = n - 1, j = i;
	while (j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9')
		j--;
	if (j == i || j < 2 || s[j - 1] != '(' || s[j - 2] != ' ' || i - j > 10)
		return 0;
	*pid = strtoll(s + j, NULL, 10);
	size_t e = j - 2;
	while (e > 0 && s[e - 1] == ' ')
		e--;
	if (e == 0)
		return 0;
	*name_len = e;
	return 1;
}

/* "Main Thread  0x1ee7", "Thread 1 0x2a", "Main Thread (0x9ec1)" → name, tid. */
static int match_thread(const char *s, size_t n, size_t *name_len, uint64_t *tid)
{
	size_t e = n;
	int paren = 0;
	if (e && s[e - 1] == ')') {
		paren = 1;
		e--;
	}
	size_t j = e;
	while (j > 0 && is_hex_digit(s[j - 1]))
		j--;
	if (j == e || e - j > 16 || j < 3 || s[j - 1] != 'x' || s[j - 2] != '0')
		return 0;
	size_t b = j - 2;
	if (paren) {
		if (b == 0 || s[b - 1] != '(')
			return 0;
		b--;
	}
	if (b == 0 || s[b - 1] != ' ')
		return 0;
	while (b > 0 && s[b - 1] == ' ')
		b--;
	if (b == 0)
		return 0;
	*tid = strtoull(s + j, NULL, 16);
	*name_len = b;
	return 1;
}

/* The thread frames without a thread row belong to. */
static tk_thread_id default_thread(dc *d, int64_t pid, tk_str process)
{
	if (pid >= 0 || process)
		return tk_thread_get_or_add(d->p, pid, 0, 0, process);
	if (!d->have_default) {
		d->default_thread = tk_thread_get_or_add(d->p, -1, 0, 0, 0);
		d->have_default = 1;
	}
	return d->default_thread;
}

/* A node is complete: its self weight becomes a sample on its stack. */
static void pop(dc *d)
{
	node *x = &d->st[--d->nst];
	uint64_t self, count = 0;
	if (d->sk == SELF_COUNT) {
		self = x->total > x->child_total ? x->total - x->child_total : 0;
		count = x->count > x->child_count ? x->count - x->child_count : 0;
	} else {
		/* A Deep Copy has no sample counts: one per node with self weight (as pprof converters do),
		 * since the model drops threads without samples. */
		self = x->self;
		count = self ? 1 : 0;
	}
	if (self || count)
		tk_sample_add_n(d->p, x->thread, x->kind == ROW_FRAME ? x->stack : 0, self, count);
	if (d->nst) {
		d->st[d->nst - 1].child_total += x->total;
		d->st[d->nst - 1].child_count += x->count;
	}
}

static int header(dc *d, const char *s, size_t n, tk_error *err)
{
	/* the cells, split on tabs */
	const char *cell[8];
	size_t len[8], nc = 0, start = 0;
	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		start = 3;
	for (size_t i = start; i <= n && nc < 8; i++)
		if (i == n || s[i] == '\t') {
			cell[nc] = s + start;
			len[nc++] = i - start;
			start = i + 1;
		}
	if (nc < 3)
		return tk_error_set(err, "%s:1: a Deep Copy header has at least 3 tab-separated cells", d->name);
#define IS(k, lit) (len[k] == strlen(lit) && memcmp(cell[k], lit, strlen(lit)) == 0)
	if (!(IS(nc - 1, "Symbol Name") || IS(nc - 1, "Symbol Names")))
		return tk_error_set(err, "%s:1: the last header cell is not \"Symbol Name\"", d->name);
	if (!(IS(0, "Weight") || IS(0, "Running Time") || IS(0, "Bytes Used")))
		return tk_error_set(err, "%s:1: unknown weight column \"%.*s\"", d->name, (int)len[0], cell[0]);
	if (IS(1, "Self Weight"))
		d->sk = SELF_WEIGHT;
	else if (IS(1, "Self (ms)"))
		d->sk = SELF_MS;
	else if (IS(1, "Count"))
		d->sk = SELF_COUNT;
	else
		return tk_error_set(err, "%s:1: unknown self column \"%.*s\"", d->name, (int)len[1], cell[1]);
#undef IS
	d->wcol = 0;
	d->scol = 1;
	d->ncols = nc;
	return 0;
}

static int row(dc *d, const char *s, size_t n, uint64_t line, tk_error *err)
{
	const char *cell[8];
	size_t len[8], nc = 0, start = 0;
	for (size_t i = 0; i <= n; i++)
		if (i == n || s[i] == '\t') {
			if (nc == d->ncols)
				return tk_error_set(err, "%s:%llu: more than the header's %zu tab-separated cells",
				                    d->name, (unsigned long long)line, d->ncols);
			cell[nc] = s + start;
			len[nc++] = i - start;
			start = i + 1;
		}
	if (nc != d->ncols)
		return tk_error_set(err, "%s:%llu: %zu tab-separated cells, the header has %zu", d->name,
		                    (unsigned long long)line, nc, d->ncols);
	node x = {0};
	x.line = line;
	if (parse_weight(d, cell[d->wcol], len[d->wcol], line, &x.total, err) < 0)
		return -1;
	if (d->sk == SELF_WEIGHT) {
		if (parse_weight(d, cell[d->scol], len[d->scol], line, &x.self, err) < 0)
			return -1;
	} else {
		uint64_t v;
		if (parse_uint(cell[d->scol], len[d->scol], &v) < 0)
			return tk_error_set(err, "%s:%llu: expected a whole number in the %s column, found \"%.*s\"",
			                    d->name, (unsigned long long)line, d->sk == SELF_MS ? "Self (ms)" : "Count",
			                    (int)(len[d->scol] > 40 ? 40 : len[d->scol]), cell[d->scol]);
		if (d->sk == SELF_MS) {
			if (v > UINT64_MAX / 1000000)
				return tk_error_set(err, "%s:%llu: weight too large", d->name,
				                    (unsigned long long)line);
			x.self = v * 1000000;
		} else
			x.count = v;
	}
	const char *sym = cell[d->ncols - 1];
	size_t slen = len[d->ncols - 1], sp = 0;
	while (sp < slen && is_space(sym[sp]))
		sp++;
	sym += sp;
	slen -= sp;
	while (slen && sym[slen - 1] == ' ')
		slen--;
	if (!slen)
		return tk_error_set(err, "%s:%llu: empty symbol name", d->name, (unsigned long long)line);
	if (d->rows++ == 0)
		d->base = (uint32_t)sp;
	if (sp < d->base)
		return tk_error_set(err, "%s:%llu: indented less (%zu spaces) than the first row (%u)", d->name,
		                    (unsigned long long)line, sp, d->base);
	x.depth = (uint32_t)(sp - d->base);
	while (d->nst && d->st[d->nst - 1].depth >= x.depth)
		pop(d);
	if (x.depth != (d->nst ? d->st[d->nst - 1].depth + 1 : 0))
		return tk_error_set(err, "%s:%llu: indented %u levels below the previous row's", d->name,
		                    (unsigned long long)line, x.depth - (d->nst ? d->st[d->nst - 1].depth : 0));
	node *parent = d->nst ? &d->st[d->nst - 1] : NULL;
	size_t nl;
	int64_t pid;
	uint64_t tid;
	if (!parent && match_process(sym, slen, &nl, &pid)) {
		x.kind = ROW_PROCESS;
		x.pid = pid;
		x.process = tk_intern(d->p, sym, nl);
		x.thread = tk_thread_get_or_add(d->p, pid, 0, 0, x.process);
	} else if ((!parent || parent->kind == ROW_PROCESS) && match_thread(sym, slen, &nl, &tid)) {
		x.kind = ROW_THREAD;
		x.pid = parent ? parent->pid : -1;
		x.process = parent ? parent->process : 0;
		x.thread = tk_thread_get_or_add(d->p, x.pid, tid, tk_intern(d->p, sym, nl), x.process);
	} else {
		x.kind = ROW_FRAME;
		x.pid = parent ? parent->pid : -1;
		x.process = parent ? parent->process : 0;
		x.thread = parent && parent->kind != ROW_PROCESS ? parent->thread : default_thread(d, x.pid, x.process);
		tk_frame f = {0};
		int hex = slen > 2 && slen <= 18 && sym[0] == '0' && sym[1] == 'x';
		for (size_t i = 2; hex && i < slen; i++)
			hex = is_hex_digit(sym[i]);
		if (hex)
			f.addr = strtoull(sym, NULL, 16);
		else
			f.name = tk_intern(d->p, sym, slen);
		x.stack = tk_stack_push(d->p, parent && parent->kind == ROW_FRAME ? parent->stack : 0,
		                        tk_frame_add(d->p, &f));
	}
	TK_GROW(d->st, d->capst, d->nst + 1);
	d->st[d->nst++] = x;
	return 0;
}

static int dc_sniff(const unsigned char *head, size_t n)
{
	const char *s;
	size_t len = tk_head_line(head, n, 0, &s);
	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
		s += 3;
		len -= 3;
	}
	if (len && s[len - 1] == '\r')
		len--;
	static const char *const first[] = {"Weight\t", "Running Time\t", "Bytes Used\t"};
	int ok = 0;
	for (size_t i = 0; i < 3; i++)
		if (len > strlen(first[i]) && memcmp(s, first[i], strlen(first[i])) == 0)
			ok = 1;
	return ok && ((len >= 12 && memcmp(s + len - 12, "\tSymbol Name", 12) == 0) ||
	              (len >= 13 && memcmp(s + len - 13, "\tSymbol Names", 13) == 0));
}

static int dc_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	dc d = {0};
	d.p = p;
	d.name = tk_input_name(in);
	tk_lines l;
	tk_lines_init(&l, in, o);
	const char *s;
	size_t n;
	int rc = tk_lines_next(&l, &s, &n, err);
	if (rc == 0)
		rc = tk_error_set(err, "%s: empty input", d.name);
	if (rc > 0)
		rc = header(&d, s, n, err);
	while (rc >= 0 && (rc = tk_lines_next(&l, &s, &n, err)) > 0) {
		if (skip_spaces(s, n, 0) == n)
			continue; /* Xcode 7 copies end with blank lines */
		rc = row(&d, s, n, l.lineno, err);
	}
	if (rc == 0 && d.rows == 0)
		rc = tk_error_set(err, "%s: a Deep Copy header but no rows", d.name);
	while (rc == 0 && d.nst)
		pop(&d);
	tk_lines_free(&l);
	free(d.st);
	if (rc < 0)
		return -1;
	tk_profile_set_unit(p, d.fam == FAM_TIME ? TK_UNIT_NS : d.fam == FAM_CYCLES ? TK_UNIT_CYCLES : TK_UNIT_BYTES);
	tk_profile_set_meta(p, "format", "instruments-deep-copy");
	tk_profile_set_meta(p, "weights",
	                    d.sk == SELF_COUNT ? "self = total - children (bytes, allocation counts)"
	                                       : "self column (samples: one per node with self weight)");
	tk_read_meta_rows(p, d.rows, d.rows);
	return 0;
}

const tk_reader tk_reader_deepcopy = {"instruments-deep-copy", dc_sniff, dc_read};
