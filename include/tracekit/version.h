/*
 * tracekit/version.h — the library's version, at compile time and at run time.
 *
 * TK_VERSION_NUMBER orders versions as integers (MAJOR * 10000 + MINOR * 100 + PATCH), so code built
 * against one release can test for a feature with `#if TK_VERSION_NUMBER >= 200`, and compare the
 * headers it was compiled with (TK_VERSION_NUMBER) against the library it runs with
 * (tk_version_number()) when it links the shared form.
 */
#ifndef TRACEKIT_VERSION_H
#define TRACEKIT_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define TK_VERSION_MAJOR 0
#define TK_VERSION_MINOR 1
#define TK_VERSION_PATCH 0

#define TK_VERSION_NUMBER (TK_VERSION_MAJOR * 10000 + TK_VERSION_MINOR * 100 + TK_VERSION_PATCH)

#define TK_VERSION_STR_(x) #x
#define TK_VERSION_STR(x) TK_VERSION_STR_(x)
/* "MAJOR.MINOR.PATCH" */
#define TK_VERSION TK_VERSION_STR(TK_VERSION_MAJOR) "." TK_VERSION_STR(TK_VERSION_MINOR) "." TK_VERSION_STR(TK_VERSION_PATCH)

/* The version of the library linked at run time, as TK_VERSION_NUMBER and TK_VERSION. */
unsigned tk_version_number(void);
const char *tk_version_string(void);

#ifdef __cplusplus
}
#endif
#endif
