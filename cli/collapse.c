/* tracekit collapse — folded stacks for flamegraph.pl, inferno-flamegraph and speedscope. */
#include <string.h>

#include "analysis.h"
#include "tracekit/write.h"

TK_COMMAND(collapse, "folded stacks (FlameGraph format) for flame graphs")

enum { OPT_NO_THREAD = 1 };

static const tk_cli_option options[] = {
    TK_OPT_SECTION("collapse options"),
    TK_OPT_FLAG(
        OPT_NO_THREAD, "--no-thread", NULL,
        "merge all threads and leave the thread frame out; samples without a stack then become the single frame "
        "\"(no stack)\""),
    TK_OPT_INCLUDE(tk_analysis_options),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_collapse = {
    .name = "collapse",
    .usage = "tracekit collapse [options] FILE",
    .about = "Writes one line per distinct (thread, call stack): frames root first separated by ';', a\n"
             "space and the summed weight as an integer in the input's unit (ns for time profiles,\n"
             "cycles, events). The first frame is the thread, \"NAME tid=TID\". A frame is its symbol, or\n"
             "0x + hex address when unsymbolicated. Samples without a stack are the thread frame alone.\n"
             "Feed it to flamegraph.pl, inferno-flamegraph or speedscope.\n",
    .options = options,
};

typedef struct collapse_args {
	tk_analysis a;
	tk_folded_options fo;
} collapse_args;

static int collapse_option(void *ctx, const tk_cli_option *o, const char *val, const char *spelling)
{
	collapse_args *c = ctx;
	if (o->id == OPT_NO_THREAD)
		return c->fo.no_thread = 1, 0;
	return tk_analysis_handle(&c->a, o, val, spelling);
}

int cmd_collapse(int argc, char **argv)
{
	collapse_args c = {0};
	tk_analysis_init(&c.a, "collapse");
	int rc = tk_cli_parse(&tk_cli_command_collapse, argc, argv, 1, collapse_option, &c, NULL);
	tk_analysis a = c.a;
	tk_folded_options fo = c.fo;
	if (!tk_analysis_ready(&a, &rc))
		goto out;
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
