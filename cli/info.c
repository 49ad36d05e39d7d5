/* tracekit info — what an export holds: schema, unit, stack form, threads and their weights; or a toc's runs. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "tracekit/toc.h"
#include "util/text.h"

TK_COMMAND(info, "describe an export (schema, threads, weights) or a --toc document")

static void usage(FILE *f)
{
	fprintf(f, "usage: tracekit info [--json] [--tokenizer=fast|libxml2] [-o OUT] FILE\n\n"
	           "Describes an `xctrace export` document, or any other input tracekit reads (Records, Deep\n"
	           "Copy, `sample`, `perf script`, folded stacks). FILE may be - for standard input; gzip'd input\n"
	           "is accepted.\n\n"
	           "For a table export (--xpath): schema, unit, stack encoding and Xcode form, whether frames are\n"
	           "symbolicated, time span, rows, and every process and thread with its sample count and weight\n"
	           "(ms for time profiles, otherwise in the table's unit, with %% of the total), heaviest first.\n"
	           "For a table of contents (--toc): runs, device, processes, template, duration and tables with\n"
	           "their recording attributes. Environment variables recorded in the toc are never shown.\n\n"
	           "  --json                 machine-readable output\n"
	           "  --tokenizer=NAME       XML tokenizer: fast (default) or libxml2 (the reference)\n"
	           "  -o, --output OUT       write there (whole or not at all) instead of standard output\n");
}

/* Where the report goes: standard output or -o's temporary file (util/outfile.h). */
static FILE *out;

#define S(s) tk_cli_shown(s)

/* ---- JSON: the library's one escaper ---- */

static void json_str(FILE *f, const char *s)
{
	tk_json_fput(f, s);
}

/* ---- table exports ---- */

typedef struct pgroup {
	int64_t pid;
	tk_str name;
	uint64_t weight, samples;
	tk_thread_id *threads;
	size_t nthreads;
} pgroup;

static const tk_profile *sort_p;

static int by_thread_weight(const void *a, const void *b)
{
	const tk_thread *x = tk_thread_get(sort_p, *(const tk_thread_id *)a),
	                *y = tk_thread_get(sort_p, *(const tk_thread_id *)b);
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return 0;
}

static int by_group_weight(const void *a, const void *b)
{
	const pgroup *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void weight_text(char *buf, size_t n, tk_unit u, uint64_t w)
{
	if (u == TK_UNIT_NS)
		snprintf(buf, n, "%.3f ms", w / 1e6);
	else
		snprintf(buf, n, "%" PRIu64 " %s", w, tk_unit_name(u));
}

/* in = NULL: read path with tk_read_path (a monitor session directory is not one stream). */
static int info_table(tk_input *in, const char *path, const tk_read_options *o, int json)
{
	tk_profile *p = tk_profile_new();
	tk_error err;
	int rc = in ? tk_read_input(p, in, o, &err) : tk_read_path(p, path, o, &err);
	tk_cli_progress_done();
	if (rc < 0) {
		tk_profile_free(p);
		return tk_cli_fail("%s", err.msg);
	}
	tk_unit u = tk_profile_unit(p);
	uint64_t total = tk_profile_weight(p);
	size_t nt = tk_thread_count(p);
	/* group threads by process */
	pgroup *g = calloc(nt ? nt : 1, sizeof *g);
	size_t ng = 0;
	uint64_t tmin = UINT64_MAX, tmax = 0;
	for (tk_thread_id t = 0; t < nt; t++) {
		const tk_thread *th = tk_thread_get(p, t);
		if (th->t_min <= th->t_max) {
			if (th->t_min < tmin)
				tmin = th->t_min;
			if (th->t_max > tmax)
				tmax = th->t_max;
		}
		size_t k = 0;
		while (k < ng && !(g[k].pid == th->pid && g[k].name == th->process))
			k++;
		if (k == ng) {
			g[ng].pid = th->pid;
			g[ng].name = th->process;
			g[ng].threads = calloc(nt, sizeof *g[ng].threads);
			ng++;
		}
		g[k].weight += th->weight;
		g[k].samples += th->samples;
		g[k].threads[g[k].nthreads++] = t;
	}
	sort_p = p;
	for (size_t k = 0; k < ng; k++)
		qsort(g[k].threads, g[k].nthreads, sizeof *g[k].threads, by_thread_weight);
	qsort(g, ng, sizeof *g, by_group_weight);
	static const char *const meta_keys[] = {
	    "schema", "stack-encoding", "xcode-form",         "symbolicated",   "run",          "table",
	    "xpath",  "rows",           "rows-in-time-range", "skipped-tables", "kdebug-images"};
	if (json) {
		fprintf(out, "{\n  \"file\": ");
		json_str(out, path);
		fprintf(out, ",\n  \"kind\": \"table\",\n  \"unit\": \"%s\"", tk_unit_name(u));
		for (size_t i = 0; i < tk_profile_meta_count(p); i++) {
			const char *k, *v;
			tk_profile_meta_at(p, i, &k, &v);
			fprintf(out, ",\n  ");
			json_str(out, k);
			fprintf(out, ": ");
			json_str(out, v);
		}
		fprintf(out, ",\n  \"samples\": %" PRIu64 ",\n  \"weight\": %" PRIu64, tk_profile_samples(p), total);
		if (tmin <= tmax)
			fprintf(out, ",\n  \"time_first_ns\": %" PRIu64 ",\n  \"time_last_ns\": %" PRIu64, tmin, tmax);
		fprintf(out, ",\n  \"processes\": [");
		for (size_t k = 0; k < ng; k++) {
			fprintf(out, "%s\n    {\"pid\": %" PRId64 ", \"name\": ", k ? "," : "", g[k].pid);
			json_str(out, tk_string(p, g[k].name));
			fprintf(out, ", \"samples\": %" PRIu64 ", \"weight\": %" PRIu64 ", \"threads\": [",
			        g[k].samples, g[k].weight);
			for (size_t i = 0; i < g[k].nthreads; i++) {
				const tk_thread *th = tk_thread_get(p, g[k].threads[i]);
				fprintf(out, "%s\n      {\"tid\": %" PRIu64 ", \"name\": ", i ? "," : "", th->tid);
				json_str(out, tk_string(p, th->name));
				fprintf(out, ", \"samples\": %" PRIu64 ", \"weight\": %" PRIu64 "}", th->samples,
				        th->weight);
			}
			fprintf(out, "\n    ]}");
		}
		fprintf(out, "\n  ]\n}\n");
	} else {
		fprintf(out, "file           %s\n", S(path));
		for (size_t i = 0; i < sizeof meta_keys / sizeof meta_keys[0]; i++) {
			const char *v = tk_profile_meta(p, meta_keys[i]);
			if (v)
				fprintf(out, "%-14s %s\n", meta_keys[i], S(v));
			if (i == 0)
				fprintf(out, "%-14s %s\n", "unit", tk_unit_name(u));
		}
		if (tmin <= tmax)
			fprintf(out, "time span      %.3f s to %.3f s (%.3f s)\n", tmin / 1e9, tmax / 1e9,
			        (tmax - tmin) / 1e9);
		char wb[64];
		weight_text(wb, sizeof wb, u, total);
		fprintf(out, "samples        %" PRIu64 "\nweight         %s\n", tk_profile_samples(p), wb);
		fprintf(out, "\n%10s %7s %9s  %s\n", "samples", "weight%", u == TK_UNIT_NS ? "ms" : tk_unit_name(u),
		        "process / thread");
		for (size_t k = 0; k < ng; k++) {
			double pct = total ? 100.0 * g[k].weight / total : 0;
			if (u == TK_UNIT_NS)
				fprintf(out, "%10" PRIu64 " %6.1f%% %9.1f  %s (%" PRId64 ")\n", g[k].samples, pct,
				        g[k].weight / 1e6, g[k].name ? S(tk_string(p, g[k].name)) : "<unknown process>",
				        g[k].pid);
			else
				fprintf(out, "%10" PRIu64 " %6.1f%% %9" PRIu64 "  %s (%" PRId64 ")\n", g[k].samples,
				        pct, g[k].weight, g[k].name ? S(tk_string(p, g[k].name)) : "<unknown process>",
				        g[k].pid);
			for (size_t i = 0; i < g[k].nthreads; i++) {
				const tk_thread *th = tk_thread_get(p, g[k].threads[i]);
				double tp = total ? 100.0 * th->weight / total : 0;
				const char *nm = th->name ? S(tk_string(p, th->name)) : "<unnamed>";
				if (u == TK_UNIT_NS)
					fprintf(out, "%10" PRIu64 " %6.1f%% %9.1f    %s 0x%" PRIx64 "\n", th->samples,
					        tp, th->weight / 1e6, nm, th->tid);
				else
					fprintf(out, "%10" PRIu64 " %6.1f%% %9" PRIu64 "    %s 0x%" PRIx64 "\n",
					        th->samples, tp, th->weight, nm, th->tid);
			}
		}
	}
	for (size_t k = 0; k < ng; k++)
		free(g[k].threads);
	free(g);
	tk_profile_free(p);
	return 0;
}

/* ---- tocs ---- */

static int info_toc(tk_input *in, const char *path, int json)
{
	tk_error err;
	tk_toc *toc = tk_toc_read(in, &err);
	if (!toc)
		return tk_cli_fail("%s", err.msg);
	if (json) {
		fprintf(out, "{\n  \"file\": ");
		json_str(out, path);
		fprintf(out, ",\n  \"kind\": \"toc\",\n  \"runs\": [");
		for (size_t i = 0; i < toc->nruns; i++) {
			const tk_toc_run *r = &toc->runs[i];
			fprintf(out, "%s\n    {\"number\": %d", i ? "," : "", r->number);
			const char *fields[][2] = {{"device_name", r->device_name},
			                           {"device_model", r->device_model},
			                           {"platform", r->device_platform},
			                           {"os_version", r->device_os},
			                           {"start", r->start_date},
			                           {"end", r->end_date},
			                           {"end_reason", r->end_reason},
			                           {"template", r->template_name},
			                           {"instruments_version", r->instruments_version}};
			for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
				if (fields[f][1]) {
					fprintf(out, ", \"%s\": ", fields[f][0]);
					json_str(out, fields[f][1]);
				}
			if (r->duration >= 0)
				fprintf(out, ", \"duration_s\": %.6f", r->duration);
			fprintf(out, ", \"processes\": [");
			for (size_t k = 0; k < r->nprocesses; k++) {
				fprintf(out, "%s{\"pid\": %" PRId64 ", \"name\": ", k ? ", " : "", r->processes[k].pid);
				json_str(out, r->processes[k].name ? r->processes[k].name : "");
				if (r->processes[k].path) {
					fprintf(out, ", \"path\": ");
					json_str(out, r->processes[k].path);
				}
				fprintf(out, "}");
			}
			fprintf(out, "], \"tables\": [");
			for (size_t k = 0; k < r->ntables; k++) {
				const tk_toc_table *t = &r->tables[k];
				fprintf(out, "%s\n      {\"position\": %zu, \"schema\": ", k ? "," : "", k + 1);
				json_str(out, t->schema ? t->schema : "");
				fprintf(out, ", \"attributes\": {");
				for (size_t a = 0; a < t->nattrs; a++) {
					fprintf(out, "%s", a ? ", " : "");
					json_str(out, t->attrs[a].name);
					fprintf(out, ": ");
					json_str(out, t->attrs[a].value);
				}
				fprintf(out, "}}");
			}
			fprintf(out, "\n    ]}");
		}
		fprintf(out, "\n  ]\n}\n");
	} else {
		fprintf(out, "file           %s\nkind           table of contents (--toc), %zu run%s\n", S(path),
		        toc->nruns, toc->nruns == 1 ? "" : "s");
		for (size_t i = 0; i < toc->nruns; i++) {
			const tk_toc_run *r = &toc->runs[i];
			fprintf(out, "\nrun %d\n", r->number);
			if (r->device_name || r->device_model)
				fprintf(out, "  device       %s%s%s%s%s%s%s\n", r->device_name ? S(r->device_name) : "",
				        r->device_model ? " (" : "", r->device_model ? S(r->device_model) : "",
				        r->device_model ? ")" : "", r->device_platform ? ", " : "",
				        r->device_platform ? S(r->device_platform) : "", "");
			if (r->device_os)
				fprintf(out, "  os           %s\n", S(r->device_os));
			if (r->template_name)
				fprintf(out, "  template     %s\n", S(r->template_name));
			if (r->instruments_version)
				fprintf(out, "  instruments  %s\n", S(r->instruments_version));
			if (r->start_date)
				fprintf(out, "  start        %s\n", S(r->start_date));
			if (r->duration >= 0)
				fprintf(out, "  duration     %.3f s\n", r->duration);
			if (r->end_reason)
				fprintf(out, "  end reason   %s\n", S(r->end_reason));
			for (size_t k = 0; k < r->nprocesses; k++)
				fprintf(out, "  process      %s (%" PRId64 ")%s%s\n",
				        r->processes[k].name ? S(r->processes[k].name) : "?", r->processes[k].pid,
				        r->processes[k].path ? " " : "",
				        r->processes[k].path ? S(r->processes[k].path) : "");
			fprintf(out, "  tables (%zu)\n", r->ntables);
			for (size_t k = 0; k < r->ntables; k++) {
				const tk_toc_table *t = &r->tables[k];
				fprintf(out, "    [%zu] %s", k + 1, t->schema ? S(t->schema) : "?");
				for (size_t a = 0; a < t->nattrs; a++) {
					if (strcmp(t->attrs[a].name, "schema") == 0 ||
					    strcmp(t->attrs[a].name, "documentation") == 0)
						continue;
					fprintf(out, " %s=%s", S(t->attrs[a].name), S(t->attrs[a].value));
				}
				fprintf(out, "\n");
			}
		}
	}
	tk_toc_free(toc);
	return 0;
}

int cmd_info(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	int json = 0;
	const char *file = NULL, *output = NULL, *val;
	tk_read_options o;
	tk_read_options_init(&o);
	o.progress = tk_cli_progress;
	for (int i = 1; i < argc;) {
		const char *a = argv[i];
		int r;
		if (strcmp(a, "--json") == 0) {
			json = 1, i++;
		} else if ((r = tk_cli_opt("info", argc, argv, &i, "--tokenizer", NULL, &val)) != 0) {
			if (r < 0)
				return 2;
			if (strcmp(val, "fast") == 0)
				o.tokenizer = TK_READ_TOKENIZER_FAST;
			else if (strcmp(val, "libxml2") == 0)
				o.tokenizer = TK_READ_TOKENIZER_LIBXML2;
			else
				return tk_cli_usage("info", "--tokenizer '%s': expected fast or libxml2", val);
		} else if ((r = tk_cli_opt("info", argc, argv, &i, "--output", "-o", &val)) != 0) {
			if (r < 0)
				return 2;
			output = val;
		} else if (strcmp(a, "--") == 0 && i + 1 < argc && !file) {
			file = argv[i + 1], i += 2;
		} else if (a[0] == '-' && a[1]) {
			return tk_cli_usage("info", "unknown option '%s'", a);
		} else if (!file) {
			file = a, i++;
		} else {
			return tk_cli_usage("info", "more than one FILE given");
		}
	}
	if (!file)
		return tk_cli_usage("info", "no input file (use - for standard input)");
	tk_error err;
	tk_outfile of;
	if (tk_outfile_open(&of, output, &err) < 0)
		return tk_cli_fail("info: %s", err.msg);
	out = of.f;
	int rc;
	/* A toc and a table are told apart by their root element, which is in the first bytes. */
	struct stat st;
	if (strcmp(file, "-") != 0 && stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = info_table(NULL, file, &o, json);
	} else {
		tk_input *in = tk_input_open(file, &err);
		if (!in) {
			rc = tk_cli_fail("%s", err.msg);
		} else {
			size_t hn;
			const unsigned char *head = tk_input_head(in, &hn);
			const char *disp = strcmp(file, "-") == 0 ? "<stdin>" : file;
			rc = memmem(head, hn, "<trace-toc", 10) ? info_toc(in, disp, json)
			                                        : info_table(in, disp, &o, json);
			tk_input_close(in);
		}
	}
	if (rc) {
		tk_outfile_abort(&of);
		return rc;
	}
	if (tk_outfile_commit(&of, &err) < 0)
		return tk_cli_fail("info: %s", err.msg);
	return 0;
}
