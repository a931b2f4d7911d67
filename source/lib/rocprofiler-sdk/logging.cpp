// MIT License - see LICENSE.
#include "rocprofiler-sdk/logging.hpp"
#include "rocprofiler-sdk/cancellation.hpp"
#include "rocprofiler-sdk/env.hpp"

#include <pthread.h>
#include <signal.h>
#include <strings.h>
#include <sys/uio.h>
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
// error gives up (a log line is never worth blocking or failing the host). False on EPIPE.
bool
write_all(const char* text, size_t size) noexcept
{
    while(size > 0)
    {
        auto n = ::write(STDERR_FILENO, text, size);
        if(n < 0 && errno == EINTR) continue;
        if(n < 0 && errno == EPIPE) return false;
        if(n <= 0) return true;
        text += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

// Writes `text` then `end` with one system call (a line is never interleaved with another
// thread's when stderr takes it whole); what a short write leaves is written after it.
// False when stderr is a pipe whose reader has gone (EPIPE: SIGPIPE was raised).
bool
write_line(const char* text, size_t size, const char* end, size_t end_size) noexcept
{
    iovec   parts[2] = {{const_cast<char*>(text), size}, {const_cast<char*>(end), end_size}};
    ssize_t n        = -1;
    do
        n = ::writev(STDERR_FILENO, parts, 2);
    while(n < 0 && errno == EINTR);
    if(n < 0) return errno != EPIPE;
    auto written = static_cast<size_t>(n);
    if(written < size && !write_all(text + written, size - written)) return false;
    const size_t of_end = written > size ? written - size : 0;
    return write_all(end + of_end, end_size - of_end);
}

// A log line must never end the program: when stderr is a pipe whose reader has gone
// (`app 2>&1 | head`), a write raises SIGPIPE, whose default action kills the process (it
// died of signal 13 at exit, where the SDK logs, instead of exiting with its own status).
// SIGPIPE is blocked in this thread around the write; a SIGPIPE the write raised is taken
// back (zero timeout) before the mask is restored, unless one was already pending: that one
// is the program's, and stays for it.
class sigpipe_blocked
{
public:
    sigpipe_blocked() noexcept
    {
        sigemptyset(&m_pipe);
        sigaddset(&m_pipe, SIGPIPE);
        m_blocked = pthread_sigmask(SIG_BLOCK, &m_pipe, &m_before) == 0;
        sigset_t pending;
        sigemptyset(&pending);
        m_was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    }
    ~sigpipe_blocked()
    {
        if(m_blocked) pthread_sigmask(SIG_SETMASK, &m_before, nullptr);
    }
    sigpipe_blocked(const sigpipe_blocked&)            = delete;
    sigpipe_blocked& operator=(const sigpipe_blocked&) = delete;

    // After a write that failed with EPIPE.
    void take_back_the_raised_one() noexcept
    {
        if(!m_blocked || m_was_pending) return;
        const timespec zero{0, 0};
        while(sigtimedwait(&m_pipe, nullptr, &zero) < 0 && errno == EINTR)
        {
        }
    }

private:
    sigset_t m_pipe{};
    sigset_t m_before{};
    bool     m_blocked     = false;
    bool     m_was_pending = false;
};
} // namespace

line::line(int lvl, const char* file, int line_number) noexcept
    : m_level{lvl}, m_file{file}, m_line{line_number}
{
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    tm utc{};
    gmtime_r(&now.tv_sec, &utc);
    const char* base = std::strrchr(m_file, '/');
    try // under the 500 inline bytes unless a file name is very long
    {
        fmt::format_to(std::back_inserter(m_text),
                       "rocprofiler-sdk[{}] {} {:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z {}:{}: ",
                       static_cast<long>(::getpid()), level_letter(lvl), utc.tm_year + 1900,
                       utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                       static_cast<long>(now.tv_nsec / 1000), base ? base + 1 : m_file, m_line);
    }
    catch(...)
    {
        m_cut_short = true;
    }
}

line::~line()
{
    static constexpr char cut_short[] = " [log line cut short: out of memory]\n";
    const int             saved       = errno; // logging never changes the caller's errno
    // write and writev are cancellation points: on a program's thread with a cancellation
    // pending, the unwind would leave this destructor (noexcept: std::terminate). Logging is
    // no cancellation point; the thread is cancelled at its next one.
    {
        const cancellation::scoped_state no_cancellation{PTHREAD_CANCEL_DISABLE};
        sigpipe_blocked                  no_sigpipe;
        const bool                       written =
            m_cut_short ? write_line(m_text.data(), m_text.size(), cut_short, sizeof(cut_short) - 1)
                                              : write_line(m_text.data(), m_text.size(), "\n", 1);
        if(!written) no_sigpipe.take_back_the_raised_one();
    }
    errno = saved;
}
} // namespace rocprofiler::logging
