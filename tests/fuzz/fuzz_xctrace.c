/*
 * libFuzzer target: the whole xctrace reader (table and toc) over arbitrary bytes, gzip included.
 * Any input must end in a profile or a one-line error naming the input; never a crash, a hang or
 * a sanitizer report. Odd inputs also go through the libxml2 tokenizer to fuzz the glue.
 */
#include <stdint.h>
#include <string.h>

#include "tracekit/read.h"
#include "tracekit/toc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tk_error err;
	tk_profile *p = tk_profile_new();
	tk_read_options o; /* as tk_read_options_init, which lives in the registry (not linked here) */
	memset(&o, 0, sizeof o);
	o.time_to = UINT64_MAX;
	o.tokenizer = size && (data[size - 1] & 1) ? TK_READ_TOKENIZER_LIBXML2 : TK_READ_TOKENIZER_FAST;
	if (size > 8 && data[0] == 'T') { /* exercise the time filter too */
		o.time_from = data[1] * 1000u;
		o.time_to = o.time_from + data[2] * 100000u;
	}
	tk_input *in = tk_input_open_mem(data, size, "fuzz.xml", &err);
	if (in) {
		size_t hn;
		const unsigned char *head = tk_input_head(in, &hn);
		if (hn && tk_reader_xctrace.sniff(head, hn) && tk_reader_xctrace.read(p, in, &o, &err) < 0) {
			if (!strstr(err.msg, "fuzz.xml") || strchr(err.msg, '\n'))
				__builtin_trap(); /* errors name the input and fit on one line */
		}
		tk_input_close(in);
	}
	tk_profile_free(p);
	in = tk_input_open_mem(data, size, "fuzz.xml", &err);
	if (in) {
		tk_toc *t = tk_toc_read(in, &err);
		tk_toc_free(t);
		tk_input_close(in);
	}
	return 0;
}
