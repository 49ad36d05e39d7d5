/* libFuzzer harness for the Firefox Profiler symbolication API (tk_symbolicate_v5: what `tracekit
 * open` answers from the browser). A symbolicator over the generated dSYM (TK_FUZZ_DSYM, set by
 * tests/cli/symbol_fuzz.sh) answers arbitrary request bytes under small limits: any input must give
 * an answer that is valid UTF-8 JSON with one result per job, or an error, never a crash or a leak. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/symbol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static tk_symbolicator *sym;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	tk_symbol_options o;
	tk_symbol_options_init(&o);
	o.cache_dir = getenv("TK_FUZZ_CACHE"); /* NULL: caches stay in memory */
	sym = tk_symbolicator_new(&o);
	const char *dsym = getenv("TK_FUZZ_DSYM");
	tk_error err;
	if (dsym && tk_symbolicator_add_path(sym, dsym, &err) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tk_symbolicate_v5_limits lim = {.max_request = 1 << 16, .max_arrays = 4096, .max_response = 1 << 22};
	char *resp = NULL;
	size_t n = 0;
	tk_error err;
	int rc = tk_symbolicate_v5(sym, data, size, &lim, &resp, &n, &err);
	if (rc == 0) {
		json_error_t je;
		json_t *j = json_loadb(resp, n, 0, &je); /* jansson rejects invalid UTF-8 */
		if (!j || !json_is_array(json_object_get(j, "results")))
			abort();
		json_decref(j);
		free(resp);
	} else if (resp || !err.msg[0]) {
		abort();
	}
	return 0;
}
