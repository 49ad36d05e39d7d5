/*
 * The option parsing and loading every analysis subcommand shares; see analysis.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "tracekit/symbol.h"
#include "util/mem.h"

void tk_analysis_init(tk_analysis *a, const char *cmd)
{
	memset(a, 0, sizeof *a);
	a->cmd = cmd;
	tk_read_options_init(&a->read);
}

void tk_analysis_free(tk_analysis *a)
{
	free(a->specs);
	free(a->symbol_paths);
	a->specs = NULL;
	a->symbol_paths = NULL;
}

int tk_cli_uint(const char *cmd, const char *opt, const char *val, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(val, &end, 10);
	if (!*val || *end || errno || v > UINT32_MAX || val[0] == '-') {
		tk_cli_fail("%s: %s '%s': expected a whole number", cmd, opt, val);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int tk_cli_percent(const char *cmd, const char *opt, const char *val, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (end != val && *end == '%')
		end++;
	if (!*val || *end || errno || !(v >= 0 && v <= 100)) {
		tk_cli_fail("%s: %s '%s': expected a percentage from 0 to 100", cmd, opt, val);
		return -1;
	}
	*out = v;
	return 0;
}

/* Digits with an optional fraction, scaled by unit_ns, exactly (no floating point). */
static int scaled(const char *s, size_t len, uint64_t unit_ns, uint64_t *out)
{
	uint64_t whole = 0, frac = 0, scale = 1;
	size_t i = 0, digits = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++)
			if (scale < 1000000000ULL) { /* finer than 1 ns is dropped */
				frac = frac * 10 + (uint64_t)(s[i] - '0');
				scale *= 10;
			}
	}
	if (i != len || !digits || (whole && whole > UINT64_MAX / unit_ns))
		return -1;
	uint64_t base = whole * unit_ns, part = frac * unit_ns / scale; /* frac < 1e9, unit_ns <= 1e9 here */
	if (base + part < base)
		return -1;
	*out = base + part;
	return 0;
}

int tk_parse_time_ns(const char *s, uint64_t *ns)
{
	size_t len = strlen(s);
	const char *colon = strchr(s, ':');
	if (colon) { /* MM:SS.mmm, as Instruments shows times */
		uint64_t min, sec;
		const char *dot = strchr(s, '.');
		if ((dot && dot < colon) || scaled(s, (size_t)(colon - s), 60ULL * 1000000000ULL, &min) < 0 ||
		    scaled(colon + 1, strlen(colon + 1), 1000000000ULL, &sec) < 0)
			return -1;
		if (min + sec < min)
			return -1;
		*ns = min + sec;
		return 0;
	}
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ULL}};
	for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
		size_t sl = strlen(units[u].suffix);
		if (len > sl && strcmp(s + len - sl, units[u].suffix) == 0)
			return scaled(s, len - sl, units[u].ns, ns);
	}
	return -1;
}

/* ---- the shared option tables ---- */

static const tk_cli_option read_input_options[] = {
    TK_OPT_FLAG(TK_READ_KEEP_GOING, "--keep-going", NULL,
                "folded stacks: skip lines that fit no rule (counted, with a warning)"),
    TK_OPT_VALUE(
        TK_READ_RUN, "--run", NULL, "1|2",
        "differential folded stacks (STACK BEFORE AFTER): the first or second count (default 2, as flamegraph.pl "
        "draws)"),
    TK_OPT_END,
};

const tk_cli_option tk_read_event_options[] = {
    TK_OPT_VALUE(
        TK_READ_EVENT, "--event", NULL, "NAME",
        "perf script / simpleperf with several events (-e a,b): read NAME's samples (default: the first event; "
        "`tracekit info` lists them). Never added together"),
    TK_OPT_VALUE(TK_READ_WEIGHT, "--weight", NULL, "samples|period",
                 "count each sample once (default), or sum each sample's period as FlameGraph and inferno do (ns for "
                 "cpu-clock, cycles, events)"),
    TK_OPT_END,
};

const tk_cli_option tk_read_options_table[] = {
    TK_OPT_INCLUDE(tk_read_event_options),
    TK_OPT_INCLUDE(read_input_options),
    TK_OPT_END,
};

const tk_cli_option tk_analysis_options[] = {
    TK_OPT_SECTION("input"),
    TK_OPT_OPERAND(
        TK_AN_INPUT, "FILE",
        "an `xctrace export` XML file, Records, Instruments Deep Copy text, a macOS `sample` report, `perf "
        "script`/simpleperf text, DTrace stacks, MetricKit JSON, an .ips/.crash/spindump report or folded stacks "
        "(found by content; gzip'd is fine), or - for standard input"),
    TK_OPT_VALUE(TK_AN_OUTPUT, "--output", "-o", "PATH", "write there instead of standard output"),
    TK_OPT_INCLUDE(read_input_options),
    TK_OPT_SECTION("filters"),
    TK_OPT_VALUE(TK_AN_TIME_FROM, "--time-from", NULL, "T", "keep samples at or after T since the start of the run"),
    TK_OPT_VALUE(TK_AN_TIME_TO, "--time-to", NULL, "T",
                 "keep samples before T; T is 250ms, 1.5s, 300us, 1000ns or MM:SS.mmm"),
    TK_OPT_LIST(TK_AN_THREAD, "--thread", NULL, "T",
                "keep threads whose tid (decimal, or 0x hex) or name is T; repeat for several"),
    TK_OPT_LIST(TK_AN_PROCESS, "--process", NULL, "P",
                "keep threads of processes whose pid or name is P; repeat for several"),
    TK_OPT_INCLUDE(tk_read_event_options),
    /* the same option as --event NAME (the parser takes the first): a number selects an event */
    TK_OPT_LIST(
        TK_AN_EVENT_N, "--event", NULL, "N",
        "(a number) keep the stacks of event N (a MetricKit diagnostic, a record, a report; numbered from 1, as "
        "`tracekit records` lists them)"),
    TK_OPT_LIST(TK_AN_KIND, "--kind", NULL, "K",
                "keep the stacks of events of kind K: hang, cpu, disk, crash, launch, cpu-highload"),
    TK_OPT_SECTION("transforms (applied in the order given, after the filters)"),
    TK_OPT_LIST(TK_AN_FOCUS, "--focus", NULL, "FUNC",
                "keep samples that go through FUNC, re-rooted at its outermost call"),
    TK_OPT_LIST(TK_AN_EXCLUDE, "--exclude", NULL, "FUNC", "drop samples that go through FUNC"),
    TK_OPT_LIST(TK_AN_MERGE, "--merge", NULL, "FUNC",
                "charge FUNC to its caller (its frames disappear, its self time moves up)"),
    TK_OPT_LIST(TK_AN_MERGE_BINARY, "--merge-binary", NULL, "BIN",
                "the same for every frame of binary BIN (name or full path)"),
    TK_OPT_FLAG(TK_AN_HIDE_SYSTEM, "--hide-system", NULL,
                "--merge-binary for every system binary (/System/, /usr/lib/, dyld, kernel …)"),
    TK_OPT_FLAG(TK_AN_HIDE_UNSYMBOLICATED, "--hide-unsymbolicated", NULL,
                "charge frames with no symbol (0x…) to their callers (Hide Missing Symbols)"),
    TK_OPT_FLAG(TK_AN_FLATTEN_RECURSION, "--flatten-recursion", NULL,
                "collapse direct recursion (f > f > f becomes f)"),
    TK_OPT_TEXT(
        "FUNC is a symbol as shown (\"objc_msgSend\", \"0x1a2b3c\" when unsymbolicated), or BINARY`SYMBOL to pick "
        "one binary's (\"libobjc.A.dylib`objc_msgSend\"). Functions are told apart by symbol + binary."),
    TK_OPT_SECTION("symbols"),
    TK_OPT_LIST(TK_AN_SYMBOLS, "--symbols", NULL, "PATH",
                "a dSYM, binary or directory to symbolicate from; repeat for several"),
    TK_OPT_END,
};

/* `--event` names a sampling profiler's event (perf's cycles, instructions …) or, as a number, one
 * event of the input (a MetricKit diagnostic, a record, a report: TK_AN_EVENT_N). */
static int is_number(const char *v)
{
	return v && *v && strspn(v, "0123456789") == strlen(v);
}

int tk_cli_read_handle(const char *cmd, tk_read_options *ro, const tk_cli_option *o, const char *val,
                       const char *spelling)
{
	switch (o->id) {
	case TK_READ_KEEP_GOING: ro->keep_going = 1; return 0;
	case TK_READ_RUN:
		if (strcmp(val, "1") != 0 && strcmp(val, "2") != 0)
			return tk_cli_fail(
			           "%s: --run '%s': expected 1 or 2 (the first or second count of a differential "
			           "folded file)",
			           cmd, val),
			       -1;
		ro->run = (unsigned)(val[0] - '0');
		return 0;
	case TK_READ_EVENT:
		if (is_number(val)) /* no event filter here: as any option the command does not know */
			return tk_cli_usage(cmd, "unknown option '%s'", spelling), -1;
		if (!*val)
			return tk_cli_usage(cmd, "--event needs a non-empty value"), -1;
		ro->event = val;
		return 0;
	case TK_READ_WEIGHT:
		if (strcmp(val, "samples") == 0)
			ro->weight = TK_READ_WEIGHT_SAMPLES;
		else if (strcmp(val, "period") == 0)
			ro->weight = TK_READ_WEIGHT_PERIOD;
		else
			return tk_cli_usage(cmd, "--weight '%s': expected samples or period", val), -1;
		return 0;
	}
	return tk_cli_usage(cmd, "unknown option '%s'", spelling), -1;
}

static void add_spec(tk_analysis *a, tk_transform_kind kind, const char *pattern)
{
	TK_GROW(a->specs, a->capspecs, a->nspecs + 1);
	a->specs[a->nspecs++] = (tk_transform_spec){kind, pattern};
}

int tk_analysis_handle(tk_analysis *a, const tk_cli_option *o, const char *val, const char *spelling)
{
	static const struct {
		int id;
		tk_transform_kind kind;
		const char *name;
	} with_value[] = {
	    {TK_AN_FOCUS, TK_TX_FOCUS, "--focus"},    {TK_AN_EXCLUDE, TK_TX_EXCLUDE, "--exclude"},
	    {TK_AN_MERGE, TK_TX_MERGE, "--merge"},    {TK_AN_MERGE_BINARY, TK_TX_MERGE_BINARY, "--merge-binary"},
	    {TK_AN_THREAD, TK_TX_THREAD, "--thread"}, {TK_AN_PROCESS, TK_TX_PROCESS, "--process"},
	    {TK_AN_EVENT_N, TK_TX_EVENT, "--event"},  {TK_AN_KIND, TK_TX_EVENT_KIND, "--kind"},
	};
	int id = o->id;
	if (id == TK_READ_EVENT && is_number(val))
		id = TK_AN_EVENT_N; /* --event N: an event of the input, not a perf event */
	for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
		if (with_value[k].id == id) {
			if (!*val)
				return tk_cli_fail("%s: %s needs a non-empty value", a->cmd, with_value[k].name), -1;
			add_spec(a, with_value[k].kind, val);
			return 0;
		}
	switch (id) {
	case TK_AN_HIDE_SYSTEM: add_spec(a, TK_TX_MERGE_SYSTEM, NULL); return 0;
	case TK_AN_HIDE_UNSYMBOLICATED: add_spec(a, TK_TX_MERGE_UNSYMBOLICATED, NULL); return 0;
	case TK_AN_FLATTEN_RECURSION: add_spec(a, TK_TX_FLATTEN_RECURSION, NULL); return 0;
	case TK_AN_TIME_FROM:
	case TK_AN_TIME_TO: {
		uint64_t ns;
		const char *name = id == TK_AN_TIME_FROM ? "--time-from" : "--time-to";
		if (tk_parse_time_ns(val, &ns) < 0)
			return tk_cli_fail("%s: %s '%s': expected a time such as 250ms, 1.5s, 300us, 1000ns or 01:02.5",
			                   a->cmd, name, val),
			       -1;
		*(id == TK_AN_TIME_TO ? &a->read.time_to : &a->read.time_from) = ns;
		return 0;
	}
	case TK_AN_SYMBOLS:
		TK_GROW(a->symbol_paths, a->capsymbols, a->nsymbols + 1);
		a->symbol_paths[a->nsymbols++] = val;
		return 0;
	case TK_AN_OUTPUT: a->output = val; return 0;
	case TK_AN_INPUT:
		if (a->input)
			return tk_cli_fail("%s: one input at a time ('%s' and '%s')", a->cmd, a->input, val), -1;
		a->input = val;
		return 0;
	}
	return tk_cli_read_handle(a->cmd, &a->read, o, val, spelling);
}

void tk_cli_read_warn(void *ctx, const char *message)
{
	tk_cli_warn("%s: %s", (const char *)ctx, message);
}

int tk_analysis_check(tk_analysis *a)
{
	if (!a->input)
		return tk_cli_fail("%s: no input file (use - for standard input; see tracekit %s --help)", a->cmd,
		                   a->cmd);
	if (a->read.time_from >= a->read.time_to)
		return tk_cli_fail("%s: --time-from must be before --time-to", a->cmd);
	return 0;
}

int tk_analysis_ready(tk_analysis *a, int *rc)
{
	if (*rc) {
		*rc = *rc < 0 ? 0 : *rc;
		return 0;
	}
	*rc = 2;
	if (tk_analysis_check(a))
		return 0;
	*rc = 1;
	return 1;
}

/* --symbols: replace frames that carry a binary (UUID, load address) by the inline chains found in
 * the dSYMs/binaries/directories given, before any transform runs (transforms match on names). */
static void symbols_warn(void *ctx, const char *msg)
{
	tk_cli_warn("%s: %s", (const char *)ctx, msg);
}

static tk_profile *analysis_apply_symbols(tk_analysis *a, tk_profile *p, tk_error *err)
{
	if (!a->nsymbols)
		return p;
	tk_symbolicator *s = tk_symbolicator_new(NULL);
	for (size_t i = 0; i < a->nsymbols; i++)
		if (tk_symbolicator_add_path(s, a->symbol_paths[i], err) < 0) {
			tk_symbolicator_free(s);
			return NULL;
		}
	tk_symbolicate_options o;
	tk_symbolicate_options_init(&o);
	size_t resolved = 0, unresolved = 0;
	o.resolved = &resolved;
	o.unresolved = &unresolved;
	o.warn = symbols_warn;
	o.warn_ctx = (void *)a->cmd;
	tk_profile *q = tk_symbolicate_profile_take(p, s, &o, err); /* p consumed unless NULL */
	tk_symbolicator_free(s);
	if (!q)
		return NULL;
	if (!resolved)
		tk_cli_warn("%s: --symbols: no frame matched an image in the given paths (%zu frames with a binary "
		            "left as exported)",
		            a->cmd, unresolved);
	return q;
}

tk_profile *tk_analysis_load(tk_analysis *a)
{
	tk_error err = {{0}};
	tk_profile *p = tk_profile_new();
	if (a->keep_samples)
		tk_profile_keep_samples(p, 1);
	a->read.progress = tk_cli_progress;
	a->read.warn = tk_cli_read_warn;
	a->read.warn_ctx = (void *)a->cmd;
	int rc = tk_read_path(p, a->input, &a->read, &err);
	if (rc == 0)
		rc = tk_elf_name_session(&p, NULL, &err); /* a Linux monitor session's frames */
	tk_cli_progress_done();
	if (rc < 0) {
		tk_cli_fail("%s", err.msg);
		tk_profile_free(p);
		return NULL;
	}
	if (!tk_profile_samples(p) && (a->read.time_from || a->read.time_to != UINT64_MAX))
		tk_cli_warn("%s: no samples in the requested time range", a->cmd);
	tk_profile *sp = analysis_apply_symbols(a, p, &err);
	if (!sp) {
		tk_cli_fail("%s: %s", a->cmd, err.msg);
		tk_profile_free(p);
		return NULL;
	}
	p = sp;
	if (!a->nspecs)
		return p;
	tk_profile *q = tk_transform(p, a->specs, a->nspecs, &err);
	int had = tk_profile_samples(p) != 0;
	tk_profile_free(p);
	if (!q)
		tk_cli_fail("%s: %s", a->cmd, err.msg);
	else if (had && !tk_profile_samples(q)) /* most often a misspelt --thread or --focus */
		tk_cli_warn("%s: no samples are left after the filters and transforms", a->cmd);
	return q;
}

FILE *tk_analysis_open_output(tk_analysis *a)
{
	tk_error err = {{0}};
	if (tk_outfile_open(&a->of, a->output, &err) < 0) {
		tk_cli_fail("%s: %s", a->cmd, err.msg);
		return a->out = NULL;
	}
	return a->out = a->of.f;
}

int tk_analysis_close_output(tk_analysis *a, int write_failed)
{
	if (!a->out)
		return 0;
	a->out = NULL;
	if (write_failed) {
		tk_outfile_abort(&a->of);
		return 1;
	}
	tk_error err = {{0}};
	if (tk_outfile_commit(&a->of, &err) < 0)
		return tk_cli_fail("%s: %s", a->cmd, err.msg);
	return 0;
}
