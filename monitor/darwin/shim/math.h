/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_MATH_H
#define TK_SHIM_MATH_H
double floor(double);
#define isfinite(x) __builtin_isfinite(x)
#endif
