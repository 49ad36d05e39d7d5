/* tracekit flame — the short form of `tracekit convert --to svg`. */
#include <string.h>

#include "analysis.h"
#include "convert.h"
#include "tracekit/write.h"

TK_COMMAND(flame, "an interactive SVG flame graph (convert --to svg)")

static void usage(void)
{
	printf("usage: tracekit flame [options] FILE [-o flame.svg]\n\n"
	       "Writes a self-contained, interactive SVG flame graph (click to zoom, search, tooltips) that\n"
	       "opens in any browser without network. One graph per thread, stacked, unless --merge-threads.\n"
	       "Frames of the app are warm colours, system libraries cool ones. The same as\n"
	       "`tracekit convert --to svg`.\n\n"
	       "flame options:\n%s\n%s",
	       TK_CONVERT_HELP, TK_ANALYSIS_HELP);
}

int cmd_flame(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv))
		return usage(), 0;
	tk_analysis a;
	tk_analysis_init(&a, "flame");
	tk_convert_options co;
	tk_convert_options_init(&co);
	int rc = 2; /* a usage error until the options are checked */
	for (int i = 1; i < argc;) {
		int r;
		if ((r = tk_convert_option("flame", &co, argc, argv, &i)) != 0 ||
		    (r = tk_analysis_option(&a, argc, argv, &i)) != 0) {
			if (r < 0)
				goto out;
		} else {
			tk_cli_fail("flame: unknown option '%s' (see tracekit flame --help)", argv[i]);
			goto out;
		}
	}
	if (tk_analysis_check(&a))
		goto out;
	rc = 1;
	const tk_writer *w = tk_writer_find("svg");
	if (!w) {
		tk_cli_fail("flame: this build has no svg writer");
		goto out;
	}
	rc = tk_convert_run(&a, w, &co);
out:
	tk_analysis_free(&a);
	return rc;
}
