/* tracekit symbolicate — rewrite an Instruments export with names, files and lines from dSYMs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "tracekit/symbol.h"
#include "util/outfile.h"

TK_COMMAND(symbolicate, "symbolicate an xctrace export from dSYMs (writes the Xcode 14.3+ form)")

static void usage(FILE *f)
{
	fprintf(f, "usage: tracekit symbolicate IN --symbols PATH… [-o OUT] [--image SPEC…] [--pac-mask HEX]\n"
	           "                            [--adjust auto|none|minus1] [--cache-dir DIR]\n\n"
	           "Reads IN (an `xctrace export` XML, gzip'd or not, - for standard input), resolves every frame\n"
	           "whose binary (UUID, load address) is found under the --symbols paths into function, file and\n"
	           "line, inlined functions becoming frames of their own, and writes a time-profile export in the\n"
	           "Xcode 14.3+ form (frames with <binary> and <source>) to OUT (default standard output).\n"
	           "  --symbols PATH   dSYM, binary, .tksym cache or directory (searched recursively); repeat\n"
	           "  --image SPEC     for address-only stacks (exports before Xcode 14.3): PATH or UUID, optional\n"
	           "                   :ARCH, then @LOADADDR (hex), e.g. MyApp.app.dSYM@0x104a8c000; repeat.\n"
	           "                   Without it, images listed by kdebug tables exported with the profile are used\n"
	           "  --pac-mask HEX   keep these address bits (default arm64: 0xffffffffff, x86_64: all)\n"
	           "  --adjust MODE    auto (default): return addresses at addr-1, leaf PCs as recorded;\n"
	           "                   none: every address as is; minus1: every address at addr-1\n"
	           "  --cache-dir DIR  symbol caches (default $XDG_CACHE_HOME/tracekit or ~/.cache/tracekit)\n"
	           "Frames that cannot be resolved keep their exported names; a warning names each missing image.\n"
	           "Every row of IN becomes one row of OUT with its original time, thread and weight, in order.\n");
}

static void warn_cb(void *ctx, const char *msg)
{
	tk_cli_warn("symbolicate: %s", msg);
}

static int parse_hex(const char *s, uint64_t *v)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 16);
	if (!*s || *end || errno)
		return -1;
	*v = x;
	return 0;
}

int cmd_symbolicate(int argc, char **argv)
{
	if (tk_cli_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	const char *in = NULL, *out = NULL;
	const char *paths[argc];
	int npaths = 0;
	tk_image_spec specs[argc];
	char *spec_buf[argc];
	int nspecs = 0, rc = 1;
	tk_symbol_options so;
	tk_symbol_options_init(&so);
	tk_symbolicate_options o;
	tk_symbolicate_options_init(&o);
	/* options with a value, through the one option parser (NAME VALUE or NAME=VALUE) */
	static const char *const with_value[] = {"--symbols",  "--output", "--cache-dir",
	                                         "--pac-mask", "--adjust", "--image"};
	for (int i = 1; i < argc;) {
		const char *a = argv[i], *v = NULL;
		int r = 0;
		size_t k = 0;
		for (; k < sizeof with_value / sizeof with_value[0]; k++)
			if ((r = tk_cli_opt("symbolicate", argc, argv, &i, with_value[k], k == 1 ? "-o" : NULL, &v)) !=
			    0)
				break;
		if (r < 0) {
			rc = 2;
			goto done;
		}
		if (r == 0) {
			i++;
			if (a[0] == '-' && a[1]) {
				rc = tk_cli_usage("symbolicate", "unknown option '%s'", a);
				goto done;
			}
			if (in) {
				rc = tk_cli_usage("symbolicate", "one input at a time ('%s' and '%s')", in, a);
				goto done;
			}
			in = a;
			continue;
		}
		switch (k) {
		case 0: paths[npaths++] = v; break;
		case 1: out = v; break;
		case 2: so.cache_dir = v; break;
		case 3:
			if (parse_hex(v, &o.pac_mask) < 0 || !o.pac_mask) {
				rc = tk_cli_usage("symbolicate", "--pac-mask %s: expected a non-zero hex mask", v);
				goto done;
			}
			break;
		case 4:
			if (!strcmp(v, "auto"))
				o.adjust = TK_ADJUST_AUTO;
			else if (!strcmp(v, "none"))
				o.adjust = TK_ADJUST_NONE;
			else if (!strcmp(v, "minus1"))
				o.adjust = TK_ADJUST_MINUS1;
			else {
				rc = tk_cli_usage("symbolicate", "--adjust %s: expected auto, none or minus1", v);
				goto done;
			}
			break;
		default: {
			char *sp = strdup(v);
			char *at = strrchr(sp, '@');
			tk_image_spec *s = &specs[nspecs];
			memset(s, 0, sizeof *s);
			spec_buf[nspecs++] = sp;
			if (!at || parse_hex(at + 1, &s->load_addr) < 0) {
				rc = tk_cli_usage("symbolicate", "--image %s: expected PATH|UUID[:ARCH]@LOADADDR", v);
				goto done;
			}
			*at = 0;
			char *colon = strrchr(sp, ':');
			if (colon && !strchr(colon, '/')) {
				*colon = 0;
				s->arch = colon + 1;
			}
			if (!strchr(sp, '/') && strlen(sp) >= 32 && strlen(sp) <= 36)
				s->uuid = sp;
			else
				s->path = sp;
		}
		}
	}
	if (!in) {
		rc = tk_cli_usage("symbolicate", "no input file");
		goto done;
	}
	if (!npaths && !nspecs) {
		rc = tk_cli_usage("symbolicate", "give --symbols PATH (dSYMs, binaries or a directory) or --image");
		goto done;
	}
	tk_symbolicator *s = tk_symbolicator_new(&so);
	tk_error err;
	tk_profile *p = NULL, *q = NULL;
	tk_outfile of = {0};
	for (int i = 0; i < npaths; i++)
		if (tk_symbolicator_add_path(s, paths[i], &err) < 0) {
			rc = tk_cli_fail("symbolicate: %s", err.msg);
			goto out;
		}
	p = tk_profile_new();
	/* "the same export, symbolicated": keep every row's time, weight and order */
	tk_profile_keep_samples(p, 1);
	tk_read_options ro;
	tk_read_options_init(&ro);
	ro.progress = tk_cli_progress;
	int r = tk_read_path(p, in, &ro, &err);
	if (r == 0)
		r = tk_elf_name_session(&p, NULL, &err);
	tk_cli_progress_done();
	if (r < 0) {
		rc = tk_cli_fail("%s", err.msg);
		goto out;
	}
	size_t resolved = 0, unresolved = 0;
	o.images = specs;
	o.nimages = (size_t)nspecs;
	o.resolved = &resolved;
	o.unresolved = &unresolved;
	o.warn = warn_cb;
	q = tk_symbolicate_profile(p, s, &o, &err);
	if (!q) {
		rc = tk_cli_fail("symbolicate: %s", err.msg);
		goto out;
	}
	/* OUT may be IN: the output goes to a temporary beside OUT, renamed over it only when whole */
	if (tk_outfile_open(&of, out, &err) < 0) {
		rc = tk_cli_fail("symbolicate: %s", err.msg);
		goto out;
	}
	if (tk_symbol_write_xctrace(of.f, q, &err) < 0) {
		tk_outfile_abort(&of);
		rc = tk_cli_fail("symbolicate: %s: %s", out ? out : "stdout", err.msg);
		goto out;
	}
	if (tk_outfile_commit(&of, &err) < 0) {
		rc = tk_cli_fail("symbolicate: %s", err.msg);
		goto out;
	}
	fprintf(stderr, "tracekit: symbolicate: %zu frames resolved, %zu left as exported\n", resolved, unresolved);
	rc = 0;
out:
	tk_profile_free(q);
	tk_profile_free(p);
	tk_symbolicator_free(s);
done:
	for (int i = 0; i < nspecs; i++)
		free(spec_buf[i]);
	return rc;
}
