// MIT License - see LICENSE.
#include "rocprofiler-sdk/env.hpp"
#include "rocprofiler-sdk/logging.hpp"

#include <fcntl.h>
#include <strings.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace rocprofiler::env
{
bool
secure_mode() noexcept
{
    return getauxval(AT_SECURE) != 0;
}

const char*
get(const char* name) noexcept
{
    return ::secure_getenv(name);
}

bool
flag(const char* name) noexcept
{
    const char* v = get(name);
    return v != nullptr && (strcasecmp(v, "1") == 0 || strcasecmp(v, "yes") == 0 ||
                            strcasecmp(v, "true") == 0 || strcasecmp(v, "on") == 0);
}

std::optional<uint64_t>
parse_u64(std::string_view text, uint64_t min, uint64_t max) noexcept
{
    if(text.empty() || text.size() > 20) return std::nullopt;
    uint64_t value = 0;
    for(char c : text)
    {
        if(c < '0' || c > '9') return std::nullopt;
        auto digit = static_cast<uint64_t>(c - '0');
        if(value > (UINT64_MAX - digit) / 10) return std::nullopt; // would overflow
        value = value * 10 + digit;
    }
    if(value < min || value > max) return std::nullopt;
    return value;
}

uint64_t
number(const char* name, uint64_t min, uint64_t max, uint64_t fallback) noexcept
{
    const char* text = get(name);
    if(text == nullptr || *text == '\0') return fallback;
    if(auto value = parse_u64(text, min, max)) return *value;
    ROCP_ERROR << name << "='" << std::string_view{text}.substr(0, 64)
               << "' is not a whole number from " << min << " to " << max << "; using " << fallback;
    return fallback;
}
bool
is_initial_uid_map(std::string_view text) noexcept
{
    // Fields separated by blanks: inside, outside, count.
    uint64_t fields[3] = {};
    size_t   count     = 0;
    size_t   i         = 0;
    while(i < text.size())
    {
        while(i < text.size() && (text[i] == ' ' || text[i] == '\t'))
            ++i;
        if(i < text.size() && text[i] == '\n')
        {
            ++i;
            if(i != text.size()) return false; // more than one line
            break;
        }
        size_t start = i;
        while(i < text.size() && text[i] >= '0' && text[i] <= '9')
            ++i;
        if(start == i || count == 3) return false;
        auto value = parse_u64(text.substr(start, i - start), 0, UINT64_MAX);
        if(!value) return false;
        fields[count++] = *value;
    }
    return count == 3 && fields[0] == 0 && fields[1] == 0 && fields[2] == 4294967295u;
}

bool
in_initial_user_namespace() noexcept
{
    int fd = ::open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
    if(fd < 0) return true;
    char    text[256];
    ssize_t n = 0;
    do
    {
        n = ::read(fd, text, sizeof(text));
    } while(n < 0 && errno == EINTR);
    ::close(fd);
    if(n <= 0) return true;
    return is_initial_uid_map(std::string_view{text, static_cast<size_t>(n)});
}
} // namespace rocprofiler::env
