/* tracekit tree — an Instruments-style call tree (text or JSON). */
#include <string.h>

#include "analysis.h"
#include "tracekit/calltree.h"
#include "tracekit/write.h"

TK_COMMAND(tree, "call tree per thread, like Instruments' Call Tree (text or JSON)")

enum { OPT_BY = 1, OPT_INVERT, OPT_MIN_PERCENT, OPT_MAX_DEPTH, OPT_JSON };

static const tk_cli_option options[] = {
    TK_OPT_SECTION("tree options"),
    TK_OPT_VALUE(OPT_BY, "--by", NULL, "thread|process|all",
                 "one tree per thread (default), per process, or one for all"),
    TK_OPT_FLAG(OPT_INVERT, "--invert", NULL, "bottom-up: leaf functions first, their callers below"),
    TK_OPT_VALUE(OPT_MIN_PERCENT, "--min-percent", NULL, "P",
                 "hide callees below P% of their thread, folded into \"(other)\""),
    TK_OPT_VALUE(OPT_MAX_DEPTH, "--max-depth", NULL, "N", "show N levels; deeper callees are folded into \"(other)\""),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL, "JSON (schema: docs/json-tree.md)"),
    TK_OPT_INCLUDE(tk_analysis_options),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_tree = {
    .name = "tree",
    .usage = "tracekit tree [options] FILE",
    .about = "Prints the call tree of each thread: total and self weight (ms for time profiles, else the\n"
             "recorded unit: cycles, events), percent of the thread, symbol and binary. total = self + the\n"
             "children's totals on every row; samples without a stack show as \"(no stack)\".\n",
    .options = options,
};

typedef struct tree_args {
	tk_analysis a;
	tk_calltree_options co;
	double min_percent;
	uint32_t max_depth;
	int json;
} tree_args;

static int tree_option(void *ctx, const tk_cli_option *o, const char *val, const char *spelling)
{
	tree_args *t = ctx;
	switch (o->id) {
	case OPT_INVERT: t->co.invert = 1; return 0;
	case OPT_JSON: t->json = 1; return 0;
	case OPT_BY:
		if (strcmp(val, "thread") == 0)
			t->co.group = TK_GROUP_THREAD;
		else if (strcmp(val, "process") == 0)
			t->co.group = TK_GROUP_PROCESS;
		else if (strcmp(val, "all") == 0)
			t->co.group = TK_GROUP_ALL;
		else
			return tk_cli_fail("tree: --by '%s': expected thread, process or all", val), -1;
		return 0;
	case OPT_MIN_PERCENT: return tk_cli_percent("tree", "--min-percent", val, &t->min_percent);
	case OPT_MAX_DEPTH: return tk_cli_uint("tree", "--max-depth", val, &t->max_depth);
	}
	return tk_analysis_handle(&t->a, o, val, spelling);
}

int cmd_tree(int argc, char **argv)
{
	tree_args args = {0};
	tk_analysis_init(&args.a, "tree");
	tk_calltree_options_init(&args.co);
	int rc = tk_cli_parse(&tk_cli_command_tree, argc, argv, 1, tree_option, &args, NULL);
	tk_analysis a = args.a;
	tk_calltree_options co = args.co;
	double min_percent = args.min_percent;
	uint32_t max_depth = args.max_depth;
	int json = args.json;
	if (!tk_analysis_ready(&a, &rc))
		goto out;
	tk_profile *p = tk_analysis_load(&a);
	if (!p)
		goto out;
	tk_error err = {{0}};
	tk_calltree *t = tk_calltree_build(p, &co, &err);
	if (t && tk_calltree_prune(t, min_percent, max_depth, &err) < 0) {
		tk_calltree_free(t);
		t = NULL;
	}
	if (!t) {
		tk_cli_fail("tree: %s", err.msg);
	} else if (tk_analysis_open_output(&a)) {
		int w = json ? tk_write_tree_json(a.out, t, &err) : tk_write_tree_text(a.out, t, &err);
		if (w < 0)
			tk_cli_fail("tree: %s", err.msg);
		rc = tk_analysis_close_output(&a, w < 0);
	}
	tk_calltree_free(t);
	tk_profile_free(p);
out:
	tk_analysis_free(&a);
	return rc;
}
