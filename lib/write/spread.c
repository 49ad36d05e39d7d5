/* `tracekit stats --functions`: the function spread (lib/stats/spread.c) as text or JSON. */
#include <stdio.h>

#include "tracekit/stats.h"
#include "tracekit/write.h"
#include "util/text.h"

static void json_fn(FILE *out, const tk_fntable *ft, size_t f)
{
	fputs("{\"name\": ", out);
	tk_json_fput(out, tk_fntable_name(ft, f));
	fputs(", \"binary\": ", out);
	tk_json_fput(out, tk_fntable_binary(ft, f));
}

int tk_write_fn_spread(FILE *out, const tk_fntable *ft, const tk_fn_spread *s, size_t limit, int json, tk_error *err)
{
	char b[32];
	size_t np = tk_fntable_nprofiles(ft), nf = s->n;
	size_t lim = limit && limit < nf ? limit : nf;
	if (json) {
		static const char *keys[8] = {"self_p50",  "self_p95",  "self_p99",  "self_max",
		                              "total_p50", "total_p95", "total_p99", "total_max"};
		fprintf(out, "{\"unit\": ");
		tk_json_fput(out, tk_fntable_unit(ft));
		fprintf(out, ", \"profiles\": %zu, \"functions\": [", np);
		for (size_t i = 0; i < lim; i++) {
			fputs(i ? ",\n  " : "\n  ", out);
			json_fn(out, ft, s->rows[i].function);
			for (int q = 0; q < 8; q++)
				fprintf(out, ", \"%s\": %s", keys[q],
				        tk_stats_fmt_double(q < 4 ? s->rows[i].self[q] : s->rows[i].total[q - 4], b));
			fputc('}', out);
		}
		fprintf(out, "],\n \"worst\": {\"threshold\": %s, \"profiles\": [",
		        tk_stats_fmt_double(s->threshold, b));
		for (size_t k = 0, n = 0; k < np; k++)
			if (tk_fntable_profile_weight(ft, k) >= s->threshold) {
				fputs(n++ ? ", " : "", out);
				tk_json_fput(out, tk_fntable_profile_name(ft, k));
			}
		fputs("], \"functions\": [", out);
	} else {
		fprintf(out, "Function spread over %zu inputs (%% of each input's weight; %zu functions)\n", np, nf);
		fprintf(out, "  %7s %7s %7s %7s   %7s %7s %7s %7s  %s\n", "Self50", "Self95", "Self99", "SelfMax",
		        "Tot50", "Tot95", "Tot99", "TotMax", "Function");
		for (size_t i = 0; i < lim; i++) {
			fputs("  ", out);
			for (int q = 0; q < 8; q++)
				fprintf(out, "%7.2f %s", q < 4 ? s->rows[i].self[q] : s->rows[i].total[q - 4],
				        q == 3 ? "  " : "");
			const char *bin = tk_fntable_binary(ft, s->rows[i].function);
			fprintf(out, " %s%s%s%s\n", tk_text_shown(tk_fntable_name(ft, s->rows[i].function)),
			        *bin ? "  [" : "", tk_text_shown(bin), *bin ? "]" : "");
		}
		fprintf(
		    out, "\nHeaviest 5 %% of inputs: %zu input%s with weight ≥ %s %s; functions by self share there\n",
		    s->nworst, s->nworst == 1 ? "" : "s", tk_stats_fmt_double(s->threshold, b), tk_fntable_unit(ft));
		fprintf(out, "  %8s %8s  %s\n", "There%", "All%", "Function");
	}
	size_t wl = nf < 10 ? nf : 10;
	for (size_t i = 0; i < wl; i++) {
		const tk_fn_spread_row *r = &s->worst[i];
		const char *bin = tk_fntable_binary(ft, r->function);
		if (json) {
			fputs(i ? ", " : "", out);
			json_fn(out, ft, r->function);
			fprintf(out, ", \"self_share\": %s", tk_stats_fmt_double(r->worst_share, b));
			fprintf(out, ", \"self_share_all\": %s}", tk_stats_fmt_double(r->all_share, b));
		} else {
			fprintf(out, "  %8.2f %8.2f  %s%s%s%s\n", r->worst_share, r->all_share,
			        tk_text_shown(tk_fntable_name(ft, r->function)), *bin ? "  [" : "", tk_text_shown(bin),
			        *bin ? "]" : "");
		}
	}
	if (json)
		fputs("]}}\n", out);
	if (ferror(out))
		return tk_error_set(err, "cannot write the function spread");
	return 0;
}
