/* tracekit convert — one profile out in a viewer's format, over the table in lib/write/formats.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "convert.h"
#include "tracekit/write.h"
#include "util/mem.h"

TK_COMMAND(convert, "write a profile for a viewer: Firefox Profiler, speedscope, pprof, SVG flame graph …")

enum { OPT_TO = 1 };

/* The formats, for --help and docs/cli.md: from the writer table (lib/write/formats.c). */
static const char *formats_text(void)
{
	static char text[2048] = "formats (--to NAME, or chosen by OUT's extension):\n";
	static size_t len;
	if (len)
		return text;
	size_t n;
	len = strlen(text);
	const tk_writer *w = tk_writers(&n);
	for (size_t i = 0; i < n && len < sizeof text; i++) {
		int k = snprintf(text + len, sizeof text - len, "  %-12s %s  [%s]\n", w[i].name, w[i].description,
		                 w[i].extensions);
		len += k > 0 ? (size_t)k : 0;
	}
	return text;
}

static const tk_cli_option options[] = {
    TK_OPT_SECTION("convert options"),
    TK_OPT_VALUE(OPT_TO, "--to", NULL, "FORMAT", "the output format (see formats below)"),
    TK_OPT_INCLUDE(tk_convert_options_table),
    TK_OPT_INCLUDE(tk_analysis_options),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_convert = {
    .name = "convert",
    .usage = "tracekit convert [options] FILE… --to FORMAT [-o OUT]",
    .about = "Writes the profile in FILE in another format. The format is --to, else the one whose\n"
             "extension ends OUT (flame.svg, run.speedscope.json, cpu.pb.gz …). Without -o the result goes\n"
             "to standard output, except binary formats (pprof), which are never written to a terminal.\n\n"
             "Several FILEs are converted one at a time, never merged (two traces have unrelated clocks\n"
             "and may reuse pids and tids): each FILE becomes BASE.EXT, where BASE is its name without\n"
             ".gz and its last extension and EXT the format's first extension, written beside FILE, or\n"
             "into the directory -o names. --to is then required. A file that fails is reported and the\n"
             "others are still converted (exit status 1 if any failed).\n",
    .options = options,
    .table = formats_text,
};

const tk_cli_option tk_convert_options_table[] = {
    TK_OPT_VALUE(TK_CV_TITLE, "--title", NULL, "TEXT", "the title viewers show (default: the input's file name)"),
    TK_OPT_FLAG(TK_CV_MERGE_THREADS, "--merge-threads", NULL,
                "one merged flame graph / stack set instead of one per thread (svg, folded, json)"),
    TK_OPT_FLAG(TK_CV_ICICLE, "--icicle", "--invert",
                "svg: an icicle graph (roots at the top); json: the bottom-up tree"),
    TK_OPT_VALUE(TK_CV_MIN_WIDTH, "--min-width", NULL, "PX",
                 "svg: leave out frames narrower than PX pixels (default 0.1)"),
    TK_OPT_VALUE(TK_CV_MAX_FRAMES, "--max-frames", NULL, "N",
                 "svg: at most N frames, the lightest left out first (default 20000, ~5 MB)"),
    TK_OPT_END,
};

int tk_convert_handle(const char *cmd, tk_convert_options *co, const tk_cli_option *o, const char *val)
{
	switch (o->id) {
	case TK_CV_MERGE_THREADS: co->merge_threads = 1; return 0;
	case TK_CV_ICICLE: co->inverted = 1; return 0;
	case TK_CV_TITLE: co->title = val; return 0;
	case TK_CV_MAX_FRAMES: {
		uint32_t n;
		if (tk_cli_uint(cmd, "--max-frames", val, &n) < 0)
			return -1;
		co->max_frames = n;
		return 0;
	}
	case TK_CV_MIN_WIDTH: {
		char *end;
		errno = 0;
		double v = strtod(val, &end);
		if (!*val || *end || errno || !(v >= 0 && v <= 10000))
			return tk_cli_fail("%s: --min-width '%s': expected pixels from 0 to 10000", cmd, val), -1;
		co->min_width = v;
		return 0;
	}
	}
	return 1;
}

/* "dir/run.xml.gz" -> "run": the name without directories, ".gz" and the last extension. */
static char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *b = slash ? slash + 1 : path;
	size_t n = strlen(b);
	if (n > 3 && strcmp(b + n - 3, ".gz") == 0)
		n -= 3;
	for (size_t k = n; k-- > 1;)
		if (b[k] == '.') {
			n = k;
			break;
		}
	char *s = tk_xmalloc(n + 1);
	memcpy(s, b, n);
	s[n] = 0;
	return s;
}

/* The first of the writer's extensions. */
static size_t first_ext(const tk_writer *w, const char **e)
{
	*e = w->extensions;
	const char *sp = strchr(w->extensions, ' ');
	return sp ? (size_t)(sp - w->extensions) : strlen(w->extensions);
}

int tk_convert_run(tk_analysis *a, const tk_writer *w, const tk_convert_options *co)
{
	int to_stdout = !a->output || strcmp(a->output, "-") == 0;
	if (w->binary && to_stdout && isatty(STDOUT_FILENO))
		return tk_cli_fail("%s: %s is binary: not writing it to a terminal (use -o FILE or a pipe)", a->cmd,
		                   w->name);
	/* The Firefox Profiler's Stack Chart is a timeline: keep every sample in time order for it. */
	int gecko = strcmp(w->name, "gecko") == 0;
	if (gecko)
		a->keep_samples = 1;
	tk_profile *p = tk_analysis_load(a);
	if (!p)
		return 1;
	tk_convert_options o = *co;
	if (!o.title) {
		const char *slash = strrchr(a->input, '/');
		o.title = strcmp(a->input, "-") == 0 ? "standard input" : slash ? slash + 1 : a->input;
	}
	o.input = a->input;
	o.binary_ok = !(to_stdout && isatty(STDOUT_FILENO));
	int rc = 1;
	if (tk_analysis_open_output(a)) {
		tk_error err = {{0}};
		int wr = w->write(a->out, p, &o, &err);
		if (wr < 0)
			tk_cli_fail("%s: %s: %s", a->cmd, a->input, err.msg);
		rc = tk_analysis_close_output(a, wr < 0);
	}
	tk_profile_free(p);
	return rc;
}

typedef struct convert_args {
	tk_analysis a;
	tk_convert_options co;
	const char *to;
	const char **inputs;
	size_t ninputs, capinputs;
} convert_args;

static int convert_option(void *ctx, const tk_cli_option *o, const char *val, const char *spelling)
{
	convert_args *c = ctx;
	int r;
	if (o->id == OPT_TO) {
		c->to = val;
		return 0;
	}
	if (o->id == TK_AN_INPUT) { /* several inputs, each converted on its own */
		TK_GROW(c->inputs, c->capinputs, c->ninputs + 1);
		c->inputs[c->ninputs++] = val;
		return 0;
	}
	if ((r = tk_convert_handle("convert", &c->co, o, val)) <= 0)
		return r;
	return tk_analysis_handle(&c->a, o, val, spelling);
}

int cmd_convert(int argc, char **argv)
{
	convert_args c = {0};
	tk_analysis_init(&c.a, "convert");
	tk_convert_options_init(&c.co);
	int rc = tk_cli_parse(&tk_cli_command_convert, argc, argv, 1, convert_option, &c, NULL);
	tk_analysis a = c.a;
	tk_convert_options co = c.co;
	const char *to = c.to;
	const char **inputs = c.inputs;
	size_t ninputs = c.ninputs;
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	rc = 2; /* a usage error until the options are checked */
	if (!ninputs) {
		tk_cli_fail("convert: no input file (use - for standard input; see tracekit convert --help)");
		goto out;
	}
	const tk_writer *w = NULL;
	if (to) {
		if (!(w = tk_writer_find(to))) {
			size_t n;
			const tk_writer *all = tk_writers(&n);
			char names[256] = "";
			for (size_t k = 0; k < n; k++)
				snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "",
				         all[k].name);
			tk_cli_fail("convert: --to '%s': unknown format (known: %s)", to, names);
			goto out;
		}
	} else if (ninputs > 1) {
		tk_cli_fail("convert: several inputs need --to FORMAT");
		goto out;
	} else if (!a.output || strcmp(a.output, "-") == 0) {
		tk_cli_fail("convert: no format: give --to FORMAT, or -o OUT with a known extension");
		goto out;
	} else if (!(w = tk_writer_for_path(a.output))) {
		tk_cli_fail("convert: %s: extension names no format; give --to FORMAT (see tracekit convert --help)",
		            a.output);
		goto out;
	}
	if (ninputs == 1) {
		a.input = inputs[0];
		if (tk_analysis_check(&a))
			goto out;
		rc = tk_convert_run(&a, w, &co);
		goto out;
	}
	/* Several inputs: -o is a directory (or absent: beside each input). */
	const char *dir = a.output;
	struct stat st;
	if (dir && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
		tk_cli_fail("convert: with several inputs -o must name an existing directory ('%s' is not one)", dir);
		goto out;
	}
	rc = 0;
	for (size_t k = 0; k < ninputs; k++) {
		if (strcmp(inputs[k], "-") == 0) {
			rc = tk_cli_fail("convert: standard input cannot be one of several inputs");
			continue;
		}
		char *base = base_name(inputs[k]);
		const char *ext;
		size_t elen = first_ext(w, &ext);
		const char *d = dir;
		size_t dlen = d ? strlen(d) : 0;
		if (!d) {
			const char *slash = strrchr(inputs[k], '/');
			d = inputs[k];
			dlen = slash ? (size_t)(slash - inputs[k]) : 0;
		}
		char *outp = tk_xmalloc(dlen + strlen(base) + elen + 3);
		sprintf(outp, "%.*s%s%s%.*s", (int)dlen, d, dlen ? "/" : "", base, (int)elen, ext);
		a.input = inputs[k];
		a.output = outp;
		if (tk_analysis_check(&a) || tk_convert_run(&a, w, &co))
			rc = 1;
		else
			fprintf(stderr, "%s -> %s\n", inputs[k], outp);
		free(outp);
		free(base);
	}
	a.output = NULL;
out:
	free(inputs);
	tk_analysis_free(&a);
	return rc;
}
