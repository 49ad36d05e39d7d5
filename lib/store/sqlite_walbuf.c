/* A SQLite VFS that gathers the writes of a write-ahead log into large ones (the store's connections
 * open their files through it; every other file and call goes straight to the default VFS).
 *
 * SQLite writes each WAL frame as two pwrites, its 24-byte header and then its page, at offsets
 * 32 + k × (24 + page size): a commit of a group of uploads wrote ~2 k frames (most index pages are
 * rewritten by every commit of random-keyed entries), 4 k system calls, each page of a new WAL
 * first zeroed by the kernel because no write covers it whole. Here consecutive writes collect in a
 * buffer of 128 KiB and reach the file as one pwrite when the buffer is full, when a write does not
 * follow on, and before anything that reads or sizes or syncs the file (or unlocks or controls it). Nothing becomes
 * visible later than before: the frame that ends a transaction (its header's "database size after commit", bytes 4–7,
 * non-zero: the WAL format of sqlite.org/fileformat2.html) is written out with its page before that write returns,
 * which is before SQLite publishes the frames to readers in the wal-index and before COMMIT returns, so what a COMMIT
 * acknowledged is in the file as it was. */
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

/* at most 128 KiB - 1 bytes a write: the unix VFS writes no more in one call (seekAndWriteFd) and
 * takes a shorter write for a full disk */
enum { WB_CAP = (1 << 17) - 1, WB_FRAME_HEADER = 24 };

typedef struct wbfile {
	sqlite3_file base; /* pMethods: wb_methods */
	sqlite3_file *real;
	unsigned char *buf; /* pending bytes for [off, off + n) of the file; NULL until the first write */
	sqlite3_int64 off;
	size_t n;
	int header; /* the last write was a frame's header: its page comes next */
	int commit; /* and that frame ends a transaction */
} wbfile;

static sqlite3_vfs wb_vfs;
static sqlite3_io_methods wb_methods;
static int wb_ok;
static pthread_once_t wb_once = PTHREAD_ONCE_INIT;

static int wb_flush(wbfile *f)
{
	if (!f->n)
		return SQLITE_OK;
	int rc = f->real->pMethods->xWrite(f->real, f->buf, (int)f->n, f->off);
	f->n = 0;
	return rc;
}

static int wb_close(sqlite3_file *p)
{
	wbfile *f = (wbfile *)p;
	int rc = wb_flush(f);
	int rc2 = f->real->pMethods->xClose(f->real);
	free(f->buf);
	f->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wb_read(sqlite3_file *p, void *out, int amt, sqlite3_int64 off)
{
	wbfile *f = (wbfile *)p;
	int rc = wb_flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, out, amt, off);
}

/* Only the shape SQLite writes frames in is gathered: a 24-byte frame header, then its page. Any
 * other write (the WAL's own header, a shape another SQLite version might use) goes out at once,
 * after what is pending: a commit frame written some other way is never held back. */
static int wb_write(sqlite3_file *p, const void *data, int amt, sqlite3_int64 off)
{
	wbfile *f = (wbfile *)p;
	const unsigned char *h = data;
	int page = f->header, header = !page && amt == WB_FRAME_HEADER;
	int ends = page && f->commit; /* the page of the frame that ends a transaction */
	f->header = header;
	if (header)
		f->commit = (h[4] | h[5] | h[6] | h[7]) != 0;
	if (f->n && (off != f->off + (sqlite3_int64)f->n || f->n + (size_t)amt > WB_CAP || (!page && !header))) {
		int rc = wb_flush(f);
		if (rc != SQLITE_OK) {
			f->header = 0;
			return rc;
		}
	}
	if ((page || header) && !f->buf && amt < WB_CAP)
		f->buf = malloc(WB_CAP);
	if ((!page && !header) || !f->buf || (size_t)amt >= WB_CAP) { /* as it comes */
		int rc = f->real->pMethods->xWrite(f->real, data, amt, off);
		if (rc != SQLITE_OK)
			f->header = 0;
		return rc;
	}
	if (!f->n)
		f->off = off;
	memcpy(f->buf + f->n, data, (size_t)amt);
	f->n += (size_t)amt;
	return ends ? wb_flush(f) : SQLITE_OK;
}

static int wb_truncate(sqlite3_file *p, sqlite3_int64 size)
{
	wbfile *f = (wbfile *)p;
	int rc = wb_flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int wb_sync(sqlite3_file *p, int flags)
{
	wbfile *f = (wbfile *)p;
	int rc = wb_flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int wb_size(sqlite3_file *p, sqlite3_int64 *size)
{
	wbfile *f = (wbfile *)p;
	int rc = wb_flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int wb_lock(sqlite3_file *p, int lock)
{
	wbfile *f = (wbfile *)p;
	return f->real->pMethods->xLock(f->real, lock);
}

static int wb_unlock(sqlite3_file *p, int lock)
{
	wbfile *f = (wbfile *)p;
	int rc = wb_flush(f);
	int rc2 = f->real->pMethods->xUnlock(f->real, lock);
	return rc != SQLITE_OK ? rc : rc2;
}

static int wb_check(sqlite3_file *p, int *out)
{
	wbfile *f = (wbfile *)p;
	return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int wb_control(sqlite3_file *p, int op, void *arg)
{
	wbfile *f = (wbfile *)p;
	int rc = wb_flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int wb_sector(sqlite3_file *p)
{
	wbfile *f = (wbfile *)p;
	return f->real->pMethods->xSectorSize(f->real);
}

static int wb_device(sqlite3_file *p)
{
	wbfile *f = (wbfile *)p;
	return f->real->pMethods->xDeviceCharacteristics(f->real);
}

/* The open flags tell a WAL apart (SQLITE_OPEN_WAL); anything else is the default VFS's file as
 * it is, in the same memory (szOsFile covers both). */
static int wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *p, int flags, int *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	if (!(flags & SQLITE_OPEN_WAL))
		return real->xOpen(real, name, p, flags, out);
	wbfile *f = (wbfile *)p;
	memset(f, 0, sizeof *f);
	f->real = (sqlite3_file *)(f + 1);
	int rc = real->xOpen(real, name, f->real, flags, out);
	if (rc != SQLITE_OK || !f->real->pMethods) {
		f->base.pMethods = NULL;
		return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
	}
	f->base.pMethods = &wb_methods;
	return SQLITE_OK;
}

static int wb_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xDelete(real, name, sync);
}

static int wb_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xAccess(real, name, flags, out);
}

static int wb_fullname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xFullPathname(real, name, n, out);
}

static int wb_random(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xRandomness(real, n, out);
}

static int wb_sleep(sqlite3_vfs *vfs, int us)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xSleep(real, us);
}

static int wb_time(sqlite3_vfs *vfs, double *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xCurrentTime(real, out);
}

static int wb_error(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xGetLastError(real, n, out);
}

static void *wb_dlopen(sqlite3_vfs *vfs, const char *name)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xDlOpen(real, name);
}

static void wb_dlerror(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	real->xDlError(real, n, out);
}

static void (*wb_dlsym(sqlite3_vfs *vfs, void *lib, const char *sym))(void)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xDlSym(real, lib, sym);
}

static void wb_dlclose(sqlite3_vfs *vfs, void *lib)
{
	sqlite3_vfs *real = vfs->pAppData;
	real->xDlClose(real, lib);
}

static int wb_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	sqlite3_vfs *real = vfs->pAppData;
	return real->xCurrentTimeInt64(real, out);
}

/* The WAL file's methods forward what a WAL is asked (SQLite maps the wal-index through the main
 * database file, not this one: no shared-memory or fetch methods). */
static void wb_register(void)
{
	tk_sqlite_mem_init(); /* before anything starts SQLite (sqlite3_vfs_find does) */
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);
	if (!real || real->iVersion < 2 || !real->xCurrentTimeInt64)
		return;
	wb_methods = (sqlite3_io_methods){.iVersion = 1,
	                                  .xClose = wb_close,
	                                  .xRead = wb_read,
	                                  .xWrite = wb_write,
	                                  .xTruncate = wb_truncate,
	                                  .xSync = wb_sync,
	                                  .xFileSize = wb_size,
	                                  .xLock = wb_lock,
	                                  .xUnlock = wb_unlock,
	                                  .xCheckReservedLock = wb_check,
	                                  .xFileControl = wb_control,
	                                  .xSectorSize = wb_sector,
	                                  .xDeviceCharacteristics = wb_device};
	wb_vfs = (sqlite3_vfs){.iVersion = 2,
	                       .szOsFile = (int)sizeof(wbfile) + real->szOsFile,
	                       .mxPathname = real->mxPathname,
	                       .zName = "tracekit-walbuf",
	                       .pAppData = real,
	                       .xOpen = wb_open,
	                       .xDelete = wb_delete,
	                       .xAccess = wb_access,
	                       .xFullPathname = wb_fullname,
	                       .xDlOpen = real->xDlOpen ? wb_dlopen : NULL,
	                       .xDlError = real->xDlError ? wb_dlerror : NULL,
	                       .xDlSym = real->xDlSym ? wb_dlsym : NULL,
	                       .xDlClose = real->xDlClose ? wb_dlclose : NULL,
	                       .xRandomness = wb_random,
	                       .xSleep = wb_sleep,
	                       .xCurrentTime = wb_time,
	                       .xGetLastError = wb_error,
	                       .xCurrentTimeInt64 = wb_time64};
	wb_ok = sqlite3_vfs_register(&wb_vfs, 0) == SQLITE_OK;
}

const char *tk_sqlite_walbuf_vfs(void)
{
	pthread_once(&wb_once, wb_register);
	return wb_ok ? wb_vfs.zName : NULL;
}
