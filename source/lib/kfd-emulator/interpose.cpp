// MIT License - see LICENSE.
//
// The libc symbols this library exports (the only ones: see exports.map). Each one hands the
// call to the emulator when it is about /dev/kfd, the KFD topology or an fd the emulator
// handed out, and otherwise calls the next definition (libc's) with the same arguments.
// Built without _FORTIFY_SOURCE so that glibc's inline wrappers do not collide with these.
#include "emulator.hpp"
#include "real_libc.hpp"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#define KFD_EMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace
{
bool
takes_mode(int flags)
{
    return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

// The common part of the open family: the device, then the topology, then libc.
template <typename Pass>
int
open_common(const char* path, int flags, Pass&& pass_through)
{
    int result = -1;
    try
    {
        if(kfd_emu::open_device(path, flags, result)) return result;
        std::string redirected;
        if(kfd_emu::topology_redirect(path, redirected)) return pass_through(redirected.c_str());
    }
    catch(...)
    {
        errno = ENOMEM;
        return -1;
    }
    return pass_through(path);
}
} // namespace

// The mode argument of the open family: read only when the flags say it was passed
// (O_CREAT, O_TMPFILE). A macro because va_start needs the caller's own parameter list.
#define KFD_EMU_MODE_FROM_VARARGS(FLAGS, MODE)                                                     \
    mode_t MODE = 0;                                                                               \
    if(takes_mode(FLAGS))                                                                          \
    {                                                                                              \
        va_list mode_args_;                                                                        \
        va_start(mode_args_, FLAGS);                                                               \
        MODE = static_cast<mode_t>(va_arg(mode_args_, int));                                       \
        va_end(mode_args_);                                                                        \
    }

KFD_EMU_EXPORT int
open(const char* path, int flags, ...)
{
    KFD_EMU_MODE_FROM_VARARGS(flags, mode);
    return open_common(path, flags,
                       [&](const char* p) { return kfd_emu::libc().open(p, flags, mode); });
}

KFD_EMU_EXPORT int
open64(const char* path, int flags, ...)
{
    KFD_EMU_MODE_FROM_VARARGS(flags, mode);
    return open_common(path, flags,
                       [&](const char* p) { return kfd_emu::libc().open64(p, flags, mode); });
}

KFD_EMU_EXPORT int
openat(int dirfd, const char* path, int flags, ...)
{
    KFD_EMU_MODE_FROM_VARARGS(flags, mode);
    // Only absolute paths can name /dev/kfd or the topology; dirfd is then ignored.
    return open_common(
        path, flags, [&](const char* p) { return kfd_emu::libc().openat(dirfd, p, flags, mode); });
}

KFD_EMU_EXPORT int
openat64(int dirfd, const char* path, int flags, ...)
{
    KFD_EMU_MODE_FROM_VARARGS(flags, mode);
    return open_common(path, flags,
                       [&](const char* p)
                       { return kfd_emu::libc().openat64(dirfd, p, flags, mode); });
}

// The _FORTIFY_SOURCE entry points (no mode argument by definition).
KFD_EMU_EXPORT int
__open_2(const char* path, int flags)
{
    return open_common(path, flags,
                       [&](const char* p)
                       {
                           auto fn = kfd_emu::libc().open_2;
                           return fn ? fn(p, flags) : kfd_emu::libc().open(p, flags);
                       });
}

KFD_EMU_EXPORT int
__open64_2(const char* path, int flags)
{
    return open_common(path, flags,
                       [&](const char* p)
                       {
                           auto fn = kfd_emu::libc().open64_2;
                           return fn ? fn(p, flags) : kfd_emu::libc().open64(p, flags);
                       });
}

KFD_EMU_EXPORT int
__openat_2(int dirfd, const char* path, int flags)
{
    return open_common(path, flags,
                       [&](const char* p)
                       {
                           auto fn = kfd_emu::libc().openat_2;
                           return fn ? fn(dirfd, p, flags)
                                     : kfd_emu::libc().openat(dirfd, p, flags);
                       });
}

KFD_EMU_EXPORT int
__openat64_2(int dirfd, const char* path, int flags)
{
    return open_common(path, flags,
                       [&](const char* p)
                       {
                           auto fn = kfd_emu::libc().openat64_2;
                           return fn ? fn(dirfd, p, flags)
                                     : kfd_emu::libc().openat64(dirfd, p, flags);
                       });
}

// fopen() inside glibc does not go through open(): redirect the topology for readers that
// use stdio or iostreams.
KFD_EMU_EXPORT FILE*
fopen(const char* path, const char* mode)
{
    std::string redirected;
    try
    {
        if(kfd_emu::topology_redirect(path, redirected))
            return kfd_emu::libc().fopen(redirected.c_str(), mode);
    }
    catch(...)
    {
        errno = ENOMEM;
        return nullptr;
    }
    return kfd_emu::libc().fopen(path, mode);
}

KFD_EMU_EXPORT FILE*
fopen64(const char* path, const char* mode)
{
    std::string redirected;
    try
    {
        if(kfd_emu::topology_redirect(path, redirected))
            return kfd_emu::libc().fopen64(redirected.c_str(), mode);
    }
    catch(...)
    {
        errno = ENOMEM;
        return nullptr;
    }
    return kfd_emu::libc().fopen64(path, mode);
}

KFD_EMU_EXPORT int
ioctl(int fd, unsigned long request, ...) __THROW
{
    va_list args;
    va_start(args, request);
    void* arg = va_arg(args, void*);
    va_end(args);
    int result = -1;
    if(kfd_emu::device_ioctl(fd, request, arg, result)) return result;
    return kfd_emu::libc().ioctl(fd, request, arg);
}

KFD_EMU_EXPORT ssize_t
read(int fd, void* buf, size_t count)
{
    ssize_t result = -1;
    if(kfd_emu::device_read(fd, buf, count, result)) return result;
    return kfd_emu::libc().read(fd, buf, count);
}

KFD_EMU_EXPORT ssize_t
__read_chk(int fd, void* buf, size_t count, size_t buflen)
{
    // An overflowing request goes to libc, which reports it as fortified code expects.
    ssize_t result = -1;
    if(count <= buflen && kfd_emu::device_read(fd, buf, count, result)) return result;
    return kfd_emu::libc().read_chk(fd, buf, count, buflen);
}

KFD_EMU_EXPORT ssize_t
write(int fd, const void* buf, size_t count)
{
    ssize_t result = -1;
    if(kfd_emu::device_write(fd, buf, count, result)) return result;
    return kfd_emu::libc().write(fd, buf, count);
}

KFD_EMU_EXPORT int
close(int fd)
{
    int result = -1;
    if(kfd_emu::device_close(fd, result)) return result;
    return kfd_emu::libc().close(fd);
}
