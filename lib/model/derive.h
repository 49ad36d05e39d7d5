/*
 * Deriving a profile from a profile: what transforms (model/transform.c) and symbolication
 * (symbol/profile_sym.c) share. The new profile starts with the input's unit, metadata and trace
 * images; strings, binaries and frames are copied on demand, each once (memo tables sized from
 * the input), so the derived profile holds only what its stacks use.
 *
 *   tk_derive d;
 *   tk_profile *out = tk_derive_begin(&d, in);
 *   ... tk_derive_frame(&d, f), tk_derive_binary(&d, b), tk_derive_str(&d, s),
 *       tk_derive_thread(&d, t) ...
 *   tk_derive_end(&d);                      // frees the memo tables, not out
 *
 * Internal (not installed).
 */
#ifndef TK_MODEL_DERIVE_H
#define TK_MODEL_DERIVE_H

#include "tracekit/profile.h"

typedef struct tk_derive {
	const tk_profile *in;
	tk_profile *out;
	tk_binary_id *bins;  /* input binary → output binary (0 = not copied yet) */
	tk_frame_id *frames; /* input frame → output frame (0 = not copied yet) */
} tk_derive;

tk_profile *tk_derive_begin(tk_derive *d, const tk_profile *in);
void tk_derive_end(tk_derive *d);
tk_str tk_derive_str(tk_derive *d, tk_str s);
tk_binary_id tk_derive_binary(tk_derive *d, tk_binary_id b);
/* The frame as it is (name, binary, file, line, flags). */
tk_frame_id tk_derive_frame(tk_derive *d, tk_frame_id f);
/* The input thread's identity (pid, tid, name, process) in the output; no samples. */
tk_thread_id tk_derive_thread(tk_derive *d, tk_thread_id t);
/* Every thread's samples (weights, counts, time bounds, the per-sample list) onto the output,
 * input stack s becoming map[s]; threads are derived (tk_derive_thread) in input order. */
void tk_derive_samples(tk_derive *d, const tk_stack_id *map);
/* The input's events onto the output (attributes, times, kinds, tk_event_copy in order), each thread
 * role following tmap (input thread → output thread, TK_NO_THREAD when not derived). keep (indexed
 * by event id, may be NULL) selects events (--kind, --event); without it every event stays, drawn on
 * no thread when its thread was left out. tk_derive_samples calls it for every thread. */
void tk_derive_events(tk_derive *d, const tk_thread_id *tmap, const uint8_t *keep);

/* In place (symbolication that renames frames instead of deriving a profile): p's frame table and
 * stack tree become q's (q built with tk_frame_add/tk_stack_push, its frames naming p's strings and
 * binaries; q gets p's old tables, to free), and every thread's cell of stack s moves to map[s],
 * cells that meet added up. Strings, binaries, threads, events and metadata stay. Returns 0, or -1
 * (p unchanged) when p keeps a per-sample list, whose rows name stacks. */
int tk_profile_take_tree(tk_profile *p, tk_profile *q, const tk_stack_id *map);
/* Room for frames more frames and stacks more stacks without growing (a table rebuilt to a known
 * size: tk_symbolicate_profile_take). */
void tk_profile_reserve(tk_profile *p, size_t frames, size_t stacks);
/* Tables rebuilt whole by a caller that knows which entries are new (tk_symbolicate_profile_take):
 * tk_frame_append adds f as a new frame, tk_stack_append frame as a new child of parent, without
 * looking for an equal one (the caller guarantees there is none). The frame index is built by the
 * next tk_frame_add, so a frame table nobody adds to after is never hashed. */
tk_frame_id tk_frame_append(tk_profile *p, const tk_frame *f);
tk_stack_id tk_stack_append(tk_profile *p, tk_stack_id parent, tk_frame_id frame);

#endif
