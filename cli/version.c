/* tracekit version — print the version (also `tracekit --version`). */
#include "cli.h"

TK_COMMAND(version, "print the version")

int cmd_version(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) {
		printf("usage: tracekit version\n\nPrints the tracekit version.\n");
		return 0;
	}
	printf("tracekit %s\n", tk_version_string());
	return 0;
}
