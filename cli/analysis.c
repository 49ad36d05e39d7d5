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

int tk_cli_opt(const char *cmd, int argc, char **argv, int *i, const char *name, const char *alias, const char **val)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);
	if (strncmp(arg, name, n) == 0 && arg[n] == '=') {
		*val = arg + n + 1;
		(*i)++;
		return 1;
	}
	if (strcmp(arg, name) != 0 && !(alias && strcmp(arg, alias) == 0))
		return 0;
	if (*i + 1 >= argc) {
		tk_cli_usage(cmd, "%s needs a value", arg);
		return -1;
	}
	*val = argv[*i + 1];
	*i += 2;
	return 1;
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

/* `--event` names a sampling profiler's event (perf's cycles, instructions …) or, as a number, one
 * event of the input (a MetricKit diagnostic, a record, a report: tk_analysis_option). */
static int text_read_option(const char *cmd, int argc, char **argv, int *i, tk_read_options *o);

static int event_number_follows(int argc, char **argv, int i)
{
	const char *v = strncmp(argv[i], "--event=", 8) == 0 ? argv[i] + 8
	                : strcmp(argv[i], "--event") == 0 && i + 1 < argc ? argv[i + 1]
	                                                                  : NULL;
	return v && *v && strspn(v, "0123456789") == strlen(v);
}

int tk_cli_read_option(const char *cmd, int argc, char **argv, int *i, tk_read_options *o)
{
	const char *val;
	int r;
	if ((r = text_read_option(cmd, argc, argv, i, o)) != 0)
		return r;
	if (event_number_follows(argc, argv, *i))
		return 0;
	if ((r = tk_cli_opt(cmd, argc, argv, i, "--event", NULL, &val)) != 0) {
		if (r < 0)
			return -1;
		if (!*val)
			return tk_cli_usage(cmd, "--event needs a non-empty value"), -1;
		o->event = val;
		return 1;
	}
	if ((r = tk_cli_opt(cmd, argc, argv, i, "--weight", NULL, &val)) != 0) {
		if (r < 0)
			return -1;
		if (strcmp(val, "samples") == 0)
			o->weight = TK_READ_WEIGHT_SAMPLES;
		else if (strcmp(val, "period") == 0)
			o->weight = TK_READ_WEIGHT_PERIOD;
		else
			return tk_cli_usage(cmd, "--weight '%s': expected samples or period", val), -1;
		return 1;
	}
	return 0;
}

static void add_spec(tk_analysis *a, tk_transform_kind kind, const char *pattern)
{
	TK_GROW(a->specs, a->capspecs, a->nspecs + 1);
	a->specs[a->nspecs++] = (tk_transform_spec){kind, pattern};
}

int tk_analysis_option(tk_analysis *a, int argc, char **argv, int *i)
{
	static const struct {
		const char *name;
		tk_transform_kind kind;
	} with_value[] = {
	    {"--focus", TK_TX_FOCUS},   {"--exclude", TK_TX_EXCLUDE},
	    {"--merge", TK_TX_MERGE},   {"--merge-binary", TK_TX_MERGE_BINARY},
	    {"--thread", TK_TX_THREAD}, {"--process", TK_TX_PROCESS},
	    {"--event", TK_TX_EVENT},   {"--kind", TK_TX_EVENT_KIND},
	};
	const char *arg = argv[*i], *val;
	int r;
	for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++) {
		if (with_value[k].kind == TK_TX_EVENT && !event_number_follows(argc, argv, *i))
			continue; /* --event NAME: a perf event (tk_cli_read_option) */
		if ((r = tk_cli_opt(a->cmd, argc, argv, i, with_value[k].name, NULL, &val)) != 0) {
			if (r < 0)
				return -1;
			if (!*val)
				return tk_cli_fail("%s: %s needs a non-empty value", a->cmd, with_value[k].name), -1;
			add_spec(a, with_value[k].kind, val);
			return 1;
		}
	}
	if (strcmp(arg, "--hide-system") == 0) {
		add_spec(a, TK_TX_MERGE_SYSTEM, NULL);
		return ++*i, 1;
	}
	if (strcmp(arg, "--hide-unsymbolicated") == 0) {
		add_spec(a, TK_TX_MERGE_UNSYMBOLICATED, NULL);
		return ++*i, 1;
	}
	if (strcmp(arg, "--flatten-recursion") == 0) {
		add_spec(a, TK_TX_FLATTEN_RECURSION, NULL);
		return ++*i, 1;
	}
	const char *which[] = {"--time-from", "--time-to"};
	for (int k = 0; k < 2; k++) {
		if ((r = tk_cli_opt(a->cmd, argc, argv, i, which[k], NULL, &val)) != 0) {
			if (r < 0)
				return -1;
			uint64_t ns;
			if (tk_parse_time_ns(val, &ns) < 0)
				return tk_cli_fail(
				           "%s: %s '%s': expected a time such as 250ms, 1.5s, 300us, 1000ns or 01:02.5",
				           a->cmd, which[k], val),
				       -1;
			*(k ? &a->read.time_to : &a->read.time_from) = ns;
			return 1;
		}
	}
	if ((r = tk_cli_read_option(a->cmd, argc, argv, i, &a->read)) != 0)
		return r;
	if ((r = tk_cli_opt(a->cmd, argc, argv, i, "--symbols", NULL, &val)) != 0) {
		if (r < 0)
			return -1;
		TK_GROW(a->symbol_paths, a->capsymbols, a->nsymbols + 1);
		a->symbol_paths[a->nsymbols++] = val;
		return 1;
	}
	if ((r = tk_cli_opt(a->cmd, argc, argv, i, "--output", "-o", &val)) != 0) {
		if (r < 0)
			return -1;
		a->output = val;
		return 1;
	}
	if (strcmp(arg, "--") == 0 && *i + 1 < argc) { /* "--" then a path that starts with '-' */
		arg = argv[++*i];
	} else if (arg[0] == '-' && arg[1]) { /* "-" alone is standard input */
		return 0;
	}
	if (a->input)
		return tk_cli_fail("%s: one input at a time ('%s' and '%s')", a->cmd, a->input, arg), -1;
	a->input = arg;
	return ++*i, 1;
}

void tk_cli_read_warn(void *ctx, const char *message)
{
	tk_cli_warn("%s: %s", (const char *)ctx, message);
}

/* --keep-going, --run N (text readers), and the reader's warning callback. */
static int text_read_option(const char *cmd, int argc, char **argv, int *i, tk_read_options *o)
{
	const char *val;
	int r;
	o->warn = tk_cli_read_warn;
	o->warn_ctx = (void *)cmd;
	if (strcmp(argv[*i], "--keep-going") == 0) {
		o->keep_going = 1;
		return ++*i, 1;
	}
	if ((r = tk_cli_opt(cmd, argc, argv, i, "--run", NULL, &val)) != 0) {
		if (r < 0)
			return -1;
		if (strcmp(val, "1") != 0 && strcmp(val, "2") != 0)
			return tk_cli_fail(
			           "%s: --run '%s': expected 1 or 2 (the first or second count of a differential "
			           "folded file)",
			           cmd, val),
			       -1;
		o->run = (unsigned)(val[0] - '0');
		return 1;
	}
	return 0;
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
	tk_profile *q = tk_symbolicate_profile(p, s, &o, err);
	tk_symbolicator_free(s);
	if (!q)
		return NULL;
	if (!resolved)
		tk_cli_warn("%s: --symbols: no frame matched an image in the given paths (%zu frames with a binary "
		            "left as exported)",
		            a->cmd, unresolved);
	tk_profile_free(p);
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
