/*
 * Mach-O reader: thin and universal files, the load commands symbolication needs (LC_UUID,
 * LC_SEGMENT_64 with its sections, LC_SYMTAB). Every offset read from the file is checked against
 * the bytes we have, so truncated or hostile files give an error, never an out-of-bounds read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symint.h"
#include "util/mem.h"

#define MH_MAGIC_64 0xfeedfacfu
#define MH_CIGAM_64 0xcffaedfeu
#define MH_MAGIC 0xfeedfaceu
#define FAT_MAGIC 0xcafebabeu
#define FAT_MAGIC_64 0xcafebabfu
#define LC_SEGMENT_64 0x19u
#define LC_UUID 0x1bu
#define LC_SYMTAB 0x2u
#define CPU_ARCH_ABI64 0x01000000u
#define CPU_TYPE_X86_64 0x01000007u
#define CPU_TYPE_ARM64 0x0100000cu
#define CPU_SUBTYPE_MASK 0xff000000u

static uint32_t rd32le(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64le(const uint8_t *p)
{
	return rd32le(p) | (uint64_t)rd32le(p + 4) << 32;
}
static uint32_t rd32be(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t rd64be(const uint8_t *p)
{
	return (uint64_t)rd32be(p) << 32 | rd32be(p + 4);
}

int tk_macho_sniff(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	uint32_t le = rd32le(data), be = rd32be(data);
	/* 0xcafebabe is also the Java class magic; a fat header has a small slice count. */
	if (be == FAT_MAGIC || be == FAT_MAGIC_64)
		return size >= 8 && rd32be(data + 4) > 0 && rd32be(data + 4) <= TK_MACHO_MAX_SLICES;
	return le == MH_MAGIC_64 || le == MH_MAGIC;
}

const char *tk_macho_arch_name(uint32_t cputype, uint32_t cpusubtype, char buf[16])
{
	uint32_t sub = cpusubtype & ~CPU_SUBTYPE_MASK;
	if (cputype == CPU_TYPE_ARM64)
		snprintf(buf, 16, "%s", sub == 2 ? "arm64e" : "arm64");
	else if (cputype == CPU_TYPE_X86_64)
		snprintf(buf, 16, "%s", sub == 8 ? "x86_64h" : "x86_64");
	else if (cputype == 0x0200000cu)
		snprintf(buf, 16, "arm64_32");
	else if (cputype == 12)
		snprintf(buf, 16, "arm");
	else if (cputype == 7)
		snprintf(buf, 16, "i386");
	else
		snprintf(buf, 16, "cpu%x.%x", cputype, sub);
	return buf;
}

int tk_macho_arch_parse(const char *arch, uint32_t *cputype, uint32_t *cpusubtype)
{
	static const struct {
		const char *name;
		uint32_t type, sub;
	} t[] = {{"arm64", CPU_TYPE_ARM64, 0},
	         {"arm64e", CPU_TYPE_ARM64, 2},
	         {"x86_64", CPU_TYPE_X86_64, 3},
	         {"x86_64h", CPU_TYPE_X86_64, 8},
	         {"arm64_32", 0x0200000cu, 1}};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(arch, t[i].name) == 0) {
			*cputype = t[i].type;
			*cpusubtype = t[i].sub;
			return 0;
		}
	return -1;
}

void tk_uuid_format(const uint8_t u[16], char out[37])
{
	snprintf(out, 37, "%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X", u[0], u[1], u[2],
	         u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int tk_uuid_parse(const char *s, uint8_t u[16])
{
	int n = 0, half = -1;
	for (; *s && n < 16; s++) {
		int v;
		if (*s == '-')
			continue;
		if (*s >= '0' && *s <= '9')
			v = *s - '0';
		else if ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'f')
			v = (*s | 0x20) - 'a' + 10;
		else
			return -1;
		if (half < 0)
			half = v;
		else {
			u[n++] = (uint8_t)(half << 4 | v);
			half = -1;
		}
	}
	return n == 16 && *s == 0 && half < 0 ? 0 : -1;
}

static int parse_thin(const uint8_t *d, size_t size, const char *name, uint64_t base, tk_macho_slice *sl, tk_error *err)
{
	if (size < 32)
		return tk_error_set(err, "%s: offset %llu: Mach-O header truncated (%zu bytes)", name,
		                    (unsigned long long)base, size);
	uint32_t magic = rd32le(d);
	if (magic == MH_MAGIC)
		return tk_error_set(err, "%s: offset %llu: 32-bit Mach-O is not supported", name,
		                    (unsigned long long)base);
	if (magic != MH_MAGIC_64)
		return tk_error_set(err, "%s: offset %llu: not a Mach-O file (magic 0x%08x)", name,
		                    (unsigned long long)base, magic);
	sl->cputype = rd32le(d + 4);
	sl->cpusubtype = rd32le(d + 8) & ~CPU_SUBTYPE_MASK;
	tk_macho_arch_name(sl->cputype, sl->cpusubtype, sl->arch);
	sl->filetype = rd32le(d + 12);
	uint32_t ncmds = rd32le(d + 16), sizeofcmds = rd32le(d + 20);
	if (sizeofcmds > size - 32)
		return tk_error_set(err, "%s: offset %llu: load commands (%u bytes) run past the end of the file", name,
		                    (unsigned long long)base, sizeofcmds);
	const uint8_t *p = d + 32, *end = d + 32 + sizeofcmds;
	for (uint32_t i = 0; i < ncmds; i++) {
		if (end - p < 8)
			return tk_error_set(err, "%s: offset %llu: load command %u truncated", name,
			                    (unsigned long long)(base + (uint64_t)(p - d)), i);
		uint32_t cmd = rd32le(p), cmdsize = rd32le(p + 4);
		if (cmdsize < 8 || cmdsize > (size_t)(end - p))
			return tk_error_set(err, "%s: offset %llu: load command %u has bad size %u", name,
			                    (unsigned long long)(base + (uint64_t)(p - d)), i, cmdsize);
		if (cmd == LC_UUID && cmdsize >= 24) {
			memcpy(sl->uuid, p + 8, 16);
			sl->has_uuid = 1;
		} else if (cmd == LC_SYMTAB && cmdsize >= 24) {
			sl->symoff = rd32le(p + 8);
			sl->nsyms = rd32le(p + 12);
			sl->stroff = rd32le(p + 16);
			sl->strsize = rd32le(p + 20);
			if ((uint64_t)sl->symoff + (uint64_t)sl->nsyms * 16 > size ||
			    (uint64_t)sl->stroff + sl->strsize > size) {
				/* dSYMs keep the symbol table; a stripped or truncated one is not fatal */
				sl->nsyms = 0;
				sl->strsize = 0;
			}
		} else if (cmd == LC_SEGMENT_64) {
			if (cmdsize < 72)
				return tk_error_set(err, "%s: offset %llu: LC_SEGMENT_64 too short", name,
				                    (unsigned long long)(base + (uint64_t)(p - d)));
			uint32_t nsects = rd32le(p + 64);
			if ((uint64_t)nsects * 80 > cmdsize - 72)
				return tk_error_set(
				    err, "%s: offset %llu: LC_SEGMENT_64 claims %u sections in %u bytes", name,
				    (unsigned long long)(base + (uint64_t)(p - d)), nsects, cmdsize);
			char seg[17] = {0};
			memcpy(seg, p + 8, 16);
			if (strcmp(seg, "__TEXT") == 0) {
				sl->text_vmaddr = rd64le(p + 24);
				sl->text_vmsize = rd64le(p + 32);
			}
			if (nsects) {
				sl->sects = tk_xrealloc(sl->sects, (sl->nsects + nsects) * sizeof *sl->sects);
				for (uint32_t k = 0; k < nsects; k++) {
					const uint8_t *s = p + 72 + 80 * k;
					tk_macho_section *x = &sl->sects[sl->nsects++];
					memset(x, 0, sizeof *x);
					memcpy(x->sectname, s, 16);
					memcpy(x->segname, s + 16, 16);
					x->addr = rd64le(s + 32);
					x->size = rd64le(s + 40);
					x->offset = rd32le(s + 48);
					x->index = sl->nsects;
					uint32_t type = rd32le(s + 64) & 0xff;
					int zerofill = type == 1 || type == 0xc || type == 0x12;
					if (!zerofill && x->offset && (uint64_t)x->offset + x->size > size)
						return tk_error_set(
						    err,
						    "%s: offset %llu: section %s,%s runs past the end of the file "
						    "(file truncated?)",
						    name, (unsigned long long)(base + x->offset), x->segname,
						    x->sectname);
					if (strcmp(x->sectname, "__debug_info") == 0 && x->offset && x->size)
						sl->has_dwarf = 1;
				}
			}
		}
		p += cmdsize;
	}
	return 0;
}

int tk_macho_parse(const uint8_t *data, size_t size, const char *name, tk_macho_file *out, tk_error *err)
{
	memset(out, 0, sizeof *out);
	if (size < 8)
		return tk_error_set(err, "%s: too short to be a Mach-O file (%zu bytes)", name, size);
	uint32_t be = rd32be(data);
	if (be == FAT_MAGIC || be == FAT_MAGIC_64) {
		uint32_t n = rd32be(data + 4);
		size_t esz = be == FAT_MAGIC ? 20 : 32;
		if (n == 0 || n > TK_MACHO_MAX_SLICES)
			return tk_error_set(err, "%s: universal header lists %u slices", name, n);
		if (8 + (uint64_t)n * esz > size)
			return tk_error_set(err, "%s: universal header truncated", name);
		out->fat = 1;
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *e = data + 8 + i * esz;
			uint64_t off = be == FAT_MAGIC ? rd32be(e + 8) : rd64be(e + 8);
			uint64_t len = be == FAT_MAGIC ? rd32be(e + 12) : rd64be(e + 16);
			tk_macho_slice *sl = &out->slices[out->nslices++];
			sl->cputype = rd32be(e);
			sl->cpusubtype = rd32be(e + 4) & ~CPU_SUBTYPE_MASK;
			tk_macho_arch_name(sl->cputype, sl->cpusubtype, sl->arch);
			if (off > size || len > size - off) {
				tk_error_set(
				    err,
				    "%s: slice %u (%s) at offset %llu + %llu runs past the end of the file (%zu bytes)",
				    name, i, sl->arch, (unsigned long long)off, (unsigned long long)len, size);
				tk_macho_free(out);
				return -1;
			}
			sl->offset = off;
			sl->size = len;
			if (!(sl->cputype & CPU_ARCH_ABI64))
				continue; /* listed, but we only read 64-bit slices */
			if (parse_thin(data + off, len, name, off, sl, err) < 0) {
				tk_macho_free(out);
				return -1;
			}
		}
		return 0;
	}
	out->nslices = 1;
	out->slices[0].size = size;
	if (parse_thin(data, size, name, 0, &out->slices[0], err) < 0) {
		tk_macho_free(out);
		return -1;
	}
	return 0;
}

void tk_macho_free(tk_macho_file *f)
{
	for (uint32_t i = 0; i < f->nslices; i++) {
		free(f->slices[i].sects);
		f->slices[i].sects = NULL;
	}
	f->nslices = 0;
}

const tk_macho_slice *tk_macho_pick(const tk_macho_file *f, const char *arch)
{
	if (arch && *arch) {
		for (uint32_t i = 0; i < f->nslices; i++)
			if (strcmp(f->slices[i].arch, arch) == 0)
				return &f->slices[i];
		return NULL;
	}
	if (f->nslices == 1)
		return &f->slices[0];
	static const char *pref[] = {"arm64e", "arm64", "x86_64", "x86_64h"};
	for (size_t k = 0; k < sizeof pref / sizeof pref[0]; k++)
		for (uint32_t i = 0; i < f->nslices; i++)
			if (strcmp(f->slices[i].arch, pref[k]) == 0)
				return &f->slices[i];
	return f->nslices ? &f->slices[0] : NULL;
}
