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

static const char usage[] =
    "usage: tracekit alert --db URL --rules FILE [--where K=V,...] [--json] [--now T]\n"
    "\n"
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
    "os, session. Without by, a rule checks one group: all the selected reports.\n"
    "\n"
    "options:\n"
    "  --db URL         sqlite:PATH (default sqlite:tracekit.db, or $TRACEKIT_DB) or clickhouse://HOST:PORT/DB\n"
    "  --rules FILE     the rules (- for standard input)\n"
    "  --where K=V,...  only reports whose keys match, for every rule (app, version, build, device, os, session)\n"
    "  --json           one JSON object per breaking group: rule, line, metric, stat, op, threshold, unit,\n"
    "                   group (the by keys' values), value, count\n"
    "  --now T          the present as Unix seconds for `since` (default: the clock), to replay a check\n";

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
	if (tk_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return 0;
	}
	const char *env = getenv("TRACEKIT_DB");
	const char *db = env && *env ? env : "sqlite:tracekit.db", *rules_path = NULL;
	double now = (double)time(NULL);
	int json = 0, rc = 2;
	char *where = NULL, *text = NULL;
	tk_store_query filter = {0};
	tk_error err;
	for (int i = 1; i < argc;) {
		const char *v;
		int r;
		if (strcmp(argv[i], "--json") == 0) {
			json = 1, i++;
		} else if ((r = tk_cli_opt("alert", argc, argv, &i, "--db", NULL, &v)) != 0) {
			if (r < 0)
				goto out;
			db = v;
		} else if ((r = tk_cli_opt("alert", argc, argv, &i, "--rules", NULL, &v)) != 0) {
			if (r < 0)
				goto out;
			rules_path = v;
		} else if ((r = tk_cli_opt("alert", argc, argv, &i, "--where", NULL, &v)) != 0) {
			if (r < 0)
				goto out;
			free(where);
			where = strdup(v);
			if (!where || tk_store_query_where(&filter, where, &err)) {
				tk_cli_fail("alert: %s", where ? err.msg : "out of memory");
				goto out;
			}
		} else if ((r = tk_cli_opt("alert", argc, argv, &i, "--now", NULL, &v)) != 0) {
			char *end;
			if (r < 0)
				goto out;
			now = strtod(v, &end);
			if (end == v || *end || !(now >= 0 && now < 1e11)) {
				tk_cli_usage("alert", "--now wants Unix seconds, not '%s'", v);
				goto out;
			}
		} else {
			tk_cli_usage("alert", "unknown option '%s'", argv[i]);
			goto out;
		}
	}
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
