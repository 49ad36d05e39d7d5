/*
 * tracekit/toc.h — the table of contents of a .trace (`xcrun xctrace export --input X.trace --toc`).
 *
 * The toc lists each recording run (device, target processes, start, duration, template,
 * Instruments version) and the tables that can be exported from it, with the attributes that
 * describe the recording configuration (e.g. `sample-rate-micro-seconds`, `record-waiting-threads`).
 * A table's 1-based position in `tables` is the `table[N]` of an export's `<node xpath>`.
 *
 * Never kept: the `<environment>` of the recorded process and its command-line `arguments`, which
 * can hold secrets (tokens, keys). Unknown elements and attributes are ignored.
 */
#ifndef TRACEKIT_TOC_H
#define TRACEKIT_TOC_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/error.h"
#include "tracekit/read.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_toc_attr {
	char *name, *value;
} tk_toc_attr;

typedef struct tk_toc_table {
	char *schema;       /* NULL if the element had none */
	tk_toc_attr *attrs; /* every attribute in document order, schema and documentation included */
	size_t nattrs;
} tk_toc_table;

typedef struct tk_toc_process {
	char *name;  /* NULL if absent */
	int64_t pid; /* -1 if absent */
	char *path;  /* NULL if absent */
	char *type;  /* target process only: "launched", "attached" … */
} tk_toc_process;

typedef struct tk_toc_run {
	int number;
	/* target device; any field may be NULL */
	char *device_name, *device_model, *device_platform, *device_os, *device_uuid;
	tk_toc_process target; /* the recorded process (<target><process>); name NULL if none */
	char *start_date, *end_date, *end_reason, *template_name, *instruments_version;
	double duration;           /* seconds; -1 if absent */
	tk_toc_process *processes; /* <processes> */
	size_t nprocesses;
	tk_toc_table *tables; /* <data><table> in order */
	size_t ntables;
} tk_toc_run;

typedef struct tk_toc {
	tk_toc_run *runs;
	size_t nruns;
} tk_toc;

/* Read a toc from a stream (see read.h) or a path ("-" = stdin, gzip accepted). Returns NULL with
 * err set ("FILE:LINE:COL: problem") on malformed input or when the document is not a toc. */
tk_toc *tk_toc_read(tk_input *in, tk_error *err);
tk_toc *tk_toc_read_path(const char *path, tk_error *err);
void tk_toc_free(tk_toc *toc);

#ifdef __cplusplus
}
#endif
#endif
