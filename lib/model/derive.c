#include "model/derive.h"

#include <stdlib.h>

#include "util/mem.h"

tk_profile *tk_derive_begin(tk_derive *d, const tk_profile *in)
{
	d->in = in;
	d->out = tk_profile_new();
	tk_profile_set_unit(d->out, tk_profile_unit(in));
	for (size_t i = 0; i < tk_profile_meta_count(in); i++) {
		const char *k, *v;
		tk_profile_meta_at(in, i, &k, &v);
		tk_profile_set_meta(d->out, k, v);
	}
	d->bins = tk_xcalloc(tk_binary_count(in) + 1, sizeof *d->bins);
	d->frames = tk_xcalloc(tk_frame_count(in) + 1, sizeof *d->frames);
	/* images keep their meaning whatever the stacks become */
	size_t nim = 0;
	const tk_binary *im = tk_profile_images(in, &nim);
	for (size_t i = 0; i < nim; i++) {
		tk_binary nb = im[i];
		nb.name = tk_derive_str(d, im[i].name);
		nb.path = tk_derive_str(d, im[i].path);
		nb.uuid = tk_derive_str(d, im[i].uuid);
		nb.arch = tk_derive_str(d, im[i].arch);
		tk_profile_image_add(d->out, &nb);
	}
	return d->out;
}

void tk_derive_end(tk_derive *d)
{
	free(d->bins);
	free(d->frames);
	d->bins = NULL;
	d->frames = NULL;
}

tk_str tk_derive_str(tk_derive *d, tk_str s)
{
	return s ? tk_intern(d->out, tk_string(d->in, s), tk_string_len(d->in, s)) : 0;
}

tk_binary_id tk_derive_binary(tk_derive *d, tk_binary_id id)
{
	const tk_binary *b = tk_binary_get(d->in, id);
	if (!b)
		return 0;
	if (!d->bins[id]) {
		tk_binary nb = *b;
		nb.name = tk_derive_str(d, b->name);
		nb.path = tk_derive_str(d, b->path);
		nb.uuid = tk_derive_str(d, b->uuid);
		nb.arch = tk_derive_str(d, b->arch);
		d->bins[id] = tk_binary_add(d->out, &nb);
	}
	return d->bins[id];
}

tk_frame_id tk_derive_frame(tk_derive *d, tk_frame_id f)
{
	const tk_frame *fr = tk_frame_get(d->in, f);
	if (!fr)
		return 0;
	if (!d->frames[f]) {
		tk_frame nf = *fr;
		nf.name = tk_derive_str(d, fr->name);
		nf.file = tk_derive_str(d, fr->file);
		nf.binary = fr->binary ? tk_derive_binary(d, fr->binary) : 0;
		d->frames[f] = tk_frame_add(d->out, &nf);
	}
	return d->frames[f];
}

tk_thread_id tk_derive_thread(tk_derive *d, tk_thread_id t)
{
	const tk_thread *th = tk_thread_get(d->in, t);
	if (th->event && th->role == TK_ROLE_CONTEXT) /* one of an event's own (tk_thread_add) */
		return tk_thread_add(d->out, th->pid, th->tid, tk_derive_str(d, th->name), tk_derive_str(d, th->process));
	return tk_thread_get_or_add(d->out, th->pid, th->tid, tk_derive_str(d, th->name),
	                            tk_derive_str(d, th->process));
}

void tk_derive_samples(tk_derive *d, const tk_stack_id *map)
{
	tk_thread_id *tmap = tk_xcalloc(tk_thread_count(d->in) + 1, sizeof *tmap);
	for (size_t t = 0; t < tk_thread_count(d->in); t++) {
		const tk_thread *th = tk_thread_get(d->in, (tk_thread_id)t);
		tk_thread_id nt = tk_derive_thread(d, (tk_thread_id)t);
		tmap[t] = nt;
		size_t n = 0;
		const tk_stack_weight *c = tk_thread_stacks(d->in, (tk_thread_id)t, &n);
		int need_min = th->t_min <= th->t_max, need_max = need_min && th->t_max != th->t_min;
		for (size_t i = 0; i < n; i++) {
			tk_stack_id st = map[c[i].stack];
			uint64_t w = c[i].weight, s = c[i].samples;
			/* the model keeps time bounds only through tk_sample_add: place them on real samples */
			if (need_min && s) {
				tk_sample_add(d->out, nt, st, w, th->t_min);
				w = 0, s--, need_min = 0;
			}
			if (need_max && s) {
				tk_sample_add(d->out, nt, st, w, th->t_max);
				w = 0, s--, need_max = 0;
			}
			if (s || w)
				tk_sample_add_n(d->out, nt, st, w, s);
		}
	}
	/* The aggregates above came from the cells (tk_sample_add there must not record samples, so the
	 * list is switched on only now); the list keeps each sample's time and order. */
	tk_profile_keep_samples(d->out, tk_profile_keeps_samples(d->in));
	tk_sample_iter *it = tk_sample_iter_new(d->in, TK_ALL_THREADS);
	tk_sample s;
	while (tk_sample_iter_next(it, &s))
		if (s.thread < tk_thread_count(d->in))
			tk_sample_list_append(d->out, &(tk_sample){s.time, s.weight, tmap[s.thread], map[s.stack]});
	tk_sample_iter_free(it);
	tk_derive_events(d, tmap);
	free(tmap);
}

void tk_derive_events(tk_derive *d, const tk_thread_id *tmap)
{
	size_t ne = tk_event_count(d->in), nt = tk_thread_count(d->in);
	if (!ne)
		return;
	tk_event_id *emap = tk_xcalloc(ne + 1, sizeof *emap);
	for (tk_event_id e = 1; e <= ne; e++) {
		tk_thread_id t = tk_event_get(d->in, e)->thread;
		emap[e] = tk_event_copy(d->out, d->in, e, t < nt ? tmap[t] : TK_NO_THREAD);
	}
	for (size_t t = 0; t < nt; t++) {
		const tk_thread *th = tk_thread_get(d->in, (tk_thread_id)t);
		if (th->event && th->event <= ne && tmap[t] != TK_NO_THREAD)
			tk_thread_set_event(d->out, tmap[t], emap[th->event], th->role);
	}
	free(emap);
}
