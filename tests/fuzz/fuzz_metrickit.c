/* libFuzzer harness for the MetricKit reader (lib/read/metrickit.c), called directly (not through its
 * sniffer). Any bytes must give a profile or a one-line tk_error, never a crash, hang or sanitizer
 * report. Two invariants on what it accepts:
 *   - every top-level JSON value it read is one jansson accepts too (the tokenizer is no looser than
 *     the reference parser; jansson's own limits — 2048 levels, integers past 2^63, overflowing reals —
 *     are the only exceptions);
 *   - every event's weight is the sum of its owned threads' weights (the model's bookkeeping holds
 *     for what the reader builds). */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/metrickit.h"
#include "tracekit/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int jansson_limit(const char *text)
{
	return strstr(text, "maximum parsing depth") || strstr(text, "too big") || strstr(text, "overflow");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tk_profile *p = tk_profile_new();
	tk_error err = {{0}};
	tk_input *in = tk_input_open_mem(data, size, "fuzz.json", &err);
	if (!in) {
		tk_profile_free(p);
		return 0;
	}
	int rc = tk_reader_metrickit.read(p, in, NULL, &err);
	tk_input_close(in);
	if (rc < 0) {
		if (strchr(err.msg, '\n') || !err.msg[0]) {
			fprintf(stderr, "error not one line: '%s'\n", err.msg);
			abort();
		}
	} else if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) {
		/* each top-level value, as jansson reads it */
		size_t off = 0;
		if (size >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf)
			off = 3;
		while (off < size) {
			while (off < size &&
			       (data[off] == ' ' || data[off] == '\n' || data[off] == '\r' || data[off] == '\t'))
				off++;
			if (off >= size)
				break;
			json_error_t je;
			json_t *v = json_loadb((const char *)data + off, size - off,
			                       JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &je);
			if (!v) {
				if (jansson_limit(je.text))
					break;
				fprintf(stderr, "accepted, but jansson says: %s (at %zu)\n", je.text,
				        off + (size_t)je.position);
				abort();
			}
			json_decref(v);
			off += (size_t)je.position;
		}
		for (tk_event_id e = 1; e <= tk_event_count(p); e++) {
			uint64_t w = 0;
			for (size_t t = 0; t < tk_thread_count(p); t++) {
				const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
				if (th->event == e && (th->role == TK_ROLE_OWNED || th->role == TK_ROLE_ATTRIBUTED))
					w += th->weight;
			}
			if (w != tk_event_get(p, e)->weight) {
				fprintf(stderr, "event %u: weight %llu, its threads %llu\n", e,
				        (unsigned long long)tk_event_get(p, e)->weight, (unsigned long long)w);
				abort();
			}
		}
	}
	tk_profile_free(p);
	return 0;
}
