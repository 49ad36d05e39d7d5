/* Reading a Linux session and naming its frames are two steps: the records reader leaves frames as
 * (image, address) and lists the session's images; tk_elf_name_listed names them from the ELF file
 * on this machine (here: this test binary, whose own functions are the oracle), once, idempotently,
 * and leaves profiles it cannot name untouched. */
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "read/records.h"
#include "tracekit/symbol.h"

__attribute__((noinline, used)) int tk_test_named_function(int n)
{
	volatile int s = 0;
	for (int i = 0; i < n; i++)
		s += i * 3;
	return s;
}

typedef struct self_image {
	uintptr_t base;
	char loads[2048];
} self_image;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	self_image *s = data;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the main program comes first, with an empty name */
	s->base = info->dlpi_addr;
	size_t len = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		len += (size_t)snprintf(
		    s->loads + len, sizeof s->loads - len,
		    "%s{\"vaddr\":\"0x%llx\",\"memsz\":\"0x%llx\",\"offset\":\"0x%llx\",\"flags\":\"%s\"}",
		    len ? "," : "", (unsigned long long)ph->p_vaddr, (unsigned long long)ph->p_memsz,
		    (unsigned long long)ph->p_offset, (ph->p_flags & PF_X) ? "r-x" : "r--");
	}
	return 1;
}

static char images_path[64];

/* A record whose only frame is inside tk_test_named_function, with images.json naming this binary
 * (build-id left empty: not checked). */
static tk_records *session(void)
{
	self_image s = {0};
	dl_iterate_phdr(find_self, &s);
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	assert_true(n > 0);
	exe[n] = 0;
	snprintf(images_path, sizeof images_path, "/tmp/tk-test-elf-name-%d.json", (int)getpid());
	FILE *f = fopen(images_path, "w");
	assert_non_null(f);
	fprintf(f,
	        "{\"os\":\"Linux\",\"arch\":\"x86_64\",\"pid\":1,\"images\":[{\"path\":\"%s\",\"base\":\"0x%llx\","
	        "\"build_id\":\"\",\"loads\":[%s]}]}\n",
	        exe, (unsigned long long)s.base, s.loads);
	fclose(f);
	char rec[512];
	snprintf(rec, sizeof rec,
	         "collection,key,value\n"
	         "cpu-highload,1.00,{\"start\":\"1.00\",\"lasting\":\"61\",\"average\":\"90\"}\n"
	         "cpu-highload-stackframe,1.00,[{\"frame\":\"0x%llx\",\"count\":3}]\n",
	         (unsigned long long)((uintptr_t)&tk_test_named_function + 4));
	tk_error err = {{0}};
	tk_records *r = tk_records_parse(rec, strlen(rec), "mem", &err);
	if (!r)
		fail_msg("parse: %s", err.msg);
	if (tk_records_load_images(r, images_path, &err))
		fail_msg("images: %s", err.msg);
	unlink(images_path);
	return r;
}

/* The leaf frame's name ("" when unnamed) and how many frames the profile has. */
static const char *leaf_name(const tk_profile *p, size_t *nframes)
{
	*nframes = tk_frame_count(p);
	for (size_t f = 1; f <= tk_frame_count(p); f++) {
		const tk_frame *fr = tk_frame_get(p, (tk_frame_id)f);
		if (fr->flags & TK_FRAME_LEAF_PC)
			return tk_string(p, fr->name);
	}
	return NULL;
}

static void test_reader_leaves_frames_unnamed_pass_names_them(void **state)
{
	(void)state;
	tk_records *r = session();
	tk_profile *p = tk_profile_new();
	tk_error err = {{0}};
	assert_true(tk_records_load(r, 0, p, 0, &err) >= 0);
	size_t nf, nimg = 0;
	assert_string_equal(leaf_name(p, &nf), "");
	tk_profile_images(p, &nimg);
	assert_int_equal(nimg, 1);
	uint64_t weight = tk_profile_weight(p);

	tk_elf_namer *z = tk_elf_namer_new();
	assert_int_equal(tk_elf_name_listed(&p, z, &err), 0);
	assert_string_equal(leaf_name(p, &nf), "tk_test_named_function");
	assert_int_equal(tk_profile_weight(p), weight);
	assert_int_equal(tk_elf_namer_warning_count(z), 0);

	/* naming twice = naming once: the named frames are not looked up again */
	size_t nf2;
	assert_int_equal(tk_elf_name_listed(&p, z, &err), 0);
	assert_string_equal(leaf_name(p, &nf2), "tk_test_named_function");
	assert_int_equal(nf2, nf);
	assert_int_equal(tk_profile_weight(p), weight);
	tk_profile_free(p);
	tk_elf_namer_free(z);
	tk_records_free(r);
}

static void test_no_symbols_lists_no_images(void **state)
{
	(void)state;
	tk_records *r = session();
	tk_profile *p = tk_profile_new();
	tk_error err = {{0}};
	assert_true(tk_records_load(r, 0, p, TK_RECORDS_NO_SYMBOLS, &err) >= 0);
	tk_profile *same = p;
	assert_int_equal(tk_elf_name_listed(&p, NULL, &err), 0);
	assert_ptr_equal(p, same); /* nothing listed: the profile is left as it is */
	size_t nf;
	assert_string_equal(leaf_name(p, &nf), "");
	tk_profile_free(p);
	tk_records_free(r);
}

static void test_unusable_image_warned_once_per_namer(void **state)
{
	(void)state;
	const char *rec = "collection,key,value\n"
	                  "cpu-highload,1.00,{\"start\":\"1.00\",\"lasting\":\"61\",\"average\":\"90\"}\n"
	                  "cpu-highload-stackframe,1.00,[{\"frame\":\"0x10000010\",\"count\":3}]\n"
	                  "cpu-highload,2.00,{\"start\":\"2.00\",\"lasting\":\"61\",\"average\":\"90\"}\n"
	                  "cpu-highload-stackframe,2.00,[{\"frame\":\"0x10000020\",\"count\":2}]\n";
	tk_error err = {{0}};
	tk_records *r = tk_records_parse(rec, strlen(rec), "mem", &err);
	assert_non_null(r);
	snprintf(images_path, sizeof images_path, "/tmp/tk-test-elf-name-%d.json", (int)getpid());
	FILE *f = fopen(images_path, "w");
	assert_non_null(f);
	fputs("{\"os\":\"Linux\",\"arch\":\"x86_64\",\"pid\":1,\"images\":[{\"path\":\"/nonexistent/libgone.so\","
	      "\"base\":\"0x10000000\",\"build_id\":\"ab\",\"loads\":[{\"vaddr\":\"0x0\",\"memsz\":\"0x1000\","
	      "\"offset\":\"0x0\",\"flags\":\"r-x\"}]}]}\n",
	      f);
	fclose(f);
	assert_int_equal(tk_records_load_images(r, images_path, &err), 0);
	unlink(images_path);
	tk_elf_namer *z = tk_elf_namer_new();
	for (size_t i = 0; i < 2; i++) {
		tk_profile *p = tk_profile_new(), *same = p;
		assert_true(tk_records_load(r, i, p, 0, &err) >= 0);
		assert_int_equal(tk_elf_name_listed(&p, z, &err), 0);
		assert_ptr_equal(p, same); /* nothing it could name: no copy */
		tk_profile_free(p);
	}
	assert_int_equal(tk_elf_namer_warning_count(z), 1);
	assert_non_null(strstr(tk_elf_namer_warning(z, 0), "/nonexistent/libgone.so"));
	tk_elf_namer_free(z);
	tk_records_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reader_leaves_frames_unnamed_pass_names_them),
	    cmocka_unit_test(test_no_symbols_lists_no_images),
	    cmocka_unit_test(test_unusable_image_warned_once_per_namer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
