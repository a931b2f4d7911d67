// MIT License - see LICENSE.
#include "rocprofiler-sdk/kfd/device.hpp"

#include "common/kfd_abi.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

namespace rocprofiler::kfd::device
{
namespace
{
int
ioctl_retry(int fd, unsigned long request, void* args) noexcept
{
    int rc = 0;
    do
    {
        rc = ::ioctl(fd, request, args);
    } while(rc == -1 && (errno == EINTR || errno == EAGAIN));
    return rc;
}
} // namespace

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

void
close_fd(int fd) noexcept
{
    if(fd > 0) ::close(fd);
}
} // namespace rocprofiler::kfd::device
