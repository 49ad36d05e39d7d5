/* NOT the Apple SDK: compile-check shim (see README.md). Only the fields the monitor reads, at their
 * offsets in Darwin's 64-bit-inode struct stat. */
#ifndef TK_SHIM_STAT_H
#define TK_SHIM_STAT_H
#include "../_shim_common.h"
struct stat {
	dev_t st_dev;
	unsigned short st_mode, st_nlink;
	ino_t st_ino;
	char __before[80];
	off_t st_size;
	char __after[48];
};
int fstat(int, struct stat *);
int mkdir(const char *, mode_t);
#endif
