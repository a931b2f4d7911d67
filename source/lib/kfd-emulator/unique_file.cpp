// MIT License - see LICENSE.
#include "unique_file.hpp"

#include "real_libc.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace kfd_emu
{
namespace
{
uint64_t
random_bits()
{
    uint64_t bits = 0;
    if(getrandom(&bits, sizeof(bits), GRND_NONBLOCK) == static_cast<ssize_t>(sizeof(bits)))
        return bits;
    // No entropy yet (early boot): still unpredictable enough to differ, and O_EXCL keeps it
    // safe whatever the name.
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (static_cast<uint64_t>(ts.tv_nsec) << 20) ^ static_cast<uint64_t>(ts.tv_sec) ^
           (static_cast<uint64_t>(getpid()) << 40) ^ reinterpret_cast<uintptr_t>(&ts);
}

std::string
hex16(uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    std::string       out(16, '0');
    for(int i = 15; i >= 0; --i, v >>= 4)
        out[static_cast<size_t>(i)] = digits[v & 0xf];
    return out;
}
} // namespace

int
create_unique_file(const std::string& target, std::string& path)
{
    constexpr int flags = O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC;
    for(int attempt = 0; attempt < 16; ++attempt)
    {
        path   = target + ".tmp." + hex16(random_bits());
        int fd = libc().open(path.c_str(), flags, 0644);
        if(fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}
} // namespace kfd_emu
