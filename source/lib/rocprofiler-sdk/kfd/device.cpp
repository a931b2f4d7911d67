// MIT License - see LICENSE.
#include "rocprofiler-sdk/kfd/device.hpp"

#include "common/kfd_abi.hpp"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace rocprofiler::kfd::device
{
namespace
{
// EINTR is retried (a signal, bounded by the caller's signals); EAGAIN a few times only: a
// driver that keeps saying "try again" must not make the SDK spin forever.
constexpr int max_eagain_retries = 16;

int
ioctl_retry(int fd, unsigned long request, void* args) noexcept
{
    int rc     = 0;
    int eagain = 0;
    for(int eintr = 0; eintr < 1000; ++eintr)
    {
        rc = ::ioctl(fd, request, args);
        if(rc != -1 || (errno != EINTR && errno != EAGAIN)) return rc;
        if(errno == EAGAIN && ++eagain > max_eagain_retries) return rc;
    }
    return rc;
}

// Lowest number for the private references: high, so that they do not take the low numbers a
// program expects to get from open().
int
reference_floor()
{
    rlimit limit{};
    if(getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1000;
    auto floor = limit.rlim_cur / 4 * 3;
    return floor > 1000 ? 1000 : static_cast<int>(floor);
}

std::atomic<bool> kcmp_works{true};

// A signal number that identify() sets on the SDK's own open files with F_SETSIG, as a tag.
// It is never sent (O_ASYNC is never set on them). F_SETSIG belongs to the open file, not the
// number, and a new file starts at 0, so without kcmp it still tells the SDK's files from the
// program's at the same number and inode: an eventfd or SMI fd (one anonymous inode for all),
// or the HIP runtime's own open of /dev/kfd.
constexpr int ownership_tag = 59;

bool
carries_tag(int fd)
{
    return ::fcntl(fd, F_GETSIG) == ownership_tag;
}

// Tags `fd` unless its file has a signal or O_ASYNC set already (then it may not be the file
// the SDK just opened: the tag must not change a program's signal-driven I/O).
bool
tag(int fd)
{
    int flags = ::fcntl(fd, F_GETFL);
    if(flags == -1 || (flags & O_ASYNC) != 0 || ::fcntl(fd, F_GETSIG) != 0) return false;
    return ::fcntl(fd, F_SETSIG, ownership_tag) == 0 && carries_tag(fd);
}

// Without kcmp: the same inode and the tag. A file that could not be tagged is never taken
// for ours: the inode alone cannot tell an SMI fd from the program's eventfd, and a file that
// refused the tag was probably not the one the SDK opened.
bool
same_inode_and_tagged(int fd, const fd_identity& id)
{
    struct stat st
    {
    };
    return id.tagged && ::fstat(fd, &st) == 0 && st.st_dev == id.dev && st.st_ino == id.ino &&
           carries_tag(fd);
}

// 1: same open file, 0: not, -1: cannot tell. `self` is getpid() (callers may cache it).
int
same_file(pid_t self, int a, int b)
{
    if(!kcmp_works.load(std::memory_order_relaxed)) return -1;
    long rc = ::syscall(SYS_kcmp, self, self, KCMP_FILE, a, b);
    if(rc == 0) return 1;
    if(rc > 0 || errno == EBADF) return 0;
    kcmp_works.store(false, std::memory_order_relaxed); // ENOSYS, EPERM: inode check only
    return -1;
}
} // namespace

fd_identity
identify(int fd) noexcept
{
    fd_identity id{};
    struct stat st
    {
    };
    if(fd < 0 || ::fstat(fd, &st) != 0) return id;
    id.dev       = st.st_dev;
    id.ino       = st.st_ino;
    id.known     = true;
    id.tagged    = tag(fd);
    id.reference = ::fcntl(fd, F_DUPFD_CLOEXEC, reference_floor());
    return id;
}

bool
is_ours(int fd, const fd_identity& id, pid_t self) noexcept
{
    if(fd < 0 || !id.known) return false;
    int saved = errno;
    // kcmp alone answers when it can: the same open file as the private duplicate has its
    // inode too. One system call per check (the reader makes one before every read).
    int  same = id.reference >= 0 ? same_file(self > 0 ? self : ::getpid(), fd, id.reference) : -1;
    bool ours = same == 1;
    if(same < 0) ours = same_inode_and_tagged(fd, id);
    errno = saved;
    return ours;
}

bool
is_ours(int fd, const fd_identity& id) noexcept
{
    return is_ours(fd, id, 0);
}

void
close_owned(int fd, fd_identity& id) noexcept
{
    if(is_ours(fd, id))
    {
        // With kcmp, is_ours() proved the reference is the same file; without, it is checked
        // as the number was (the program may have closed and reused it too).
        bool reference_ours = id.reference >= 0 && (kcmp_works.load(std::memory_order_relaxed) ||
                                                    same_inode_and_tagged(id.reference, id));
        ::close(fd);
        if(reference_ours) ::close(id.reference);
    }
    id = fd_identity{}; // a number taken by the program is never touched again
}

int
open_kfd() noexcept
{
    int fd = -1;
    do
    {
        fd = ::open(kfd_abi::device_path, O_RDWR | O_CLOEXEC);
    } while(fd == -1 && errno == EINTR);
    return fd;
}

bool
get_version(int kfd_fd, version& out) noexcept
{
    kfd_abi::get_version_args args{};
    if(ioctl_retry(kfd_fd, kfd_abi::ioc_get_version, &args) != 0) return false;
    out = version{args.major_version, args.minor_version};
    return true;
}

int
open_smi_events(int kfd_fd, uint32_t gpu_id) noexcept
{
    kfd_abi::smi_events_args args{};
    args.gpuid = gpu_id;
    if(ioctl_retry(kfd_fd, kfd_abi::ioc_smi_events, &args) != 0) return -1;
    int fd = static_cast<int>(args.anon_fd);
    if(fd <= 0) // 0 is stdin, never an SMI fd
    {
        errno = EBADF;
        return -1;
    }
    // The driver sets neither flag: set them so the fd is not inherited across exec and
    // a read of an empty FIFO can never block the reader.
    int fd_flags = ::fcntl(fd, F_GETFD);
    int fl_flags = ::fcntl(fd, F_GETFL);
    if(fd_flags == -1 || fl_flags == -1 || ::fcntl(fd, F_SETFD, fd_flags | FD_CLOEXEC) == -1 ||
       ::fcntl(fd, F_SETFL, fl_flags | O_NONBLOCK) == -1)
    {
        int saved = errno;
        ::close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

bool
write_mask(int smi_fd, uint64_t mask) noexcept
{
    ssize_t n = 0;
    do
    {
        n = ::write(smi_fd, &mask, sizeof(mask));
    } while(n == -1 && errno == EINTR);
    if(n == static_cast<ssize_t>(sizeof(mask))) return true;
    if(n >= 0) errno = EIO;
    return false;
}

ssize_t
read_some(int fd, char* buffer, size_t size) noexcept
{
    ssize_t n = 0;
    do
    {
        n = ::read(fd, buffer, size);
    } while(n == -1 && errno == EINTR);
    return n;
}

int
make_wake_fd() noexcept
{
    return ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

void
wake(int wake_fd) noexcept
{
    uint64_t one = 1;
    ssize_t  n   = 0;
    do
    {
        n = ::write(wake_fd, &one, sizeof(one));
    } while(n == -1 && errno == EINTR);
}

void
clear_wake(int wake_fd) noexcept
{
    uint64_t value = 0;
    (void)!::read(wake_fd, &value, sizeof(value));
}

} // namespace rocprofiler::kfd::device
