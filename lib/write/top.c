/*
 * Top functions (Instruments' "Top Functions", pprof -top): text and JSON. Percentages are of the
 * profile's whole weight, empty stacks included, so a column of self percentages sums to at most
 * 100 and no total exceeds 100 (a recursive function counts once per sample).
 */
#include "tracekit/write.h"
#include "util/text.h"
#include "write/wutil.h"

static const char *entry_binary(const tk_profile *p, tk_frame_id f)
{
	const tk_frame *fr = tk_frame_get(p, f);
	const tk_binary *b = fr ? tk_binary_get(p, fr->binary) : NULL;
	return b ? tk_string(p, b->name) : "";
}

int tk_write_top_text(FILE *out, const tk_top *t, size_t limit, tk_error *err)
{
	const tk_profile *p = t->profile;
	tk_unit u = tk_profile_unit(p);
	const char *du = tk_wu_display_unit(u);
	char wt[32];
	tk_wu_weight(wt, sizeof wt, u, tk_profile_weight_decimals(p), t->weight);
	if (u == TK_UNIT_SAMPLES) /* the weight is the sample count: say it once */
		fprintf(out, "Top functions: %s %s, %zu function%s\n", wt, du, t->n, t->n == 1 ? "" : "s");
	else
		fprintf(out, "Top functions: %s %s, %llu sample%s, %zu function%s\n", wt, du,
		        (unsigned long long)t->samples, t->samples == 1 ? "" : "s", t->n, t->n == 1 ? "" : "s");
	char hs[32], ht[32];
	snprintf(hs, sizeof hs, "Self %s", du);
	snprintf(ht, sizeof ht, "Total %s", du);
	fprintf(out, "%14s %7s %14s %7s %10s  %s\n", hs, "Self%", ht, "Total%", "Samples", "Function");
	size_t n = limit && limit < t->n ? limit : t->n;
	for (size_t i = 0; i < n; i++) {
		const tk_top_entry *e = &t->entries[i];
		char s[32], tot[32], buf[32];
		tk_wu_weight(s, sizeof s, u, tk_profile_weight_decimals(p), e->self);
		tk_wu_weight(tot, sizeof tot, u, tk_profile_weight_decimals(p), e->total);
		fprintf(out, "%14s %6.1f%% %14s %6.1f%% %10llu  ", s, tk_wu_percent(e->self, t->weight), tot,
		        tk_wu_percent(e->total, t->weight), (unsigned long long)e->samples);
		tk_text_fput(out, tk_frame_label(p, e->frame, buf));
		const char *bin = entry_binary(p, e->frame);
		if (*bin) {
			fputs("  [", out);
			tk_text_fput(out, bin);
			putc(']', out);
		}
		putc('\n', out);
	}
	if (n < t->n)
		fprintf(out, "(%zu more; --limit 0 shows all)\n", t->n - n);
	return tk_wu_finish(out, "top functions", err);
}

int tk_write_top_json(FILE *out, const tk_top *t, size_t limit, tk_error *err)
{
	const tk_profile *p = t->profile;
	fprintf(out, "{\"unit\":\"%s\",", tk_unit_name(tk_profile_unit(p)));
	if (tk_profile_weight_decimals(p)) /* weights count 10^-D of the unit (folded `1.5` counts) */
		fprintf(out, "\"weight_decimals\":%u,", tk_profile_weight_decimals(p));
	fprintf(out, "\"total\":%llu,\"samples\":%llu,\"count\":%zu,\"functions\":[", (unsigned long long)t->weight,
	        (unsigned long long)t->samples, t->n);
	size_t n = limit && limit < t->n ? limit : t->n;
	for (size_t i = 0; i < n; i++) {
		const tk_top_entry *e = &t->entries[i];
		char buf[32];
		fputs(i ? ",{\"name\":" : "{\"name\":", out);
		tk_wu_json_string(out, tk_frame_label(p, e->frame, buf));
		const char *bin = entry_binary(p, e->frame);
		if (*bin) {
			fputs(",\"binary\":", out);
			tk_wu_json_string(out, bin);
		}
		fprintf(out, ",\"self\":%llu,\"total\":%llu,\"self_samples\":%llu,\"samples\":%llu}",
		        (unsigned long long)e->self, (unsigned long long)e->total, (unsigned long long)e->self_samples,
		        (unsigned long long)e->samples);
	}
	fputs("]}\n", out);
	return tk_wu_finish(out, "top functions JSON", err);
}
