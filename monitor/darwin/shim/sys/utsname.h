/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_UTSNAME_H
#define TK_SHIM_UTSNAME_H
struct utsname {
	char sysname[256], nodename[256], release[256], version[256], machine[256];
};
int uname(struct utsname *);
#endif
