/* libFuzzer harness over the alert rules parser (lib/store/alert.c): any bytes are parsed; what is
 * accepted must be whole (a known metric, a finite threshold, keys in range) and parse again, rule by
 * rule from its own text, to the same rule; evaluating a rule on a group never misbehaves. The store
 * front (lib/store/store.c: metrics, --by and --since parsing) is linked; the backends are stubs,
 * never opened, and so are the key names of lib/store/reports.c (which would pull in every reader):
 * tests/cli/alert.sh checks that the real ones group and name keys as `stats --db` does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "tracekit/alert.h"

const tk_store_ops tk_store_sqlite = {.name = "sqlite"};
const tk_store_ops tk_store_clickhouse = {.name = "clickhouse"};
const char *const tk_store_key_names[TK_STORE_NKEYS] = {"app", "version", "build", "device", "os", "session"};
int tk_store_key_index(const char *name)
{
	if (strcmp(name, "app.version") == 0)
		return TK_STORE_VERSION;
	for (int i = 0; i < TK_STORE_NKEYS; i++)
		if (strcmp(name, tk_store_key_names[i]) == 0)
			return i;
	return -1;
}

static void check(const tk_alert_rule *r)
{
	if (!r->text || !r->metric || !tk_store_metric_unit(r->metric) || !isfinite(r->threshold) ||
	    r->nby > TK_STORE_NKEYS || !(r->since >= 0) || !isfinite(r->since) || r->op > TK_ALERT_LE)
		abort();
	for (size_t k = 0; k < r->nby; k++)
		if (r->by[k] < 0 || r->by[k] >= TK_STORE_NKEYS)
			abort();
	if (r->stat == TK_ALERT_QUANTILE &&
	    (r->qindex < 0 || r->qindex >= TK_STORE_NQ || r->quantile != tk_store_quantiles[r->qindex]))
		abort();
	tk_store_group g = {.count = 7, .mean = 1, .min = 0, .max = 2, .q = {1, 1.5, 1.6, 1.9, 2}};
	(void)tk_alert_breaks(r, tk_alert_value(r, &g));
	(void)tk_alert_breaks(r, NAN);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	tk_alert_rules rules;
	tk_error err;
	if (tk_alert_rules_parse((const char *)data, n, "fuzz", &rules, &err)) {
		if (strncmp(err.msg, "fuzz:", 5) != 0 || rules.n || rules.v)
			abort(); /* an error names the file and line, and leaves nothing behind */
		return 0;
	}
	for (size_t i = 0; i < rules.n; i++) {
		const tk_alert_rule *r = &rules.v[i];
		check(r);
		tk_alert_rules again;
		if (tk_alert_rules_parse(r->text, strlen(r->text), "again", &again, &err) || again.n != 1)
			abort();
		const tk_alert_rule *a = &again.v[0];
		if (strcmp(a->metric, r->metric) || a->stat != r->stat || a->op != r->op ||
		    memcmp(&a->threshold, &r->threshold, sizeof a->threshold) || a->since != r->since ||
		    a->nby != r->nby || memcmp(a->by, r->by, sizeof a->by) || strcmp(a->unit, r->unit))
			abort();
		tk_alert_rules_free(&again);
	}
	tk_alert_rules_free(&rules);
	return 0;
}
