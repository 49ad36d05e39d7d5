/*
 * cli.h — what every subcommand file shares.
 *
 * A subcommand is one file cli/NAME.c with a line, at the start of a line,
 *     TK_COMMAND(NAME, "one-line summary")
 * and a function `int cmd_NAME(int argc, char **argv)` (argv[0] is the subcommand name) that
 * returns the exit status. The Makefile collects those lines into the command table, so adding a
 * subcommand touches no other file. Subcommands only wire options to the library.
 *
 * Options are declared once, as a table (options.h: tk_cli_command_NAME) that the parser, --help and
 * docs/cli.md (`tracekit help --markdown`) share: every subcommand declares one.
 */
#ifndef TK_CLI_H
#define TK_CLI_H

#include <stdio.h>

#include "tracekit/tracekit.h"

#define TK_COMMAND(name, summary) int cmd_##name(int argc, char **argv);

/* Print "tracekit: <message>" on stderr; returns 1, the exit status for a failed command. */
int tk_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error (unknown option, missing argument …): one line "tracekit: CMD: message (see
 * tracekit CMD --help)" on stderr; returns 2, the exit status of every usage error. */
int tk_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print a warning on stderr (never on stdout, which carries data). */
void tk_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Text from an input (names, attributes) made safe for the terminal: control characters and
 * invalid UTF-8 become \xHH (util/text.h). Returns s itself when it is clean; otherwise one of a few
 * rotating buffers, so one printf can take several. */
const char *tk_cli_shown(const char *s);

/* True if --help or -h is among argv[1..]. */
int tk_cli_wants_help(int argc, char **argv);

/* A progress callback for tk_read_options that draws on stderr when it is a terminal. */
void tk_cli_progress(void *ctx, uint64_t done, uint64_t total);
void tk_cli_progress_done(void);

/* `tracekit stats --db URL …`: the percentiles answered by a fleet store (cli/store_query.c). */
int tk_cli_stats_db(int argc, char **argv);

#endif
