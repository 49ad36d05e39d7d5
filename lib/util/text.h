/*
 * Text that reaches a terminal. Names and messages come from untrusted files (thread names,
 * frame names, toc attributes, libdwarf's errors) and may hold escape sequences, line breaks or
 * bytes that are not UTF-8: written raw they could rewrite the screen or forge output lines. Every
 * C0 control, DEL, C1 control (raw or UTF-8 encoded) and byte outside valid UTF-8 becomes \xHH;
 * printable UTF-8 passes through unchanged. Internal (not installed).
 */
#ifndef TK_UTIL_TEXT_H
#define TK_UTIL_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Escape s into out (cap > 0 bytes, always NUL-terminated, cut at a whole escape or character).
 * newline_space: line breaks and tabs become one space (messages stay one readable line).
 * Returns the length written. */
size_t tk_text_escape(const char *s, char *out, size_t cap, int newline_space);
/* Write s escaped to f (no newline handling: every control is escaped). */
void tk_text_fput(FILE *f, const char *s);
/* Non-zero when s needs no escaping. */
int tk_text_is_clean(const char *s);
/* s with every byte that starts no valid UTF-8 character (stray continuation, overlong form,
 * surrogate, beyond U+10FFFF, cut sequence) replaced by U+FFFD, into out (3 * strlen(s) + 1
 * bytes). Returns the length. */
size_t tk_utf8_repair(char *out, const char *s);
/* s as a terminal may show it: s itself when clean (or NULL), else escaped (tk_text_escape) into one
 * of 8 rotating per-thread buffers, so several may appear in one printf; longer text is cut. */
const char *tk_text_shown(const char *s);

/* The one JSON string escaper: s as a JSON string literal, quotes included (" \\ \n \r \t as
 * short escapes, other controls as \u00XX, bytes >= 0x80 as they are: input is UTF-8).
 * tk_json_quote writes into out, which must hold 6 * strlen(s) + 3 bytes, and returns the length
 * (out is NUL-terminated); tk_json_fput writes to f. */
size_t tk_json_quote(char *out, const char *s);
void tk_json_fput(FILE *f, const char *s);

#endif
