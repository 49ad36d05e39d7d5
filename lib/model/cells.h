/*
 * Adding a thread's weights in one call, for readers that know a thread's stacks at once (a
 * MetricKit call stack tree: every frame's self count).
 *
 *   tk_thread_add_cells(p, t, cells, n)
 *
 * is tk_sample_add_n(p, t, cells[i].stack, cells[i].weight, cells[i].samples) for i = 0 … n-1, in
 * that order, with the same result; on a thread without samples yet it sizes the thread's cells once
 * and keeps no stack → cell map (one is built if samples are added later), which is what a profile
 * of many small threads spends its memory and page faults on.
 *
 * Internal (not installed).
 */
#ifndef TK_MODEL_CELLS_H
#define TK_MODEL_CELLS_H

#include "tracekit/profile.h"

void tk_thread_add_cells(tk_profile *p, tk_thread_id t, const tk_stack_weight *cells, size_t n);

#endif
