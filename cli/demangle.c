/* tracekit demangle — c++filt for C++, Rust and Swift names (arguments or standard input). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "tracekit/symbol.h"

TK_COMMAND(demangle, "demangle C++, Rust and Swift names like c++filt (arguments or standard input)")

enum { OPT_SIMPLIFIED = 1, OPT_NAME };

static const tk_cli_option options[] = {
    TK_OPT_FLAG(OPT_SIMPLIFIED, "--simplified", "-s",
                "Swift in the short form atos, Instruments and crash reports print (\"ViewController.viewDidLoad()\"); "
                "the default is swift-demangle's full form"),
    TK_OPT_OPERAND(OPT_NAME, "NAME…", "names to demangle; the first one ends the options (so does --)"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_demangle = {
    .name = "demangle",
    .usage = "tracekit demangle [--simplified] [NAME…]",
    .about = "Prints each NAME demangled, one per line; without NAME, copies standard input to standard\n"
             "output with every mangled name in it demangled (like c++filt). Names that are not mangled,\n"
             "or not understood, are printed as they are.\n"
             "  Itanium C++ (_Z…, Mach-O __Z…), Rust legacy (_ZN…17h<hash>E, the hash dropped) and v0 (_R…),\n"
             "  Swift ($s…, _$s…, $e…, Swift 4.2 $S…, Swift 4 _T0…, older _T…)\n",
    .options = options,
    .footer = NULL,
    .flags = TK_CLI_STOP | TK_CLI_HELP_IN_PLACE,
    .column = 19,
};

static int demangle_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	if (o->id == OPT_SIMPLIFIED)
		*(int *)ctx = TK_DEMANGLE_SIMPLIFIED;
	return 0;
}

static int sym_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
	       c == '.';
}

static void put_name(const char *s, size_t n, int flags, FILE *out)
{
	char small[512];
	char *tmp = n < sizeof small ? small : malloc(n + 1);
	if (!tmp) {
		fwrite(s, 1, n, out);
		return;
	}
	memcpy(tmp, s, n);
	tmp[n] = 0;
	/* a sentence's full stop is not part of the name */
	size_t keep = n;
	while (keep > 1 && tmp[keep - 1] == '.')
		tmp[--keep] = 0;
	char *d = tk_demangle_any(tmp, flags);
	if (d) {
		fputs(d, out);
		fwrite(s + keep, 1, n - keep, out);
		free(d);
	} else
		fwrite(s, 1, n, out);
	if (tmp != small)
		free(tmp);
}

int cmd_demangle(int argc, char **argv)
{
	int flags = TK_DEMANGLE_FULL;
	int first = argc;
	int r = tk_cli_parse(&tk_cli_command_demangle, argc, argv, 1, demangle_option, &flags, &first);
	if (r)
		return r < 0 ? 0 : r;
	if (first < argc) {
		for (int i = first; i < argc; i++) {
			char *d = tk_demangle_any(argv[i], flags);
			puts(d ? d : argv[i]);
			free(d);
		}
		return ferror(stdout) ? tk_cli_fail("demangle: write error") : 0;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, stdin)) > 0) {
		size_t i = 0, n = (size_t)len;
		while (i < n) {
			/* a macro expansion buffer's name starts with '@' (@__swiftmacro_…): the '@' is
			 * part of the name only there */
			int macro = line[i] == '@' && n - i > 14 && !memcmp(line + i, "@__swiftmacro_", 14) &&
			            (i == 0 || !sym_char((unsigned char)line[i - 1]));
			if (!macro && (!sym_char((unsigned char)line[i]) || line[i] == '.')) {
				putchar(line[i++]);
				continue;
			}
			size_t j = i + (macro != 0);
			while (j < n && sym_char((unsigned char)line[j]))
				j++;
			put_name(line + i, j - i, flags, stdout);
			i = j;
		}
	}
	free(line);
	return ferror(stdout) ? tk_cli_fail("demangle: write error") : 0;
}
