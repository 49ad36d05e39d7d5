/*
 * convert.h — what `tracekit convert` and `tracekit flame` share: the viewer options
 * (tk_convert_options) and running one input through one writer.
 */
#ifndef TK_CLI_CONVERT_H
#define TK_CLI_CONVERT_H

#include "analysis.h"
#include "tracekit/write.h"

/* The viewer options (--title, --merge-threads, --icicle, --min-width, --max-frames), ids TK_CV_*. */
enum { TK_CV_TITLE = 1200, TK_CV_MERGE_THREADS, TK_CV_ICICLE, TK_CV_MIN_WIDTH, TK_CV_MAX_FRAMES };
extern const tk_cli_option tk_convert_options_table[];
/* Handle a TK_CV_* option (tk_cli_handler's contract); 1 if o is not one of them. */
int tk_convert_handle(const char *cmd, tk_convert_options *co, const tk_cli_option *o, const char *value);
/* Load a->input (filters, transforms, --symbols), write it with w to a->output (atomically) or
 * standard output. Binary formats are refused on a terminal. Returns the exit status. */
int tk_convert_run(tk_analysis *a, const tk_writer *w, const tk_convert_options *co);

#endif
