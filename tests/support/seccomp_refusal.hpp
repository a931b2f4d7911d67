// MIT License - see LICENSE.
//
// A seccomp filter that makes one system call fail with EPERM, as a container's profile may
// (Docker's default refuses kcmp, for one). Installed without TSYNC, it applies to the
// calling thread and the threads and children it creates later (no_new_privs is per thread
// too): a test can refuse a call in a thread of its own, or in a forked child.
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace rocprofiler::test
{
#if defined(__x86_64__)
inline constexpr uint32_t seccomp_arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr uint32_t seccomp_arch = AUDIT_ARCH_AARCH64;
#else
inline constexpr uint32_t seccomp_arch = 0; // the filter is not written for this architecture
#endif

// False when the filter could not be installed (or seccomp_arch is 0).
inline bool
refuse_in_this_thread(long syscall_number)
{
    if(seccomp_arch == 0) return false;
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(syscall_number), 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
    if(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0;
}
} // namespace rocprofiler::test
