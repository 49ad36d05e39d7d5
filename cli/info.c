/* tracekit info — what an export holds: schema, unit, stack form, threads and their weights; or a toc's runs. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "tracekit/toc.h"
#include "util/text.h"

TK_COMMAND(info, "describe an export (schema, threads, weights) or a --toc document")

enum { OPT_JSON = 1, OPT_TOKENIZER, OPT_OUTPUT, OPT_FILE };

static const tk_cli_option options[] = {
    TK_OPT_OPERAND(OPT_FILE, "FILE", "the input, or - for standard input"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL, "machine-readable output"),
    TK_OPT_VALUE(OPT_TOKENIZER, "--tokenizer", NULL, "fast|libxml2",
                 "XML tokenizer: fast (default) or libxml2 (the reference)"),
    TK_OPT_INCLUDE(tk_read_options_table),
    TK_OPT_VALUE(OPT_OUTPUT, "--output", "-o", "OUT", "write there (whole or not at all) instead of standard output"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_info = {
    .name = "info",
    .usage =
        "tracekit info [--json] [--tokenizer=fast|libxml2] [--event NAME] [--weight samples|period] [--keep-going]\n"
        "              [--run 1|2] [-o OUT] FILE",
    .about = "Describes an `xctrace export` document, or any other input tracekit reads (Records, Deep\n"
             "Copy, `sample`, `perf script`, folded stacks). FILE may be - for standard input; gzip'd input\n"
             "is accepted.\n\n"
             "For a table export (--xpath): schema, unit, stack encoding and Xcode form, whether frames are\n"
             "symbolicated, time span, rows, and every process and thread with its sample count and weight\n"
             "(ms for time profiles, otherwise in the table's unit, with % of the total), heaviest first.\n"
             "For a table of contents (--toc): runs, device, processes, template, duration and tables with\n"
             "their recording attributes. Environment variables recorded in the toc are never shown.\n",
    .options = options,
    .column = 25,
};

typedef struct info_args {
	int json;
	const char *file, *output;
	tk_read_options o;
} info_args;

static int info_option(void *ctx, const tk_cli_option *o, const char *val, const char *spelling)
{
	info_args *t = ctx;
	switch (o->id) {
	case OPT_JSON: t->json = 1; return 0;
	case OPT_TOKENIZER:
		if (strcmp(val, "fast") == 0)
			t->o.tokenizer = TK_READ_TOKENIZER_FAST;
		else if (strcmp(val, "libxml2") == 0)
			t->o.tokenizer = TK_READ_TOKENIZER_LIBXML2;
		else
			return tk_cli_usage("info", "--tokenizer '%s': expected fast or libxml2", val), -1;
		return 0;
	case OPT_OUTPUT: t->output = val; return 0;
	case OPT_FILE:
		if (t->file && strcmp(spelling, "--") == 0) /* FILE -- X: "--" is then no separator */
			return tk_cli_usage("info", "unknown option '--'"), -1;
		if (t->file)
			return tk_cli_usage("info", "more than one FILE given"), -1;
		t->file = val;
		return 0;
	}
	return tk_cli_read_handle("info", &t->o, o, val, spelling);
}

/* Where the report goes: standard output or -o's temporary file (util/outfile.h). */
static FILE *out;

/* ---- table exports ---- */

/* in = NULL: read path with tk_read_path (a monitor session directory is not one stream). */
static int info_table(tk_input *in, const char *path, const tk_read_options *o, int json)
{
	tk_profile *p = tk_profile_new();
	tk_error err;
	int rc = in ? tk_read_input(p, in, o, &err) : tk_read_path(p, path, o, &err);
	tk_cli_progress_done();
	if (rc < 0) {
		tk_profile_free(p);
		return tk_cli_fail("%s", err.msg);
	}
	rc = json ? tk_write_info_json(out, p, path, &err) : tk_write_info_text(out, p, path, &err);
	tk_profile_free(p);
	return rc < 0 ? tk_cli_fail("%s", err.msg) : 0;
}

/* ---- tocs ---- */

static int info_toc(tk_input *in, const char *path, int json)
{
	tk_error err;
	tk_toc *toc = tk_toc_read(in, &err);
	if (!toc)
		return tk_cli_fail("%s", err.msg);
	int rc = json ? tk_write_toc_json(out, toc, path, &err) : tk_write_toc_text(out, toc, path, &err);
	tk_toc_free(toc);
	return rc < 0 ? tk_cli_fail("%s", err.msg) : 0;
}

int cmd_info(int argc, char **argv)
{
	info_args t = {0};
	tk_read_options_init(&t.o);
	t.o.progress = tk_cli_progress;
	t.o.warn = tk_cli_read_warn;
	t.o.warn_ctx = (void *)"info";
	int r = tk_cli_parse(&tk_cli_command_info, argc, argv, 1, info_option, &t, NULL);
	if (r)
		return r < 0 ? 0 : r;
	int json = t.json;
	const char *file = t.file, *output = t.output;
	tk_read_options o = t.o;
	if (!file)
		return tk_cli_usage("info", "no input file (use - for standard input)");
	tk_error err;
	tk_outfile of;
	if (tk_outfile_open(&of, output, &err) < 0)
		return tk_cli_fail("info: %s", err.msg);
	out = of.f;
	int rc;
	/* A toc and a table are told apart by their root element, which is in the first bytes. */
	struct stat st;
	if (strcmp(file, "-") != 0 && stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = info_table(NULL, file, &o, json);
	} else {
		tk_input *in = tk_input_open(file, &err);
		if (!in) {
			rc = tk_cli_fail("%s", err.msg);
		} else {
			size_t hn;
			const unsigned char *head = tk_input_head(in, &hn);
			const char *disp = strcmp(file, "-") == 0 ? "<stdin>" : file;
			rc = memmem(head, hn, "<trace-toc", 10) ? info_toc(in, disp, json)
			                                        : info_table(in, disp, &o, json);
			tk_input_close(in);
		}
	}
	if (rc) {
		tk_outfile_abort(&of);
		return rc;
	}
	if (tk_outfile_commit(&of, &err) < 0)
		return tk_cli_fail("info: %s", err.msg);
	return 0;
}
