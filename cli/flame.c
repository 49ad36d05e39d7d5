/* tracekit flame — the short form of `tracekit convert --to svg`. */
#include <string.h>

#include "analysis.h"
#include "convert.h"
#include "tracekit/write.h"

TK_COMMAND(flame, "an interactive SVG flame graph (convert --to svg)")

static const tk_cli_option options[] = {
    TK_OPT_SECTION("flame options"),
    TK_OPT_INCLUDE(tk_convert_options_table),
    TK_OPT_INCLUDE(tk_analysis_options),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_flame = {
    .name = "flame",
    .usage = "tracekit flame [options] FILE [-o flame.svg]",
    .about = "Writes a self-contained, interactive SVG flame graph (click to zoom, search, tooltips) that\n"
             "opens in any browser without network. One graph per thread, stacked, unless --merge-threads.\n"
             "Frames of the app are warm colours, system libraries cool ones. The same as\n"
             "`tracekit convert --to svg`.\n",
    .options = options,
};

typedef struct flame_args {
	tk_analysis a;
	tk_convert_options co;
} flame_args;

static int flame_option(void *ctx, const tk_cli_option *o, const char *val, const char *spelling)
{
	flame_args *f = ctx;
	int r = tk_convert_handle("flame", &f->co, o, val);
	return r <= 0 ? r : tk_analysis_handle(&f->a, o, val, spelling);
}

int cmd_flame(int argc, char **argv)
{
	flame_args f;
	tk_analysis_init(&f.a, "flame");
	tk_convert_options_init(&f.co);
	int rc = tk_cli_parse(&tk_cli_command_flame, argc, argv, 1, flame_option, &f, NULL);
	if (!tk_analysis_ready(&f.a, &rc))
		goto out;
	const tk_writer *w = tk_writer_find("svg");
	if (!w) {
		tk_cli_fail("flame: this build has no svg writer");
		goto out;
	}
	rc = tk_convert_run(&f.a, w, &f.co);
out:
	tk_analysis_free(&f.a);
	return rc;
}
