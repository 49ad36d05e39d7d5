/* tracekit symcache — build and inspect symbol caches (one mmap'able file per UUID and arch). */
#include <string.h>

#include "analysis.h"
#include "tracekit/symbol.h"

TK_COMMAND(symcache, "build or inspect symbol caches of dSYMs and binaries")

enum { OPT_CACHE_DIR = 1, OPT_ARCH, OPT_PATH };

static const tk_cli_option options[] = {
    TK_OPT_VALUE(OPT_CACHE_DIR, "--cache-dir", "-o", "DIR",
                 "build: where the cache files go (default $XDG_CACHE_HOME/tracekit or ~/.cache/tracekit)"),
    TK_OPT_VALUE(OPT_ARCH, "--arch", "-arch", "ARCH", "only this slice of a universal file (arm64, x86_64 …)"),
    TK_OPT_OPERAND(OPT_PATH, "PATH…", ".dSYM bundles, DWARF files, Mach-O binaries or (info) caches"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_symcache = {
    .name = "symcache",
    .usage = "tracekit symcache build PATH… [-o|--cache-dir DIR] [-arch|--arch ARCH]\n"
             "tracekit symcache info CACHE|PATH… [-arch|--arch ARCH]",
    .about = "build  converts every slice of each .dSYM bundle, DWARF file or Mach-O binary into a cache\n"
             "       file DIR/<UUID>-<arch>.tksym (DIR defaults to $XDG_CACHE_HOME/tracekit or\n"
             "       ~/.cache/tracekit). Valid caches are kept; stale or corrupt ones are rebuilt.\n"
             "info   prints UUID, arch, __TEXT vmaddr, counts and sizes of caches (building them first\n"
             "       when given a dSYM or binary).\n",
    .options = options,
    .footer = NULL,
    .flags = TK_CLI_NO_DASHDASH,
};

typedef struct symcache_args {
	const char *arch;
	tk_symbol_options so;
	const char **paths;
	int np;
} symcache_args;

static int symcache_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	symcache_args *t = ctx;
	switch (o->id) {
	case OPT_CACHE_DIR: t->so.cache_dir = v; return 0;
	case OPT_ARCH: t->arch = v; return 0;
	}
	t->paths[t->np++] = v;
	return 0;
}

static void print_meta(void *ctx, const tk_symcache_meta *m, const char *cache_path)
{
	printf("%s %s %s vmaddr=0x%llx ranges=%llu locations=%llu strings=%llu bytes=%llu%s\n",
	       cache_path ? cache_path : "(memory)", m->uuid_str, m->arch, (unsigned long long)m->text_vmaddr,
	       (unsigned long long)m->nranges, (unsigned long long)m->nlocs, (unsigned long long)m->string_bytes,
	       (unsigned long long)m->file_size, m->has_dwarf ? "" : " symbols-only");
}

int cmd_symcache(int argc, char **argv)
{
	if (argc < 2)
		return tk_cli_usage("symcache", "expected build or info");
	if (tk_cli_wants_help(argc, argv)) {
		tk_cli_help(&tk_cli_command_symcache, stdout);
		return 0;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "build") != 0 && strcmp(sub, "info") != 0)
		return tk_cli_usage("symcache", "unknown subcommand '%s' (expected build or info)", sub);
	const char *paths[argc];
	symcache_args t = {.paths = paths};
	tk_symbol_options_init(&t.so);
	int r = tk_cli_parse(&tk_cli_command_symcache, argc, argv, 2, symcache_option, &t, NULL);
	if (r)
		return r < 0 ? 0 : r;
	const char *arch = t.arch;
	tk_symbol_options so = t.so;
	int np = t.np;
	if (!np)
		return tk_cli_usage("symcache", "%s: no input", sub);
	tk_symbolicator *s = tk_symbolicator_new(&so);
	int rc = 0;
	for (int i = 0; i < np; i++) {
		tk_error err;
		if (tk_symcache_build_path(s, paths[i], arch, print_meta, NULL, &err) < 0) {
			/* a cache file given to info: open it as an image */
			tk_symbol_image *im = NULL;
			if (!strcmp(sub, "info"))
				im = tk_symbolicator_image(s, NULL, paths[i], arch, &err);
			if (!im) {
				rc = tk_cli_fail("symcache: %s", err.msg);
				continue;
			}
			tk_symcache_meta m;
			tk_symbol_image_meta(im, &m);
			print_meta(NULL, &m, tk_symbol_image_cache_path(im));
		}
	}
	tk_symbolicator_free(s);
	return rc;
}
