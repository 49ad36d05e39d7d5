/*
 * tracekit — the command-line front end. Dispatches to one file per subcommand.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util/text.h"

#include "commands.inc"

#undef TK_COMMAND
#define TK_COMMAND(name, summary) {#name, summary, cmd_##name},

static const struct command {
	const char *name, *summary;
	int (*run)(int argc, char **argv);
} commands[] = {
#include "commands.inc"
};

/* A command typed with dashes (top-hangs) names the function with underscores (cmd_top_hangs). */
static int same_command(const char *typed, const char *name)
{
	for (; *typed && *name; typed++, name++)
		if (*typed != *name && !(*typed == '-' && *name == '_'))
			return 0;
	return *typed == *name;
}

static void usage(FILE *out)
{
	fprintf(out, "tracekit %s — call trees, flame graphs and symbols from Instruments exports\n\n", TK_VERSION);
	fprintf(out, "usage: tracekit COMMAND [options] [FILE]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		char name[32];
		snprintf(name, sizeof name, "%s", commands[i].name);
		for (char *c = name; *c; c++)
			*c = *c == '_' ? '-' : *c; /* C names cannot hold the dash of top-hangs */
		fprintf(out, "  %-12s %s\n", name, commands[i].summary);
	}
	fprintf(out, "\n`tracekit COMMAND --help` describes each command. FILE may be - for standard input,\n"
	             "and gzip'd input is accepted everywhere.\n");
}

/* One line on stderr, whatever the message quotes (paths, names, library errors). */
static void say(const char *what, const char *fmt, va_list ap)
{
	char raw[2048], safe[4096];
	vsnprintf(raw, sizeof raw, fmt, ap);
	tk_text_escape(raw, safe, sizeof safe, 1);
	fprintf(stderr, "tracekit: %s%s\n", what, safe);
}

const char *tk_cli_shown(const char *s)
{
	return tk_text_shown(s);
}

int tk_cli_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
	return 1;
}

int tk_cli_usage(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	tk_cli_fail("%s: %s (see tracekit %s --help)", cmd, msg, cmd);
	return 2;
}

void tk_cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("warning: ", fmt, ap);
	va_end(ap);
}

int tk_cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	}
	return 0;
}

static int progress_drawn;

void tk_cli_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	static struct timespec last;
	if (!isatty(2))
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec * 1000 + now.tv_nsec / 1000000 - (last.tv_sec * 1000 + last.tv_nsec / 1000000) < 200)
		return;
	last = now;
	if (total)
		fprintf(stderr, "\r%.1f / %.1f MB (%d%%)", done / 1e6, total / 1e6, (int)(100.0 * done / total));
	else
		fprintf(stderr, "\r%.1f MB", done / 1e6);
	progress_drawn = 1;
}

void tk_cli_progress_done(void)
{
	if (progress_drawn)
		fputs("\r\033[K", stderr);
	progress_drawn = 0;
}

/* Memory ran out where the library cannot return an error: one line, and exit 1 like any failure
 * (write(2): stdio may need the memory that is gone). */
static void out_of_memory(size_t bytes)
{
	char line[96];
	int n = snprintf(line, sizeof line, "tracekit: out of memory (allocating %zu bytes)\n", bytes);
	if (n > 0 && write(2, line, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

int main(int argc, char **argv)
{
	tk_set_oom_handler(out_of_memory);
	if (argc < 2) {
		tk_cli_fail("no command (see tracekit --help)");
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("tracekit %s\n", TK_VERSION);
		return 0;
	}
	/* `tracekit stats --db URL …` is answered by the fleet store (cli/store_query.c), not by reading inputs */
	if (strcmp(argv[1], "stats") == 0)
		for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
			if (strcmp(argv[i], "--db") == 0 || strncmp(argv[i], "--db=", 5) == 0)
				return tk_cli_stats_db(argc - 1, argv + 1);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (same_command(argv[1], commands[i].name)) {
			int rc = commands[i].run(argc - 1, argv + 1);
			/* data went to stdout: a full disk or closed stream there is a failure, not success */
			if (fflush(stdout) != 0 || ferror(stdout)) {
				tk_cli_fail("%s: cannot write standard output: %s", argv[1],
				            strerror(errno ? errno : EIO));
				return rc ? rc : 1;
			}
			return rc;
		}
	tk_cli_fail("unknown command '%s' (see tracekit --help)", argv[1]);
	return 2;
}
