/*
 * ELF symbolization through libdwfl: one Dwfl per file, the module reported at bias 0 so module
 * addresses are the file's own virtual addresses (the caller has already subtracted the load bias
 * recorded at run time). libdwfl picks .symtab over .dynsym and reads the separate debug file
 * when one is installed, which is exactly the order we want.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbol/elf.h"
#include "util/hidx.h"
#include "util/mem.h"

typedef struct elf_file {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	char *error; /* non-NULL if the file could not be used */
} elf_file;

struct tk_elf_cache {
	elf_file *files;
	size_t n, cap;
	tk_hidx index; /* by path: a session may list 100,000 images */
};

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

tk_elf_cache *tk_elf_cache_new(void)
{
	return tk_xcalloc(1, sizeof(tk_elf_cache));
}

void tk_elf_cache_free(tk_elf_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		if (c->files[i].dwfl)
			dwfl_end(c->files[i].dwfl);
		free(c->files[i].path);
		free(c->files[i].error);
	}
	free(c->files);
	tk_hidx_free(&c->index);
	free(c);
}

static char *fmt_error(const char *fmt, const char *a, const char *b)
{
	char buf[512];
	snprintf(buf, sizeof buf, fmt, a, b);
	return tk_xstrdup(buf);
}

static void hex(const unsigned char *bits, int len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < len; i++) {
		out[2 * i] = digits[bits[i] >> 4];
		out[2 * i + 1] = digits[bits[i] & 15];
	}
	out[2 * len] = 0;
}

static int path_eq(const void *ctx, uint32_t idx, const void *key)
{
	return strcmp(((const tk_elf_cache *)ctx)->files[idx].path, key) == 0;
}

static elf_file *load(tk_elf_cache *c, const char *path, const char *build_id)
{
	uint64_t h = tk_hash_bytes(path, strlen(path), 11);
	uint32_t at = tk_hidx_find(&c->index, h, path_eq, c, path);
	if (at != UINT32_MAX)
		return &c->files[at];
	TK_GROW(c->files, c->cap, c->n + 1);
	tk_hidx_insert(&c->index, h, (uint32_t)c->n);
	elf_file *f = &c->files[c->n++];
	memset(f, 0, sizeof *f);
	f->path = tk_xstrdup(path);
	/* images.json names any path: a FIFO or device there must not block the open below, and a
	 * missing file needs no libdwfl session to say so */
	struct stat st;
	if (stat(path, &st) != 0) {
		f->error = fmt_error("%s: %s", path, strerror(errno));
		return f;
	}
	if (!S_ISREG(st.st_mode)) {
		f->error = fmt_error("%s: %s", path, "not a regular file");
		return f;
	}
	f->dwfl = dwfl_begin(&callbacks);
	if (!f->dwfl) {
		f->error = fmt_error("%s: %s", path, dwfl_errmsg(-1));
		return f;
	}
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, path, path, -1, 0, false);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		f->error = fmt_error("%s: cannot read as ELF: %s", path, dwfl_errmsg(-1));
		return f;
	}
	if (build_id && *build_id) {
		const unsigned char *bits;
		GElf_Addr vaddr;
		int len = dwfl_module_build_id(f->mod, &bits, &vaddr);
		char have[2 * 64 + 1] = "";
		if (len > 0 && len <= 64)
			hex(bits, len, have);
		if (strcasecmp(have, build_id) != 0)
			f->error = fmt_error("%s: build-id %s differs from the recorded one (the file changed since "
			                     "the recording)",
			                     path, *have ? have : "(none)");
	}
	return f;
}

int tk_elf_open(tk_elf_cache *c, const char *path, const char *build_id, tk_error *err)
{
	elf_file *f = load(c, path, build_id);
	if (f->error)
		return tk_error_set(err, "%s", f->error);
	return 0;
}

int tk_elf_lookup(tk_elf_cache *c, const char *path, uint64_t addr, tk_elf_loc *out, tk_error *err)
{
	elf_file *f = load(c, path, NULL);
	memset(out, 0, sizeof *out);
	if (f->error)
		return tk_error_set(err, "%s", f->error);
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(f->mod, addr, &off, &sym, NULL, NULL, NULL);
	if (name && *name) {
		out->func = name;
		out->offset = off;
	}
	Dwfl_Line *line = dwfl_module_getsrc(f->mod, addr);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (file && lineno > 0) {
			out->file = file;
			out->line = (uint32_t)lineno;
		}
	}
	return out->func || out->file ? 1 : 0;
}

int tk_elf_lookup_frames(tk_elf_cache *c, const char *path, uint64_t addr, tk_elf_loc *out, size_t cap, tk_error *err)
{
	tk_elf_loc base;
	int found = tk_elf_lookup(c, path, addr, &base, err);
	if (found <= 0 || cap == 0)
		return found < 0 ? -1 : 0;
	elf_file *f = load(c, path, NULL);
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(f->mod, addr, &bias);
	Dwarf_Die *scopes = NULL, *chain = NULL;
	int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	/* dwarf_getscopes continues past an inlined instance into its abstract definition's scopes; the
	 * concrete nesting (inlined instance, its caller's inlined instance, …, the subprogram) comes
	 * from dwarf_getscopes_die on the innermost function scope */
	int nc = 0;
	for (int i = 0; i < ns; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine)
			nc = dwarf_getscopes_die(&scopes[i], &chain);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
			break;
	}
	size_t n = 0;
	const char *file = base.file;
	uint32_t line = base.line;
	for (int i = 0; i < nc && n + 1 < cap; i++) {
		int tag = dwarf_tag(&chain[i]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		/* the linkage (mangled) name when there is one, as symbol tables and llvm-symbolizer name
		 * functions; the plain DW_AT_name otherwise (C) */
		Dwarf_Attribute ln;
		const char *fname = dwarf_formstring(dwarf_attr_integrate(&chain[i], DW_AT_linkage_name, &ln));
		if (!fname)
			fname = dwarf_formstring(dwarf_attr_integrate(&chain[i], DW_AT_MIPS_linkage_name, &ln));
		if (!fname)
			fname = dwarf_diename(&chain[i]);
		out[n] = (tk_elf_loc){.func = fname, .file = file, .line = line, .inlined = 1};
		n++;
		/* the caller is positioned at this inline's call site */
		Dwarf_Attribute a;
		Dwarf_Word idx = 0, cl = 0;
		Dwarf_Files *files;
		size_t nfiles;
		file = NULL;
		line = 0;
		if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &a), &idx) == 0 &&
		    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles)
			file = dwarf_filesrc(files, idx, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &a), &cl) == 0)
			line = (uint32_t)cl;
	}
	free(scopes);
	free(chain);
	out[n] = base;
	if (n) {
		out[n].file = file;
		out[n].line = line;
	}
	return (int)(n + 1);
}
