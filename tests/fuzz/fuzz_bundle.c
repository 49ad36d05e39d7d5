/* libFuzzer harness for upload bundles (what `tracekit serve --ingest` decodes from the network):
 * the input is gzip'd here, so the fuzzer explores the framing, meta.json, images.json and Records
 * inside, and a "profile" part through every reader and the function table (tests/fuzz/corpus/bundle
 * has a folded and an xctrace profile); the raw input is also decoded as a body (the gzip layer: truncated, corrupt,
 * not gzip), and as MetricKit payloads (tk_payload_reports, tried first as the server does). Any bytes must give reports or a tk_error — never a crash, a leak or a sanitizer report — and every report
 * must carry a 64-hex-digit id and non-NULL keys. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tracekit/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode(const void *body, size_t n)
{
	tk_report_set set = {0};
	tk_error err;
	/* the server's bounds, small: stacks and time stop a profile part's reader mid-way */
	tk_bundle_limits lim = {.max_inflated = 1u << 20, .max_stacks = 2000, .max_seconds = 10};
	/* as the server: MetricKit payloads POSTed as the app has them, else a bundle */
	int rc = tk_payload_reports(body, n, &lim, "fuzz", NULL, &set, &err);
	if (rc == 2)
		rc = tk_bundle_decode(body, n, &lim, "fuzz", NULL, &set, &err);
	if (rc == 0)
		for (size_t i = 0; i < set.n; i++) {
			if (strlen(set.v[i].id) != 64 || !set.v[i].signature || !set.v[i].thread)
				abort();
			for (int k = 0; k < TK_STORE_NKEYS; k++)
				if (!set.v[i].keys[k])
					abort();
		}
	for (size_t i = 0; i < set.pn; i++) {
		if (strlen(set.pv[i].id) != 64 || !set.pv[i].unit || !set.pv[i].source)
			abort();
		for (int k = 0; k < TK_STORE_NKEYS; k++)
			if (!set.pv[i].keys[k])
				abort();
	}
	tk_report_set_free(&set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decode(data, size);
	uLongf zn = compressBound(size) + 64;
	unsigned char *z = malloc(zn);
	z_stream s = {0};
	if (z && deflateInit2(&s, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
		s.next_in = (unsigned char *)data;
		s.avail_in = (uInt)size;
		s.next_out = z;
		s.avail_out = (uInt)zn;
		if (deflate(&s, Z_FINISH) == Z_STREAM_END)
			decode(z, s.total_out);
		deflateEnd(&s);
	}
	free(z);
	return 0;
}
