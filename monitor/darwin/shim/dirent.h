/* NOT the Apple SDK: compile-check shim (see README.md). Only the field the monitor reads. */
#ifndef TK_SHIM_DIRENT_H
#define TK_SHIM_DIRENT_H
#include "_shim_common.h"
typedef struct _tk_shim_dir DIR;
struct dirent {
	unsigned long long d_ino;
	unsigned long long d_seekoff;
	unsigned short d_reclen;
	unsigned short d_namlen;
	unsigned char d_type;
	char d_name[1024];
};
DIR *fdopendir(int);
struct dirent *readdir(DIR *);
int closedir(DIR *);
#endif
