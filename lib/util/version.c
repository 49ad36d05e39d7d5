/* The run-time half of tracekit/version.h: what the linked library is, whatever the headers said. */
#include "tracekit/version.h"

unsigned tk_version_number(void)
{
	return TK_VERSION_NUMBER;
}

const char *tk_version_string(void)
{
	return TK_VERSION;
}
