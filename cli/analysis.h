/*
 * analysis.h — the options every analysis subcommand (tree, top, collapse, …) shares: the input,
 * read-time filters, thread/process filters, transforms, --symbols and --output. They are one
 * option table, tk_analysis_options (options.h), that each subcommand includes in its own; its
 * handler passes the ids it does not know to tk_analysis_handle, so the shared options behave
 * identically everywhere and are documented once.
 */
#ifndef TK_CLI_ANALYSIS_H
#define TK_CLI_ANALYSIS_H

#include <stdio.h>

#include "cli.h"
#include "options.h"
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

/* The shared tables. Ids: TK_AN_* and TK_READ_* (>= 1000, below a command's own). */
enum {
	TK_AN_INPUT = 1000,
	TK_AN_OUTPUT,
	TK_AN_TIME_FROM,
	TK_AN_TIME_TO,
	TK_AN_THREAD,
	TK_AN_PROCESS,
	TK_AN_EVENT_N,
	TK_AN_KIND,
	TK_AN_FOCUS,
	TK_AN_EXCLUDE,
	TK_AN_MERGE,
	TK_AN_MERGE_BINARY,
	TK_AN_HIDE_SYSTEM,
	TK_AN_HIDE_UNSYMBOLICATED,
	TK_AN_FLATTEN_RECURSION,
	TK_AN_SYMBOLS,
	TK_READ_EVENT = 1100,
	TK_READ_WEIGHT,
	TK_READ_KEEP_GOING,
	TK_READ_RUN,
};
/* input, filters, transforms, symbols: every analysis command (tree, top, collapse, flame, convert, open). */
extern const tk_cli_option tk_analysis_options[];
/* --event NAME, --weight, --keep-going, --run: every command that reads profiles (info, stats). */
extern const tk_cli_option tk_read_options_table[];
/* --event NAME and --weight alone (stats, whose --keep-going is its own). */
extern const tk_cli_option tk_read_event_options[];

/* Handle a TK_AN_* or TK_READ_* option (tk_cli_handler's contract: 0, or -1 after printing). */
int tk_analysis_handle(tk_analysis *a, const tk_cli_option *o, const char *value, const char *spelling);
/* Handle a TK_READ_* option into o (cmd for messages). --event with a number is not a read option:
 * with numbers = 0 it is refused as an unknown option (commands without event filters). */
int tk_cli_read_handle(const char *cmd, tk_read_options *ro, const tk_cli_option *o, const char *value,
                       const char *spelling);

void tk_analysis_init(tk_analysis *a, const char *cmd);
void tk_analysis_free(tk_analysis *a);

/* Parse a non-negative integer / percentage option value; print and return -1 when malformed. */
int tk_cli_uint(const char *cmd, const char *opt, const char *val, uint32_t *out);
int tk_cli_percent(const char *cmd, const char *opt, const char *val, double *out);

/* After parsing: check the input is there (prints usage hint otherwise). Returns 0 or 1 (exit). */
int tk_analysis_check(tk_analysis *a);

/* The step every reading command takes after tk_cli_parse, whose result is in *rc: returns 1 when
 * the command goes on (the options checked; *rc = 1, a failure until the work succeeds), 0 when it
 * stops with *rc as its exit status (0 after --help, 2 for a usage error, printed). */
int tk_analysis_ready(tk_analysis *a, int *rc);

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

/* Prints a reader's warning (tk_read_options.warn; ctx is the command name). */
void tk_cli_read_warn(void *ctx, const char *message);

/* Parse "250ms", "1.5s", "300us", "1000ns" or "MM:SS.mmm" into ns; -1 if malformed. */
int tk_parse_time_ns(const char *s, uint64_t *ns);

#endif
