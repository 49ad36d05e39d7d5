/* tracekit atos — Apple atos-compatible address → symbol lookup from dSYMs, binaries or caches. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/symbol.h"

TK_COMMAND(atos, "symbolicate addresses like Apple's atos (dSYM, binary or symbol cache)")

enum {
	OPT_O = 1,
	OPT_ARCH,
	OPT_L,
	OPT_S,
	OPT_F,
	OPT_SEARCH,
	OPT_CACHE_DIR,
	OPT_OFFSET,
	OPT_I,
	OPT_JSON,
	OPT_FULL_NAMES,
	OPT_NO_CACHE_WRITE,
	OPT_ADDRESS
};

/* atos's own spellings: single-dash long options (-arch, -offset), values after a blank */
static const tk_cli_option options[] = {
    TK_OPT_VALUE(OPT_O, "-o", NULL, "PATH",
                 "a .dSYM bundle, the DWARF file inside it, a Mach-O binary or a .tksym cache"),
    TK_OPT_VALUE(OPT_ARCH, "-arch", NULL, "ARCH",
                 "slice of a universal file: arm64, arm64e, x86_64 (default: the only slice)"),
    TK_OPT_VALUE(OPT_L, "-l", NULL, "LOADADDR",
                 "runtime load address of the image (hex); addresses are runtime addresses"),
    TK_OPT_VALUE(OPT_S, "-s", NULL, "SLIDE", "alternative to -l: runtime = file address + SLIDE (hex)"),
    TK_OPT_FLAG(OPT_OFFSET, "-offset", NULL, "addresses are offsets from the start of the image"),
    TK_OPT_FLAG(OPT_I, "-i", "--inlineFrames", "print inlined frames too, innermost first, one line each"),
    TK_OPT_VALUE(OPT_F, "-f", NULL, "FILE", "read addresses from FILE (whitespace separated)"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL, "one JSON object per address: function, file, line of every frame"),
    TK_OPT_FLAG(
        OPT_FULL_NAMES, "--full-names", NULL,
        "Swift names in swift-demangle's full form (module, signature types) instead of the short form atos prints "
        "(\"ViewController.viewDidLoad()\")"),
    TK_OPT_VALUE(OPT_CACHE_DIR, "--cache-dir", NULL, "DIR",
                 "where the symbol cache is kept (default $XDG_CACHE_HOME/tracekit or ~/.cache/tracekit)"),
    TK_OPT_FLAG(OPT_NO_CACHE_WRITE, "--no-cache-write", NULL,
                "never write cache files (caches are built in memory for this process only)"),
    TK_OPT_LIST(
        OPT_SEARCH, "--search", NULL, "PATH",
        "directories, dSYMs or binaries to find images in; each input line is then IMAGE ADDRESS… where IMAGE is a "
        "UUID or a path, optionally :ARCH and @LOADADDR (e.g. 4C4C44A4-5555-3144-A178-6F015627038B@0x104a8c000 "
        "0x104a8d010)"),
    TK_OPT_OPERAND(OPT_ADDRESS, "ADDRESS…", "addresses to look up; the first one ends the options (so does --)"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_atos = {
    .name = "atos",
    .usage = "tracekit atos -o PATH [-arch ARCH] [-l LOADADDR | -s SLIDE | -offset] [-i] [-f FILE]\n"
             "              [--json] [--full-names] [--cache-dir DIR] [--no-cache-write] [ADDRESS…]\n"
             "tracekit atos --search PATH… [-i] [--json] [-f FILE]   (batch: lines IMAGE ADDRESS…)",
    .about = "Prints, for every address (hex, 0x optional; from the command line, -f FILE or standard input),\n"
             "the line Apple's atos prints:  function (in Image) (file:line)\n",
    .options = options,
    .footer = "Without debug info for an address, the symbol table gives `function (in Image) + offset`;\n"
              "an address in no known function is printed back as given.\n",
    .flags = TK_CLI_STOP | TK_CLI_HELP_IN_PLACE | TK_CLI_DASH_DIGIT,
    .column = 18,
};

typedef struct atos_args {
	const char *obj, *arch, *file;
	const char **search;
	int nsearch;
	tk_symbol_options so;
	tk_atos_options ao;
} atos_args;

static int atos_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	atos_args *t = ctx;
	switch (o->id) {
	case OPT_O: t->obj = v; return 0;
	case OPT_ARCH: t->arch = v; return 0;
	case OPT_L:
	case OPT_S:
		if (tk_atos_parse_hex(v, o->id == OPT_L ? &t->ao.load : &t->ao.slide) < 0)
			return tk_cli_usage("atos", "%s %s: not a hex %s", o->name, v,
			                    o->id == OPT_L ? "load address" : "slide"),
			       -1;
		t->ao.mode = o->id == OPT_L ? TK_ATOS_LOAD : TK_ATOS_SLIDE;
		return 0;
	case OPT_F: t->file = v; return 0;
	case OPT_SEARCH: t->search[t->nsearch++] = v; return 0;
	case OPT_CACHE_DIR: t->so.cache_dir = v; return 0;
	case OPT_OFFSET: t->ao.mode = TK_ATOS_OFFSET; return 0;
	case OPT_I: t->ao.inlined = 1; return 0;
	case OPT_JSON: t->ao.json = 1; return 0;
	case OPT_FULL_NAMES: t->ao.full_names = 1; return 0;
	case OPT_NO_CACHE_WRITE: t->so.no_cache_write = 1; return 0;
	}
	return 0;
}

static void atos_warn(void *ctx, const char *message)
{
	(void)ctx;
	tk_cli_warn("%s", message);
}

int cmd_atos(int argc, char **argv)
{
	const char *search[argc];
	atos_args t = {.search = search, .ao = {.warn = atos_warn}};
	tk_symbol_options_init(&t.so);
	int first_addr = argc;
	int r = tk_cli_parse(&tk_cli_command_atos, argc, argv, 1, atos_option, &t, &first_addr);
	if (r)
		return r < 0 ? 0 : r;
	const char *obj = t.obj, *arch = t.arch, *file = t.file;
	int nsearch = t.nsearch;
	tk_symbol_options so = t.so;
	tk_atos_options ao = t.ao;
	if (!obj && !nsearch)
		return tk_cli_usage("atos", "-o PATH (or --search PATH for batch input) is required");
	tk_symbolicator *s = tk_symbolicator_new(&so);
	tk_error err;
	static char obuf[1 << 16];
	tk_symbol_image *im = NULL;
	if (!obj) {
		for (int i = 0; i < nsearch; i++)
			if (tk_symbolicator_add_path(s, search[i], &err) < 0) {
				tk_symbolicator_free(s);
				return tk_cli_fail("atos: %s", err.msg);
			}
	} else if (!(im = tk_symbolicator_image(s, NULL, obj, arch, &err))) {
		tk_symbolicator_free(s);
		return tk_cli_fail("atos: %s", err.msg);
	}
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	FILE *in = !obj || first_addr >= argc ? (file ? fopen(file, "r") : stdin) : NULL;
	if (!in && (!obj || first_addr >= argc)) {
		tk_symbolicator_free(s);
		return tk_cli_fail("atos: %s: %s", file, strerror(errno));
	}
	ao.interactive = in == stdin && isatty(0);
	tk_atos *at = tk_atos_new(s, im, stdout, &ao);
	int rc = !obj                ? tk_atos_batch(at, in, &err)
	         : first_addr < argc ? tk_atos_args(at, argv + first_addr, (size_t)(argc - first_addr), &err)
	                             : tk_atos_stream(at, in, &err);
	if (in && in != stdin)
		fclose(in);
	tk_atos_free(at);
	tk_symbolicator_free(s);
	if (rc < 0 && ferror(stdout))
		return 1; /* main says "cannot write standard output", once */
	return rc < 0 ? tk_cli_fail("%s", err.msg) : 0;
}
