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

#ifdef __cplusplus
}
#endif
#endif
