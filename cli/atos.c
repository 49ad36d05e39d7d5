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
	           "                     [--json] [--cache-dir DIR] [--no-cache-write] [ADDRESS…]\n"
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
	           "  --cache-dir DIR, --no-cache-write   where the symbol cache is kept (default\n"
	           "                $XDG_CACHE_HOME/tracekit or ~/.cache/tracekit)\n"
	           "  --search PATH directories, dSYMs or binaries to find images in; each input line is then\n"
	           "                IMAGE ADDRESS… where IMAGE is a UUID or a path, optionally :ARCH and @LOADADDR\n"
	           "                (e.g. 4C4C44A4-5555-3144-A178-6F015627038B@0x104a8c000 0x104a8d010)\n"
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

typedef struct batch_img {
	char *spec;
	tk_symbol_image *im;
	uint64_t load;
	int has_load;
} batch_img;

typedef struct ctx {
	tk_symbolicator *s;
	batch_img *imgs;
	size_t nimgs;
	size_t last;
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

/* Batch mode: select the image named by the first token of a line. */
static int select_image(ctx *c, const char *spec)
{
	if (c->nimgs && strcmp(c->imgs[c->last].spec, spec) == 0)
		goto found;
	for (size_t i = 0; i < c->nimgs; i++)
		if (strcmp(c->imgs[i].spec, spec) == 0) {
			c->last = i;
			goto found;
		}
	{
		char buf[4096];
		snprintf(buf, sizeof buf, "%s", spec);
		batch_img b = {strdup(spec), NULL, 0, 0};
		char *at = strrchr(buf, '@');
		if (at) {
			*at = 0;
			if (parse_hex(at + 1, &b.load) < 0) {
				tk_cli_warn("%s: bad load address '%s'", spec, at + 1);
				free(b.spec);
				return -1;
			}
			b.has_load = 1;
		}
		char *colon = strrchr(buf, ':');
		const char *arch = NULL;
		if (colon && !strchr(colon, '/')) {
			*colon = 0;
			arch = colon + 1;
		}
		uint8_t probe[16];
		int is_uuid = strlen(buf) >= 32 && strlen(buf) <= 36 && !strchr(buf, '/');
		(void)probe;
		tk_error err;
		b.im = tk_symbolicator_image(c->s, is_uuid ? buf : NULL, is_uuid ? NULL : buf, arch, &err);
		if (!b.im)
			tk_cli_warn("%s", err.msg);
		c->imgs = realloc(c->imgs, (c->nimgs + 1) * sizeof *c->imgs);
		c->imgs[c->nimgs] = b;
		c->last = c->nimgs++;
	}
found:;
	batch_img *b = &c->imgs[c->last];
	if (!b->im)
		return -1;
	tk_symcache_meta m;
	tk_symbol_image_meta(b->im, &m);
	c->im = b->im;
	c->image = b->im ? tk_symbol_image_name(b->im) : "";
	c->vmaddr = m.text_vmaddr;
	c->mode = b->has_load ? 1 : 0;
	c->load = b->load;
	return 0;
}

static void batch(ctx *c, FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, in) > 0) {
		char *save = NULL, *t = strtok_r(line, " \t\r\n", &save);
		if (!t)
			continue;
		int ok = select_image(c, t) == 0;
		for (t = strtok_r(NULL, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
			if (ok)
				one(c, t);
			else {
				printf("%s\n", t);
				c->unknown++;
			}
		}
	}
	free(line);
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
	const char *search[argc];
	int nsearch = 0;
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
		else if (!strcmp(a, "--search") && more)
			search[nsearch++] = argv[++i];
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
	if (!obj && !nsearch) {
		usage(stderr);
		return tk_cli_fail("atos: -o PATH (or --search PATH for batch input) is required");
	}
	tk_symbolicator *s = tk_symbolicator_new(&so);
	tk_error err;
	c.s = s;
	static char obuf[1 << 16];
	if (!obj) {
		for (int i = 0; i < nsearch; i++)
			if (tk_symbolicator_add_path(s, search[i], &err) < 0) {
				tk_symbolicator_free(s);
				return tk_cli_fail("atos: %s", err.msg);
			}
		setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
		FILE *in = file ? fopen(file, "r") : stdin;
		int rc = 0;
		if (!in)
			rc = tk_cli_fail("atos: %s: %s", file, strerror(errno));
		else {
			batch(&c, in);
			if (in != stdin)
				fclose(in);
		}
		fflush(stdout);
		for (size_t i = 0; i < c.nimgs; i++)
			free(c.imgs[i].spec);
		free(c.imgs);
		tk_symbolicator_free(s);
		return rc;
	}
	c.im = tk_symbolicator_image(s, NULL, obj, arch, &err);
	if (!c.im) {
		tk_symbolicator_free(s);
		return tk_cli_fail("atos: %s", err.msg);
	}
	tk_symcache_meta m;
	tk_symbol_image_meta(c.im, &m);
	c.image = tk_symbol_image_name(c.im);
	c.vmaddr = m.text_vmaddr;
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
