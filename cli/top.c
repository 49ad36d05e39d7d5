/* tracekit top — the flat list of functions by self or total weight. */
#include <string.h>

#include "analysis.h"
#include "tracekit/calltree.h"
#include "tracekit/write.h"

TK_COMMAND(top, "top functions by self or total weight (Instruments' Top Functions)")

static void usage(void)
{
	printf("usage: tracekit top [options] FILE\n\n"
	       "Lists functions over all selected threads with self weight (time as the leaf), total weight\n"
	       "(time on the stack, counted once per sample, so recursion never exceeds 100%%), their\n"
	       "percentages of the whole, the number of samples on the stack, the symbol and its binary.\n\n"
	       "top options:\n"
	       "  --sort self|total     order by self (default) or total weight\n"
	       "  --limit N             show the first N functions (default 50 for text, all for JSON; 0 = all)\n"
	       "  --json                JSON: {unit, total, samples, count, functions: [{name, binary?, self,\n"
	       "                        total, self_samples, samples}]}\n\n%s",
	       TK_ANALYSIS_HELP);
}

int cmd_top(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv))
		return usage(), 0;
	tk_analysis a;
	tk_analysis_init(&a, "top");
	tk_top_sort sort = TK_TOP_BY_SELF;
	uint32_t limit = 50;
	int json = 0, have_limit = 0, rc = 2; /* a usage error until the options are parsed */
	for (int i = 1; i < argc;) {
		const char *val;
		int r;
		if (strcmp(argv[i], "--json") == 0) {
			json = 1, i++;
		} else if ((r = tk_cli_opt("top", argc, argv, &i, "--sort", NULL, &val)) != 0) {
			if (r < 0)
				goto out;
			if (strcmp(val, "self") == 0)
				sort = TK_TOP_BY_SELF;
			else if (strcmp(val, "total") == 0)
				sort = TK_TOP_BY_TOTAL;
			else {
				tk_cli_fail("top: --sort '%s': expected self or total", val);
				goto out;
			}
		} else if ((r = tk_cli_opt("top", argc, argv, &i, "--limit", NULL, &val)) != 0) {
			if (r < 0 || tk_cli_uint("top", "--limit", val, &limit) < 0)
				goto out;
			have_limit = 1;
		} else if ((r = tk_analysis_option(&a, argc, argv, &i)) != 0) {
			if (r < 0)
				goto out;
		} else {
			tk_cli_fail("top: unknown option '%s' (see tracekit top --help)", argv[i]);
			goto out;
		}
	}
	if (json && !have_limit)
		limit = 0;
	if (tk_analysis_check(&a))
		goto out;
	rc = 1;
	tk_profile *p = tk_analysis_load(&a);
	if (!p)
		goto out;
	tk_error err = {{0}};
	tk_top *top = tk_top_build(p, sort, &err);
	if (!top) {
		tk_cli_fail("top: %s", err.msg);
	} else if (tk_analysis_open_output(&a)) {
		int w = json ? tk_write_top_json(a.out, top, limit, &err) : tk_write_top_text(a.out, top, limit, &err);
		if (w < 0)
			tk_cli_fail("top: %s", err.msg);
		rc = tk_analysis_close_output(&a, w < 0);
	}
	tk_top_free(top);
	tk_profile_free(p);
out:
	tk_analysis_free(&a);
	return rc;
}
