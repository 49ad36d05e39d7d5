/*
 * tracekit/error.h — errors are values.
 *
 * Library functions never print and never exit. A function that can fail takes a tk_error * (may
 * be NULL) and returns -1 (or NULL) after filling it with one line that names the input, the place
 * and the problem, e.g.
 *
 *   trace.xml:1:2045: <frame ref="99"> refers to id 99, which is not defined before this point
 */
#ifndef TRACEKIT_ERROR_H
#define TRACEKIT_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_error {
	char msg[512];
} tk_error;

/* Fill err (if not NULL) with a printf-style message; always returns -1 so callers can
 * `return tk_error_set(err, ...)`. */
int tk_error_set(tk_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tk_error_setv(tk_error *err, const char *fmt, va_list ap);

/* Running out of memory. Reading an input (tk_read_path, tk_read_input) and decoding an upload
 * report it as an error value like any other ("NAME: out of memory (N bytes) while reading"). Other
 * library code cannot unwind half-built structures, so there it calls the handler set here, which
 * must not return (exit, abort or longjmp); without one the library calls abort(). The library
 * never prints: a program that wants a message says it in its handler. Set it once, at start-up. */
typedef void (*tk_oom_handler)(size_t bytes);
void tk_set_oom_handler(tk_oom_handler h);

#ifdef __cplusplus
}
#endif
#endif
