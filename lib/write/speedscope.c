/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json, shipped in npm's
 * `speedscope` package as dist/release/file-format-schema.json).
 *
 *   shared.frames  one per function (label + binary, as transforms define it): name = the label,
 *                  file = the source path the export gives for it, else the binary's path; line =
 *                  the first source line seen in that function (a sampled line, not its start)
 *   profiles       one "sampled" profile per thread (or one for all with merge_threads), named
 *                  "NAME (tid N)"; samples = the thread's distinct stacks, root first, each once,
 *                  with weights = their summed weights, so Σ weights is the thread's total;
 *                  an empty stack (a sentinel row) is the empty sample []
 *   unit           "nanoseconds" for time profiles, else "none" (cycles, events, sample counts)
 *
 * Samples are aggregated per distinct stack, so speedscope's "Left Heavy" and "Sandwich" views
 * are exact while "Time Order" shows stacks in first-seen order, not the recording's timeline.
 * Memory: the function table plus one stack's frames; output is streamed.
 */
#include <stdlib.h>
#include <string.h>

#include "tracekit/tracekit.h"
#include "tracekit/write.h"
#include "util/mem.h"
#include "write/functab.h"
#include "write/wutil.h"

int tk_write_speedscope(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err);

static void write_frames(FILE *out, const tk_profile *p, const tk_functab *ft)
{
	char buf[32];
	fputs("\"shared\":{\"frames\":[", out);
	for (uint32_t i = 0; i < ft->n; i++) {
		tk_frame_id id = ft->first[i];
		const tk_frame *f = tk_frame_get(p, id);
		const tk_binary *b = tk_binary_get(p, f->binary);
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		tk_wu_json_string(out, tk_frame_label(p, id, buf));
		const char *file = f->file ? tk_string(p, f->file) : "";
		if (!*file && b)
			file = tk_string(p, b->path ? b->path : b->name);
		if (*file) {
			fputs(",\"file\":", out);
			tk_wu_json_string(out, file);
		}
		if (f->line)
			fprintf(out, ",\"line\":%u", f->line);
		putc('}', out);
	}
	fputs("]}", out);
}

typedef struct cell {
	tk_stack_id stack;
	uint64_t weight;
} cell;

static void write_samples(FILE *out, const tk_profile *p, const tk_functab *ft, const cell *cells, size_t n,
                          tk_frame_id **fr, size_t *cap)
{
	fputs("\"samples\":[", out);
	for (size_t i = 0; i < n; i++) {
		size_t d = tk_stack_depth(p, cells[i].stack);
		TK_GROW(*fr, *cap, d ? d : 1);
		tk_stack_frames(p, cells[i].stack, *fr, d);
		putc(i ? ',' : '[', out);
		if (i)
			putc('[', out);
		for (size_t k = 0; k < d; k++)
			fprintf(out, k ? ",%u" : "%u", ft->of_frame[(*fr)[k]]);
		putc(']', out);
		if (i % 16 == 15)
			putc('\n', out);
	}
	fputs("],\"weights\":[", out);
	unsigned dec = tk_profile_weight_decimals(p); /* folded `1.5` counts: exact decimals */
	for (size_t i = 0; i < n; i++) {
		char num[32];
		tk_wu_decimal(num, sizeof num, cells[i].weight, dec);
		fprintf(out, i ? ",%s" : "%s", num);
	}
	putc(']', out);
}

static void profile_head(FILE *out, const char *name, const char *unit, uint64_t total, unsigned dec)
{
	fputs("{\"type\":\"sampled\",\"name\":", out);
	tk_wu_json_string(out, name);
	char num[32];
	tk_wu_decimal(num, sizeof num, total, dec);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%s,\n", unit, num);
}

static int by_weight(const void *a, const void *b, void *pp)
{
	const tk_profile *p = pp;
	const tk_thread *x = tk_thread_get(p, *(const tk_thread_id *)a),
	                *y = tk_thread_get(p, *(const tk_thread_id *)b);
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int tk_write_speedscope(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err)
{
	tk_functab ft;
	tk_functab_build(&ft, p);
	tk_unit u = tk_profile_unit(p);
	const char *unit = u == TK_UNIT_NS ? "nanoseconds" : u == TK_UNIT_BYTES ? "bytes" : "none";
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", out);
	fputs("\"name\":", out);
	tk_wu_json_string(out, o && o->title ? o->title : "tracekit");
	fprintf(out, ",\"exporter\":\"tracekit %s\",\"activeProfileIndex\":0,\n", TK_VERSION);
	write_frames(out, p, &ft);
	fputs(",\n\"profiles\":[", out);

	/* Threads in the order of the other writers: heaviest first. */
	size_t nt = tk_thread_count(p);
	tk_thread_id *order = tk_xmalloc((nt ? nt : 1) * sizeof *order);
	size_t m = 0;
	for (size_t t = 0; t < nt; t++)
		if (tk_thread_get(p, (tk_thread_id)t)->samples)
			order[m++] = (tk_thread_id)t;
	qsort_r(order, m, sizeof *order, by_weight, (void *)p);
	cell *cells = NULL;
	size_t ncells = 0, capcells = 0, capfr = 0;
	tk_frame_id *fr = NULL;
	if (o && o->merge_threads) {
		/* One profile: the same stack in two threads is two cells, which speedscope adds up. */
		uint64_t total = 0;
		for (size_t t = 0; t < nt; t++) {
			size_t ns;
			const tk_stack_weight *sw = tk_thread_stacks(p, (tk_thread_id)t, &ns);
			for (size_t k = 0; k < ns; k++) {
				TK_GROW(cells, capcells, ncells + 1);
				cells[ncells++] = (cell){sw[k].stack, sw[k].weight};
			}
			total += tk_thread_get(p, (tk_thread_id)t)->weight;
		}
		char name[64];
		snprintf(name, sizeof name, "All threads (%zu)", m);
		profile_head(out, name, unit, total, tk_profile_weight_decimals(p));
		write_samples(out, p, &ft, cells, ncells, &fr, &capfr);
		fputs("}", out);
	} else {
		for (size_t i = 0; i < m; i++) {
			tk_thread_id tid = order[i];
			const tk_thread *th = tk_thread_get(p, tid);
			size_t ns;
			const tk_stack_weight *sw = tk_thread_stacks(p, tid, &ns);
			ncells = 0;
			for (size_t k = 0; k < ns; k++) {
				TK_GROW(cells, capcells, ncells + 1);
				cells[ncells++] = (cell){sw[k].stack, sw[k].weight};
			}
			const char *tname = th->name ? tk_string(p, th->name) : "(unnamed)";
			char *name = tk_xmalloc(strlen(tname) + strlen(tk_string(p, th->process)) + 96);
			sprintf(name, "%s (tid %llu), %s (pid %lld)", tname, (unsigned long long)th->tid,
			        th->process ? tk_string(p, th->process) : "process", (long long)th->pid);
			fputs(i ? ",\n" : "\n", out);
			profile_head(out, name, unit, th->weight, tk_profile_weight_decimals(p));
			free(name);
			write_samples(out, p, &ft, cells, ncells, &fr, &capfr);
			fputs("}", out);
		}
	}
	fputs("]}\n", out);
	free(order);
	free(cells);
	free(fr);
	tk_functab_free(&ft);
	return tk_wu_finish(out, "speedscope", err);
}
