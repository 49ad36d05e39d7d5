/* tracekit atos — Apple atos-compatible address → symbol lookup from dSYMs, binaries or caches. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tracekit/symbol.h"

TK_COMMAND(atos, "symbolicate addresses like Apple's atos (dSYM, binary or symbol cache)")

static void usage(FILE *f)
{
	fprintf(f, "usage: tracekit atos -o PATH [-arch ARCH] [-l LOADADDR | -s SLIDE | -offset] [-i] [-f FILE]\n"
	           "                     [--json] [--cache-dir DIR] [--no-cache-write] [ADDRESS…]\n\n"
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
	           "  --cache-dir DIR, --no-cache-write   where the symbol cache is kept (default\n"
	           "                $XDG_CACHE_HOME/tracekit or ~/.cache/tracekit)\n"
	           "Without debug info for an address, the symbol table gives `function (in Image) + offset`;\n"
	           "an address in no known function is printed back as given.\n");
}

static int parse_hex(const char *s, uint64_t *v)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return -1;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 16);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static void json_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(o, "\\%c", c);
		else if (c < 0x20)
			fprintf(o, "\\u%04x", c);
		else
			fputc(c, o);
	}
	fputc('"', o);
}

typedef struct ctx {
	tk_symbol_image *im;
	const char *image;
	int mode; /* 0 file addresses, 1 load, 2 slide, 3 offset */
	uint64_t load, slide, vmaddr;
	int inl, json;
	size_t unknown;
} ctx;

static void one(ctx *c, const char *tok)
{
	uint64_t a;
	if (parse_hex(tok, &a) < 0) {
		tk_cli_warn("'%s' is not a hex address", tok);
		printf("%s\n", tok);
		c->unknown++;
		return;
	}
	uint64_t fa = a;
	if (c->mode == 1)
		fa = a - c->load + c->vmaddr;
	else if (c->mode == 2)
		fa = a - c->slide;
	else if (c->mode == 3)
		fa = a + c->vmaddr;
	tk_symbol_result r;
	size_t n = tk_symbol_image_lookup(c->im, fa, &r);
	if (n == 1 && !r.frames[0].file && strcmp(r.frames[0].function, "??") == 0)
		n = 0;
	if (c->json) {
		printf("{\"address\":\"0x%llx\",\"file_address\":\"0x%llx\",\"image\":", (unsigned long long)a,
		       (unsigned long long)fa);
		json_str(stdout, c->image);
		printf(",\"frames\":[");
		for (size_t i = 0; i < n; i++) {
			const tk_symbol_frame *f = &r.frames[i];
			printf("%s{\"function\":", i ? "," : "");
			json_str(stdout, f->function);
			printf(",\"file\":");
			if (f->file)
				json_str(stdout, f->file);
			else
				printf("null");
			printf(",\"line\":%u,\"inlined\":%s,\"swift\":%s", f->line,
			       f->flags & TK_FRAME_INLINED ? "true" : "false",
			       f->flags & TK_FRAME_SWIFT ? "true" : "false");
			if (r.symtab_only)
				printf(",\"offset\":%llu", (unsigned long long)(fa - r.symbol_start));
			printf("}");
		}
		printf("]}\n");
		if (!n)
			c->unknown++;
		return;
	}
	if (!n) {
		printf("%s\n", tok);
		c->unknown++;
		return;
	}
	if (r.symtab_only) {
		printf("%s (in %s) + %llu\n", r.frames[0].function, c->image,
		       (unsigned long long)(fa - r.symbol_start));
		return;
	}
	/* atos without -i names the function that owns the code (the outermost frame) with the source
	 * line of the address itself, like llvm-symbolizer --no-inlines */
	size_t from = c->inl ? 0 : n - 1;
	for (size_t i = from; i < n; i++) {
		const tk_symbol_frame *f = &r.frames[i];
		const tk_symbol_frame *loc = c->inl ? f : &r.frames[0];
		if (loc->file)
			printf("%s (in %s) (%s:%u)\n", f->function, c->image, base_name(loc->file), loc->line);
		else
			printf("%s (in %s)\n", f->function, c->image);
	}
}

static void tokens(ctx *c, FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, in) > 0) {
		for (char *save = NULL, *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save))
			one(c, t);
	}
	free(line);
}

int cmd_atos(int argc, char **argv)
{
	const char *obj = NULL, *arch = NULL, *file = NULL;
	tk_symbol_options so;
	tk_symbol_options_init(&so);
	ctx c = {0};
	int first_addr = argc;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int more = i + 1 < argc;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "-o") && more)
			obj = argv[++i];
		else if (!strcmp(a, "-arch") && more)
			arch = argv[++i];
		else if (!strcmp(a, "-l") && more) {
			if (parse_hex(argv[++i], &c.load) < 0)
				return tk_cli_fail("atos: -l %s: not a hex load address", argv[i]);
			c.mode = 1;
		} else if (!strcmp(a, "-s") && more) {
			if (parse_hex(argv[++i], &c.slide) < 0)
				return tk_cli_fail("atos: -s %s: not a hex slide", argv[i]);
			c.mode = 2;
		} else if (!strcmp(a, "-offset"))
			c.mode = 3;
		else if (!strcmp(a, "-i") || !strcmp(a, "--inlineFrames"))
			c.inl = 1;
		else if (!strcmp(a, "-f") && more)
			file = argv[++i];
		else if (!strcmp(a, "--json"))
			c.json = 1;
		else if (!strcmp(a, "--cache-dir") && more)
			so.cache_dir = argv[++i];
		else if (!strcmp(a, "--no-cache-write"))
			so.no_cache_write = 1;
		else if (!strcmp(a, "--")) {
			first_addr = i + 1;
			break;
		} else if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9')) {
			usage(stderr);
			return tk_cli_fail("atos: unknown or incomplete option '%s'", a);
		} else {
			first_addr = i;
			break;
		}
	}
	if (!obj) {
		usage(stderr);
		return tk_cli_fail("atos: -o PATH is required");
	}
	tk_symbolicator *s = tk_symbolicator_new(&so);
	tk_error err;
	c.im = tk_symbolicator_image(s, NULL, obj, arch, &err);
	if (!c.im) {
		tk_symbolicator_free(s);
		return tk_cli_fail("atos: %s", err.msg);
	}
	tk_symcache_meta m;
	tk_symbol_image_meta(c.im, &m);
	c.image = m.image;
	c.vmaddr = m.text_vmaddr;
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	int rc = 0;
	if (first_addr < argc) {
		for (int i = first_addr; i < argc; i++)
			one(&c, argv[i]);
	} else if (file) {
		FILE *in = fopen(file, "r");
		if (!in)
			rc = tk_cli_fail("atos: %s: %s", file, strerror(errno));
		else {
			tokens(&c, in);
			fclose(in);
		}
	} else
		tokens(&c, stdin);
	fflush(stdout);
	tk_symbolicator_free(s);
	return rc;
}
