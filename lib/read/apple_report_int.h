/* Shared by the report readers (ips.c, crash.c, spindump.c) and report.c: building a tk_apple_report. */
#ifndef TK_READ_APPLE_REPORT_INT_H
#define TK_READ_APPLE_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/apple_report.h"

/* The whole input in memory (reports are small; the cap guards against runaway inputs), NUL-
 * terminated, with *n bytes. NULL with err on I/O error, NUL bytes (text formats) or over cap. */
char *tk_apple_report_slurp(tk_input *in, size_t *n, int allow_nul, tk_error *err);
/* Split buf into r->lines (copies). */
void tk_apple_report_split_lines(tk_apple_report *r, const char *buf, size_t n);

void tk_apple_report_set_attr(tk_apple_report *r, const char *key, const char *value, size_t len);
tk_apple_report_thread *tk_apple_report_add_thread(tk_apple_report *r);
tk_apple_report_frame *tk_apple_report_add_frame(tk_apple_report_thread *t);
tk_apple_report_image *tk_apple_report_add_image(tk_apple_report *r);
tk_apple_report_process *tk_apple_report_add_process(tk_apple_report *r);
/* "4C4C44DF555531…" (32 hex, dashes optional) → malloc'd "4C4C44DF-5555-…" upper-case; NULL if not a UUID. */
char *tk_apple_report_uuid(const char *s, size_t n);
/* "2022-07-28 11:10:19.4194 -0700" → Unix seconds; NAN if not that form. */
double tk_apple_report_parse_time(const char *s, size_t n);
/* "ARM-64" → "arm64", "X86-64" → "x86_64" … (static strings), else NULL. */
const char *tk_apple_report_arch_name(const char *code_type, size_t n);
/* The ips header line's fields as attributes (app, app.version, app.build, bundle, os, incident,
 * bug_type); header is a jansson object. */
void tk_apple_report_header_attrs(tk_apple_report *r, void *header);
/* Parse the first line as an ips header if it is one: returns the bytes it takes (with its newline),
 * 0 if the input does not start with one, -1 with err when it starts like one but is not JSON. */
long tk_apple_report_read_header(tk_apple_report *r, const char *buf, size_t n, tk_error *err);

/* JSON text s[0..n) (nothing but blanks after the value) as a jansson value, built without jansson's
 * lexer when it is plain (ASCII strings with one-letter escapes, integers of at most 18 digits, no
 * reals) and an object or an array as json_loadb wants; NULL when it is not (then json_loadb says what
 * jansson makes of it). lib/read/ips.c */
void *tk_apple_report_json_strict(const char *s, size_t n);

/* flags: TK_APPLE_REPORT_TEXT_ONLY lets the scanner read frames and images (r->json_partial) */
int tk_apple_report_parse_ips(tk_apple_report *r, char *buf, size_t n, size_t body, unsigned flags, tk_error *err);
int tk_apple_report_parse_crash(tk_apple_report *r, const char *buf, size_t n, size_t body, tk_error *err);
int tk_apple_report_parse_spindump(tk_apple_report *r, const char *buf, size_t n, size_t body, tk_error *err);

/* Read a report and fill p (what each registry reader does). */
int tk_apple_report_read_profile(tk_profile *p, tk_input *in, tk_error *err);

/* Shared text helpers */
int tk_apple_report_starts(const char *s, size_t n, const char *lit);
size_t tk_apple_report_trim(const char *s, size_t n);
/* "Key:   value" → value (after the colon and blanks); NULL if s does not start with key. */
const char *tk_apple_report_field(const char *s, size_t n, const char *key, size_t *vlen);
int tk_apple_report_hex(const char *s, size_t n, uint64_t *v, size_t *used);

/* A "Binary Images:" line as crash reports and spindump write it,
 *     "  0x19cc3e000 -        0x19cc76feb +libsystem_kernel.dylib (1.0) arm64e <b889…> /usr/lib/…"
 * ("???" for an unknown end): the range, the name column (a leading '+' and a trailing "(…)" version
 * dropped; what is left may still end in an arch), the UUID text and the path, all pointing into s.
 * Returns 0 when s is not such a line. */
typedef struct tk_apple_image_text {
	uint64_t lo, hi; /* hi = 0 when unknown */
	const char *name, *uuid, *path;
	size_t name_len, uuid_len, path_len; /* path_len 0: no path */
} tk_apple_image_text;
int tk_apple_report_image_text(const char *s, size_t n, tk_apple_image_text *out);

#endif
