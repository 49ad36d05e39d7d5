/*
 * Image loads from the kdebug tables of an xctrace export (pre-Xcode 14.3 traces, whose stacks are
 * bare addresses). The xctrace reader hands every cell of a `kdebug` or `kdebug-strings` row to
 * this module by element name; at the end of the document the dyld UUID-map events become the
 * profile's image list (tk_profile_image_add). See docs/symbolication.md for what is verified.
 */
#ifndef TK_READ_KDEBUG_H
#define TK_READ_KDEBUG_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/profile.h"

enum { TK_KD_NONE = 0, TK_KD_EVENTS = 1, TK_KD_STRINGS = 2 };

typedef struct tk_kdebug tk_kdebug;

tk_kdebug *tk_kdebug_new(void);
void tk_kdebug_free(tk_kdebug *k);
/* TK_KD_EVENTS for "kdebug", TK_KD_STRINGS for "kdebug-strings", else TK_KD_NONE. */
int tk_kdebug_table(const char *schema);
/* Is the element named name a string cell (its value is the interned text, not a number)? */
int tk_kdebug_string_cell(const char *name, size_t nl);
/* A cell's number: its text in decimal (or 0x hex), else the hex in fmt (has_fmt/fmt_val). */
uint64_t tk_kdebug_number(const char *text, size_t tl, int has_fmt, uint64_t fmt_val);
int tk_kdebug_parse_hex(const char *s, size_t n, uint64_t *v);
void tk_kdebug_row_begin(tk_kdebug *k, int table);
void tk_kdebug_cell(tk_kdebug *k, const char *name, size_t nl, uint64_t v);
void tk_kdebug_row_end(tk_kdebug *k);
/* Add the images found to p (paths from the string table); returns how many. */
size_t tk_kdebug_finish(tk_kdebug *k, tk_profile *p);

#endif
