// MIT License - see LICENSE.
//
// The emulated amdkfd driver behind the interposers: /dev/kfd devices, SMI clients with their
// FIFOs, the producer thread that replays the log, and the statistics written at exit.
// Every entry point returns false when the call is not for the emulator, so the interposer
// passes it to libc unchanged.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace kfd_emu
{
// KFD_EMULATOR_LOG is set (read once). Without it nothing is ever intercepted.
bool enabled();

// open("/dev/kfd"): handled when enabled; result is the fd or -1 with errno set.
bool open_device(const char* path, int flags, int& result);

// A path under the real topology root: redirected into the emulated topology.
bool topology_redirect(const char* path, std::string& redirected);

// Calls on fds the emulator handed out (the device and SMI fds).
bool device_read(int fd, void* buf, size_t count, ssize_t& result);
bool device_write(int fd, const void* buf, size_t count, ssize_t& result);
bool device_ioctl(int fd, unsigned long request, void* arg, int& result);
bool device_close(int fd, int& result);
} // namespace kfd_emu
