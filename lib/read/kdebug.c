/*
 * dyld image loads from kdebug rows (docs/xctrace-format.md §10).
 *
 * kdebug event ids are (class, subclass, code, func); dyld reports every image it maps with
 * DBG_DYLD (0x1f) / DBG_DYLD_UUID (0x05):
 *   code 0 DBG_DYLD_UUID_MAP_A  arg1, arg2 = the 16 UUID bytes as two 64-bit words (little-endian
 *                               byte order, as the kernel copies the uuid_t), arg3 = load address
 *   code 1 DBG_DYLD_UUID_MAP_B  follows MAP_A; in Instruments' kdebug table its arg2 is an id into
 *                               the `kdebug-strings` table, whose row gives the image path
 * Instruments exports the args as <kdebug-arg> cells in order, the string table as
 * <kdebug-string> (the id) and <raw-string> (the text). No real export with these rows is public:
 * this follows the documented shapes only (docs/symbolication.md says so).
 */
#include <stdlib.h>
#include <string.h>

#include "read/kdebug.h"
#include "util/mem.h"

#define DBG_DYLD 0x1f
#define DBG_DYLD_UUID 0x05
#define UUID_MAP_A 0
#define UUID_MAP_B 1

typedef struct kd_image {
	uint8_t uuid[16];
	uint64_t load;
	uint64_t str_id;
	int has_str;
} kd_image;

typedef struct kd_string {
	uint64_t id;
	tk_str s;
} kd_string;

struct tk_kdebug {
	/* the row being read */
	int table;
	uint64_t cls, sub, code, args[4], str_id;
	int has_cls, has_sub, has_code, has_str_id, nargs;
	tk_str str;
	/* results */
	kd_image *ims;
	size_t nims, capims;
	int map_b_pending; /* the last image still waits for its MAP_B */
	kd_string *strs;
	size_t nstrs, capstrs;
};

tk_kdebug *tk_kdebug_new(void)
{
	return tk_xcalloc(1, sizeof(tk_kdebug));
}

void tk_kdebug_free(tk_kdebug *k)
{
	if (!k)
		return;
	free(k->ims);
	free(k->strs);
	free(k);
}

int tk_kdebug_table(const char *schema)
{
	if (strcmp(schema, "kdebug") == 0)
		return TK_KD_EVENTS;
	if (strcmp(schema, "kdebug-strings") == 0)
		return TK_KD_STRINGS;
	return TK_KD_NONE;
}

static int is(const char *name, size_t nl, const char *want)
{
	return nl == strlen(want) && memcmp(name, want, nl) == 0;
}

int tk_kdebug_string_cell(const char *name, size_t nl)
{
	return is(name, nl, "raw-string") || is(name, nl, "string");
}

int tk_kdebug_parse_hex(const char *s, size_t n, uint64_t *v)
{
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	if (!n || n > 16)
		return -1;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (d < 0)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return 0;
}

uint64_t tk_kdebug_number(const char *t, size_t tl, int has_fmt, uint64_t fmt_val)
{
	while (tl && (*t == ' ' || *t == '\n' || *t == '\t' || *t == '\r'))
		t++, tl--;
	while (tl && (t[tl - 1] == ' ' || t[tl - 1] == '\n' || t[tl - 1] == '\t' || t[tl - 1] == '\r'))
		tl--;
	uint64_t v;
	if (tl >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && tk_kdebug_parse_hex(t, tl, &v) == 0)
		return v;
	if (tl && tl <= 20) {
		uint64_t x = 0;
		size_t i = 0;
		for (; i < tl && t[i] >= '0' && t[i] <= '9'; i++) {
			uint64_t d = (uint64_t)(t[i] - '0');
			if (x > (UINT64_MAX - d) / 10)
				break;
			x = x * 10 + d;
		}
		if (i == tl)
			return x;
	}
	return has_fmt ? fmt_val : 0;
}

void tk_kdebug_row_begin(tk_kdebug *k, int table)
{
	k->table = table;
	k->has_cls = k->has_sub = k->has_code = k->has_str_id = 0;
	k->nargs = 0;
	k->str = 0;
	memset(k->args, 0, sizeof k->args);
}

void tk_kdebug_cell(tk_kdebug *k, const char *name, size_t nl, uint64_t v)
{
	if (is(name, nl, "kdebug-class"))
		k->cls = v, k->has_cls = 1;
	else if (is(name, nl, "kdebug-subclass"))
		k->sub = v, k->has_sub = 1;
	else if (is(name, nl, "kdebug-code"))
		k->code = v, k->has_code = 1;
	else if (is(name, nl, "kdebug-arg")) {
		if (k->nargs < 4)
			k->args[k->nargs] = v;
		k->nargs++;
	} else if (is(name, nl, "kdebug-string"))
		k->str_id = v, k->has_str_id = 1;
	else if (tk_kdebug_string_cell(name, nl))
		k->str = (tk_str)v;
}

void tk_kdebug_row_end(tk_kdebug *k)
{
	if (k->table == TK_KD_STRINGS) {
		if (k->has_str_id && k->str) {
			TK_GROW(k->strs, k->capstrs, k->nstrs + 1);
			k->strs[k->nstrs++] = (kd_string){k->str_id, k->str};
		}
		return;
	}
	if (!k->has_cls || !k->has_sub || !k->has_code || k->cls != DBG_DYLD || k->sub != DBG_DYLD_UUID)
		return;
	if (k->code == UUID_MAP_A && k->nargs >= 3) {
		kd_image im = {.load = k->args[2]};
		for (int i = 0; i < 8; i++) {
			im.uuid[i] = (uint8_t)(k->args[0] >> (8 * i));
			im.uuid[8 + i] = (uint8_t)(k->args[1] >> (8 * i));
		}
		TK_GROW(k->ims, k->capims, k->nims + 1);
		k->ims[k->nims++] = im;
		k->map_b_pending = 1;
	} else if (k->code == UUID_MAP_B && k->nargs >= 2 && k->map_b_pending) {
		k->ims[k->nims - 1].str_id = k->args[1];
		k->ims[k->nims - 1].has_str = 1;
		k->map_b_pending = 0;
	}
}

size_t tk_kdebug_finish(tk_kdebug *k, tk_profile *p)
{
	size_t before = 0, after = 0;
	tk_profile_images(p, &before);
	for (size_t i = 0; i < k->nims; i++) {
		const kd_image *im = &k->ims[i];
		static const char hex[] = "0123456789ABCDEF";
		char u[37];
		size_t o = 0;
		for (int b = 0; b < 16; b++) {
			if (b == 4 || b == 6 || b == 8 || b == 10)
				u[o++] = '-';
			u[o++] = hex[im->uuid[b] >> 4];
			u[o++] = hex[im->uuid[b] & 15];
		}
		u[o] = 0;
		tk_binary b = {.uuid = tk_intern(p, u, o), .load_addr = im->load};
		for (size_t s = 0; im->has_str && s < k->nstrs; s++)
			if (k->strs[s].id == im->str_id) {
				b.path = k->strs[s].s;
				const char *path = tk_string(p, b.path), *slash = strrchr(path, '/');
				b.name = tk_intern_cstr(p, slash ? slash + 1 : path);
				break;
			}
		tk_profile_image_add(p, &b);
	}
	tk_profile_images(p, &after);
	return after - before;
}
