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
#include <stdint.h>
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

/* The one UTF-8 decoder behind every escaper here (terminal, JSON, XML): the code point of the
 * character at s and its length in *len, or -1 when s starts an ill-formed sequence (a stray
 * continuation byte, an overlong form, an encoded surrogate, a code point above U+10FFFF, a cut
 * sequence) with *len the length of its maximal subpart (Unicode's "U+FFFD substitution of maximal
 * subparts", as Python, browsers and the WHATWG encoding standard decode). Never reads past a NUL. */
int32_t tk_utf8_next(const char *s, size_t *len);

/* The one JSON string escaper: s as a JSON string literal, quotes included (" \\ \n \r \t as
 * short escapes, other controls as \u00XX, valid UTF-8 as it is, each ill-formed subpart as U+FFFD:
 * the output is always valid UTF-8, whatever the input's bytes). tk_json_quote writes into out,
 * which must hold 6 * strlen(s) + 3 bytes, and returns the length (out is NUL-terminated);
 * tk_json_fput writes to f (NULL is written as ""). */
size_t tk_json_quote(char *out, const char *s);
/* Non-zero when s is well-formed UTF-8. */
int tk_utf8_valid(const char *s);
/* A copy of s (tk_xmalloc'd) with each ill-formed subpart as U+FFFD: for outputs that carry text
 * unescaped (protobuf strings). */
char *tk_utf8_dup(const char *s);
void tk_json_fput(FILE *f, const char *s);

/* Numbers as printf's "%llu" and "0x%llx" write them, without printf (hot loops: a frame's
 * "image + 0x1f4" label, a folded line's count). out holds 24 bytes; returns the length, no NUL. */
size_t tk_fmt_u64(char *out, uint64_t v);
size_t tk_fmt_hex(char *out, uint64_t v);

/* The one XML text escaper (element text and attribute values, SVG included): & < > " ' as
 * entities, valid UTF-8 as it is; ill-formed UTF-8 and what XML 1.0 forbids (C0 controls but tab,
 * U+FFFE, U+FFFF) as U+FFFD. At most maxchars characters (SIZE_MAX: all); returns how many. */
size_t tk_xml_fput(FILE *f, const char *s, size_t maxchars);

#endif
