/* tracekit alert — the groups of a fleet store that break alert rules (for cron and CI). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "tracekit/alert.h"
#include "tracekit/read.h"
#include "tracekit/stats.h"
#include "tracekit/store.h"
#include "util/text.h"

TK_COMMAND(alert, "check alert rules (p95(hang.duration) > 2 s by version) on a fleet store; exit 3 if any breaks")

enum { OPT_DB = 1, OPT_RULES, OPT_WHERE, OPT_JSON, OPT_NOW, OPT_STRAY };

static const tk_cli_option options[] = {
    TK_OPT_SECTION("options"),
    TK_OPT_VALUE(OPT_DB, "--db", NULL, "URL",
                 "sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB"),
    TK_OPT_VALUE(OPT_RULES, "--rules", NULL, "FILE", "the rules (- for standard input)"),
    TK_OPT_VALUE(OPT_WHERE, "--where", NULL, "K=V,...",
                 "only reports whose keys match, for every rule (app, version, build, device, os, session)"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL,
                "one JSON object per breaking group: rule, line, metric, stat, op, threshold, unit, group (the by "
                "keys' values), value, count"),
    TK_OPT_VALUE(OPT_NOW, "--now", NULL, "T",
                 "the present as Unix seconds for `since` (default: the clock), to replay a check"),
    TK_OPT_OPERAND(OPT_STRAY, "ARG", NULL), /* none taken: refused as before, as an unknown option */
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_alert = {
    .name = "alert",
    .usage = "tracekit alert --db URL --rules FILE [--where K=V,...] [--json] [--now T]",
    .about =
        "Checks a rules file against a fleet store (see `tracekit ingest`) and prints every group that\n"
        "breaks a rule: the rule, the group's keys, its value and the threshold. Exits 3 when any group\n"
        "breaks a rule, 0 when none does, 1 on an error (a bad rules file: one line naming FILE:LINE), 2 on\n"
        "a usage error. The numbers are `tracekit stats --db` ones, computed in the database engine.\n"
        "\n"
        "A rules file has one rule a line; '#' starts a comment (docs/alerts.md):\n"
        "  p95(hang.duration) > 2 s by version     a percentile: p50 p90 p95 p99 p99.9\n"
        "  p99(cpu.duration) > 60 s since 1d       only reports of the last day (d, h, m, s)\n"
        "  count(hang.duration) > 500 by app.version,device\n"
        "  cpu.average >= 150 %                    a metric alone is its mean (hang.rate: the fleet's rate)\n"
        "  max(hang.duration) > 30000 ms           also min, mean; ms is converted to the metric's s\n"
        "Operators: > >= < <=. Keys for by: app, version, app.version (= app and version), build, device,\n"
        "os, session. Without by, a rule checks one group: all the selected reports.\n",
    .options = options,
    .flags = TK_CLI_NO_DASHDASH,
    .column = 19,
};

typedef struct alert_args {
	const char *db, *rules_path;
	double now;
	int json;
	char *where;
	tk_store_query filter;
} alert_args;

static int alert_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	alert_args *A = ctx;
	tk_error err;
	char *end;
	switch (o->id) {
	case OPT_JSON: A->json = 1; return 0;
	case OPT_DB: A->db = v; return 0;
	case OPT_RULES: A->rules_path = v; return 0;
	case OPT_WHERE:
		free(A->where);
		A->where = strdup(v);
		if (!A->where || tk_store_query_where(&A->filter, A->where, &err))
			return tk_cli_fail("alert: %s", A->where ? err.msg : "out of memory"), -1;
		return 0;
	case OPT_NOW:
		A->now = strtod(v, &end);
		if (end == v || *end || !(A->now >= 0 && A->now < 1e11))
			return tk_cli_usage("alert", "--now wants Unix seconds, not '%s'", v), -1;
		return 0;
	}
	return tk_cli_usage("alert", "unknown option '%s'", spelling), -1;
}

static const char *const op_names[] = {">", ">=", "<", "<="};

static const char *stat_name(const tk_alert_rule *r)
{
	static const char *const q[TK_STORE_NQ] = {"p50", "p90", "p95", "p99", "p99.9"};
	switch (r->stat) {
	case TK_ALERT_QUANTILE: return q[r->qindex];
	case TK_ALERT_MIN: return "min";
	case TK_ALERT_MAX: return "max";
	case TK_ALERT_COUNT: return "count";
	case TK_ALERT_VALUE: break;
	}
	return "mean";
}

/* The rules file's bytes (at most 1 MiB; gzip'd or -). Returns 0 or 1 after printing. */
static int read_rules(const char *path, char **text, size_t *n)
{
	tk_error err;
	tk_input *in = tk_input_open(path, &err);
	if (!in)
		return tk_cli_fail("alert: %s", err.msg);
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);
	ptrdiff_t got = 0;
	while (buf && len <= cap && (got = tk_input_read(in, buf + len, cap + 1 - len, &err)) > 0)
		len += (size_t)got;
	tk_input_close(in);
	if (!buf || got < 0) {
		free(buf);
		return buf ? tk_cli_fail("alert: %s", err.msg) : tk_cli_fail("alert: out of memory");
	}
	if (len > cap) {
		free(buf);
		return tk_cli_fail("alert: %s: more than 1 MiB is not a rules file", path);
	}
	*text = buf;
	*n = len;
	return 0;
}

static void put_num(double v)
{
	char buf[32];
	fputs(tk_stats_fmt_double(v, buf), stdout);
}

int cmd_alert(int argc, char **argv)
{
	const char *env = getenv("TRACEKIT_DB");
	alert_args A = {.db = env && *env ? env : "sqlite:tracekit.db", .now = (double)time(NULL)};
	int rc = tk_cli_parse(&tk_cli_command_alert, argc, argv, 1, alert_option, &A, NULL);
	const char *db = A.db, *rules_path = A.rules_path;
	double now = A.now;
	int json = A.json;
	char *where = A.where, *text = NULL;
	tk_store_query filter = A.filter;
	tk_error err;
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	rc = 2;
	if (!rules_path) {
		tk_cli_usage("alert", "--rules FILE is required");
		goto out;
	}
	size_t n = 0, nb = 0;
	if ((rc = read_rules(rules_path, &text, &n)) != 0)
		goto out;
	tk_alert_rules rules;
	rc = 1;
	if (tk_alert_rules_parse(text, n, rules_path, &rules, &err)) {
		tk_cli_fail("alert: %s", err.msg);
		goto out;
	}
	tk_store *s = tk_store_open(db, &err);
	tk_alert_breach *b = NULL;
	if (!s || tk_alert_eval(s, &rules, &filter, now, &b, &nb, &err)) {
		tk_cli_fail("alert: %s", err.msg); /* the store's URL, or FILE:LINE: RULE: the store's error */
		tk_store_close(s);
		tk_alert_rules_free(&rules);
		goto out;
	}
	for (size_t i = 0; i < nb; i++) {
		const tk_alert_rule *r = &rules.v[b[i].rule];
		if (json) {
			fputs("{\"rule\": ", stdout);
			tk_json_fput(stdout, r->text);
			printf(", \"line\": %u, \"metric\": ", r->line);
			tk_json_fput(stdout, r->metric);
			printf(", \"stat\": \"%s\", \"op\": \"%s\", \"threshold\": ", stat_name(r), op_names[r->op]);
			put_num(r->threshold);
			fputs(", \"unit\": ", stdout);
			tk_json_fput(stdout, r->stat == TK_ALERT_COUNT ? "" : r->unit);
			fputs(", \"group\": {", stdout);
			for (size_t k = 0; k < r->nby; k++) {
				fputs(k ? ", " : "", stdout);
				tk_json_fput(stdout, tk_store_by_name(r->by[k]));
				fputs(": ", stdout);
				tk_json_fput(stdout, b[i].keys[k]);
			}
			fputs("}, \"value\": ", stdout);
			put_num(b[i].value);
			printf(", \"count\": %llu}\n", (unsigned long long)b[i].count);
		} else {
			/* rules.txt:2: p95(hang.duration) > 2 s  version=5.3  4.218 s (96 reports) */
			printf("%s:%u: %s  ", tk_cli_shown(rules_path), r->line, r->text);
			if (!r->nby)
				fputs("(all)", stdout);
			for (size_t k = 0; k < r->nby; k++)
				printf("%s%s=%s", k ? "," : "", tk_store_by_name(r->by[k]), tk_cli_shown(b[i].keys[k]));
			const char *unit = r->stat == TK_ALERT_COUNT ? "" : r->unit;
			printf("  %.6g%s%s (threshold %s %.6g%s%s, n=%llu)\n", b[i].value, *unit ? " " : "", unit,
			       op_names[r->op], r->threshold, *unit ? " " : "", unit, (unsigned long long)b[i].count);
		}
	}
	rc = nb ? 3 : 0;
	tk_alert_breaches_free(b, nb);
	tk_store_close(s);
	tk_alert_rules_free(&rules);
out:
	free(text);
	free(where);
	return rc;
}
