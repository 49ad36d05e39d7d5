/* tracekit tree — an Instruments-style call tree (text or JSON). */
#include <string.h>

#include "analysis.h"
#include "tracekit/calltree.h"
#include "tracekit/write.h"

TK_COMMAND(tree, "call tree per thread, like Instruments' Call Tree (text or JSON)")

static void usage(void)
{
	printf("usage: tracekit tree [options] FILE\n\n"
	       "Prints the call tree of each thread: total and self weight (ms for time profiles, else the\n"
	       "recorded unit: cycles, events), percent of the thread, symbol and binary. total = self + the\n"
	       "children's totals on every row; samples without a stack show as \"(no stack)\".\n\n"
	       "tree options:\n"
	       "  --by thread|process|all   one tree per thread (default), per process, or one for all\n"
	       "  --invert              bottom-up: leaf functions first, their callers below\n"
	       "  --min-percent P       hide callees below P%% of their thread, folded into \"(other)\"\n"
	       "  --max-depth N         show N levels; deeper callees are folded into \"(other)\"\n"
	       "  --json                JSON (schema: docs/json-tree.md)\n\n%s",
	       TK_ANALYSIS_HELP);
}

int cmd_tree(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv))
		return usage(), 0;
	tk_analysis a;
	tk_analysis_init(&a, "tree");
	tk_calltree_options co;
	tk_calltree_options_init(&co);
	double min_percent = 0;
	uint32_t max_depth = 0;
	int json = 0, rc = 2; /* a usage error until the options are parsed */
	for (int i = 1; i < argc;) {
		const char *val;
		int r;
		if (strcmp(argv[i], "--invert") == 0) {
			co.invert = 1, i++;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = 1, i++;
		} else if ((r = tk_cli_opt("tree", argc, argv, &i, "--by", NULL, &val)) != 0) {
			if (r < 0)
				goto out;
			if (strcmp(val, "thread") == 0)
				co.group = TK_GROUP_THREAD;
			else if (strcmp(val, "process") == 0)
				co.group = TK_GROUP_PROCESS;
			else if (strcmp(val, "all") == 0)
				co.group = TK_GROUP_ALL;
			else {
				tk_cli_fail("tree: --by '%s': expected thread, process or all", val);
				goto out;
			}
		} else if ((r = tk_cli_opt("tree", argc, argv, &i, "--min-percent", NULL, &val)) != 0) {
			if (r < 0 || tk_cli_percent("tree", "--min-percent", val, &min_percent) < 0)
				goto out;
		} else if ((r = tk_cli_opt("tree", argc, argv, &i, "--max-depth", NULL, &val)) != 0) {
			if (r < 0 || tk_cli_uint("tree", "--max-depth", val, &max_depth) < 0)
				goto out;
		} else if ((r = tk_analysis_option(&a, argc, argv, &i)) != 0) {
			if (r < 0)
				goto out;
		} else {
			tk_cli_fail("tree: unknown option '%s' (see tracekit tree --help)", argv[i]);
			goto out;
		}
	}
	if (tk_analysis_check(&a))
		goto out;
	rc = 1;
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
