/* tracekit records — list the CPU and hang records of a monitor session, show one as a tree or folded stacks. */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "tracekit/read.h"
#include "tracekit/transform.h"
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

enum {
	OPT_JSON = 1,
	OPT_UTC,
	OPT_TREE,
	OPT_MIN_PERCENT,
	OPT_COLLAPSE,
	OPT_THREADS,
	OPT_IMAGES,
	OPT_SYMBOLS,
	OPT_NO_SYMBOLS,
	OPT_OUTPUT,
	OPT_PATH
};

static const tk_cli_option options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL, "the list as JSON (times as Unix seconds and ISO 8601 UTC)"),
    TK_OPT_FLAG(OPT_UTC, "--utc", NULL, "show times in UTC instead of local time"),
    TK_OPT_VALUE(
        OPT_TREE, "--tree", NULL, "KEY",
        "the call tree of one record (KEY as listed, or a unique prefix of it): total samples, percent, frame, "
        "file:line; children by weight"),
    TK_OPT_VALUE(OPT_MIN_PERCENT, "--min-percent", NULL, "P",
                 "with --tree, hide subtrees below P percent (default 1, as MTHawkeye)"),
    TK_OPT_VALUE(OPT_COLLAPSE, "--collapse", NULL, "KEY",
                 "one record as folded stacks (`root;...;leaf count`) for flame graphs"),
    TK_OPT_VALUE(OPT_THREADS, "--threads", NULL, "KEY",
                 "a hang record's snapshot: every thread's backtrace when the hang was detected"),
    TK_OPT_VALUE(OPT_IMAGES, "--images", NULL, "FILE",
                 "symbolicate with this images.json (or dyld-images) instead of the session's"),
    TK_OPT_LIST(
        OPT_SYMBOLS, "--symbols", NULL, "PATH",
        "dSYMs/binaries (a directory, .dSYM, .app or file; repeat for several) that name MTHawkeye frames by image "
        "UUID; its addresses are already call sites"),
    TK_OPT_FLAG(OPT_NO_SYMBOLS, "--no-symbols", NULL, "keep frames as raw addresses"),
    TK_OPT_VALUE(OPT_OUTPUT, "--output", "-o", "OUT", "write there (whole or not at all) instead of standard output"),
    TK_OPT_OPERAND(OPT_PATH, "PATH",
                   "a session directory, a Records file, an MTHawkeye session directory or - for standard input"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_records = {
    .name = "records",
    .usage = "tracekit records [options] PATH",
    .about = "PATH is a session directory written by `tracekit monitor` (records + images.json), a Records\n"
             "file, an MTHawkeye session directory (records.mtlog, records.mmap2, dyld-images), or any other\n"
             "input whose reader reports events (the list then shows its events; KEY is an event's key).\n"
             "\n"
             "Without --tree/--collapse, lists the CPU high-load and hang records: start time, duration,\n"
             "average CPU (percent of one core), samples, thread and the frame with the most samples.\n",
    .options = options,
    .footer = "Every record is also readable by the other commands: `tracekit tree PATH`, `tracekit top PATH`\n"
              "and `tracekit collapse PATH` see one thread per record, its tid the record's position in this\n"
              "list (1, 2, …; pick one with --thread N), named like\n"
              "\"cpu-highload 2019-03-25 11:02:01 UTC 132.6 s\" or \"hang main 2026-11-22 12:00:01 UTC 3.02 s\".\n"
              "\n"
              "Frames of Linux sessions are named from the ELF symbol tables and DWARF line tables of the\n"
              "files listed in images.json (a file whose build-id changed since the recording is skipped with\n"
              "a warning). MTHawkeye frames keep their addresses, tagged with their image's UUID and load address.\n",
    .flags = TK_CLI_NO_DASHDASH,
    .column = 21,
};

typedef struct records_args {
	const char *path, *tree_key, *fold_key, *threads_key, *images, *output;
	int json, use_utc;
	unsigned flags;
	double min_percent;
} records_args;

/* Where the output goes: standard output or -o's temporary file (util/outfile.h). */
static FILE *out;
enum { NO_SYMBOLS = 1 }; /* --no-symbols */

#define S(s) tk_cli_shown(s)

/* ---- naming the frames (ELF files of this machine; dSYMs for MTHawkeye with --symbols) ---- */

static struct {
	const char **paths;
	size_t n;
	int mthawkeye;
#ifdef TK_HAVE_SYMBOL
	tk_symbolicator *s;
	tk_elf_namer *elf; /* names Linux sessions' frames from their ELF files */
#endif
} sym;

/* Frames of the session's own images (files of this machine) get their names. */
static int name_elf(tk_profile **pp, tk_error *err)
{
#ifdef TK_HAVE_SYMBOL
	if (!sym.elf)
		sym.elf = tk_elf_namer_new();
	return tk_elf_name_listed(pp, sym.elf, err);
#else
	(void)pp, (void)err;
	return 0;
#endif
}

#ifdef TK_HAVE_SYMBOL
static void sym_warn(void *ctx, const char *message)
{
	(void)ctx;
	tk_cli_warn("%s", message);
}
#endif

/* Name *pp's frames; with --symbols on an MTHawkeye session, *pp is replaced by its
 * dSYM-symbolicated copy (threads and events keep their order). */
static int name_frames(tk_profile **pp, unsigned no_symbols, tk_error *err)
{
	if (name_elf(pp, err) < 0)
		return -1;
	if (!sym.n || !sym.mthawkeye || no_symbols)
		return 0;
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
	return 0;
}

static void print_warnings(void)
{
#ifdef TK_HAVE_SYMBOL
	for (size_t i = 0; sym.elf && i < tk_elf_namer_warning_count(sym.elf); i++)
		tk_cli_warn("%s", tk_elf_namer_warning(sym.elf, i));
#endif
}

/* A run's foreground time (the monitor's foreground line): an event for the store's hang rate, not
 * a record to list. */
static int is_foreground(const tk_profile *p, tk_event_id e)
{
	const tk_event *ev = tk_event_get(p, e);
	return ev->kind == TK_EVENT_MARKER && strcmp(tk_string(p, ev->name), "foreground") == 0 &&
	       ev->thread == TK_NO_THREAD;
}

static int list(const tk_profile *p, int json, int use_utc)
{
	size_t n = tk_event_count(p), shown = 0;
	for (tk_event_id e = 1; e <= n; e++)
		shown += !is_foreground(p, e);
	tk_record_list *l = tk_record_list_begin(out, shown, json, use_utc);
	tk_error err;
	for (tk_event_id e = 1; e <= n; e++)
		if (!is_foreground(p, e))
			tk_record_list_add(l, p, e);
	if (tk_record_list_end(l, &err) < 0)
		return tk_cli_fail("%s", err.msg);
	return 0;
}

/* The event whose key is key or, failing that, starts with key (when only one does); 0 if none,
 * -1 if the prefix is ambiguous. */
static long long find_event(const tk_profile *p, const char *key)
{
	size_t n = strlen(key), ne = tk_event_count(p);
	long long found = 0;
	for (tk_event_id e = 1; e <= ne; e++)
		if (strcmp(tk_string(p, tk_event_get(p, e)->key), key) == 0)
			return e;
	for (tk_event_id e = 1; e <= ne; e++)
		if (n && strncmp(tk_string(p, tk_event_get(p, e)->key), key, n) == 0) {
			if (found)
				return -1;
			found = e;
		}
	return found;
}

/* ---- one event as a tree or folded stacks ---- */

static int show_tree(const tk_profile *p, tk_thread_id t, double min_percent)
{
	tk_error err;
	if (tk_write_record_tree(out, p, t, min_percent, &err) < 0)
		return tk_cli_fail("%s", err.msg);
	return 0;
}

/* One event's thread as folded stacks: the library's folded writer over the profile kept to that
 * thread, which also merges stacks that differ only in addresses and checks the stream. */
static int show_folded(const tk_profile *p, tk_thread_id t)
{
	char tid[32];
	snprintf(tid, sizeof tid, "%llu", (unsigned long long)tk_thread_get(p, t)->tid);
	tk_transform_spec one = {.kind = TK_TX_THREAD, .pattern = tid};
	tk_error err;
	tk_profile *q = tk_transform(p, &one, 1, &err);
	if (!q)
		return tk_cli_fail("records: %s", err.msg);
	tk_folded_options fo = {.no_thread = 1};
	int rc = tk_write_folded(out, q, &fo, &err);
	tk_profile_free(q);
	if (rc < 0)
		return tk_cli_fail("records: %s", err.msg);
	return 0;
}

/* Does event e have context threads (a hang's snapshot)? */
static int has_context(const tk_profile *p, tk_event_id e)
{
	for (size_t t = 0; t < tk_thread_count(p); t++)
		if (tk_thread_get(p, (tk_thread_id)t)->event == e && tk_thread_get(p, (tk_thread_id)t)->role == TK_ROLE_CONTEXT)
			return 1;
	return 0;
}

static int show_threads(const tk_profile *p, tk_event_id e)
{
	tk_error err;
	if (tk_write_event_threads(out, p, e, &err) < 0)
		return tk_cli_fail("%s", err.msg);
	return 0;
}

static int records_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	records_args *t = ctx;
	switch (o->id) {
	case OPT_TREE: t->tree_key = v; return 0;
	case OPT_COLLAPSE: t->fold_key = v; return 0;
	case OPT_THREADS: t->threads_key = v; return 0;
	case OPT_SYMBOLS: {
		const char **np = realloc(sym.paths, (sym.n + 1) * sizeof *np);
		if (!np)
			abort();
		sym.paths = np;
		sym.paths[sym.n++] = v;
		return 0;
	}
	case OPT_IMAGES: t->images = v; return 0;
	case OPT_MIN_PERCENT: return tk_cli_percent("records", "--min-percent", v, &t->min_percent);
	case OPT_OUTPUT: t->output = v; return 0;
	case OPT_JSON: t->json = 1; return 0;
	case OPT_UTC: t->use_utc = 1; return 0;
	case OPT_NO_SYMBOLS: t->flags |= NO_SYMBOLS; return 0;
	}
	if (t->path) /* OPT_PATH */
		return tk_cli_usage("records", "one PATH only (got '%s' and '%s')", t->path, v), -1;
	t->path = v;
	return 0;
}

int cmd_records(int argc, char **argv)
{
	records_args args = {.min_percent = 1.0};
	int r = tk_cli_parse(&tk_cli_command_records, argc, argv, 1, records_option, &args, NULL);
	if (r) {
		free(sym.paths);
		return r < 0 ? 0 : r;
	}
	const char *path = args.path, *tree_key = args.tree_key, *fold_key = args.fold_key;
	const char *threads_key = args.threads_key, *images = args.images, *output = args.output;
	int json = args.json, use_utc = args.use_utc;
	unsigned flags = args.flags;
	double min_percent = args.min_percent;
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
	/* One parse: the input's events (and with --threads each hang's snapshot) in one profile. */
	tk_read_options ro;
	tk_read_options_init(&ro);
	ro.event_context = threads_key != NULL;
	ro.no_images = (flags & NO_SYMBOLS) != 0;
	ro.images = images;
	ro.fallback = &tk_reader_records; /* a file no sniffer knows: the Records reader says what is wrong */
	tk_profile *p = tk_profile_new();
	if (tk_read_path(p, path, &ro, &err) < 0) {
		tk_profile_free(p);
		return free(sym.paths), tk_cli_fail("%s", err.msg);
	}
	const char *fmt = tk_profile_meta(p, "format");
	sym.mthawkeye = fmt && strcmp(fmt, "mthawkeye") == 0;
	if (sym.n && !sym.mthawkeye)
		tk_cli_warn(
		    "--symbols names MTHawkeye (dyld-images) frames; this session's frames come from its ELF files");
	tk_outfile of;
	if (tk_outfile_open(&of, output, &err) < 0) {
		tk_profile_free(p);
		free(sym.paths);
		return tk_cli_fail("records: %s", err.msg);
	}
	out = of.f;
	int rc;
	const char *key = tree_key ? tree_key : fold_key ? fold_key : threads_key;
	long long e = key ? find_event(p, key) : 0;
	if (key && e <= 0) {
		rc = tk_cli_fail("%s: %s record key '%s' (`tracekit records %s` lists them)", path,
		                 e < 0 ? "ambiguous" : "no", key, path);
	} else if (threads_key && !has_context(p, (tk_event_id)e)) {
		rc = tk_cli_fail("%s: record %s has no thread snapshot (only tracekit's hang records have one)", path,
		                 tk_string(p, tk_event_get(p, (tk_event_id)e)->key));
	} else if (name_frames(&p, threads_key ? NO_SYMBOLS : flags & NO_SYMBOLS, &err) < 0) {
		rc = tk_cli_fail("%s", err.msg);
	} else if (threads_key) {
		rc = show_threads(p, (tk_event_id)e);
	} else if (key) {
		tk_thread_id t = tk_event_get(p, (tk_event_id)e)->thread;
		rc = tree_key ? show_tree(p, t, min_percent) : show_folded(p, t);
	} else {
		rc = list(p, json, use_utc);
	}
	if (rc)
		tk_outfile_abort(&of);
	else if (tk_outfile_commit(&of, &err) < 0)
		rc = tk_cli_fail("records: %s", err.msg);
	print_warnings();
	tk_profile_free(p);
#ifdef TK_HAVE_SYMBOL
	tk_symbolicator_free(sym.s);
	tk_elf_namer_free(sym.elf);
#endif
	free(sym.paths);
	return rc;
}
