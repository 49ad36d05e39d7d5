/* NOT the Apple SDK: compile-check shim (see README.md). Mach-O structures as in <mach-o/loader.h>. */
#ifndef TK_SHIM_LOADER_H
#define TK_SHIM_LOADER_H
#include "../_shim_common.h"
struct mach_header {
	uint32_t magic;
	int32_t cputype, cpusubtype;
	uint32_t filetype, ncmds, sizeofcmds, flags;
};
struct mach_header_64 {
	uint32_t magic;
	int32_t cputype, cpusubtype;
	uint32_t filetype, ncmds, sizeofcmds, flags, reserved;
};
#define MH_MAGIC_64 0xfeedfacf
struct load_command {
	uint32_t cmd, cmdsize;
};
#define LC_SEGMENT_64 0x19
#define LC_UUID 0x1b
struct segment_command_64 {
	uint32_t cmd, cmdsize;
	char segname[16];
	uint64_t vmaddr, vmsize, fileoff, filesize;
	int32_t maxprot, initprot;
	uint32_t nsects, flags;
};
struct uuid_command {
	uint32_t cmd, cmdsize;
	uint8_t uuid[16];
};
#define VM_PROT_READ 0x1
#define VM_PROT_WRITE 0x2
#define VM_PROT_EXECUTE 0x4
#endif
