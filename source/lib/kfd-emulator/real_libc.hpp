// MIT License - see LICENSE.
//
// The libc functions the emulator interposes, resolved with dlsym(RTLD_NEXT). Everything the
// emulator does itself (reading the log, writing the topology and the stats) goes through
// these, never through its own interposers.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdio>

namespace kfd_emu
{
struct libc_functions
{
    int (*open)(const char*, int, ...)              = nullptr;
    int (*open64)(const char*, int, ...)            = nullptr;
    int (*openat)(int, const char*, int, ...)       = nullptr;
    int (*openat64)(int, const char*, int, ...)     = nullptr;
    int (*open_2)(const char*, int)                 = nullptr;
    int (*open64_2)(const char*, int)               = nullptr;
    int (*openat_2)(int, const char*, int)          = nullptr;
    int (*openat64_2)(int, const char*, int)        = nullptr;
    int (*ioctl)(int, unsigned long, ...)           = nullptr;
    ssize_t (*read)(int, void*, size_t)             = nullptr;
    ssize_t (*read_chk)(int, void*, size_t, size_t) = nullptr;
    ssize_t (*write)(int, const void*, size_t)      = nullptr;
    int (*close)(int)                               = nullptr;
    FILE* (*fopen)(const char*, const char*)        = nullptr;
    FILE* (*fopen64)(const char*, const char*)      = nullptr;
};

// Resolved once, thread-safely; callable from the first interposed call on.
const libc_functions& libc();

// Writes all of data to fd (retrying on EINTR and short writes).
bool write_all(int fd, const char* data, size_t size);
} // namespace kfd_emu
