/* tracekit collapse — folded stacks for flamegraph.pl, inferno-flamegraph and speedscope. */
#include <string.h>

#include "analysis.h"
#include "tracekit/write.h"

TK_COMMAND(collapse, "folded stacks (FlameGraph format) for flame graphs")

static void usage(void)
{
	printf("usage: tracekit collapse [options] FILE\n\n"
	       "Writes one line per distinct (thread, call stack): frames root first separated by ';', a\n"
	       "space and the summed weight as an integer in the input's unit (ns for time profiles,\n"
	       "cycles, events). The first frame is the thread, \"NAME tid=TID\". A frame is its symbol, or\n"
	       "0x + hex address when unsymbolicated. Samples without a stack are the thread frame alone.\n"
	       "Feed it to flamegraph.pl, inferno-flamegraph or speedscope.\n\n"
	       "collapse options:\n"
	       "  --no-thread           merge all threads and leave the thread frame out; samples without a\n"
	       "                        stack then become the single frame \"(no stack)\"\n\n%s",
	       TK_ANALYSIS_HELP);
}

int cmd_collapse(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv))
		return usage(), 0;
	tk_analysis a;
	tk_analysis_init(&a, "collapse");
	tk_folded_options fo = {0};
	int rc = 2; /* a usage error until the options are parsed */
	for (int i = 1; i < argc;) {
		int r;
		if (strcmp(argv[i], "--no-thread") == 0) {
			fo.no_thread = 1, i++;
		} else if ((r = tk_analysis_option(&a, argc, argv, &i)) != 0) {
			if (r < 0)
				goto out;
		} else {
			tk_cli_fail("collapse: unknown option '%s' (see tracekit collapse --help)", argv[i]);
			goto out;
		}
	}
	if (tk_analysis_check(&a))
		goto out;
	rc = 1;
	tk_profile *p = tk_analysis_load(&a);
	if (!p)
		goto out;
	if (tk_analysis_open_output(&a)) {
		tk_error err = {{0}};
		int w = tk_write_folded(a.out, p, &fo, &err);
		if (w < 0)
			tk_cli_fail("collapse: %s", err.msg);
		rc = tk_analysis_close_output(&a, w < 0);
	}
	tk_profile_free(p);
out:
	tk_analysis_free(&a);
	return rc;
}
