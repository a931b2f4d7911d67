// MIT License - see LICENSE.
#include "rocprofiler-sdk/logging.hpp"
#include "rocprofiler-sdk/env.hpp"

#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rocprofiler::logging
{
int
parse_level(const char* text, int fallback)
{
    if(text == nullptr || *text == '\0') return fallback;
    struct entry
    {
        const char* name;
        int         value;
    };
    static constexpr entry table[] = {
        {"trace", trace}, {"info", info}, {"warning", warning}, {"warn", warning},
        {"error", error}, {"none", none}, {"off", none},        {"quiet", warning},
    };
    for(const auto& e : table)
        if(strcasecmp(text, e.name) == 0) return e.value;
    // Numeric glog-style levels: 0 info, 1 warning, 2 error, 3 none.
    if(text[0] >= '0' && text[0] <= '3' && text[1] == '\0') return info + (text[0] - '0');
    return fallback;
}

int
threshold()
{
    static const int value = parse_level(env::get("ROCPROFILER_LOG_LEVEL"), warning);
    return value;
}

namespace
{
char
level_letter(int lvl)
{
    return lvl >= error ? 'E' : lvl >= warning ? 'W' : lvl >= info ? 'I' : 'T';
}

// Writes all of `text` to stderr; a short write is continued, EINTR retried, any other
// error gives up (a log line is never worth blocking or failing the host).
void
write_all(const char* text, size_t size) noexcept
{
    while(size > 0)
    {
        auto n = ::write(STDERR_FILENO, text, size);
        if(n < 0 && errno == EINTR) continue;
        if(n <= 0) return;
        text += n;
        size -= static_cast<size_t>(n);
    }
}
} // namespace

line::line(int lvl, const char* file, int line_number)
    : m_level{lvl}, m_file{file}, m_line{line_number}
{
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    tm utc{};
    gmtime_r(&now.tv_sec, &utc);
    const char* base = std::strrchr(m_file, '/');
    fmt::format_to(std::back_inserter(m_text),
                   "rocprofiler-sdk[{}] {} {:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z {}:{}: ",
                   static_cast<long>(::getpid()), level_letter(lvl), utc.tm_year + 1900,
                   utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                   static_cast<long>(now.tv_nsec / 1000), base ? base + 1 : m_file, m_line);
}

line::~line()
{
    try
    {
        int saved = errno; // logging never changes what the caller sees in errno
        m_text.push_back('\n');
        write_all(m_text.data(), m_text.size());
        errno = saved;
    }
    catch(...)
    {
    }
}
} // namespace rocprofiler::logging
