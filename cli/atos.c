/* tracekit atos — Apple atos-compatible address → symbol lookup from dSYMs, binaries or caches. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/symbol.h"

TK_COMMAND(atos, "symbolicate addresses like Apple's atos (dSYM, binary or symbol cache)")

static void usage(FILE *f)
{
	fprintf(f, "usage: tracekit atos -o PATH [-arch ARCH] [-l LOADADDR | -s SLIDE | -offset] [-i] [-f FILE]\n"
	           "                     [--json] [--full-names] [--cache-dir DIR] [--no-cache-write] [ADDRESS…]\n"
	           "       tracekit atos --search PATH… [-i] [--json] [-f FILE]   (batch: lines IMAGE ADDRESS…)\n\n"
	           "Prints, for every address (hex, 0x optional; from the command line, -f FILE or standard input),\n"
	           "the line Apple's atos prints:  function (in Image) (file:line)\n"
	           "  -o PATH       a .dSYM bundle, the DWARF file inside it, a Mach-O binary or a .tksym cache\n"
	           "  -arch ARCH    slice of a universal file: arm64, arm64e, x86_64 (default: the only slice)\n"
	           "  -l LOADADDR   runtime load address of the image (hex); addresses are runtime addresses\n"
	           "  -s SLIDE      alternative to -l: runtime = file address + SLIDE (hex)\n"
	           "  -offset       addresses are offsets from the start of the image\n"
	           "  -i            print inlined frames too, innermost first, one line each\n"
	           "  -f FILE       read addresses from FILE (whitespace separated)\n"
	           "  --json        one JSON object per address: function, file, line of every frame\n"
	           "  --full-names  Swift names in swift-demangle's full form (module, signature types) instead\n"
	           "                of the short form atos prints (\"ViewController.viewDidLoad()\")\n"
	           "  --cache-dir DIR, --no-cache-write   where the symbol cache is kept (default\n"
	           "                $XDG_CACHE_HOME/tracekit or ~/.cache/tracekit)\n"
	           "  --search PATH directories, dSYMs or binaries to find images in; each input line is then\n"
	           "                IMAGE ADDRESS… where IMAGE is a UUID or a path, optionally :ARCH and @LOADADDR\n"
	           "                (e.g. 4C4C44A4-5555-3144-A178-6F015627038B@0x104a8c000 0x104a8d010)\n"
	           "Without debug info for an address, the symbol table gives `function (in Image) + offset`;\n"
	           "an address in no known function is printed back as given.\n");
}

static void atos_warn(void *ctx, const char *message)
{
	(void)ctx;
	tk_cli_warn("%s", message);
}

int cmd_atos(int argc, char **argv)
{
	const char *obj = NULL, *arch = NULL, *file = NULL;
	const char *search[argc];
	int nsearch = 0;
	tk_symbol_options so;
	tk_symbol_options_init(&so);
	tk_atos_options ao = {.warn = atos_warn};
	int first_addr = argc;
	/* atos's own spellings: single-dash long options (-arch, -offset), values after a blank */
	static const char *const with_value[] = {"-o", "-arch", "-l", "-s", "-f", "--search", "--cache-dir"};
	for (int i = 1; i < argc;) {
		const char *a = argv[i], *v = NULL;
		int r = 0;
		size_t k = 0;
		for (; k < sizeof with_value / sizeof with_value[0]; k++)
			if ((r = tk_cli_opt("atos", argc, argv, &i, with_value[k], NULL, &v)) != 0)
				break;
		if (r < 0)
			return 2;
		if (r > 0) {
			switch (k) {
			case 0: obj = v; break;
			case 1: arch = v; break;
			case 2:
			case 3:
				if (tk_atos_parse_hex(v, k == 2 ? &ao.load : &ao.slide) < 0)
					return tk_cli_usage("atos", "%s %s: not a hex %s", with_value[k], v,
					                    k == 2 ? "load address" : "slide");
				ao.mode = k == 2 ? TK_ATOS_LOAD : TK_ATOS_SLIDE;
				break;
			case 4: file = v; break;
			case 5: search[nsearch++] = v; break;
			default: so.cache_dir = v;
			}
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "-offset"))
			ao.mode = TK_ATOS_OFFSET;
		else if (!strcmp(a, "-i") || !strcmp(a, "--inlineFrames"))
			ao.inlined = 1;
		else if (!strcmp(a, "--json"))
			ao.json = 1;
		else if (!strcmp(a, "--full-names"))
			ao.full_names = 1;
		else if (!strcmp(a, "--no-cache-write"))
			so.no_cache_write = 1;
		else if (!strcmp(a, "--")) {
			first_addr = i + 1;
			break;
		} else if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9')) {
			return tk_cli_usage("atos", "unknown option '%s'", a);
		} else {
			first_addr = i;
			break;
		}
		i++;
	}
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
