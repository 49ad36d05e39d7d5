/*
 * analysis.h — the options every analysis subcommand (tree, top, collapse, …) shares: the input,
 * read-time filters, thread/process filters, transforms, --symbols and --output. Each subcommand
 * parses its own few options through tk_cli_opt() and hands the rest to tk_analysis_option(), so
 * the shared options behave identically everywhere and are documented once (TK_ANALYSIS_HELP).
 */
#ifndef TK_CLI_ANALYSIS_H
#define TK_CLI_ANALYSIS_H

#include <stdio.h>

#include "cli.h"
#include "util/outfile.h"
#include "tracekit/transform.h"

typedef struct tk_analysis {
	const char *cmd;    /* subcommand name, for messages */
	const char *input;  /* path or "-" */
	const char *output; /* NULL = standard output */
	tk_read_options read;
	tk_transform_spec *specs;
	size_t nspecs, capspecs;
	const char **symbol_paths; /* --symbols, in order */
	size_t nsymbols, capsymbols;
	int keep_samples; /* keep the per-sample list (tk_profile_keep_samples) for time-ordered writers */
	FILE *out;        /* opened by tk_analysis_open_output */
	tk_outfile of;
} tk_analysis;

/* --event / --weight (tk_cli_read_option): every command that reads profiles takes them. */
#define TK_READ_OPTIONS_HELP                                                                                           \
	"  --event NAME          perf script / simpleperf with several events (-e a,b): read NAME's samples\n"     \
	"                        (default: the first event; `tracekit info` lists them). Never added together\n"     \
	"  --weight samples|period  count each sample once (default), or sum each sample's period as\n"              \
	"                        FlameGraph and inferno do (ns for cpu-clock, cycles, events)\n"

#define TK_ANALYSIS_HELP                                                                                               \
	"input:\n"                                                                                                     \
	"  FILE                  an `xctrace export` XML file, Records, Instruments Deep Copy text, a macOS\n"         \
	"                        `sample` report, `perf script`/simpleperf text, DTrace stacks, MetricKit JSON,\n"    \
	"                        an .ips/.crash/spindump report or folded stacks (found by content; gzip'd is\n"     \
	"                        fine), or - for standard input\n"                                                    \
	"  -o, --output PATH     write there instead of standard output\n"                                             \
	"  --keep-going          folded stacks: skip lines that fit no rule (counted, with a warning)\n"              \
	"  --run 1|2             differential folded stacks (STACK BEFORE AFTER): the first or second count\n"        \
	"                        (default 2, as flamegraph.pl draws)\n"                                                \
	"filters:\n"                                                                                                   \
	"  --time-from T         keep samples at or after T since the start of the run\n"                              \
	"  --time-to T           keep samples before T; T is 250ms, 1.5s, 300us, 1000ns or MM:SS.mmm\n"                \
	"  --thread T            keep threads whose tid (decimal, or 0x hex) or name is T; repeat for several\n"       \
	"  --process P           keep threads of processes whose pid or name is P; repeat for several\n"               \
	TK_READ_OPTIONS_HELP                                                                                           \
	"  --event N             (a number) keep the stacks of event N (a MetricKit diagnostic, a record, a\n"   \
	"                        report; numbered from 1, as `tracekit records` lists them)\n"                   \
	"  --kind K              keep the stacks of events of kind K: hang, cpu, disk, crash, launch, cpu-highload\n"  \
	"transforms (applied in the order given, after the filters):\n"                                                \
	"  --focus FUNC          keep samples that go through FUNC, re-rooted at its outermost call\n"                 \
	"  --exclude FUNC        drop samples that go through FUNC\n"                                                  \
	"  --merge FUNC          charge FUNC to its caller (its frames disappear, its self time moves up)\n"           \
	"  --merge-binary BIN    the same for every frame of binary BIN (name or full path)\n"                         \
	"  --hide-system         --merge-binary for every system binary (/System/, /usr/lib/, dyld, kernel …)\n"     \
	"  --hide-unsymbolicated  charge frames with no symbol (0x…) to their callers (Hide Missing Symbols)\n"      \
	"  --flatten-recursion   collapse direct recursion (f > f > f becomes f)\n"                                    \
	"  FUNC is a symbol as shown (\"objc_msgSend\", \"0x1a2b3c\" when unsymbolicated), or BINARY`SYMBOL\n"         \
	"  to pick one binary's (\"libobjc.A.dylib`objc_msgSend\"). Functions are told apart by symbol + binary.\n"    \
	"symbols:\n"                                                                                                   \
	"  --symbols PATH        a dSYM, binary or directory to symbolicate from; repeat for several\n"

void tk_analysis_init(tk_analysis *a, const char *cmd);
void tk_analysis_free(tk_analysis *a);

/* Option helper: if argv[*i] is NAME or NAME=VALUE, store the value (taking argv[*i + 1] when it is
 * separate), advance *i past what was used and return 1; return -1 (after printing) when the value
 * is missing, 0 when argv[*i] is another option. ALIAS may be NULL ("-o" for "--output"). */
int tk_cli_opt(const char *cmd, int argc, char **argv, int *i, const char *name, const char *alias, const char **val);
/* Parse a non-negative integer / percentage option value; print and return -1 when malformed. */
int tk_cli_uint(const char *cmd, const char *opt, const char *val, uint32_t *out);
int tk_cli_percent(const char *cmd, const char *opt, const char *val, double *out);


/* Consume argv[*i] if it is a shared option or the input. Returns 1 if consumed (advancing *i),
 * 0 if unknown to it, -1 on a malformed value (message printed). */
int tk_analysis_option(tk_analysis *a, int argc, char **argv, int *i);

/* After parsing: check the input is there (prints usage hint otherwise). Returns 0 or 1 (exit). */
int tk_analysis_check(tk_analysis *a);

/* Read the input, symbolicate (--symbols), apply the filters and transforms. Prints the error and
 * returns NULL on failure. */
tk_profile *tk_analysis_load(tk_analysis *a);

/* Open --output (or use stdout); returns NULL after printing on failure. The output is written to
 * a temporary file beside --output and renamed over it only by a successful close, so a failure
 * never leaves a half-written file (see util/outfile.h). */
FILE *tk_analysis_open_output(tk_analysis *a);
/* Close the output: with write_failed = 0 commit it, else drop it. Prints and returns 1 if anything
 * failed to be written (or write_failed), else 0. */
int tk_analysis_close_output(tk_analysis *a, int write_failed);

/* Options of the reading itself, shared with commands that parse their own (info, stats): --event
 * NAME, --weight samples|period, --keep-going, --run N. Same contract as tk_analysis_option. Also sets
 * the warning callback. */
int tk_cli_read_option(const char *cmd, int argc, char **argv, int *i, tk_read_options *o);
/* Prints a reader's warning (tk_read_options.warn; ctx is the command name). */
void tk_cli_read_warn(void *ctx, const char *message);

/* Parse "250ms", "1.5s", "300us", "1000ns" or "MM:SS.mmm" into ns; -1 if malformed. */
int tk_parse_time_ns(const char *s, uint64_t *ns);

#endif
