// MIT License - see LICENSE.
#include "rocprofiler-sdk/kfd/reader_slice.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace rocprofiler::kfd::reader_slice
{
namespace
{
// struct sched_attr of sched_setattr(2), its first version (SCHED_ATTR_SIZE_VER0, 48 bytes):
// glibc 2.36 declares neither the struct nor the calls, and <linux/sched/types.h> clashes
// with glibc's struct sched_param.
struct sched_attr_v0
{
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t  sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};
static_assert(sizeof(sched_attr_v0) == 48, "SCHED_ATTR_SIZE_VER0");

constexpr uint64_t reset_on_fork = 0x01; // SCHED_FLAG_RESET_ON_FORK
} // namespace

bool
with_slice(const attributes& current, uint64_t slice_ns, attributes& wanted) noexcept
{
    if(slice_ns == 0 || current.policy != SCHED_OTHER) return false;
    wanted         = current;
    wanted.flags   = current.flags & reset_on_fork; // nothing else: util clamps, deadline...
    wanted.runtime = slice_ns;
    return true;
}

outcome
request_for_this_thread(uint64_t slice_ns, int& error) noexcept
{
    error = 0;
    if(slice_ns == 0) return outcome::not_asked;
    sched_attr_v0 now{};
    if(::syscall(SYS_sched_getattr, 0, &now, sizeof(now), 0) != 0)
    {
        error = errno;
        return outcome::refused;
    }
    attributes current{now.sched_policy, now.sched_flags, now.sched_nice, now.sched_runtime};
    attributes wanted{};
    if(!with_slice(current, slice_ns, wanted)) return outcome::not_asked;
    sched_attr_v0 next{};
    next.size          = sizeof(next);
    next.sched_policy  = wanted.policy;
    next.sched_flags   = wanted.flags;
    next.sched_nice    = wanted.nice;
    next.sched_runtime = wanted.runtime;
    if(::syscall(SYS_sched_setattr, 0, &next, 0) != 0)
    {
        error = errno;
        return outcome::refused;
    }
    return outcome::set;
}
} // namespace rocprofiler::kfd::reader_slice
