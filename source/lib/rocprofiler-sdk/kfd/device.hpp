// MIT License - see LICENSE.
//
// The only code that talks to the amdkfd driver: thin wrappers over the libc calls (open,
// ioctl, fcntl, write, read, close, eventfd), so that the KFD emulator can stand in for the
// driver by interposing them. No policy here: callers decide what an error means.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace rocprofiler::kfd::device
{
struct version
{
    uint32_t major = 0;
    uint32_t minor = 0;
};

// open("/dev/kfd", O_RDWR | O_CLOEXEC); -1 with errno on failure.
int open_kfd() noexcept;

// AMDKFD_IOC_GET_VERSION, retried on EINTR/EAGAIN.
bool get_version(int kfd_fd, version& out) noexcept;

// AMDKFD_IOC_SMI_EVENTS for one GPU; the new fd is made CLOEXEC and NONBLOCK.
// -1 with errno on failure (the driver leaves anon_fd at 0 then: never treated as an fd).
int open_smi_events(int kfd_fd, uint32_t gpu_id) noexcept;

// Writes the 8-byte event mask (bit id-1 enables event id). False with errno on failure.
bool write_mask(int smi_fd, uint64_t mask) noexcept;

// read() retried on EINTR. Returns bytes read, 0 at end, or -1 with errno (EAGAIN: empty).
ssize_t read_some(int fd, char* buffer, size_t size) noexcept;

// An eventfd used to wake the reader from poll().
int  make_wake_fd() noexcept;
void wake(int wake_fd) noexcept;
void clear_wake(int wake_fd) noexcept;

void close_fd(int fd) noexcept;
} // namespace rocprofiler::kfd::device
