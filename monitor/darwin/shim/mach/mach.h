/*
 * NOT the Apple SDK: compile-check shim (see README.md). Types, constants and prototypes of the
 * Mach calls the Darwin backend uses, as documented in XNU's osfmk/mach headers.
 */
#ifndef TK_SHIM_MACH_H
#define TK_SHIM_MACH_H
#include "../_shim_common.h"

typedef int kern_return_t;
typedef unsigned int natural_t;
typedef int integer_t;
typedef natural_t mach_port_t;
typedef mach_port_t task_t, thread_t, thread_act_t, vm_map_t, mach_port_name_t;
typedef thread_act_t *thread_act_array_t;
typedef natural_t mach_msg_type_number_t;
typedef uintptr_t vm_address_t, vm_offset_t, vm_size_t;
typedef natural_t thread_flavor_t;
typedef integer_t *thread_info_t;
typedef int thread_state_flavor_t;
typedef natural_t *thread_state_t;
typedef int policy_t;

#define KERN_SUCCESS 0

extern mach_port_t mach_task_self_;
#define mach_task_self() mach_task_self_
mach_port_t mach_thread_self(void);

typedef struct time_value {
	integer_t seconds;
	integer_t microseconds;
} time_value_t;

#define THREAD_BASIC_INFO 3
struct thread_basic_info {
	time_value_t user_time;
	time_value_t system_time;
	integer_t cpu_usage;
	policy_t policy;
	integer_t run_state;
	integer_t flags;
	integer_t suspend_count;
	integer_t sleep_time;
};
typedef struct thread_basic_info thread_basic_info_data_t;
#define THREAD_BASIC_INFO_COUNT ((mach_msg_type_number_t)(sizeof(thread_basic_info_data_t) / sizeof(natural_t)))
#define TH_FLAGS_IDLE 0x2
#define TH_USAGE_SCALE 1000

#define THREAD_IDENTIFIER_INFO 4
struct thread_identifier_info {
	uint64_t thread_id;
	uint64_t thread_handle;
	uint64_t dispatch_qaddr;
};
typedef struct thread_identifier_info thread_identifier_info_data_t;
#define THREAD_IDENTIFIER_INFO_COUNT                                                                                   \
	((mach_msg_type_number_t)(sizeof(thread_identifier_info_data_t) / sizeof(natural_t)))

#define THREAD_EXTENDED_INFO 5
#define MAXTHREADNAMESIZE 64
struct thread_extended_info {
	uint64_t pth_user_time;
	uint64_t pth_system_time;
	int32_t pth_cpu_usage;
	int32_t pth_policy;
	int32_t pth_run_state;
	int32_t pth_flags;
	int32_t pth_sleep_time;
	int32_t pth_curpri;
	int32_t pth_priority;
	int32_t pth_maxpriority;
	char pth_name[MAXTHREADNAMESIZE];
};
typedef struct thread_extended_info thread_extended_info_data_t;
#define THREAD_EXTENDED_INFO_COUNT ((mach_msg_type_number_t)(sizeof(thread_extended_info_data_t) / sizeof(natural_t)))

#if defined(__arm64__) || defined(__aarch64__)
#define ARM_THREAD_STATE64 6
#if defined(__arm64e__)
#define __DARWIN_OPAQUE_ARM_THREAD_STATE64 1
typedef struct {
	uint64_t __x[29];
	void *__opaque_fp;
	void *__opaque_lr;
	void *__opaque_sp;
	void *__opaque_pc;
	uint32_t __cpsr;
	uint32_t __opaque_flags;
} arm_thread_state64_t;
#else
#define __DARWIN_OPAQUE_ARM_THREAD_STATE64 0
typedef struct {
	uint64_t __x[29];
	uint64_t __fp;
	uint64_t __lr;
	uint64_t __sp;
	uint64_t __pc;
	uint32_t __cpsr;
	uint32_t __pad;
} arm_thread_state64_t;
#endif
#define ARM_THREAD_STATE64_COUNT ((mach_msg_type_number_t)(sizeof(arm_thread_state64_t) / sizeof(uint32_t)))
#elif defined(__x86_64__)
#define x86_THREAD_STATE64 4
typedef struct {
	uint64_t __rax, __rbx, __rcx, __rdx, __rdi, __rsi, __rbp, __rsp;
	uint64_t __r8, __r9, __r10, __r11, __r12, __r13, __r14, __r15;
	uint64_t __rip, __rflags, __cs, __fs, __gs;
} x86_thread_state64_t;
#define x86_THREAD_STATE64_COUNT ((mach_msg_type_number_t)(sizeof(x86_thread_state64_t) / sizeof(int)))
#endif

kern_return_t task_threads(task_t target_task, thread_act_array_t *act_list, mach_msg_type_number_t *act_listCnt);
kern_return_t thread_info(thread_act_t target_act, thread_flavor_t flavor, thread_info_t thread_info_out,
                          mach_msg_type_number_t *thread_info_outCnt);
kern_return_t thread_suspend(thread_act_t target_act);
kern_return_t thread_resume(thread_act_t target_act);
kern_return_t thread_get_state(thread_act_t target_act, thread_state_flavor_t flavor, thread_state_t old_state,
                               mach_msg_type_number_t *old_stateCnt);
kern_return_t mach_port_deallocate(task_t task, mach_port_name_t name);
kern_return_t vm_deallocate(vm_map_t target_task, vm_address_t address, vm_size_t size);
kern_return_t vm_read_overwrite(vm_map_t target_task, vm_address_t address, vm_size_t size, vm_address_t data,
                                vm_size_t *outsize);
#endif
