// MIT License - see LICENSE.
#include "real_libc.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <cerrno>

namespace kfd_emu
{
namespace
{
libc_functions g_functions;
pthread_once_t g_resolve_once = PTHREAD_ONCE_INIT;

template <typename Fn>
void
resolve(Fn& target, const char* name)
{
    target = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

void
resolve_all()
{
    resolve(g_functions.open, "open");
    resolve(g_functions.open64, "open64");
    resolve(g_functions.openat, "openat");
    resolve(g_functions.openat64, "openat64");
    resolve(g_functions.open_2, "__open_2");
    resolve(g_functions.open64_2, "__open64_2");
    resolve(g_functions.openat_2, "__openat_2");
    resolve(g_functions.openat64_2, "__openat64_2");
    resolve(g_functions.ioctl, "ioctl");
    resolve(g_functions.read, "read");
    resolve(g_functions.read_chk, "__read_chk");
    resolve(g_functions.write, "write");
    resolve(g_functions.close, "close");
    resolve(g_functions.fopen, "fopen");
    resolve(g_functions.fopen64, "fopen64");
}

// Resolved at load, so that no interposed call (say, close() in a vfork child or in a signal
// handler) has to run dlsym(); the lazy path stays for calls that come before this.
__attribute__((constructor)) void
resolve_at_load()
{
    int saved = errno;
    pthread_once(&g_resolve_once, resolve_all);
    errno = saved;
}
} // namespace

const libc_functions&
libc()
{
    int saved = errno; // dlsym() may change it: the caller's errno stays as it was
    pthread_once(&g_resolve_once, resolve_all);
    errno = saved;
    return g_functions;
}

bool
write_all(int fd, const char* data, size_t size)
{
    while(size > 0)
    {
        ssize_t n = libc().write(fd, data, size);
        if(n < 0 && errno == EINTR) continue;
        if(n <= 0) return false;
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}
} // namespace kfd_emu
