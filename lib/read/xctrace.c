/*
 * The `xcrun xctrace export` XML reader (placeholder: sniffing only; the streaming reader lands next).
 */
#include <string.h>

#include "tracekit/read.h"

/* Exports may start with diagnostic text before `<?xml` (reference §1), so look for the
 * declaration or a root element anywhere in the head rather than at offset 0. */
static int xctrace_sniff(const unsigned char *head, size_t n)
{
	return memmem(head, n, "<?xml", 5) || memmem(head, n, "<trace-query-result", 19) ||
	       memmem(head, n, "<trace-toc", 10);
}

static int xctrace_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	return tk_error_set(err, "%s: the xctrace reader is not implemented yet", tk_input_name(in));
}

const tk_reader tk_reader_xctrace = {"xctrace", xctrace_sniff, xctrace_read};
