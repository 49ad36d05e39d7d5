/* Symbol cache from a hand-built Mach-O symbol table: hand-computed lookups ("+ offset" bases, C++
 * demangling, Swift flag, section ends), the atos address math, and corrupt/truncated caches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbol/symint.h"

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}
static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static const struct {
	const char *name;
	uint64_t addr;
	uint8_t type;
} syms[] = {
    {"_shadowed", 0x100001000, 0x0f},            /* same address as foo, earlier: LLVM keeps the later */
    {"_foo", 0x100001000, 0x0f},                 /* external */
    {"__ZN3abc3barEv", 0x100001010, 0x0e},       /* local C++ */
    {"_$s4main3FooV3baryyF", 0x100001040, 0x0f}, /* Swift */
    {"_after_swift", 0x100001060, 0x0f},
    {"_undefined", 0, 0x01}, /* N_UNDF: ignored */
};

/* An MH_EXECUTE with __TEXT at 0x100000000, __text = [0x100001000, 0x100001080), a symbol table. */
static size_t build(uint8_t *b)
{
	memset(b, 0, 4096);
	put32(b, 0xfeedfacf);
	put32(b + 4, 0x0100000c);
	put32(b + 8, 0);
	put32(b + 12, 2);
	put32(b + 16, 3);
	put32(b + 20, 24 + 152 + 24);
	uint8_t *c = b + 32;
	put32(c, 0x1b);
	put32(c + 4, 24);
	for (int i = 0; i < 16; i++)
		c[8 + i] = (uint8_t)(0xA0 + i);
	c += 24;
	put32(c, 0x19);
	put32(c + 4, 152);
	memcpy(c + 8, "__TEXT", 6);
	put64(c + 24, 0x100000000);
	put64(c + 32, 0x2000);
	put32(c + 64, 1);
	uint8_t *s = c + 72;
	memcpy(s, "__text", 6);
	memcpy(s + 16, "__TEXT", 6);
	put64(s + 32, 0x100001000);
	put64(s + 40, 0x80);
	put32(s + 48, 0x1000);
	put32(s + 64, 0x80000400);
	c += 152;
	uint32_t nsyms = sizeof syms / sizeof syms[0], symoff = 1024, stroff = 2048;
	put32(c, 2);
	put32(c + 4, 24);
	put32(c + 8, symoff);
	put32(c + 12, nsyms);
	put32(c + 16, stroff);
	uint32_t strx = 1;
	for (uint32_t i = 0; i < nsyms; i++) {
		uint8_t *e = b + symoff + 16 * i;
		put32(e, strx);
		e[4] = syms[i].type;
		e[5] = syms[i].type & 0x0e ? 1 : 0;
		put64(e + 8, syms[i].addr);
		strcpy((char *)b + stroff + strx, syms[i].name);
		strx += (uint32_t)strlen(syms[i].name) + 1;
	}
	put32(c + 20, strx);
	return 4096 + 0x80;
}

#include "test_symbol_fixture.h"

static char binpath[128];

/* the fixture's directory, with the hand-built binary in it */
static int setup_bin(void **state)
{
	if (setup(state) < 0)
		return -1;
	snprintf(binpath, sizeof binpath, "%s/app", cache_dir);
	static uint8_t b[4096 + 0x80];
	size_t n = build(b);
	FILE *f = fopen(binpath, "wb");
	fwrite(b, 1, n, f);
	fclose(f);
	return 0;
}

static tk_symbolicator *new_sym(void)
{
	tk_symbol_options o;
	tk_symbol_options_init(&o);
	char cd[96];
	snprintf(cd, sizeof cd, "%s/cache", cache_dir);
	o.cache_dir = cd; /* copied by tk_symbolicator_new */
	return tk_symbolicator_new(&o);
}

static void test_symtab_lookups(void **state)
{
	tk_symbolicator *s = new_sym();
	tk_error err;
	tk_symbol_image *im = tk_symbolicator_image(s, NULL, binpath, "arm64", &err);
	assert_non_null(im);
	tk_symcache_meta m;
	tk_symbol_image_meta(im, &m);
	assert_string_equal(m.uuid_str, "A0A1A2A3-A4A5-A6A7-A8A9-AAABACADAEAF");
	assert_string_equal(m.image, "app");
	assert_int_equal(m.has_dwarf, 0);
	assert_true(m.text_vmaddr == 0x100000000);
	tk_symbol_result r;
	assert_int_equal(tk_symbol_image_lookup(im, 0x100001000, &r), 1);
	assert_string_equal(r.frames[0].function, "foo");
	assert_true(r.symtab_only);
	assert_true(r.symbol_start == 0x100001000);
	assert_null(r.frames[0].file);
	assert_int_equal(tk_symbol_image_lookup(im, 0x10000100f, &r), 1);
	assert_string_equal(r.frames[0].function, "foo");
	assert_int_equal(tk_symbol_image_lookup(im, 0x100001010, &r), 1);
	assert_string_equal(r.frames[0].function, "abc::bar()");
	assert_int_equal(tk_symbol_image_lookup(im, 0x10000107f, &r), 1);
	assert_string_equal(r.frames[0].function, "after_swift");
	assert_true(r.symbol_start == 0x100001060);
	assert_int_equal(tk_symbol_image_lookup(im, 0x100001080, &r), 0); /* section end */
	assert_int_equal(tk_symbol_image_lookup(im, 0x100000fff, &r), 0);
	/* runtime → file address: slide = load − vmaddr */
	assert_true(tk_symbol_image_file_addr(im, 0x104a8c000, 0x104a8d010) == 0x100001010);
	/* the same image by UUID through a search path, the arch checked */
	tk_symbolicator *s2 = new_sym();
	assert_int_equal(tk_symbolicator_add_path(s2, cache_dir, &err), 0);
	assert_non_null(tk_symbolicator_image(s2, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf", NULL, NULL, &err));
	assert_null(tk_symbolicator_image(s2, "A0A1A2A3-A4A5-A6A7-A8A9-AAABACADAEAF", NULL, "x86_64", &err));
	assert_non_null(strstr(err.msg, "is arm64"));
	assert_null(tk_symbolicator_image(s2, "00000000-A4A5-A6A7-A8A9-AAABACADAEAF", NULL, NULL, &err));
	assert_non_null(strstr(err.msg, "no dSYM or binary with UUID"));
	assert_null(tk_symbolicator_image(s2, "00000000-A4A5-A6A7-A8A9-AAABACADAEAF", binpath, NULL, &err));
	assert_non_null(strstr(err.msg, "UUID mismatch"));
	tk_symbolicator_free(s2);
	tk_symbolicator_free(s);
}

static void test_swift_flag(void **state)
{
	/* Swift names are flagged and demangled once into the cache: the simplified form atos and
	 * Instruments print, and the full form swift-demangle prints right after it */
	tk_symbolicator *s = new_sym();
	tk_error err;
	tk_symbol_image *im = tk_symbolicator_image(s, NULL, binpath, NULL, &err);
	assert_non_null(im);
	tk_symbol_result r;
	tk_symbol_image_lookup(im, 0x100001000, &r);
	assert_int_equal(r.frames[0].flags & TK_FRAME_SWIFT, 0);
	assert_int_equal(tk_symbol_image_lookup(im, 0x100001044, &r), 1);
	assert_string_equal(r.frames[0].function, "Foo.bar()");
	assert_string_equal(r.frames[0].full_name, "main.Foo.bar() -> ()");
	assert_int_equal(r.frames[0].flags & TK_FRAME_SWIFT, TK_FRAME_SWIFT);
	tk_symbol_image_lookup(im, 0x100001010, &r);
	assert_string_equal(r.frames[0].function, "abc::bar()");
	assert_ptr_equal(r.frames[0].full_name, r.frames[0].function);
	tk_symbolicator_free(s);
}

static void test_corrupt_cache(void **state)
{
	tk_symbolicator *s = new_sym();
	tk_error err;
	tk_symbol_image *im = tk_symbolicator_image(s, NULL, binpath, NULL, &err);
	assert_non_null(im);
	const char *cp = tk_symbol_image_cache_path(im);
	assert_non_null(cp);
	FILE *f = fopen(cp, "rb");
	assert_non_null(f);
	static uint8_t buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_true(n > 176);
	tk_symcache *c = tk_symcache_view(buf, n, "ok", TK_SC_BORROWED, &err);
	assert_non_null(c);
	tk_symcache_close(c);
	/* every single-byte flip is caught (checksum or header check), never a crash */
	for (size_t i = 0; i < n; i++) {
		buf[i] ^= 0x41;
		c = tk_symcache_view(buf, n, "flip", TK_SC_BORROWED, &err);
		assert_null(c);
		buf[i] ^= 0x41;
	}
	assert_null(tk_symcache_view(buf, n - 8, "cut", TK_SC_BORROWED, &err));
	assert_non_null(strstr(err.msg, "truncated"));
	assert_null(tk_symcache_view(buf, 100, "short", TK_SC_BORROWED, &err));
	buf[0] = 'X';
	assert_null(tk_symcache_view(buf, n, "magic", TK_SC_BORROWED, &err));
	assert_non_null(strstr(err.msg, "not a tracekit symbol cache"));
	tk_symbolicator_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_symtab_lookups),
	    cmocka_unit_test(test_swift_flag),
	    cmocka_unit_test(test_corrupt_cache),
	};
	return cmocka_run_group_tests(tests, setup_bin, teardown);
}
