/* tracekit records — list the CPU and hang records of a monitor session, show one as a tree or folded stacks. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "tracekit/records.h"
#include "tracekit/write.h"
#include "util/text.h"

/* dSYM symbolication of MTHawkeye frames comes from the symbol API (include/tracekit/symbol.h);
 * builds without it keep MTHawkeye frames as image+offset and refuse --symbols. */
#if defined(__has_include)
#if __has_include("tracekit/symbol.h")
#include "tracekit/symbol.h"
#define TK_HAVE_SYMBOL 1
#endif
#endif

TK_COMMAND(records, "list CPU-load and hang records (tracekit monitor, MTHawkeye); show one as a tree")

static const char usage[] =
    "usage: tracekit records [options] PATH\n"
    "\n"
    "PATH is a session directory written by `tracekit monitor` (records + images.json), a Records\n"
    "file, or an MTHawkeye session directory (records.mtlog, records.mmap2, dyld-images).\n"
    "\n"
    "Without --tree/--collapse, lists the CPU high-load and hang records: start time, duration,\n"
    "average CPU (percent of one core), samples, thread and the frame with the most samples.\n"
    "\n"
    "options:\n"
    "  --json             the list as JSON (times as Unix seconds and ISO 8601 UTC)\n"
    "  --utc              show times in UTC instead of local time\n"
    "  --tree KEY         the call tree of one record (KEY as listed, or a unique prefix of it):\n"
    "                     total samples, percent, frame, file:line; children by weight\n"
    "  --min-percent P    with --tree, hide subtrees below P percent (default 1, as MTHawkeye)\n"
    "  --collapse KEY     one record as folded stacks (`root;...;leaf count`) for flame graphs\n"
    "  --threads KEY      a hang record's snapshot: every thread's backtrace when the hang was detected\n"
    "  --images FILE      symbolicate with this images.json (or dyld-images) instead of the session's\n"
    "  --symbols PATH     dSYMs/binaries (a directory, .dSYM, .app or file; repeat for several) that\n"
    "                     name MTHawkeye frames by image UUID; its addresses are already call sites\n"
    "  --no-symbols       keep frames as raw addresses\n"
    "  -o, --output OUT   write there (whole or not at all) instead of standard output\n"
    "\n"
    "Every record is also readable by the other commands: `tracekit tree PATH`, `tracekit top PATH`\n"
    "and `tracekit collapse PATH` see one thread per record, its tid the record's position in this\n"
    "list (1, 2, …; pick one with --thread N), named like\n"
    "\"cpu-highload 2019-03-25 11:02:01 UTC 132.6 s\" or \"hang main 2026-11-22 12:00:01 UTC 3.02 s\".\n"
    "\n"
    "Frames of Linux sessions are named from the ELF symbol tables and DWARF line tables of the\n"
    "files listed in images.json (a file whose build-id changed since the recording is skipped with\n"
    "a warning). MTHawkeye frames keep their addresses, tagged with their image's UUID and load address.\n";

/* Where the output goes: standard output or -o's temporary file (util/outfile.h). */
static FILE *out;

#define S(s) tk_cli_shown(s)

static void fmt_time(double unix_s, int use_utc, char *buf, size_t n)
{
	if (!isfinite(unix_s) || unix_s < 0 || unix_s > 1e11) {
		snprintf(buf, n, "?");
		return;
	}
	time_t t = (time_t)unix_s;
	struct tm tm;
	if (use_utc)
		gmtime_r(&t, &tm);
	else
		localtime_r(&t, &tm);
	size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
	if (use_utc || tm.tm_gmtoff == 0) {
		snprintf(buf + k, n - k, "Z");
	} else {
		long off = tm.tm_gmtoff, a = labs(off);
		snprintf(buf + k, n - k, "%c%02ld:%02ld", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
	}
}

/* The frame with the most samples of its own (the leaf most often sampled), by display name. */
typedef struct top {
	char name[256];
	tk_frame_id frame;
	uint64_t self, total;
} top;

static void top_frame(const tk_profile *p, tk_thread_id t, top *res)
{
	size_t n;
	const tk_stack_weight *cells = tk_thread_stacks(p, t, &n);
	size_t nf = tk_frame_count(p) + 1;
	uint64_t *self = calloc(nf, sizeof *self);
	memset(res, 0, sizeof *res);
	if (!self)
		return;
	for (size_t i = 0; i < n; i++) {
		const tk_stack_node *s = tk_stack_get(p, cells[i].stack);
		if (s)
			self[s->frame] += cells[i].weight;
		res->total += cells[i].weight;
	}
	/* frames sharing a name (one function sampled at several PCs) count together */
	for (size_t f = 1; f < nf; f++) {
		if (!self[f])
			continue;
		const tk_frame *fr = tk_frame_get(p, (tk_frame_id)f);
		uint64_t sum = self[f];
		if (fr->name)
			for (size_t g = f + 1; g < nf; g++)
				if (self[g] && tk_frame_get(p, (tk_frame_id)g)->name == fr->name) {
					sum += self[g];
					self[g] = 0;
				}
		if (sum > res->self) {
			res->self = sum;
			res->frame = (tk_frame_id)f;
		}
	}
	if (res->frame) {
		char buf[32];
		const tk_frame *f = tk_frame_get(p, res->frame);
		const tk_binary *b = tk_binary_get(p, f->binary);
		if (!f->name && b) /* unnamed: say which image and where in it */
			snprintf(res->name, sizeof res->name, "%s+0x%llx", tk_string(p, b->name),
			         (unsigned long long)(f->addr - b->load_addr));
		else
			snprintf(res->name, sizeof res->name, "%s", tk_frame_label(p, res->frame, buf));
	}
	free(self);
}

/* ---- loading one record (and symbolicating it with dSYMs when asked) ---- */

static struct {
	const char **paths;
	size_t n;
	int mthawkeye;
#ifdef TK_HAVE_SYMBOL
	tk_symbolicator *s;
#endif
} sym;

#ifdef TK_HAVE_SYMBOL
static void sym_warn(void *ctx, const char *message)
{
	(void)ctx;
	tk_cli_warn("%s", message);
}
#endif

/* Load record i into *pp; returns its thread or -1 with err. With --symbols on an MTHawkeye
 * session, the profile is replaced by its dSYM-symbolicated copy (threads keep their order). */
static int64_t load_record(tk_records *r, size_t i, tk_profile **pp, unsigned flags, tk_error *err)
{
	int64_t t = tk_records_load(r, i, *pp, flags, err);
	if (t < 0 || !sym.n || !sym.mthawkeye || (flags & TK_RECORDS_NO_SYMBOLS))
		return t;
#ifdef TK_HAVE_SYMBOL
	if (!sym.s) {
		sym.s = tk_symbolicator_new(NULL);
		for (size_t k = 0; k < sym.n; k++)
			if (tk_symbolicator_add_path(sym.s, sym.paths[k], err) < 0)
				return -1;
	}
	tk_symbolicate_options so;
	tk_symbolicate_options_init(&so);
	so.adjust = TK_ADJUST_NONE; /* MTHawkeye stores return address - 1: every address is a call site */
	so.warn = sym_warn;
	tk_profile *q = tk_symbolicate_profile(*pp, sym.s, &so, err);
	if (!q)
		return -1;
	tk_profile_free(*pp);
	*pp = q;
#endif
	return t;
}

static void print_warnings(const tk_records *r)
{
	for (size_t i = 0; i < tk_records_warning_count(r); i++)
		tk_cli_warn("%s", tk_records_warning(r, i));
}

static int list(tk_records *r, int json, int use_utc, unsigned flags)
{
	size_t n = tk_records_count(r);
	json_t *arr = json ? json_array() : NULL;
	if (!json && n)
		fprintf(out, "%-13s %-16s %-25s %10s %8s %8s  %-14s %s\n", "kind", "key",
		        use_utc ? "start (UTC)" : "start", "duration", "avg CPU", "samples", "thread",
		        "top frame (self samples)");
	for (size_t i = 0; i < n; i++) {
		const tk_record_info *ri = tk_records_get(r, i);
		tk_profile *p = tk_profile_new();
		tk_error err;
		int64_t t = load_record(r, i, &p, flags, &err);
		if (t < 0) {
			tk_profile_free(p);
			json_decref(arr);
			return tk_cli_fail("%s", err.msg);
		}
		top tp;
		top_frame(p, (tk_thread_id)t, &tp);
		char when[64], dur[32], cpu[32], thr[64], topbuf[320];
		fmt_time(ri->start, json || use_utc, when, sizeof when);
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "kind", json_string(ri->kind_name));
			json_object_set_new(o, "key", json_string(ri->key));
			json_object_set_new(o, "start", isfinite(ri->start) ? json_real(ri->start) : json_null());
			json_object_set_new(o, "start_utc", json_string(when));
			json_object_set_new(o, "duration_s",
			                    isfinite(ri->duration) ? json_real(ri->duration) : json_null());
			json_object_set_new(o, "avg_cpu_percent",
			                    isfinite(ri->avg_cpu) ? json_real(ri->avg_cpu) : json_null());
			json_object_set_new(o, "samples", json_integer((json_int_t)ri->samples));
			json_object_set_new(o, "tid", json_integer((json_int_t)ri->tid));
			json_object_set_new(o, "thread", json_string(ri->thread));
			json_object_set_new(o, "live", json_boolean(ri->live));
			json_object_set_new(o, "truncated", json_boolean(ri->truncated));
			if (ri->kind == TK_RECORD_HANG) {
				json_object_set_new(o, "suppressed", json_integer(ri->suppressed));
				json_object_set_new(o, "threads_captured", json_integer((json_int_t)ri->nthreads));
			}
			if (tp.frame) {
				const tk_frame *f = tk_frame_get(p, tp.frame);
				json_t *tf = json_object();
				char addr[32];
				snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)f->addr);
				json_object_set_new(tf, "name", json_string(tp.name));
				json_object_set_new(tf, "addr", json_string(addr));
				if (f->file) {
					json_object_set_new(tf, "file", json_string(tk_string(p, f->file)));
					json_object_set_new(tf, "line", json_integer(f->line));
				}
				json_object_set_new(tf, "self_samples", json_integer((json_int_t)tp.self));
				json_object_set_new(o, "top_frame", tf);
			} else {
				json_object_set_new(o, "top_frame", json_null());
			}
			json_object_set_new(o, "where", json_string(ri->where));
			json_array_append_new(arr, o);
		} else {
			snprintf(dur, sizeof dur, isfinite(ri->duration) ? "%.2f s" : "?", ri->duration);
			snprintf(cpu, sizeof cpu, isfinite(ri->avg_cpu) ? "%.1f %%" : "-", ri->avg_cpu);
			if (ri->tid && *ri->thread)
				snprintf(thr, sizeof thr, "%s (%llu)", S(ri->thread), (unsigned long long)ri->tid);
			else
				snprintf(thr, sizeof thr, "%s", *ri->thread ? S(ri->thread) : "all");
			if (tp.frame)
				snprintf(topbuf, sizeof topbuf, "%s (%.0f %%)", S(tp.name),
				         tp.total ? 100.0 * (double)tp.self / (double)tp.total : 0.0);
			else
				snprintf(topbuf, sizeof topbuf, "-");
			fprintf(out, "%-13s %-16s %-25s %10s %8s %8llu  %-14s %s%s\n", ri->kind_name, S(ri->key), when,
			        dur, cpu, (unsigned long long)ri->samples, thr, topbuf,
			        ri->live        ? "  [live]"
			        : ri->truncated ? "  [truncated]"
			                        : "");
		}
		tk_profile_free(p);
	}
	if (json) {
		char *s = json_dumps(arr, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		fprintf(out, "%s\n", s ? s : "[]");
		free(s);
		json_decref(arr);
	} else if (!n) {
		fprintf(out, "no CPU high-load or hang records\n");
	}
	return 0;
}

/* ---- one record as a tree or folded stacks ---- */

typedef struct tree {
	const tk_profile *p;
	uint64_t *total, *self;
	tk_stack_id **kids;
	size_t *nkids, *capkids;
	uint64_t all;
	double min_percent;
	size_t hidden;
} tree;

static const tree *sort_tree;
static int by_total(const void *a, const void *b)
{
	tk_stack_id x = *(const tk_stack_id *)a, y = *(const tk_stack_id *)b;
	if (sort_tree->total[x] != sort_tree->total[y])
		return sort_tree->total[x] > sort_tree->total[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void print_node(tree *T, tk_stack_id s, int depth)
{
	const tk_profile *p = T->p;
	double pct = T->all ? 100.0 * (double)T->total[s] / (double)T->all : 0;
	if (pct < T->min_percent) {
		T->hidden++;
		return;
	}
	const tk_stack_node *n = tk_stack_get(p, s);
	const tk_frame *f = tk_frame_get(p, n->frame);
	char buf[32];
	fprintf(out, "%8llu %5.1f%%  %*s%s", (unsigned long long)T->total[s], pct, depth * 2, "",
	        S(tk_frame_label(p, n->frame, buf)));
	const tk_binary *b = tk_binary_get(p, f->binary);
	if (f->name)
		fprintf(out, "  0x%llx", (unsigned long long)f->addr);
	else if (b) /* unnamed: at least say which image and where in it, as atos -l would need */
		fprintf(out, "  %s+0x%llx", S(tk_string(p, b->name)), (unsigned long long)(f->addr - b->load_addr));
	if (f->file)
		fprintf(out, "  %s:%u", S(tk_string(p, f->file)), f->line);
	if (f->flags & TK_FRAME_INLINED)
		fprintf(out, "  [inlined]");
	if (T->self[s] && T->nkids[s])
		fprintf(out, "  [self %llu]", (unsigned long long)T->self[s]);
	putc('\n', out);
	sort_tree = T;
	if (T->nkids[s])
		qsort(T->kids[s], T->nkids[s], sizeof(tk_stack_id), by_total);
	for (size_t i = 0; i < T->nkids[s]; i++)
		print_node(T, T->kids[s][i], depth + 1);
}

static void add_kid(tree *T, tk_stack_id parent, tk_stack_id s)
{
	if (T->capkids[parent] == T->nkids[parent]) {
		T->capkids[parent] = T->capkids[parent] ? 2 * T->capkids[parent] : 4;
		T->kids[parent] = realloc(T->kids[parent], T->capkids[parent] * sizeof(tk_stack_id));
		if (!T->kids[parent])
			abort();
	}
	T->kids[parent][T->nkids[parent]++] = s;
}

static int show_tree(const tk_profile *p, tk_thread_id t, double min_percent)
{
	size_t ns = tk_stack_count(p) + 1, n;
	tree T = {p,
	          calloc(ns, sizeof(uint64_t)),
	          calloc(ns, sizeof(uint64_t)),
	          calloc(ns, sizeof(tk_stack_id *)),
	          calloc(ns, sizeof(size_t)),
	          calloc(ns, sizeof(size_t)),
	          0,
	          min_percent,
	          0};
	if (!T.total || !T.self || !T.kids || !T.nkids || !T.capkids)
		abort();
	const tk_stack_weight *cells = tk_thread_stacks(p, t, &n);
	for (size_t i = 0; i < n; i++) {
		T.self[cells[i].stack] += cells[i].weight;
		T.all += cells[i].weight;
		for (tk_stack_id s = cells[i].stack; s; s = tk_stack_get(p, s)->parent)
			T.total[s] += cells[i].weight;
	}
	/* the loader made only this record's stacks, so every stack with weight is in its tree */
	for (tk_stack_id s = 1; s < ns; s++)
		if (T.total[s])
			add_kid(&T, tk_stack_get(p, s)->parent, s);
	fprintf(out, "%s: %llu samples\n", S(tk_string(p, tk_thread_get(p, t)->name)), (unsigned long long)T.all);
	sort_tree = &T;
	if (T.nkids[0])
		qsort(T.kids[0], T.nkids[0], sizeof(tk_stack_id), by_total);
	for (size_t i = 0; i < T.nkids[0]; i++)
		print_node(&T, T.kids[0][i], 0);
	if (T.hidden)
		fprintf(out, "(%zu subtrees below %g%% hidden; --min-percent 0 shows all)\n", T.hidden, min_percent);
	for (size_t s = 0; s < ns; s++)
		free(T.kids[s]);
	free(T.kids);
	free(T.nkids);
	free(T.capkids);
	free(T.total);
	free(T.self);
	return 0;
}

/* One record as folded stacks: the library's folded writer (the record's profile holds only its
 * thread), which also merges stacks that differ only in addresses and checks the stream. */
static int show_folded(const tk_profile *p, tk_thread_id t)
{
	(void)t;
	tk_folded_options fo = {.no_thread = 1};
	tk_error err;
	if (tk_write_folded(out, p, &fo, &err) < 0)
		return tk_cli_fail("records: %s", err.msg);
	return 0;
}

static int show_threads(const tk_profile *p)
{
	for (size_t t = 0; t < tk_thread_count(p); t++) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
		size_t n;
		const tk_stack_weight *c = tk_thread_stacks(p, (tk_thread_id)t, &n);
		fprintf(out, "%sthread %llu %s\n", t ? "\n" : "", (unsigned long long)th->tid,
		        S(tk_string(p, th->name)));
		if (!n)
			continue;
		uint32_t d = tk_stack_depth(p, c[0].stack);
		tk_frame_id *fr = malloc((d ? d : 1) * sizeof *fr);
		if (!fr)
			abort();
		size_t k = tk_stack_frames(p, c[0].stack, fr, d);
		for (size_t j = k, num = 0; j-- > 0; num++) { /* leaf first, as a backtrace reads */
			const tk_frame *f = tk_frame_get(p, fr[j]);
			char buf[32];
			fprintf(out, "  #%-3zu 0x%016llx  %s", num, (unsigned long long)f->addr,
			        S(f->name ? tk_string(p, f->name) : tk_frame_label(p, fr[j], buf)));
			if (f->file)
				fprintf(out, "  %s:%u", S(tk_string(p, f->file)), f->line);
			if (f->flags & TK_FRAME_INLINED)
				fprintf(out, "  [inlined]");
			putc('\n', out);
		}
		free(fr);
	}
	return 0;
}

int cmd_records(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return 0;
	}
	const char *path = NULL, *tree_key = NULL, *fold_key = NULL, *threads_key = NULL, *images = NULL;
	const char *output = NULL;
	int json = 0, use_utc = 0;
	unsigned flags = 0;
	double min_percent = 1.0;
	/* options with a value, through the one option parser (NAME VALUE or NAME=VALUE) */
	static const char *const with_value[] = {"--tree",   "--collapse",    "--threads", "--symbols",
	                                         "--images", "--min-percent", "--output"};
	for (int i = 1; i < argc;) {
		const char *a = argv[i], *v = NULL;
		int r = 0;
		size_t k = 0;
		for (; k < sizeof with_value / sizeof with_value[0]; k++)
			if ((r = tk_cli_opt("records", argc, argv, &i, with_value[k], k == 6 ? "-o" : NULL, &v)) != 0)
				break;
		if (r < 0)
			return 2;
		if (r > 0) {
			switch (k) {
			case 0: tree_key = v; break;
			case 1: fold_key = v; break;
			case 2: threads_key = v; break;
			case 3: {
				const char **np = realloc(sym.paths, (sym.n + 1) * sizeof *np);
				if (!np)
					abort();
				sym.paths = np;
				sym.paths[sym.n++] = v;
				break;
			}
			case 4: images = v; break;
			case 5:
				if (tk_cli_percent("records", "--min-percent", v, &min_percent) < 0)
					return 2;
				break;
			default: output = v;
			}
			continue;
		}
		i++;
		if (strcmp(a, "--json") == 0)
			json = 1;
		else if (strcmp(a, "--utc") == 0)
			use_utc = 1;
		else if (strcmp(a, "--no-symbols") == 0)
			flags |= TK_RECORDS_NO_SYMBOLS;
		else if (a[0] == '-' && a[1])
			return tk_cli_usage("records", "unknown option '%s'", a);
		else if (!path)
			path = a;
		else
			return tk_cli_usage("records", "one PATH only (got '%s' and '%s')", path, a);
	}
	if (!path)
		return tk_cli_usage("records", "no PATH (a session directory, a Records file or - for standard input)");
	if (!!tree_key + !!fold_key + !!threads_key > 1)
		return tk_cli_usage("records", "--tree, --collapse and --threads are exclusive");
	tk_error err;
#ifndef TK_HAVE_SYMBOL
	if (sym.n)
		return free(sym.paths),
		       tk_cli_fail("records: --symbols needs the dSYM symbolicator, not in this build");
#endif
	tk_records *r = tk_records_open(path, &err);
	if (!r)
		return free(sym.paths), tk_cli_fail("%s", err.msg);
	const char *fmt = tk_records_meta(r, "format");
	sym.mthawkeye = fmt && strcmp(fmt, "mthawkeye") == 0;
	if (sym.n && !sym.mthawkeye)
		tk_cli_warn(
		    "--symbols names MTHawkeye (dyld-images) frames; this session's frames come from its ELF files");
	if (images && tk_records_load_images(r, images, &err)) {
		tk_records_free(r);
		return tk_cli_fail("%s", err.msg);
	}
	tk_outfile of;
	if (tk_outfile_open(&of, output, &err) < 0) {
		tk_records_free(r);
		free(sym.paths);
		return tk_cli_fail("records: %s", err.msg);
	}
	out = of.f;
	int rc;
	const char *key = tree_key ? tree_key : fold_key ? fold_key : threads_key;
	if (key) {
		ptrdiff_t i = tk_records_find(r, key);
		if (i < 0) {
			rc = tk_cli_fail("%s: %s record key '%s' (`tracekit records %s` lists them)", path,
			                 i == -2 ? "ambiguous" : "no", key, path);
		} else {
			tk_profile *p = tk_profile_new();
			if (threads_key) {
				int n = tk_records_load_threads(r, (size_t)i, p, flags, &err);
				if (n < 0)
					rc = tk_cli_fail("%s", err.msg);
				else if (n == 0)
					rc = tk_cli_fail("%s: record %s has no thread snapshot (only tracekit's hang "
					                 "records have one)",
					                 path, tk_records_get(r, (size_t)i)->key);
				else
					rc = show_threads(p);
			} else {
				int64_t t = load_record(r, (size_t)i, &p, flags, &err);
				if (t < 0)
					rc = tk_cli_fail("%s", err.msg);
				else
					rc = tree_key ? show_tree(p, (tk_thread_id)t, min_percent)
					              : show_folded(p, (tk_thread_id)t);
			}
			tk_profile_free(p);
		}
	} else {
		rc = list(r, json, use_utc, flags);
	}
	if (rc)
		tk_outfile_abort(&of);
	else if (tk_outfile_commit(&of, &err) < 0)
		rc = tk_cli_fail("records: %s", err.msg);
	print_warnings(r);
	tk_records_free(r);
#ifdef TK_HAVE_SYMBOL
	tk_symbolicator_free(sym.s);
#endif
	free(sym.paths);
	return rc;
}
