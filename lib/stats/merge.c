/* Several runs into one profile. */
#include <stdlib.h>

#include "tracekit/profile.h"
#include "tracekit/stats.h"
#include "util/mem.h"

static tk_str copy_str(tk_profile *dst, const tk_profile *src, tk_str s)
{
	return s ? tk_intern(dst, tk_string(src, s), tk_string_len(src, s)) : 0;
}

int tk_profile_merge(tk_profile *dst, const tk_profile *src, tk_error *err)
{
	if (tk_profile_weight(dst) && tk_profile_unit(dst) != tk_profile_unit(src))
		return tk_error_set(err, "merging profiles: weights in %s and %s", tk_unit_name(tk_profile_unit(dst)),
		                    tk_unit_name(tk_profile_unit(src)));
	tk_profile_set_unit(dst, tk_profile_unit(src));
	/* Source frame id → destination frame id, and stack id → stack id, made on first use. */
	size_t nf = tk_frame_count(src) + 1, ns = tk_stack_count(src) + 1;
	tk_frame_id *fmap = tk_xcalloc(nf, sizeof *fmap);
	tk_stack_id *smap = tk_xcalloc(ns, sizeof *smap);
	uint8_t *sdone = tk_xcalloc(ns, 1);
	tk_stack_id *chain = NULL;
	size_t capchain = 0;
	for (size_t ti = 0; ti < tk_thread_count(src); ti++) {
		const tk_thread *t = tk_thread_get(src, (tk_thread_id)ti);
		tk_thread_id dt = tk_thread_get_or_add(dst, t->pid, t->tid, copy_str(dst, src, t->name),
		                                       copy_str(dst, src, t->process));
		size_t n;
		const tk_stack_weight *sw = tk_thread_stacks(src, (tk_thread_id)ti, &n);
		for (size_t i = 0; i < n; i++) {
			/* Map the stack root first; its prefixes are mapped on the way. */
			size_t depth = 0;
			tk_stack_id s = sw[i].stack;
			tk_grow((void **)&chain, &capchain, tk_stack_depth(src, s) + 1, sizeof *chain);
			while (s && !sdone[s]) {
				chain[depth++] = s;
				s = tk_stack_get(src, s)->parent;
			}
			tk_stack_id ds = s ? smap[s] : 0;
			while (depth) {
				tk_stack_id cur = chain[--depth];
				tk_frame_id f = tk_stack_get(src, cur)->frame;
				if (!fmap[f]) {
					tk_frame fr = *tk_frame_get(src, f);
					fr.name = copy_str(dst, src, fr.name);
					fr.file = copy_str(dst, src, fr.file);
					if (fr.binary) {
						tk_binary b = *tk_binary_get(src, fr.binary);
						b.name = copy_str(dst, src, b.name);
						b.path = copy_str(dst, src, b.path);
						b.uuid = copy_str(dst, src, b.uuid);
						b.arch = copy_str(dst, src, b.arch);
						fr.binary = tk_binary_add(dst, &b);
					}
					fmap[f] = tk_frame_add(dst, &fr);
				}
				ds = tk_stack_push(dst, ds, fmap[f]);
				smap[cur] = ds;
				sdone[cur] = 1;
			}
			tk_sample_add_n(dst, dt, ds, sw[i].weight, sw[i].samples);
		}
	}
	free(fmap), free(smap), free(sdone), free(chain);
	return 0;
}
