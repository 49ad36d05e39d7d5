/* NOT the Apple SDK: compile-check shim (see README.md). Only the field the monitor reads. */
#ifndef TK_SHIM_STAT_H
#define TK_SHIM_STAT_H
#include "../_shim_common.h"
struct stat {
	char __before[96];
	off_t st_size;
	char __after[48];
};
int fstat(int, struct stat *);
int mkdir(const char *, mode_t);
#endif
