/*
 * Allocation. tk_x* never return NULL, so the model and the readers need no error path per
 * allocation. What happens when memory runs out depends on where:
 *
 *  - inside a guard (tk_oom_guard_push … pop): the allocation longjmps back to the guard, which
 *    turns it into an error value ("out of memory …") for its caller. The entry points that untrusted
 *    input drives (tk_read_input: every reader; the store's bundle decoding) run under one, so a
 *    hostile or huge input gives an error, not a dead process. Memory the interrupted code held is
 *    not freed (the jump skips its clean-up); the profile being filled stays consistent (an
 *    allocation fails before anything points at it), and the caller frees it as usual.
 *  - elsewhere: the handler the program set with tk_set_oom_handler (tracekit/error.h), which must
 *    not return; by default abort(). The library itself never prints.
 */
#ifndef TK_UTIL_MEM_H
#define TK_UTIL_MEM_H

#include <setjmp.h>
#include <stddef.h>

void *tk_xmalloc(size_t n);
void *tk_xcalloc(size_t n, size_t size);
void *tk_xrealloc(void *p, size_t n);
/* n bytes for a big table written whole at once (free with free()): from 1 MB on, aligned on and
 * rounded up to 2 MB and advised for transparent huge pages, so the table's first touch costs a
 * fault per 2 MB instead of one per 4 KB page (on a virtual machine a 4 KB fault can cost ~20 us:
 * more than filling the page). */
void *tk_xmalloc_big(size_t n);
char *tk_xstrdup(const char *s);
char *tk_xstrndup(const char *s, size_t n);

/* Grow a dynamic array: ensures capacity for at least need elements of size sz. */
void tk_grow(void **p, size_t *cap, size_t need, size_t sz);
#define TK_GROW(ptr, cap, need) tk_grow((void **)&(ptr), &(cap), (need), sizeof *(ptr))
/* The same for an array that can grow big (its memory from tk_xmalloc_big once it passes 1 MB). */
void tk_grow_big(void **p, size_t *cap, size_t need, size_t sz);
#define TK_GROW_BIG(ptr, cap, need) tk_grow_big((void **)&(ptr), &(cap), (need), sizeof *(ptr))

/* A guard (per thread, nested guards stack):
 *     tk_oom_guard g;   (or, simpler, tk_oom_run below)
 *     tk_oom_guard_push(&g);
 *     if (setjmp(g.jump)) {            // memory ran out below: g.bytes is the failed request
 *         tk_oom_guard_pop(&g);
 *         return tk_error_set(err, "%s: out of memory (%zu bytes)", name, g.bytes);
 *     }
 *     rc = work();
 *     tk_oom_guard_pop(&g);
 * Locals changed between setjmp and the jump must be volatile to be read after it. */
typedef struct tk_oom_guard {
	jmp_buf jump;
	struct tk_oom_guard *prev;
	size_t bytes;
} tk_oom_guard;
void tk_oom_guard_push(tk_oom_guard *g);
void tk_oom_guard_pop(tk_oom_guard *g);

/* fn(ctx) under a guard: fn's result, or TK_OOM with *bytes set to the request that failed. */
#define TK_OOM (-2)
int tk_oom_run(int (*fn)(void *ctx), void *ctx, size_t *bytes);

/* Tests: make the allocation after the next n fail (0 = never fail). Per thread. */
void tk_mem_fail_after(size_t n);

#endif
