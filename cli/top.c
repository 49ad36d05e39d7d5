/* tracekit top — the flat list of functions by self or total weight. */
#include <string.h>

#include "analysis.h"
#include "tracekit/calltree.h"
#include "tracekit/write.h"

TK_COMMAND(top, "top functions by self or total weight (Instruments' Top Functions)")

enum { OPT_SORT = 1, OPT_LIMIT, OPT_JSON };

static const tk_cli_option options[] = {
    TK_OPT_SECTION("top options"),
    TK_OPT_VALUE(OPT_SORT, "--sort", NULL, "self|total", "order by self (default) or total weight"),
    TK_OPT_VALUE(OPT_LIMIT, "--limit", NULL, "N",
                 "show the first N functions (default 50 for text, all for JSON; 0 = all)"),
    TK_OPT_FLAG(
        OPT_JSON, "--json", NULL,
        "JSON: {unit, total, samples, count, functions: [{name, binary?, self, total, self_samples, samples}]}"),
    TK_OPT_INCLUDE(tk_analysis_options),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_top = {
    .name = "top",
    .usage = "tracekit top [options] FILE",
    .about = "Lists functions over all selected threads with self weight (time as the leaf), total weight\n"
             "(time on the stack, counted once per sample, so recursion never exceeds 100%), their\n"
             "percentages of the whole, the number of samples on the stack, the symbol and its binary.\n",
    .options = options,
};

typedef struct top_args {
	tk_analysis a;
	tk_top_sort sort;
	uint32_t limit;
	int json, have_limit;
} top_args;

static int top_option(void *ctx, const tk_cli_option *o, const char *val, const char *spelling)
{
	top_args *t = ctx;
	switch (o->id) {
	case OPT_JSON: t->json = 1; return 0;
	case OPT_SORT:
		if (strcmp(val, "self") == 0)
			t->sort = TK_TOP_BY_SELF;
		else if (strcmp(val, "total") == 0)
			t->sort = TK_TOP_BY_TOTAL;
		else
			return tk_cli_fail("top: --sort '%s': expected self or total", val), -1;
		return 0;
	case OPT_LIMIT: t->have_limit = 1; return tk_cli_uint("top", "--limit", val, &t->limit);
	}
	return tk_analysis_handle(&t->a, o, val, spelling);
}

int cmd_top(int argc, char **argv)
{
	top_args t = {.sort = TK_TOP_BY_SELF, .limit = 50};
	tk_analysis_init(&t.a, "top");
	int rc = tk_cli_parse(&tk_cli_command_top, argc, argv, 1, top_option, &t, NULL);
	tk_analysis a = t.a;
	tk_top_sort sort = t.sort;
	uint32_t limit = t.limit;
	int json = t.json, have_limit = t.have_limit;
	if (json && !have_limit)
		limit = 0;
	if (!tk_analysis_ready(&a, &rc))
		goto out;
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
