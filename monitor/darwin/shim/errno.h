/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_ERRNO_H
#define TK_SHIM_ERRNO_H
extern int *__error(void);
#define errno (*__error())
#define EPERM 1
#define EINTR 4
#define EEXIST 17
#endif
