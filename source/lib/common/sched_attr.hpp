// MIT License - see LICENSE.
//
// struct sched_attr of sched_setattr(2)/sched_getattr(2), its first version
// (SCHED_ATTR_SIZE_VER0, include/uapi/linux/sched/types.h): glibc 2.36 declares neither the
// struct nor the calls, and <linux/sched/types.h> clashes with glibc's struct sched_param.
#pragma once

#include <cstdint>

namespace rocprofiler::linux_abi
{
struct sched_attr_v0
{
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t  sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime; // SCHED_OTHER: the slice, since Linux 6.12
    uint64_t sched_deadline;
    uint64_t sched_period;
};
static_assert(sizeof(sched_attr_v0) == 48, "SCHED_ATTR_SIZE_VER0");

inline constexpr uint64_t sched_flag_reset_on_fork = 0x01;
} // namespace rocprofiler::linux_abi
