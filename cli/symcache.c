/* tracekit symcache — build and inspect symbol caches (one mmap'able file per UUID and arch). */
#include <string.h>

#include "analysis.h"
#include "tracekit/symbol.h"

TK_COMMAND(symcache, "build or inspect symbol caches of dSYMs and binaries")

static void usage(FILE *f)
{
	fprintf(f, "usage: tracekit symcache build PATH… [-o|--cache-dir DIR] [-arch|--arch ARCH]\n"
	           "       tracekit symcache info CACHE|PATH… [-arch|--arch ARCH]\n\n"
	           "build  converts every slice of each .dSYM bundle, DWARF file or Mach-O binary into a cache\n"
	           "       file DIR/<UUID>-<arch>.tksym (DIR defaults to $XDG_CACHE_HOME/tracekit or\n"
	           "       ~/.cache/tracekit). Valid caches are kept; stale or corrupt ones are rebuilt.\n"
	           "info   prints UUID, arch, __TEXT vmaddr, counts and sizes of caches (building them first\n"
	           "       when given a dSYM or binary).\n");
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
		usage(stdout);
		return 0;
	}
	const char *sub = argv[1], *arch = NULL;
	if (strcmp(sub, "build") != 0 && strcmp(sub, "info") != 0)
		return tk_cli_usage("symcache", "unknown subcommand '%s' (expected build or info)", sub);
	tk_symbol_options so;
	tk_symbol_options_init(&so);
	const char *paths[argc];
	int np = 0;
	for (int i = 2; i < argc;) {
		const char *v;
		int r;
		/* through the one option parser: NAME VALUE or NAME=VALUE */
		if ((r = tk_cli_opt("symcache", argc, argv, &i, "--cache-dir", "-o", &v)) != 0) {
			if (r < 0)
				return 2;
			so.cache_dir = v;
		} else if ((r = tk_cli_opt("symcache", argc, argv, &i, "--arch", "-arch", &v)) != 0) {
			if (r < 0)
				return 2;
			arch = v;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return tk_cli_usage("symcache", "unknown option '%s'", argv[i]);
		} else {
			paths[np++] = argv[i++];
		}
	}
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
