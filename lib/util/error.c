#include <stdio.h>

#include "tracekit/error.h"
#include "util/text.h"

/* Every error is one line of text a terminal shows as is: line breaks (libdwarf's messages have
 * them) become spaces, control characters and raw bytes from the input are escaped. */
int tk_error_setv(tk_error *err, const char *fmt, va_list ap)
{
	if (err) {
		char raw[sizeof err->msg];
		vsnprintf(raw, sizeof raw, fmt, ap);
		tk_text_escape(raw, err->msg, sizeof err->msg, 1);
	}
	return -1;
}

int tk_error_set(tk_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tk_error_setv(err, fmt, ap);
	va_end(ap);
	return -1;
}
