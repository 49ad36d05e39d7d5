/* SQLite's memory allocator for this process (installed before SQLite initializes, by the first
 * store open): the page caches' pages come from huge pages, everything else from malloc as SQLite
 * itself would allocate it.
 *
 * A store's writer connection keeps a page cache of up to 256 MiB (sqlite.c), filled as a batch
 * inserts into index pages it has not held yet: each page is a malloc of the page size plus
 * SQLite's header for it (SQLITE_CONFIG_PCACHE_HDRSZ), and every 4 KiB the heap grows by is a page
 * fault (on this VM ~20 µs each; `serve --ingest`'s committer spent ~5–7 % of its time in them, 43 % of
 * serve's page faults were its page-cache pages). Here those blocks come from one region of address
 * space reserved up front (1 GiB, MAP_NORESERVE, nothing committed) and advised MADV_HUGEPAGE, handed
 * out in order and recycled through a free list: memory is committed only as the caches reach it, 2
 * MiB at a time, so a command with a small cache (ingest's 8 MiB) commits little more than before.
 * A block of any other size, and every block once the region is used up, is malloc'd.
 *
 * SQLITE_CONFIG_PAGECACHE with a buffer would not do: SQLite threads its free list through every slot
 * of the buffer when it initializes, committing all of it in every command. */
#include <malloc.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "store/internal.h"

#define PM_RESERVE ((size_t)1 << 30) /* address space for pages: two 256 MiB caches and then some */
#define PM_HUGE ((size_t)2 << 20)
enum { PM_PAGE = 4096 }; /* the store's page size (SQLite's default); pages of other sizes are malloc'd */

static unsigned char *pm_base, *pm_next, *pm_end; /* the region; never handed out below pm_next */
static void *pm_free;                             /* recycled blocks, linked through their first word */
static size_t pm_size;                            /* bytes a block: requests in (PM_PAGE, pm_size] */
static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;

static int pm_owns(const void *p)
{
	return (const unsigned char *)p >= pm_base && (const unsigned char *)p < pm_end;
}

static void *pm_malloc(int n)
{
	if ((size_t)n > PM_PAGE && (size_t)n <= pm_size) {
		void *p = NULL;
		pthread_mutex_lock(&pm_lock);
		if (pm_free) {
			p = pm_free;
			memcpy(&pm_free, p, sizeof pm_free);
		} else if ((size_t)(pm_end - pm_next) >= pm_size) {
			p = pm_next;
			pm_next += pm_size;
		}
		pthread_mutex_unlock(&pm_lock);
		if (p)
			return p;
	}
	return malloc((size_t)n);
}

static void pm_release(void *p)
{
	if (!pm_owns(p)) {
		free(p);
		return;
	}
	pthread_mutex_lock(&pm_lock);
	memcpy(p, &pm_free, sizeof pm_free);
	pm_free = p;
	pthread_mutex_unlock(&pm_lock);
}

static int pm_msize(void *p)
{
	return (int)(pm_owns(p) ? pm_size : malloc_usable_size(p));
}

static void *pm_realloc(void *p, int n)
{
	if (!pm_owns(p))
		return realloc(p, (size_t)n);
	if ((size_t)n <= pm_size)
		return p;
	void *q = malloc((size_t)n);
	if (q) {
		memcpy(q, p, pm_size);
		pm_release(p);
	}
	return q;
}

static int pm_roundup(int n)
{
	return (n + 7) & ~7;
}

static int pm_init(void *unused)
{
	return SQLITE_OK;
}

static void pm_shutdown(void *unused)
{
}

static const sqlite3_mem_methods pm_methods = {.xMalloc = pm_malloc,
                                               .xFree = pm_release,
                                               .xRealloc = pm_realloc,
                                               .xSize = pm_msize,
                                               .xRoundup = pm_roundup,
                                               .xInit = pm_init,
                                               .xShutdown = pm_shutdown};

void tk_sqlite_mem_init(void)
{
	int hdr = 0;
	if (sqlite3_config(SQLITE_CONFIG_PCACHE_HDRSZ, &hdr) != SQLITE_OK || hdr <= 0 || hdr > 4096)
		return;
	void *m = mmap(NULL, PM_RESERVE + PM_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	               -1, 0);
	if (m == MAP_FAILED)
		return;
	/* the region from the first 2 MiB boundary in the mapping, so that each huge page is whole */
	unsigned char *base = (unsigned char *)(((uintptr_t)m + PM_HUGE - 1) & ~(uintptr_t)(PM_HUGE - 1));
#ifdef MADV_HUGEPAGE
	(void)madvise(base, PM_RESERVE, MADV_HUGEPAGE); /* a hint: refused (no THP) changes nothing */
#endif
	/* a page's block: the page and its header (the page cache's own size), rounded up to 16 bytes */
	pm_size = ((size_t)PM_PAGE + (size_t)hdr + 15) & ~(size_t)15;
	pm_base = pm_next = base;
	pm_end = base + PM_RESERVE;
	/* SQLITE_MISUSE: SQLite already runs (the process used it before opening a store): it keeps its
	 * own allocator, and the region is given back */
	if (sqlite3_config(SQLITE_CONFIG_MALLOC, &pm_methods) != SQLITE_OK) {
		pm_base = pm_next = pm_end = NULL;
		munmap(m, PM_RESERVE + PM_HUGE);
		return;
	}
	/* no count of the memory SQLite holds (nothing here reads it, and no soft heap limit is set): each
	 * allocation and free then goes without SQLite's memory mutex and a size lookup */
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
