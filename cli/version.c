/* tracekit version — print the version (also `tracekit --version`). */
#include "cli.h"
#include "options.h"

TK_COMMAND(version, "print the version")

static const tk_cli_option options[] = {TK_OPT_END};

const tk_cli_command tk_cli_command_version = {
    .name = "version",
    .usage = "tracekit version",
    .about = "Prints the tracekit version.\n",
    .options = options,
};

int cmd_version(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) { /* other arguments are ignored, as they always were */
		tk_cli_help(&tk_cli_command_version, stdout);
		return 0;
	}
	printf("tracekit %s\n", tk_version_string());
	return 0;
}
