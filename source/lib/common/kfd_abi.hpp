// MIT License - see LICENSE.
//
// Facts of the amdkfd kernel interface shared by the SDK and the KFD emulator: ioctl
// numbers and argument structs, event ids and sizes (include/uapi/linux/kfd_ioctl.h).
// Debian's <linux/kfd_ioctl.h> includes <drm/drm.h>, which no Debian package installs at
// that path, so the two ioctls we use are defined here from their uapi definitions.
#pragma once

#include <linux/ioctl.h>

#include <cstddef>
#include <cstdint>

namespace rocprofiler::kfd_abi
{
inline constexpr const char* device_path   = "/dev/kfd";
inline constexpr const char* topology_root = "/sys/class/kfd/kfd/topology";

// SMI profiler events (ids 5-11) exist from ioctl version 1.10 (Linux 6.0).
inline constexpr uint32_t min_major_version = 1;
inline constexpr uint32_t min_minor_version = 10;

// KFD SMI event ids. 12 and 13 are newer than Debian's header; 14 is used out of tree
// (dropped-events record) and by a proposed change (rescheduled restore): told apart by shape.
enum event_id : uint32_t
{
    event_none             = 0,
    event_vmfault          = 1,
    event_thermal_throttle = 2,
    event_gpu_pre_reset    = 3,
    event_gpu_post_reset   = 4,
    event_migrate_start    = 5,
    event_migrate_end      = 6,
    event_page_fault_start = 7,
    event_page_fault_end   = 8,
    event_queue_eviction   = 9,
    event_queue_restore    = 10,
    event_unmap_from_gpu   = 11,
    event_process_start    = 12,
    event_process_end      = 13,
    event_id_14            = 14,
    event_all_process      = 64,
};
inline constexpr uint32_t max_event_id = 14;

constexpr uint64_t
event_mask(uint32_t id)
{
    return (id >= 1 && id <= 64) ? (uint64_t{1} << (id - 1)) : 0;
}

// Per-client FIFO sizes: 1024 bytes on Linux 6.0-6.12, 8192 bytes from 6.13.
inline constexpr size_t fifo_size_before_6_13 = 1024;
inline constexpr size_t fifo_size             = 8192;
// Every message is built in a buffer of this size.
inline constexpr size_t message_size = 96;

inline constexpr uint64_t page_shift    = 12;
inline constexpr uint32_t node_undefined = 0xffffffffu;

struct get_version_args
{
    uint32_t major_version;  // out
    uint32_t minor_version;  // out
};

struct smi_events_args
{
    uint32_t gpuid;    // in: topology gpu_id
    uint32_t anon_fd;  // out: the new SMI event fd
};

// _IOR('K', 0x01, struct kfd_ioctl_get_version_args)
inline constexpr unsigned long ioc_get_version = _IOR('K', 0x01, get_version_args);
// _IOWR('K', 0x1F, struct kfd_ioctl_smi_events_args)
inline constexpr unsigned long ioc_smi_events = _IOWR('K', 0x1F, smi_events_args);
}  // namespace rocprofiler::kfd_abi
