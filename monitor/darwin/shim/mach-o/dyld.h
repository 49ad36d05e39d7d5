/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_DYLD_H
#define TK_SHIM_DYLD_H
#include "../_shim_common.h"
#include "loader.h"
uint32_t _dyld_image_count(void);
const struct mach_header *_dyld_get_image_header(uint32_t image_index);
intptr_t _dyld_get_image_vmaddr_slide(uint32_t image_index);
const char *_dyld_get_image_name(uint32_t image_index);
#endif
