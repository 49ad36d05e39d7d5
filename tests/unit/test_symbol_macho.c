/* Mach-O reader: thin/fat parsing, slice choice, UUIDs, and bad input (truncations, bad sizes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static void put32be(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

/* A minimal thin image: header, LC_UUID, LC_SEGMENT_64 __TEXT with __text. Returns its size. */
static size_t thin(uint8_t *b, uint32_t cpu, uint32_t sub, uint8_t uuid_byte, uint64_t vmaddr)
{
	memset(b, 0, 512);
	put32(b, 0xfeedfacf);
	put32(b + 4, cpu);
	put32(b + 8, sub);
	put32(b + 12, 6);
	put32(b + 16, 2);
	put32(b + 20, 24 + 152);
	uint8_t *c = b + 32;
	put32(c, 0x1b);
	put32(c + 4, 24);
	memset(c + 8, uuid_byte, 16);
	c += 24;
	put32(c, 0x19);
	put32(c + 4, 152);
	memcpy(c + 8, "__TEXT", 6);
	put64(c + 24, vmaddr);
	put64(c + 32, 0x4000);
	put32(c + 64, 1);
	uint8_t *s = c + 72;
	memcpy(s, "__text", 6);
	memcpy(s + 16, "__TEXT", 6);
	put64(s + 32, vmaddr + 0x100);
	put64(s + 40, 0x80);
	put32(s + 48, 0x100);
	return 512;
}

static void test_thin(void **state)
{
	uint8_t b[512];
	size_t n = thin(b, 0x0100000c, 0x80000002, 0xab, 0x100000000);
	tk_macho_file f;
	tk_error err;
	assert_true(tk_macho_sniff(b, n));
	assert_int_equal(tk_macho_parse(b, n, "t", &f, &err), 0);
	assert_int_equal(f.nslices, 1);
	assert_string_equal(f.slices[0].arch, "arm64e"); /* capability bits masked */
	assert_int_equal(f.slices[0].has_uuid, 1);
	assert_int_equal(f.slices[0].uuid[15], 0xab);
	assert_true(f.slices[0].text_vmaddr == 0x100000000);
	assert_int_equal(f.slices[0].nsects, 1);
	assert_string_equal(f.slices[0].sects[0].sectname, "__text");
	assert_int_equal(f.slices[0].has_dwarf, 0);
	assert_ptr_equal(tk_macho_pick(&f, NULL), &f.slices[0]);
	assert_null(tk_macho_pick(&f, "x86_64"));
	tk_macho_free(&f);
}

static void test_fat(void **state)
{
	static uint8_t b[0x3000];
	memset(b, 0, sizeof b);
	put32be(b, 0xcafebabe);
	put32be(b + 4, 2);
	put32be(b + 8, 0x01000007), put32be(b + 12, 3), put32be(b + 16, 0x1000), put32be(b + 20, 512);
	put32be(b + 28, 0x0100000c), put32be(b + 32, 0), put32be(b + 36, 0x2000), put32be(b + 40, 512);
	thin(b + 0x1000, 0x01000007, 3, 0x11, 0);
	thin(b + 0x2000, 0x0100000c, 0, 0x22, 0);
	tk_macho_file f;
	tk_error err;
	assert_int_equal(tk_macho_parse(b, 0x2200, "fat", &f, &err), 0);
	assert_int_equal(f.fat, 1);
	assert_int_equal(f.nslices, 2);
	const tk_macho_slice *x = tk_macho_pick(&f, "x86_64"), *a = tk_macho_pick(&f, "arm64");
	assert_non_null(x);
	assert_non_null(a);
	assert_int_equal(x->uuid[0], 0x11);
	assert_int_equal(a->uuid[0], 0x22);
	assert_int_equal(a->offset, 0x2000);
	assert_ptr_equal(tk_macho_pick(&f, NULL), a); /* arm64 preferred */
	tk_macho_free(&f);
	/* the second slice runs past the end of a truncated file */
	assert_int_equal(tk_macho_parse(b, 0x2100, "fat", &f, &err), -1);
	assert_non_null(strstr(err.msg, "slice 1 (arm64)"));
	assert_non_null(strstr(err.msg, "past the end"));
	/* absurd slice count */
	put32be(b + 4, 1000);
	assert_int_equal(tk_macho_parse(b, sizeof b, "fat", &f, &err), -1);
	assert_non_null(strstr(err.msg, "1000 slices"));
}

static void test_bad_thin(void **state)
{
	uint8_t b[512];
	tk_macho_file f;
	tk_error err;
	size_t n = thin(b, 0x0100000c, 0, 1, 0);
	/* every truncation either parses (when the cut is after everything read) or fails cleanly */
	for (size_t k = 0; k < 32 + 24 + 152; k++) {
		int rc = tk_macho_parse(b, k, "cut", &f, &err);
		assert_int_equal(rc, -1);
	}
	thin(b, 0x0100000c, 0, 1, 0);
	put32(b + 32 + 4, 4); /* LC_UUID with a size below 8 */
	assert_int_equal(tk_macho_parse(b, n, "bad", &f, &err), -1);
	assert_non_null(strstr(err.msg, "bad size 4"));
	thin(b, 0x0100000c, 0, 1, 0);
	put32(b + 32 + 24 + 64, 100); /* 100 sections in a 152-byte command */
	assert_int_equal(tk_macho_parse(b, n, "bad", &f, &err), -1);
	assert_non_null(strstr(err.msg, "100 sections"));
	thin(b, 0x0100000c, 0, 1, 0);
	put32(b + 32 + 24 + 72 + 48, 0x10000); /* section contents past EOF */
	assert_int_equal(tk_macho_parse(b, n, "bad", &f, &err), -1);
	assert_non_null(strstr(err.msg, "past the end"));
	put32(b, 0xfeedface);
	assert_int_equal(tk_macho_parse(b, n, "m32", &f, &err), -1);
	assert_non_null(strstr(err.msg, "32-bit"));
	assert_false(tk_macho_sniff((const uint8_t *)"\x7f"
	                                             "ELF",
	                            4));
}

static void test_uuid_arch(void **state)
{
	uint8_t u[16];
	char s[37];
	assert_int_equal(tk_uuid_parse("4C4C44A4-5555-3144-A178-6F015627038B", u), 0);
	tk_uuid_format(u, s);
	assert_string_equal(s, "4C4C44A4-5555-3144-A178-6F015627038B");
	assert_int_equal(tk_uuid_parse("4c4c44a455553144a1786f015627038b", u), 0);
	tk_uuid_format(u, s);
	assert_string_equal(s, "4C4C44A4-5555-3144-A178-6F015627038B");
	assert_int_equal(tk_uuid_parse("4C4C44A4-5555", u), -1);
	assert_int_equal(tk_uuid_parse("4C4C44A4-5555-3144-A178-6F015627038B00", u), -1);
	assert_int_equal(tk_uuid_parse("zz4C44A4-5555-3144-A178-6F015627038B", u), -1);
	uint32_t t, st;
	assert_int_equal(tk_macho_arch_parse("arm64e", &t, &st), 0);
	assert_int_equal(t, 0x0100000c);
	assert_int_equal(st, 2);
	assert_int_equal(tk_macho_arch_parse("ppc", &t, &st), -1);
	char buf[16];
	assert_string_equal(tk_macho_arch_name(0x01000007, 8, buf), "x86_64h");
}

static void test_demangle(void **state)
{
	char *d = tk_demangle("__ZN5tksyn2u05Node04stepEiPKc");
	assert_non_null(d);
	assert_string_equal(d, "tksyn::u0::Node0::step(int, char const*)");
	free(d);
	d = tk_demangle("_ZNK5tksyn2u04CellIlE4takeEi");
	assert_string_equal(d, "tksyn::u0::Cell<long>::take(int) const");
	free(d);
	assert_null(tk_demangle("_main"));
	assert_null(tk_demangle("$s4main3FooV3baryyF"));
	assert_true(tk_symbol_is_swift("$s4main3FooV3baryyF"));
	assert_true(tk_symbol_is_swift("_$s4main3FooV3baryyF"));
	assert_true(tk_symbol_is_swift("_T0s4main"));
	assert_false(tk_symbol_is_swift("main"));
	assert_false(tk_symbol_is_swift("_ZN3foo3barEv"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_thin),      cmocka_unit_test(test_fat),      cmocka_unit_test(test_bad_thin),
	    cmocka_unit_test(test_uuid_arch), cmocka_unit_test(test_demangle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
