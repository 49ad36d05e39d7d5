/* libFuzzer harness for one of Apple's report formats (built once per format: fuzz_report_ips,
 * fuzz_report_crash, fuzz_report_spindump). Any bytes must give a report or a one-line tk_error
 * naming the input, never a crash, hang or sanitizer report; whatever reads must also go into a
 * profile and through the writers (text, and JSON for .ips) without one. Inputs that do not start
 * like the format get its first line prepended, so the fuzzer reaches the parser with any body. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/apple_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(TK_FUZZ_FORMAT_ips)
static const char prefix[] = "{\"bug_type\":\"309\",\"incident_id\":\"F\"}\n";
static const tk_apple_report_format want = TK_APPLE_IPS;
#elif defined(TK_FUZZ_FORMAT_crash)
static const char prefix[] = "Incident Identifier: F\nException Type:  EXC_CRASH (SIGABRT)\n";
static const tk_apple_report_format want = TK_APPLE_CRASH;
#else
static const char prefix[] = "Date/Time:        2026-01-01 00:00:00.000 +0000\nEvent:            hang\n";
static const tk_apple_report_format want = TK_APPLE_SPINDUMP;
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pl = strlen(prefix);
	uint8_t *buf = malloc(size + pl + 1);
	memcpy(buf, data, size);
	size_t n = size;
	if (tk_apple_report_sniff(data, size < 4096 ? size : 4096) != want) {
		memcpy(buf, prefix, pl);
		memcpy(buf + pl, data, size);
		n = size + pl;
	}
	tk_error err;
	tk_input *in = tk_input_open_mem(buf, n, "fuzz", &err);
	if (!in) {
		free(buf);
		return 0;
	}
	tk_apple_report *r = tk_apple_report_read(in, &err);
	tk_input_close(in);
	if (!r) {
		if (strchr(err.msg, '\n') || strncmp(err.msg, "fuzz", 4) != 0)
			abort(); /* errors are one line naming the input */
		free(buf);
		return 0;
	}
	tk_profile *p = tk_profile_new();
	if (tk_apple_report_to_profile(r, p, &err) < 0)
		abort();
	tk_profile_free(p);
	char *out = NULL;
	size_t on = 0;
	FILE *f = open_memstream(&out, &on);
	tk_apple_report_write_text(f, r, &err);
	if (r->format == TK_APPLE_IPS)
		tk_apple_report_write_ips(f, r, &err);
	fclose(f);
	free(out);
	tk_apple_report_free(r);
	free(buf);
	return 0;
}
