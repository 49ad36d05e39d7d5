/*
 * A trace's table of contents (`xctrace export --toc`, `tracekit info` on one): runs, device,
 * processes, template, duration and each table's recording attributes. Environment variables
 * are not in the model (tk_toc_read drops them), so they are never shown.
 */
#include <inttypes.h>
#include <string.h>

#include "tracekit/toc.h"
#include "tracekit/write.h"
#include "util/text.h"
#include "write/wutil.h"

#define SH(s) tk_text_shown(s)

int tk_write_toc_json(FILE *out, const tk_toc *toc, const char *path, tk_error *err)
{
	fprintf(out, "{\n  \"file\": ");
	tk_json_fput(out, path);
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
				tk_json_fput(out, fields[f][1]);
			}
		if (r->duration >= 0)
			fprintf(out, ", \"duration_s\": %.6f", r->duration);
		fprintf(out, ", \"processes\": [");
		for (size_t k = 0; k < r->nprocesses; k++) {
			fprintf(out, "%s{\"pid\": %" PRId64 ", \"name\": ", k ? ", " : "", r->processes[k].pid);
			tk_json_fput(out, r->processes[k].name ? r->processes[k].name : "");
			if (r->processes[k].path) {
				fprintf(out, ", \"path\": ");
				tk_json_fput(out, r->processes[k].path);
			}
			fprintf(out, "}");
		}
		fprintf(out, "], \"tables\": [");
		for (size_t k = 0; k < r->ntables; k++) {
			const tk_toc_table *t = &r->tables[k];
			fprintf(out, "%s\n      {\"position\": %zu, \"schema\": ", k ? "," : "", k + 1);
			tk_json_fput(out, t->schema ? t->schema : "");
			fprintf(out, ", \"attributes\": {");
			for (size_t a = 0; a < t->nattrs; a++) {
				fprintf(out, "%s", a ? ", " : "");
				tk_json_fput(out, t->attrs[a].name);
				fprintf(out, ": ");
				tk_json_fput(out, t->attrs[a].value);
			}
			fprintf(out, "}}");
		}
		fprintf(out, "\n    ]}");
	}
	fprintf(out, "\n  ]\n}\n");
	return tk_wu_finish(out, "toc JSON", err);
}

int tk_write_toc_text(FILE *out, const tk_toc *toc, const char *path, tk_error *err)
{
	fprintf(out, "file           %s\nkind           table of contents (--toc), %zu run%s\n", SH(path), toc->nruns,
	        toc->nruns == 1 ? "" : "s");
	for (size_t i = 0; i < toc->nruns; i++) {
		const tk_toc_run *r = &toc->runs[i];
		fprintf(out, "\nrun %d\n", r->number);
		if (r->device_name || r->device_model)
			fprintf(out, "  device       %s%s%s%s%s%s%s\n", r->device_name ? SH(r->device_name) : "",
			        r->device_model ? " (" : "", r->device_model ? SH(r->device_model) : "",
			        r->device_model ? ")" : "", r->device_platform ? ", " : "",
			        r->device_platform ? SH(r->device_platform) : "", "");
		if (r->device_os)
			fprintf(out, "  os           %s\n", SH(r->device_os));
		if (r->template_name)
			fprintf(out, "  template     %s\n", SH(r->template_name));
		if (r->instruments_version)
			fprintf(out, "  instruments  %s\n", SH(r->instruments_version));
		if (r->start_date)
			fprintf(out, "  start        %s\n", SH(r->start_date));
		if (r->duration >= 0)
			fprintf(out, "  duration     %.3f s\n", r->duration);
		if (r->end_reason)
			fprintf(out, "  end reason   %s\n", SH(r->end_reason));
		for (size_t k = 0; k < r->nprocesses; k++)
			fprintf(out, "  process      %s (%" PRId64 ")%s%s\n",
			        r->processes[k].name ? SH(r->processes[k].name) : "?", r->processes[k].pid,
			        r->processes[k].path ? " " : "", r->processes[k].path ? SH(r->processes[k].path) : "");
		fprintf(out, "  tables (%zu)\n", r->ntables);
		for (size_t k = 0; k < r->ntables; k++) {
			const tk_toc_table *t = &r->tables[k];
			fprintf(out, "    [%zu] %s", k + 1, t->schema ? SH(t->schema) : "?");
			for (size_t a = 0; a < t->nattrs; a++) {
				if (strcmp(t->attrs[a].name, "schema") == 0 ||
				    strcmp(t->attrs[a].name, "documentation") == 0)
					continue;
				fprintf(out, " %s=%s", SH(t->attrs[a].name), SH(t->attrs[a].value));
			}
			fprintf(out, "\n");
		}
	}
	return tk_wu_finish(out, "toc", err);
}
