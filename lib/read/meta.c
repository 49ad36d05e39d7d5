/* Metadata lines every text-profile reader ends with (`tracekit info` shows them): which event was read
 * and how many rows. Written once here so perf, simpleperf, DTrace and deep-copy say it the same way. */
#include <stdio.h>

#include "internal.h"

void tk_read_meta_event(tk_profile *p, const char *name, size_t nevents, const char *asked)
{
	char ev[160];
	snprintf(ev, sizeof ev, "%s%s", name,
	         nevents > 1 ? (asked ? " (--event)" : " (the first; --event NAME reads another)") : "");
	tk_profile_set_meta(p, "event", ev);
}

void tk_read_meta_rows(tk_profile *p, uint64_t rows, uint64_t kept)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)rows);
	tk_profile_set_meta(p, "rows", buf);
	if (kept != rows) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)kept);
		tk_profile_set_meta(p, "rows-read", buf);
	}
}
