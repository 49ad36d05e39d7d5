/* NOT the Apple SDK: compile-check shim (see README.md). Flag values as in Darwin's <sys/fcntl.h>. */
#ifndef TK_SHIM_FCNTL_H
#define TK_SHIM_FCNTL_H
#include "_shim_common.h"
#define O_RDONLY 0x0000
#define O_WRONLY 0x0001
#define O_APPEND 0x0008
#define O_CREAT 0x0200
#define O_TRUNC 0x0400
#define O_EXCL 0x0800
#define O_CLOEXEC 0x01000000
#define O_DIRECTORY 0x00100000
#define F_DUPFD_CLOEXEC 67
int open(const char *, int, ...);
int fcntl(int, int, ...);
#endif
