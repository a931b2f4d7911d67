// MIT License - see LICENSE.
//
// The only code that talks to the amdkfd driver: thin wrappers over the libc calls (open,
// ioctl, fcntl, write, read, close, eventfd), so that the KFD emulator can stand in for the
// driver by interposing them. No policy here: callers decide what an error means.
//
// fds are owned by identity, not by number: a host program may close them behind the SDK's
// back (close_range(3, ~0U, 0) at start) and get the same numbers for its own files. Each
// owned fd keeps its (st_dev, st_ino) and a private duplicate at a high number; is_ours()
// compares the number's file with that duplicate (kcmp KCMP_FILE: the same open file, not
// just the same inode: every eventfd and SMI fd shares one anonymous inode, and a second
// open of /dev/kfd has the same inode). Where kcmp is unavailable (Docker's default seccomp
// profile refuses it), the number must have the same inode and carry the tag identify() set
// on the open file (F_SETSIG, see device.cpp), which the program's files never carry; where
// kcmp is available it alone decides (one system call per check).
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

struct fd_identity
{
    int   reference = -1; // private duplicate (F_DUPFD_CLOEXEC at a high number), or -1
    dev_t dev       = 0;
    ino_t ino       = 0;
    bool  known     = false;
    bool  tagged    = false; // carries the ownership tag (checked where kcmp is unavailable)
};

// Records the identity of `fd`, just opened by the SDK.
fd_identity identify(int fd) noexcept;

// True when `fd` is still the file identify() saw.
bool is_ours(int fd, const fd_identity& id) noexcept;
// The same with this process's pid given (0: getpid()), for a thread that cached it: the
// reader checks before every read, and getpid() is a system call of its own.
bool is_ours(int fd, const fd_identity& id, pid_t self) noexcept;

// Closes `fd` and its reference if they are still ours; otherwise touches neither number.
void close_owned(int fd, fd_identity& id) noexcept;

// open("/dev/kfd", O_RDWR | O_CLOEXEC); -1 with errno on failure.
int open_kfd() noexcept;

// AMDKFD_IOC_GET_VERSION, retried on EINTR and a bounded number of times on EAGAIN.
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

} // namespace rocprofiler::kfd::device
