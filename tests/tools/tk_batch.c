/*
 * tk_batch — many `tracekit` command lines in one process, for tests that ask hundreds of
 * questions (`tracekit stats --db … --metric fn.self:NAME …` for every NAME): under ASan each
 * tracekit process costs ~0.2 s of CPU before it does anything, which was most of those tests'
 * time.
 *
 * Each command line goes through tracekit's own main() (cli/main.c compiled with main renamed
 * tk_batch_tracekit_main, see mk/tests.mk) and so through exactly the option parsing and code
 * that `tracekit ARGS…` runs; only the process is shared. Its standard output is flushed after
 * each command, so the output is what the same commands run one by one print, in order.
 *
 * usage: tk_batch [FILE]   one command line per line of FILE (default: standard input), the
 *                          arguments after `tracekit` separated by tabs (tests/lib.sh: tk_batch_add)
 * A command that exits non-zero is reported on stderr as "tk_batch: line N: exit RC"; tk_batch
 * exits 0 when every command did, else 1. With TK_BATCH_MARK set in the environment, every command's
 * end is marked instead, whatever RC, with the line "tk_batch: line N: exit RC" on stderr and on
 * stdout, so that a test can tell which command printed what.
 *
 * tk_batch --serve SOCKET: a fork server instead (tests/tools/tk_forkserver.c), for tests/tools/tk_exec.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tk_batch_tracekit_main(int argc, char **argv);
int tk_forkserver(const char *path);

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--serve") == 0)
		return tk_forkserver(argv[2]);
	FILE *in = argc > 1 ? fopen(argv[1], "r") : stdin;
	if (!in) {
		perror(argv[1]);
		return 2;
	}
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int failed = 0, mark = getenv("TK_BATCH_MARK") != NULL;
	while ((len = getline(&line, &cap, in)) >= 0) {
		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		/* argv: "tracekit", then the tab-separated fields (an empty field is an empty argument) */
		size_t n = 2;
		for (char *p = line; *p; p++)
			n += *p == '\t';
		char **av = calloc(n + 1, sizeof *av);
		if (!av)
			return 2;
		int ac = 0;
		av[ac++] = "tracekit";
		for (char *f = line, *tab;; f = tab + 1) {
			tab = strchr(f, '\t');
			if (tab)
				*tab = '\0';
			av[ac++] = f;
			if (!tab)
				break;
		}
		int rc = tk_batch_tracekit_main(ac, av);
		fflush(stdout);
		fflush(stderr);
		if (rc || mark)
			fprintf(stderr, "tk_batch: line %zu: exit %d\n", lineno, rc);
		if (mark) {
			printf("tk_batch: line %zu: exit %d\n", lineno, rc);
			fflush(stdout);
		}
		failed |= rc != 0;
		free(av);
	}
	free(line);
	if (in != stdin)
		fclose(in);
	return failed;
}
