/*
 * Write a profile as an `xctrace export` time-profile table in the Xcode 14.3+ form: <backtrace>
 * of <frame name addr> with <binary> and <source line><path>, leaf first, inlined functions as
 * frames of their own (as Instruments shows them). Every consumer of that form (tracekit, inferno,
 * speedscope, Firefox Profiler importers) can then read a symbolicated profile.
 *
 * When the profile kept its per-sample list (tk_profile_keep_samples), every sample becomes one row
 * with its own time and weight, in the original order. Otherwise the model has only (thread, stack)
 * → (weight, samples), so each cell is written as `samples` rows whose weights add up to the cell's
 * weight exactly, at the thread's first sample time. Threads, binaries, frames, paths, backtraces
 * and repeated times and weights are written once and then referenced by id, as xctrace does.
 *
 * Frames flagged TK_FRAME_INLINED carry the attribute inlined="1" (not an xctrace attribute; other
 * readers ignore it). The xctrace reader turns it back into the flag, so symbolicating this output
 * again recognises the inline chain it already holds instead of adding it a second time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/symbol.h"
#include "tracekit/write.h"
#include "util/mem.h"
#include "util/text.h"

typedef struct idmap {
	uint32_t *v; /* index → xml id (0 = not written yet) */
	size_t n;
} idmap;

static uint32_t *slot(idmap *m, size_t i)
{
	if (i >= m->n) {
		size_t nn = m->n ? m->n : 64;
		while (nn <= i)
			nn *= 2;
		m->v = tk_xrealloc(m->v, nn * sizeof *m->v);
		memset(m->v + m->n, 0, (nn - m->n) * sizeof *m->v);
		m->n = nn;
	}
	return &m->v[i];
}

static void esc(FILE *o, const char *s)
{
	tk_xml_fput(o, s, SIZE_MAX);
}

static void fmt_time(char *buf, size_t cap, uint64_t ns)
{
	uint64_t us = ns / 1000, ms = us / 1000, s = ms / 1000;
	snprintf(buf, cap, "%02" PRIu64 ":%02" PRIu64 ".%03" PRIu64 ".%03" PRIu64, s / 60, s % 60, ms % 1000,
	         us % 1000);
}

typedef struct wr {
	const tk_profile *p;
	FILE *o;
	uint32_t next;
	idmap bins, frames, stacks, strs;
} wr;

static void write_frame(wr *w, tk_frame_id id)
{
	uint32_t *fs = slot(&w->frames, id);
	if (*fs) {
		fprintf(w->o, "<frame ref=\"%u\"/>", *fs);
		return;
	}
	const tk_frame *f = tk_frame_get(w->p, id);
	*fs = ++w->next;
	char lb[32];
	fprintf(w->o, "<frame id=\"%u\" name=\"", *fs);
	esc(w->o, tk_frame_label(w->p, id, lb));
	fprintf(w->o, "\" addr=\"0x%" PRIx64 "\"%s>", f->addr, (f->flags & TK_FRAME_INLINED) ? " inlined=\"1\"" : "");
	if (f->binary) {
		uint32_t *bs = slot(&w->bins, f->binary);
		if (*bs)
			fprintf(w->o, "<binary ref=\"%u\"/>", *bs);
		else {
			const tk_binary *b = tk_binary_get(w->p, f->binary);
			*bs = ++w->next;
			fprintf(w->o, "<binary id=\"%u\" name=\"", *bs);
			esc(w->o, tk_string(w->p, b->name));
			fputs("\" UUID=\"", w->o);
			esc(w->o, tk_string(w->p, b->uuid));
			fputs("\" arch=\"", w->o);
			esc(w->o, tk_string(w->p, b->arch));
			fprintf(w->o, "\" load-addr=\"0x%" PRIx64 "\" path=\"", b->load_addr);
			esc(w->o, tk_string(w->p, b->path));
			fputs("\"/>", w->o);
		}
	}
	if (f->file) {
		fprintf(w->o, "<source line=\"%u\">", f->line);
		uint32_t *ps = slot(&w->strs, f->file);
		if (*ps)
			fprintf(w->o, "<path ref=\"%u\"/>", *ps);
		else {
			*ps = ++w->next;
			fprintf(w->o, "<path id=\"%u\">", *ps);
			esc(w->o, tk_string(w->p, f->file));
			fputs("</path>", w->o);
		}
		fputs("</source>", w->o);
	}
	fputs("</frame>", w->o);
}

typedef struct thr_ids {
	uint32_t thread, proc; /* xml ids once written */
} thr_ids;

typedef struct rowst {
	thr_ids *th;
	uint32_t core_id, state_id;
	uint32_t time_id, weight_id; /* the last ones written, reused while the value repeats */
	uint64_t last_time, last_weight;
	int cycles; /* cpu-profile: <cycle-weight> in cycles */
	tk_frame_id *fr;
	size_t capfr;
} rowst;

static void write_row(wr *w, rowst *rs, tk_thread_id t, tk_stack_id stack, uint64_t wgt, uint64_t tm)
{
	FILE *o = w->o;
	const tk_profile *p = w->p;
	const tk_thread *th = tk_thread_get(p, t);
	fputs("<row>", o);
	if (rs->time_id && tm == rs->last_time)
		fprintf(o, "<sample-time ref=\"%u\"/>", rs->time_id);
	else {
		char tfmt[32];
		fmt_time(tfmt, sizeof tfmt, tm);
		rs->time_id = ++w->next;
		rs->last_time = tm;
		fprintf(o, "<sample-time id=\"%u\" fmt=\"%s\">%" PRIu64 "</sample-time>", rs->time_id, tfmt, tm);
	}
	thr_ids *ti = &rs->th[t];
	const char *proc = th->process ? tk_string(p, th->process) : "";
	if (ti->thread)
		fprintf(o, "<thread ref=\"%u\"/>", ti->thread);
	else {
		ti->thread = ++w->next;
		uint32_t tid_id = ++w->next;
		ti->proc = ++w->next;
		uint32_t pid_id = ++w->next;
		fprintf(o, "<thread id=\"%u\" fmt=\"", ti->thread);
		esc(o, th->name ? tk_string(p, th->name) : "Thread");
		fprintf(o, " 0x%" PRIx64 " (", th->tid);
		esc(o, proc);
		fprintf(o, ", pid: %" PRId64 ")\"><tid id=\"%u\" fmt=\"0x%" PRIx64 "\">%" PRIu64 "</tid>", th->pid,
		        tid_id, th->tid, th->tid);
		fprintf(o, "<process id=\"%u\" fmt=\"", ti->proc);
		esc(o, proc);
		fprintf(o, " (%" PRId64 ")\"><pid id=\"%u\" fmt=\"%" PRId64 "\">%" PRId64 "</pid></process></thread>",
		        th->pid, pid_id, th->pid, th->pid);
	}
	fprintf(o, "<process ref=\"%u\"/>", ti->proc);
	if (rs->core_id)
		fprintf(o, "<core ref=\"%u\"/>", rs->core_id);
	else
		fprintf(o, "<core id=\"%u\" fmt=\"CPU 0\">0</core>", rs->core_id = ++w->next);
	if (rs->state_id)
		fprintf(o, "<thread-state ref=\"%u\"/>", rs->state_id);
	else
		fprintf(o, "<thread-state id=\"%u\" fmt=\"Running\">Running</thread-state>", rs->state_id = ++w->next);
	if (rs->weight_id && wgt == rs->last_weight)
		fprintf(o, rs->cycles ? "<cycle-weight ref=\"%u\"/>" : "<weight ref=\"%u\"/>", rs->weight_id);
	else {
		rs->weight_id = ++w->next;
		rs->last_weight = wgt;
		if (rs->cycles)
			fprintf(o, "<cycle-weight id=\"%u\" fmt=\"%" PRIu64 "\">%" PRIu64 "</cycle-weight>",
			        rs->weight_id, wgt, wgt);
		else
			fprintf(o, "<weight id=\"%u\" fmt=\"%.2f ms\">%" PRIu64 "</weight>", rs->weight_id, wgt / 1e6,
			        wgt);
	}
	if (!stack) {
		fputs("<sentinel/></row>\n", o);
		return;
	}
	uint32_t *ss = slot(&w->stacks, stack);
	if (*ss) {
		fprintf(o, "<backtrace ref=\"%u\"/></row>\n", *ss);
		return;
	}
	*ss = ++w->next;
	fprintf(o, "<backtrace id=\"%u\">", *ss);
	uint32_t depth = tk_stack_depth(p, stack);
	TK_GROW(rs->fr, rs->capfr, depth + 1);
	size_t d = tk_stack_frames(p, stack, rs->fr, depth + 1);
	for (size_t k = d; k-- > 0;) /* leaf first */
		write_frame(w, rs->fr[k]);
	fputs("</backtrace></row>\n", o);
}

/* The name it had when it lived with the symbolicator (lib/symbol): kept for existing callers. */
int tk_symbol_write_xctrace(FILE *o, const tk_profile *p, tk_error *err)
{
	return tk_write_xctrace(o, p, err);
}

int tk_write_xctrace(FILE *o, const tk_profile *p, tk_error *err)
{
	if (tk_profile_weight_decimals(p))
		return tk_error_set(err,
		                    "xctrace: weights with decimals (folded counts such as 1.5) have no export form");
	wr w = {.p = p, .o = o};
	/* cycles stay cycles (a cpu-profile table); every other unit is written as time-profile weights */
	int cycles = tk_profile_unit(p) == TK_UNIT_CYCLES;
	fprintf(o,
	        "<?xml version=\"1.0\"?>\n<trace-query-result>\n<node xpath='//trace-toc[1]/run[1]/data[1]/table[1]'>"
	        "<schema name=\"%s\">",
	        cycles ? "cpu-profile" : "time-profile");
	static const char *cols[][3] = {{"time", "Sample Time", "sample-time"},    {"thread", "Thread", "thread"},
	                                {"process", "Process", "process"},         {"core", "Core", "core"},
	                                {"thread-state", "State", "thread-state"}, {"weight", "Weight", "weight"},
	                                {"stack", "Backtrace", "backtrace"}};
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
		fprintf(o, "<col><mnemonic>%s</mnemonic><name>%s</name><engineering-type>%s</engineering-type></col>",
		        cols[i][0], cols[i][1], cycles && i == 5 ? "cycle-weight" : cols[i][2]);
	fputs("</schema>\n", o);
	rowst rs = {.cycles = cycles};
	rs.th = tk_xcalloc(tk_thread_count(p) + 1, sizeof *rs.th);
	if (tk_profile_sample_count(p)) {
		/* one row per recorded sample, with its own time and weight, in the original order */
		tk_sample_iter *it = tk_sample_iter_new(p, TK_ALL_THREADS);
		tk_sample s;
		while (tk_sample_iter_next(it, &s))
			if (s.thread < tk_thread_count(p))
				write_row(&w, &rs, s.thread, s.stack, s.weight, s.time == UINT64_MAX ? 0 : s.time);
		tk_sample_iter_free(it);
	} else {
		for (size_t t = 0; t < tk_thread_count(p); t++) {
			const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
			size_t n = 0;
			const tk_stack_weight *c = tk_thread_stacks(p, (tk_thread_id)t, &n);
			uint64_t tm = th->t_min <= th->t_max ? th->t_min : 0;
			for (size_t i = 0; i < n; i++) {
				uint64_t rows = c[i].samples ? c[i].samples : (c[i].weight ? 1 : 0);
				for (uint64_t r = 0; r < rows; r++)
					write_row(&w, &rs, (tk_thread_id)t, c[i].stack,
					          c[i].weight / rows + (r == 0 ? c[i].weight % rows : 0), tm);
			}
		}
	}
	fputs("</node></trace-query-result>\n", o);
	free(rs.fr);
	free(rs.th);
	free(w.bins.v);
	free(w.frames.v);
	free(w.stacks.v);
	free(w.strs.v);
	if (fflush(o) != 0 || ferror(o))
		return tk_error_set(err, "write error (disk full or closed pipe?)");
	return 0;
}
