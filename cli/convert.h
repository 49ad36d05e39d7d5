/*
 * convert.h — what `tracekit convert` and `tracekit flame` share: the viewer options
 * (tk_convert_options) and running one input through one writer.
 */
#ifndef TK_CLI_CONVERT_H
#define TK_CLI_CONVERT_H

#include "analysis.h"
#include "tracekit/write.h"

#define TK_CONVERT_HELP                                                                                                \
	"  --title TEXT          the title viewers show (default: the input's file name)\n"                            \
	"  --merge-threads       one merged flame graph / stack set instead of one per thread (svg, folded, json)\n"   \
	"  --icicle, --invert    svg: an icicle graph (roots at the top); json: the bottom-up tree\n"                  \
	"  --min-width PX        svg: leave out frames narrower than PX pixels (default 0.1)\n"                        \
	"  --max-frames N        svg: at most N frames, the lightest left out first (default 20000, ~5 MB)\n"

/* Consume a viewer option at argv[*i]: 1 if consumed, 0 if not one, -1 after printing an error. */
int tk_convert_option(const char *cmd, tk_convert_options *co, int argc, char **argv, int *i);
/* Load a->input (filters, transforms, --symbols), write it with w to a->output (atomically) or
 * standard output. Binary formats are refused on a terminal. Returns the exit status. */
int tk_convert_run(tk_analysis *a, const tk_writer *w, const tk_convert_options *co);

#endif
