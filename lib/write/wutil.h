/*
 * Helpers shared by the writers in lib/write/: weights in display units, JSON strings, and the
 * final stream check. Internal (not installed).
 */
#ifndef TK_WRITE_WUTIL_H
#define TK_WRITE_WUTIL_H

#include <stdint.h>
#include <stdio.h>

#include "tracekit/error.h"
#include "tracekit/profile.h"

/* Display unit for a weight unit: "ms" for nanoseconds (shown with 2 decimals), otherwise the
 * unit's own name (shown as an integer). */
const char *tk_wu_display_unit(tk_unit u);
/* Format w in the display unit into buf (at least 32 bytes); d is the profile's weight decimals
 * (tk_profile_weight_decimals: w counts 10^-d of the unit), shown exactly. */
void tk_wu_weight(char *buf, size_t cap, tk_unit u, unsigned d, uint64_t w);
/* w / 10^d as an exact decimal without trailing zeros ("31.23", "19"); also a valid JSON number. */
void tk_wu_decimal(char *buf, size_t cap, uint64_t w, unsigned d);
/* Percentage of part in whole, 0 when whole is 0. */
double tk_wu_percent(uint64_t part, uint64_t whole);
/* Write s as a JSON string literal (quotes included). Bytes >= 0x80 pass through (input is UTF-8). */
void tk_wu_json_string(FILE *out, const char *s);
/* Flush and turn a stream error into a tk_error. */
int tk_wu_finish(FILE *out, const char *what, tk_error *err);

#endif
