// MIT License - see LICENSE.
#include "rocprofiler-sdk/kfd/reader_slice.hpp"

#include "common/sched_attr.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace rocprofiler::kfd::reader_slice
{
namespace
{
using sched_attr_v0              = linux_abi::sched_attr_v0;
constexpr uint64_t reset_on_fork = linux_abi::sched_flag_reset_on_fork;
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
