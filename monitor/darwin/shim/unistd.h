/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_UNISTD_H
#define TK_SHIM_UNISTD_H
#include "_shim_common.h"
pid_t getpid(void);
ssize_t read(int, void *, size_t);
ssize_t write(int, const void *, size_t);
int close(int);
int unlink(const char *);
int fsync(int);
#endif
