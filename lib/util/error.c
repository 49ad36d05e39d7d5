#include <stdio.h>

#include "tracekit/error.h"

int tk_error_setv(tk_error *err, const char *fmt, va_list ap)
{
	if (err)
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
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
