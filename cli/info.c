/* tracekit info — what an export holds: schema, unit, stack form, threads and their weights; or a toc's runs. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "tracekit/toc.h"
#include "util/text.h"

TK_COMMAND(info, "describe an export (schema, threads, weights) or a --toc document")

static void usage(FILE *f)
{
	fprintf(f, "usage: tracekit info [--json] [--tokenizer=fast|libxml2] [--event NAME] [--weight samples|period] [--keep-going] [--run 1|2] [-o OUT] FILE\n\n"
	           "Describes an `xctrace export` document, or any other input tracekit reads (Records, Deep\n"
	           "Copy, `sample`, `perf script`, folded stacks). FILE may be - for standard input; gzip'd input\n"
	           "is accepted.\n\n"
	           "For a table export (--xpath): schema, unit, stack encoding and Xcode form, whether frames are\n"
	           "symbolicated, time span, rows, and every process and thread with its sample count and weight\n"
	           "(ms for time profiles, otherwise in the table's unit, with %% of the total), heaviest first.\n"
	           "For a table of contents (--toc): runs, device, processes, template, duration and tables with\n"
	           "their recording attributes. Environment variables recorded in the toc are never shown.\n\n"
	           "  --json                 machine-readable output\n"
	           "  --tokenizer=NAME       XML tokenizer: fast (default) or libxml2 (the reference)\n"
	           "%s"
	           "  --keep-going           folded stacks: skip lines that fit no rule (counted, with a warning)\n"
	           "  --run 1|2              differential folded stacks: the first or second count (default 2)\n"
	           "  -o, --output OUT       write there (whole or not at all) instead of standard output\n",
	        TK_READ_OPTIONS_HELP);
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
	if (tk_cli_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	int json = 0;
	const char *file = NULL, *output = NULL, *val;
	tk_read_options o;
	tk_read_options_init(&o);
	o.progress = tk_cli_progress;
	o.warn = tk_cli_read_warn;
	o.warn_ctx = (void *)"info";
	for (int i = 1; i < argc;) {
		const char *a = argv[i];
		int r;
		if (strcmp(a, "--json") == 0) {
			json = 1, i++;
		} else if ((r = tk_cli_read_option("info", argc, argv, &i, &o)) != 0) {
			if (r < 0)
				return 2;
		} else if ((r = tk_cli_opt("info", argc, argv, &i, "--tokenizer", NULL, &val)) != 0) {
			if (r < 0)
				return 2;
			if (strcmp(val, "fast") == 0)
				o.tokenizer = TK_READ_TOKENIZER_FAST;
			else if (strcmp(val, "libxml2") == 0)
				o.tokenizer = TK_READ_TOKENIZER_LIBXML2;
			else
				return tk_cli_usage("info", "--tokenizer '%s': expected fast or libxml2", val);
		} else if ((r = tk_cli_opt("info", argc, argv, &i, "--output", "-o", &val)) != 0) {
			if (r < 0)
				return 2;
			output = val;
		} else if (strcmp(a, "--") == 0 && i + 1 < argc && !file) {
			file = argv[i + 1], i += 2;
		} else if (a[0] == '-' && a[1]) {
			return tk_cli_usage("info", "unknown option '%s'", a);
		} else if (!file) {
			file = a, i++;
		} else {
			return tk_cli_usage("info", "more than one FILE given");
		}
	}
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
