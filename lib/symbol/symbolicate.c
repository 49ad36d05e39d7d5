/*
 * The symbolicator: finds the Mach-O for (UUID, arch) across search paths, keeps one symbol cache
 * per image (built on first use, stored in the cache directory, validated at every open), bounds
 * the number of mapped caches, and rewrites profiles.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbol/symint.h"
#include "util/mem.h"

struct tk_symbol_image {
	char *source, *cache_path, *image;
	tk_symcache *cache; /* NULL while evicted */
	uint8_t uuid[16];
	int has_uuid;
	uint32_t cputype, cpusubtype;
	uint64_t last_use;
	tk_symcache_meta meta;
	tk_symbolicator *owner;
};

typedef struct idx_entry {
	uint8_t uuid[16];
	uint32_t cputype, cpusubtype;
	char *path;
	int rank; /* 3 DWARF, 2 cache, 1 symbol table only */
} idx_entry;

struct tk_symbolicator {
	tk_symbol_options o;
	char *cache_dir;
	int cache_dir_ready; /* 0 unknown, 1 usable, -1 not writable */
	char cache_err[512]; /* why the cache directory or a cache file could not be used */
	char **pending;      /* paths not indexed yet */
	size_t npending, cappending;
	idx_entry *idx;
	size_t nidx, capidx;
	tk_symbol_image **images;
	size_t nimages, capimages;
	size_t nopen;
	uint64_t tick;
	tk_sc_arena *arena; /* the cache directory's caches, read in */
};

void tk_symbol_options_init(tk_symbol_options *o)
{
	memset(o, 0, sizeof *o);
}

static char *default_cache_dir(void)
{
	const char *e = getenv("TRACEKIT_CACHE_DIR");
	char buf[PATH_MAX];
	if (e && *e)
		return tk_xstrdup(e);
	e = getenv("XDG_CACHE_HOME");
	if (e && *e) {
		snprintf(buf, sizeof buf, "%s/tracekit", e);
		return tk_xstrdup(buf);
	}
	e = getenv("HOME");
	if (!e || !*e) /* never a directory others share (/tmp): caches stay in memory */
		return NULL;
	snprintf(buf, sizeof buf, "%s/.cache/tracekit", e);
	return tk_xstrdup(buf);
}

const char *tk_symbolicator_cache_error(const tk_symbolicator *s)
{
	return s->cache_err;
}

tk_symbolicator *tk_symbolicator_new(const tk_symbol_options *o)
{
	tk_symbolicator *s = tk_xcalloc(1, sizeof *s);
	if (o)
		s->o = *o;
	if (!s->o.max_open)
		s->o.max_open = 64;
	s->cache_dir = s->o.cache_dir ? tk_xstrdup(s->o.cache_dir) : default_cache_dir();
	s->arena = tk_sc_arena_new();
	s->o.cache_dir = s->cache_dir;
	return s;
}

void tk_symbolicator_free(tk_symbolicator *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nimages; i++) {
		tk_symcache_close(s->images[i]->cache);
		free(s->images[i]->source);
		free(s->images[i]->cache_path);
		free(s->images[i]->image);
		free(s->images[i]);
	}
	free(s->images);
	for (size_t i = 0; i < s->nidx; i++)
		free(s->idx[i].path);
	free(s->idx);
	for (size_t i = 0; i < s->npending; i++)
		free(s->pending[i]);
	free(s->pending);
	free(s->cache_dir);
	tk_sc_arena_free(s->arena); /* after the caches in it */
	free(s);
}

/* ---------------------------------------------------------------- files */

typedef struct mapped {
	uint8_t *data;
	size_t size;
	struct stat st;
} mapped;

static int map_file(const char *path, mapped *m, tk_error *err)
{
	memset(m, 0, sizeof *m);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return tk_error_set(err, "%s: %s", path, strerror(errno));
	if (fstat(fd, &m->st) < 0 || !S_ISREG(m->st.st_mode)) {
		close(fd);
		return tk_error_set(err, "%s: not a regular file", path);
	}
	m->size = (size_t)m->st.st_size;
	if (m->size == 0) {
		close(fd);
		return tk_error_set(err, "%s: empty file", path);
	}
	void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return tk_error_set(err, "%s: mmap: %s", path, strerror(errno));
	m->data = p;
	return 0;
}

static void unmap_file(mapped *m)
{
	if (m->data)
		munmap(m->data, m->size);
	m->data = NULL;
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* X.dSYM → X.dSYM/Contents/Resources/DWARF/<the one file there> */
static char *dsym_dwarf_file(const char *bundle)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/Contents/Resources/DWARF", bundle);
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	struct dirent *e;
	char *found = NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		if ((size_t)snprintf(p, sizeof p, "%.*s/%s", (int)(sizeof p - 300), dir, e->d_name) >= sizeof p)
			continue;
		free(found);
		found = tk_xstrdup(p);
		break;
	}
	closedir(d);
	return found;
}

static int is_cache_bytes(const uint8_t *d, size_t n)
{
	return n >= 8 && memcmp(d, "TKSYMC\r\n", 8) == 0;
}

static void index_add(tk_symbolicator *s, const uint8_t uuid[16], uint32_t ct, uint32_t cs, const char *path, int rank)
{
	for (size_t i = 0; i < s->nidx; i++)
		if (!memcmp(s->idx[i].uuid, uuid, 16) && s->idx[i].cputype == ct && s->idx[i].cpusubtype == cs) {
			if (rank > s->idx[i].rank) {
				free(s->idx[i].path);
				s->idx[i].path = tk_xstrdup(path);
				s->idx[i].rank = rank;
			}
			return;
		}
	TK_GROW(s->idx, s->capidx, s->nidx + 1);
	idx_entry *e = &s->idx[s->nidx++];
	memcpy(e->uuid, uuid, 16);
	e->cputype = ct;
	e->cpusubtype = cs;
	e->path = tk_xstrdup(path);
	e->rank = rank;
}

/* Index one file; silently skips what is not a Mach-O or cache (directories hold other files). */
static void index_file(tk_symbolicator *s, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	uint8_t head[8];
	ssize_t n = read(fd, head, sizeof head);
	close(fd);
	if (n < 8)
		return;
	if (is_cache_bytes(head, 8)) {
		tk_error e;
		tk_symcache *c = tk_symcache_open_file(path, &e);
		if (c) {
			tk_symcache_meta m;
			tk_symcache_info(c, &m);
			uint32_t ct, cs;
			if (tk_macho_arch_parse(m.arch, &ct, &cs) == 0)
				index_add(s, m.uuid, ct, cs, path, 2);
			tk_symcache_close(c);
		}
		return;
	}
	if (!tk_macho_sniff(head, 8))
		return;
	mapped m;
	tk_error e;
	if (map_file(path, &m, &e) < 0)
		return;
	tk_macho_file f;
	if (tk_macho_parse(m.data, m.size, path, &f, &e) == 0) {
		for (uint32_t i = 0; i < f.nslices; i++)
			if (f.slices[i].has_uuid)
				index_add(s, f.slices[i].uuid, f.slices[i].cputype, f.slices[i].cpusubtype, path,
				          f.slices[i].has_dwarf ? 3 : 1);
		tk_macho_free(&f);
	}
	unmap_file(&m);
}

static void index_dir(tk_symbolicator *s, const char *dir, int depth)
{
	if (depth > 32)
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char p[PATH_MAX];
		if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= sizeof p)
			continue;
		struct stat st;
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode) && stat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			/* don't follow symlinked directories: Xcode bundles have Versions/Current loops */
			struct stat ls;
			if (lstat(p, &ls) == 0 && S_ISLNK(ls.st_mode))
				continue;
			index_dir(s, p, depth + 1);
		} else if (S_ISREG(st.st_mode))
			index_file(s, p);
	}
	closedir(d);
}

static void index_pending(tk_symbolicator *s)
{
	for (size_t i = 0; i < s->npending; i++) {
		if (is_dir(s->pending[i]))
			index_dir(s, s->pending[i], 0);
		else
			index_file(s, s->pending[i]);
		free(s->pending[i]);
	}
	s->npending = 0;
}

int tk_symbolicator_add_path(tk_symbolicator *s, const char *path, tk_error *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return tk_error_set(err, "%s: %s", path, strerror(errno));
	if (S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		uint8_t head[8] = {0};
		ssize_t n = fd >= 0 ? read(fd, head, 8) : -1;
		if (fd >= 0)
			close(fd);
		if (n < 8 || (!tk_macho_sniff(head, 8) && !is_cache_bytes(head, 8)))
			return tk_error_set(err, "%s: not a Mach-O file, dSYM or tracekit symbol cache", path);
	} else if (!S_ISDIR(st.st_mode))
		return tk_error_set(err, "%s: not a file or directory", path);
	TK_GROW(s->pending, s->cappending, s->npending + 1);
	s->pending[s->npending++] = tk_xstrdup(path);
	return 0;
}

/* ---------------------------------------------------------------- images */

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static int ensure_cache_dir(tk_symbolicator *s)
{
	if (s->cache_dir_ready)
		return s->cache_dir_ready > 0;
	if (s->o.no_cache_write) {
		s->cache_dir_ready = -1;
		snprintf(s->cache_err, sizeof s->cache_err, "cache writing is off");
		return 0;
	}
	if (!s->cache_dir) {
		s->cache_dir_ready = -1;
		snprintf(s->cache_err, sizeof s->cache_err, "no cache directory (HOME is not set; give one)");
		return 0;
	}
	/* mkdir -p, private: caches are mapped and trusted, so no one else may plant files there */
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", s->cache_dir);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0700);
			*p = '/';
		}
	int made = mkdir(buf, 0700) == 0;
	int e = errno;
	struct stat st;
	const char *why = NULL;
	if (stat(buf, &st) < 0)
		why = strerror(made ? errno : e);
	else if (!S_ISDIR(st.st_mode))
		why = "not a directory";
	else if (st.st_uid != geteuid())
		why = "owned by another user: not trusted";
	else if (st.st_mode & 022)
		why = "writable by other users: not trusted (chmod go-w)";
	else if (access(buf, W_OK) != 0)
		why = strerror(errno);
	if (why)
		snprintf(s->cache_err, sizeof s->cache_err, "%s: %s", s->cache_dir, why);
	s->cache_dir_ready = why ? -1 : 1;
	return s->cache_dir_ready > 0;
}

/* Unmap least recently used caches beyond max_open. An evicted image is reopened (or, for caches
 * that were only in memory, rebuilt) on its next lookup. */
static void evict_if_needed(tk_symbolicator *s, tk_symbol_image *keep)
{
	while (s->nopen > s->o.max_open) {
		tk_symbol_image *old = NULL;
		for (size_t i = 0; i < s->nimages; i++) {
			tk_symbol_image *im = s->images[i];
			if (im->cache && im != keep && (!old || im->last_use < old->last_use))
				old = im;
		}
		if (!old)
			return;
		tk_symcache_close(old->cache);
		old->cache = NULL;
		s->nopen--;
	}
}

/* Open (building if needed) the cache of one slice of the Mach-O at path. */
static tk_symcache *open_slice_cache(tk_symbolicator *s, const char *path, const tk_macho_slice *want_sl,
                                     const char *arch, char **cache_path_out, tk_error *err)
{
	*cache_path_out = NULL;
	mapped m;
	if (map_file(path, &m, err) < 0)
		return NULL;
	if (is_cache_bytes(m.data, m.size)) {
		unmap_file(&m);
		tk_symcache *c = tk_symcache_open_file(path, err);
		if (c)
			*cache_path_out = tk_xstrdup(path);
		return c;
	}
	tk_macho_file f;
	if (tk_macho_parse(m.data, m.size, path, &f, err) < 0) {
		unmap_file(&m);
		return NULL;
	}
	const tk_macho_slice *sl = NULL;
	if (want_sl) {
		for (uint32_t i = 0; i < f.nslices && !sl; i++)
			if (f.slices[i].cputype == want_sl->cputype && f.slices[i].cpusubtype == want_sl->cpusubtype)
				sl = &f.slices[i];
	} else
		sl = tk_macho_pick(&f, arch);
	if (!sl || !(sl->cputype & 0x01000000u)) {
		char have[128] = "";
		for (uint32_t i = 0; i < f.nslices; i++)
			snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", i ? ", " : "",
			         f.slices[i].arch);
		tk_error_set(err, "%s: no %s slice (has %s)", path, arch ? arch : "64-bit", have);
		tk_macho_free(&f);
		unmap_file(&m);
		return NULL;
	}
	tk_sc_source src = {(uint64_t)m.st.st_size, (int64_t)m.st.st_mtim.tv_sec * 1000000000 + m.st.st_mtim.tv_nsec};
	char cpath[PATH_MAX] = "";
	if (sl->has_uuid && ensure_cache_dir(s)) {
		char u[37];
		tk_uuid_format(sl->uuid, u);
		snprintf(cpath, sizeof cpath, "%s/%s-%s.tksym", s->cache_dir, u, sl->arch);
		tk_error e2;
		tk_symcache *c = tk_symcache_open_owned_in(cpath, s->arena, &e2);
		if (c && tk_symcache_matches(c, sl->uuid, sl->cputype, sl->cpusubtype, &src)) {
			tk_symcache_meta cm;
			tk_symcache_info(c, &cm);
			/* a cache built from a binary's symbol table must not hide a dSYM found later */
			if (cm.has_dwarf || !sl->has_dwarf) {
				tk_macho_free(&f);
				unmap_file(&m);
				*cache_path_out = tk_xstrdup(cpath);
				return c;
			}
		}
		tk_symcache_close(c); /* stale, corrupt or from another source: rebuild */
	}
	tk_sc_input in = {0};
	in.image_name = base_name(path);
	memcpy(in.uuid, sl->uuid, 16);
	in.cputype = sl->cputype;
	in.cpusubtype = sl->cpusubtype;
	in.text_vmaddr = sl->text_vmaddr;
	in.src_size = src.size;
	in.src_mtime_ns = src.mtime_ns;
	uint8_t *buf = NULL;
	size_t size = 0;
	int rc = tk_symcache_build_slice(m.data, m.size, path, sl, &in, &buf, &size, err);
	tk_macho_free(&f);
	unmap_file(&m);
	if (rc < 0)
		return NULL;
	if (cpath[0]) {
		tk_error e2;
		if (tk_symcache_write_file(cpath, buf, size, &e2) == 0) {
			free(buf);
			tk_symcache *c = tk_symcache_open_owned_in(cpath, s->arena, err);
			if (c)
				*cache_path_out = tk_xstrdup(cpath);
			return c;
		}
		snprintf(s->cache_err, sizeof s->cache_err, "%s", e2.msg);
	}
	return tk_symcache_view(buf, size, path, TK_SC_HEAP, err);
}

static const char *src_of(const tk_symbol_image *im)
{
	return im->source;
}
static int is_cache_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	uint8_t head[8] = {0};
	ssize_t n = fd >= 0 ? read(fd, head, 8) : -1;
	if (fd >= 0)
		close(fd);
	return n == 8 && is_cache_bytes(head, 8);
}

static tk_symbol_image *find_open(tk_symbolicator *s, const char *source, uint32_t ct, uint32_t cs)
{
	for (size_t i = 0; i < s->nimages; i++) {
		tk_symbol_image *im = s->images[i];
		if (im->cputype == ct && im->cpusubtype == cs && strcmp(im->source, source) == 0)
			return im;
	}
	return NULL;
}

static tk_symbol_image *touch(tk_symbolicator *s, tk_symbol_image *im, tk_error *err)
{
	im->last_use = ++s->tick;
	if (!im->cache) {
		char *cp = NULL;
		tk_macho_slice want = {.cputype = im->cputype, .cpusubtype = im->cpusubtype};
		im->cache = open_slice_cache(s, im->source, &want, NULL, &cp, err);
		free(im->cache_path);
		im->cache_path = cp;
		if (!im->cache)
			return NULL;
		s->nopen++;
		evict_if_needed(s, im);
	}
	return im;
}

static int file_has_dwarf_slice(const char *path, const uint8_t uuid[16], uint32_t ct, uint32_t cs)
{
	mapped m;
	tk_error e;
	if (map_file(path, &m, &e) < 0)
		return 0;
	int ok = 0;
	tk_macho_file f;
	if (tk_macho_sniff(m.data, m.size) && tk_macho_parse(m.data, m.size, path, &f, &e) == 0) {
		for (uint32_t i = 0; i < f.nslices; i++)
			if (f.slices[i].has_dwarf && f.slices[i].has_uuid && !memcmp(f.slices[i].uuid, uuid, 16) &&
			    f.slices[i].cputype == ct && f.slices[i].cpusubtype == cs)
				ok = 1;
		tk_macho_free(&f);
	}
	unmap_file(&m);
	return ok;
}

static char *find_dsym_for(tk_symbolicator *s, const char *bin, const uint8_t uuid[16], uint32_t ct, uint32_t cs)
{
	char bundle[PATH_MAX];
	if ((size_t)snprintf(bundle, sizeof bundle, "%s.dSYM", bin) < sizeof bundle && is_dir(bundle)) {
		char *d = dsym_dwarf_file(bundle);
		if (d && file_has_dwarf_slice(d, uuid, ct, cs))
			return d;
		free(d);
	}
	index_pending(s);
	for (size_t i = 0; i < s->nidx; i++)
		if (s->idx[i].rank == 3 && !memcmp(s->idx[i].uuid, uuid, 16) && s->idx[i].cputype == ct &&
		    s->idx[i].cpusubtype == cs)
			return tk_xstrdup(s->idx[i].path);
	return NULL;
}

static const tk_macho_slice *slice_for(const tk_macho_file *f, const uint8_t *uuid, const char *arch)
{
	if (uuid) {
		for (uint32_t i = 0; i < f->nslices; i++)
			if (f->slices[i].has_uuid && !memcmp(f->slices[i].uuid, uuid, 16) &&
			    (!arch || !*arch || strcmp(arch, f->slices[i].arch) == 0))
				return &f->slices[i];
		return NULL;
	}
	return tk_macho_pick(f, arch);
}

tk_symbol_image *tk_symbolicator_image(tk_symbolicator *s, const char *uuid_s, const char *path, const char *arch,
                                       tk_error *err)
{
	uint8_t uuid[16];
	if (uuid_s && *uuid_s && tk_uuid_parse(uuid_s, uuid) < 0) {
		tk_error_set(err, "bad UUID '%s'", uuid_s);
		return NULL;
	}
	int have_uuid = uuid_s && *uuid_s;
	if (arch && *arch) {
		uint32_t a, b;
		if (tk_macho_arch_parse(arch, &a, &b) < 0) {
			tk_error_set(err, "unknown architecture '%s' (arm64, arm64e, x86_64, x86_64h)", arch);
			return NULL;
		}
	}
	char *src = NULL;
	if (path && *path) {
		src = is_dir(path) ? dsym_dwarf_file(path) : tk_xstrdup(path);
		if (!src) {
			tk_error_set(err, "%s: not a dSYM bundle (no Contents/Resources/DWARF/ file)", path);
			return NULL;
		}
	} else if (have_uuid) {
		index_pending(s);
		const idx_entry *best = NULL;
		for (size_t i = 0; i < s->nidx; i++) {
			const idx_entry *e = &s->idx[i];
			if (memcmp(e->uuid, uuid, 16) != 0)
				continue;
			char an[16];
			tk_macho_arch_name(e->cputype, e->cpusubtype, an);
			if (arch && *arch && strcmp(an, arch) != 0) {
				tk_error_set(err, "UUID %s is %s in %s, not %s", uuid_s, an, e->path, arch);
				return NULL;
			}
			if (!best || e->rank > best->rank)
				best = e;
		}
		if (!best) {
			tk_error_set(err, "no dSYM or binary with UUID %s in the search paths", uuid_s);
			return NULL;
		}
		src = tk_xstrdup(best->path);
	} else {
		tk_error_set(err, "an image needs a UUID or a path");
		return NULL;
	}
	/* pick the slice: caches name theirs, Mach-O files are parsed */
	mapped m;
	if (map_file(src, &m, err) < 0) {
		free(src);
		return NULL;
	}
	uint32_t ct = 0, cs = 0;
	uint8_t got_uuid[16] = {0};
	int got_has_uuid = 0;
	if (is_cache_bytes(m.data, m.size)) {
		unmap_file(&m);
		tk_symcache *c = tk_symcache_open_file(src, err);
		if (!c) {
			free(src);
			return NULL;
		}
		tk_symcache_meta cm;
		tk_symcache_info(c, &cm);
		tk_symcache_close(c);
		tk_macho_arch_parse(cm.arch, &ct, &cs);
		memcpy(got_uuid, cm.uuid, 16);
		got_has_uuid = 1;
		if ((arch && *arch && strcmp(arch, cm.arch) != 0) || (have_uuid && memcmp(uuid, cm.uuid, 16) != 0)) {
			tk_error_set(err, "%s: cache is for %s %s, not %s %s", src, cm.uuid_str, cm.arch,
			             have_uuid ? uuid_s : "", arch ? arch : "");
			free(src);
			return NULL;
		}
	} else {
		tk_macho_file f;
		if (tk_macho_parse(m.data, m.size, src, &f, err) < 0) {
			unmap_file(&m);
			free(src);
			return NULL;
		}
		const tk_macho_slice *sl = slice_for(&f, have_uuid ? uuid : NULL, arch);
		if (!sl) {
			char have[256] = "";
			for (uint32_t i = 0; i < f.nslices; i++) {
				char u[37] = "no UUID";
				if (f.slices[i].has_uuid)
					tk_uuid_format(f.slices[i].uuid, u);
				snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s %s", i ? ", " : "",
				         f.slices[i].arch, u);
			}
			if (have_uuid)
				tk_error_set(err, "%s: UUID mismatch: wanted %s%s%s, file has %s", src, uuid_s,
				             arch ? " " : "", arch ? arch : "", have);
			else
				tk_error_set(err, "%s: no %s slice (has %s)", src, arch ? arch : "suitable", have);
			tk_macho_free(&f);
			unmap_file(&m);
			free(src);
			return NULL;
		}
		ct = sl->cputype;
		cs = sl->cpusubtype;
		got_has_uuid = sl->has_uuid;
		memcpy(got_uuid, sl->uuid, 16);
		int want_dsym = !sl->has_dwarf && sl->has_uuid;
		tk_macho_free(&f);
		unmap_file(&m);
		/* a binary without DWARF: use its dSYM when one with the same UUID is next to it (as
		 * llvm-symbolizer and atos do) or in the search paths */
		if (want_dsym) {
			char *better = find_dsym_for(s, src, got_uuid, ct, cs);
			if (better) {
				free(src);
				src = better;
			}
		}
	}
	tk_symbol_image *im = find_open(s, src, ct, cs);
	if (im) {
		free(src);
		return touch(s, im, err);
	}
	im = tk_xcalloc(1, sizeof *im);
	im->source = src;
	im->cputype = ct;
	im->cpusubtype = cs;
	im->has_uuid = got_has_uuid;
	memcpy(im->uuid, got_uuid, 16);
	im->owner = s;
	if (!touch(s, im, err)) {
		free(im->source);
		free(im->cache_path);
		free(im);
		return NULL;
	}
	tk_symcache_info(im->cache, &im->meta);
	/* the "(in X)" name is the file we were given (a cache shared by copies of one dSYM keeps the
	 * first one's), and must survive the cache being unmapped */
	im->image = tk_xstrdup(is_cache_path(src_of(im)) ? im->meta.image : base_name(im->source));
	im->meta.image = im->image;
	TK_GROW(s->images, s->capimages, s->nimages + 1);
	s->images[s->nimages++] = im;
	return im;
}

size_t tk_symbol_image_lookup(tk_symbol_image *im, uint64_t file_addr, tk_symbol_result *r)
{
	r->nframes = 0;
	r->symtab_only = 0;
	r->symbol_start = 0;
	if (!im->cache) {
		tk_error e;
		if (!touch(im->owner, im, &e))
			return 0;
	}
	uint64_t start = 0;
	size_t n = tk_symcache_lookup(im->cache, file_addr, r->frames, TK_SYMBOL_MAX_FRAMES, &start);
	if (n && (r->frames[n - 1].flags & TK_SC_FRAME_SYMTAB)) {
		r->symtab_only = 1;
		r->symbol_start = start;
	}
	for (size_t i = 0; i < n; i++)
		r->frames[i].flags &= ~TK_SC_FRAME_SYMTAB;
	r->nframes = n;
	return n;
}

void tk_symbol_images_warm(const tk_symbol_image *const *im, const uint64_t *addrs, size_t n)
{
	enum { CHUNK = 64 };
	const tk_symcache *c[CHUNK];
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? n - i : CHUNK;
		for (size_t j = 0; j < k; j++)
			c[j] = im[i + j] ? im[i + j]->cache : NULL;
		tk_symcache_warm(c, addrs + i, k);
	}
}

uint64_t tk_symbol_image_file_addr(const tk_symbol_image *im, uint64_t load_addr, uint64_t runtime_addr)
{
	return runtime_addr - load_addr + im->meta.text_vmaddr;
}

void tk_symbol_image_meta(const tk_symbol_image *im, tk_symcache_meta *m)
{
	*m = im->meta;
}

const char *tk_symbol_image_name(const tk_symbol_image *im)
{
	return im->image;
}
const char *tk_symbol_image_source(const tk_symbol_image *im)
{
	return im->source;
}
const char *tk_symbol_image_cache_path(const tk_symbol_image *im)
{
	return im->cache_path;
}

int tk_symcache_build_path(tk_symbolicator *s, const char *path, const char *arch,
                           void (*done)(void *ctx, const tk_symcache_meta *m, const char *cache_path), void *ctx,
                           tk_error *err)
{
	char *src = is_dir(path) ? dsym_dwarf_file(path) : tk_xstrdup(path);
	if (!src)
		return tk_error_set(err, "%s: not a dSYM bundle (no Contents/Resources/DWARF/ file)", path);
	mapped m;
	if (map_file(src, &m, err) < 0) {
		free(src);
		return -1;
	}
	tk_macho_file f;
	if (tk_macho_parse(m.data, m.size, src, &f, err) < 0) {
		unmap_file(&m);
		free(src);
		return -1;
	}
	unmap_file(&m);
	int rc = 0, any = 0;
	for (uint32_t i = 0; i < f.nslices && rc == 0; i++) {
		const tk_macho_slice *sl = &f.slices[i];
		if (!(sl->cputype & 0x01000000u) || (arch && *arch && strcmp(arch, sl->arch) != 0))
			continue;
		any = 1;
		tk_symbol_image *im = tk_symbolicator_image(s, NULL, src, sl->arch, err);
		if (!im) {
			rc = -1;
			break;
		}
		if (!im->cache_path && !is_cache_path(src)) {
			rc = tk_error_set(err, "%s: cannot write its symbol cache: %s", src,
			                  s->cache_err[0] ? s->cache_err : "unknown reason");
			break;
		}
		if (done) {
			tk_symcache_meta meta;
			tk_symbol_image_meta(im, &meta);
			done(ctx, &meta, im->cache_path);
		}
	}
	if (!any && rc == 0)
		rc = tk_error_set(err, "%s: no %s slice", src, arch && *arch ? arch : "64-bit");
	tk_macho_free(&f);
	free(src);
	return rc;
}

int tk_symbolicator_add_cached(tk_symbolicator *s, const uint8_t uuid[16])
{
	if (!s->cache_dir)
		return 0;
	static const char *const archs[] = {"arm64e", "arm64", "x86_64", "arm64_32", "x86_64h"};
	char u[37];
	tk_uuid_format(uuid, u);
	int added = 0;
	for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s-%s.tksym", s->cache_dir, u, archs[i]);
		tk_error err;
		if (access(path, R_OK) == 0 && tk_symbolicator_add_path(s, path, &err) == 0)
			added = 1;
	}
	return added;
}
