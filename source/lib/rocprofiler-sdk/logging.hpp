// MIT License - see LICENSE.
//
// Logging for the SDK: one line per message, written to stderr with one system call (writev):
//   rocprofiler-sdk[<pid>] W 2026-12-01T08:40:12.345678Z reader.cpp:57: <message>
// No glog, no iostream: a host program that carries its own glog (static or shared,
// initialized or not, any stderrthreshold) neither breaks nor silences the SDK. The level is
// our own, read once from ROCPROFILER_LOG_LEVEL (trace|info|warning|error|none; default
// warning), so the SDK is quiet by default. Never FATAL, and never SIGPIPE (logging.cpp).
#pragma once

#include <fmt/format.h>

#include <iterator>

namespace rocprofiler::logging
{
enum level : int
{
    trace   = 0,
    info    = 1,
    warning = 2,
    error   = 3,
    none    = 4,
};

// Threshold from ROCPROFILER_LOG_LEVEL, parsed once.
int threshold();

// Parses a level name; unknown names give `fallback`.
int parse_level(const char* text, int fallback);

inline bool
enabled(int lvl)
{
    return lvl >= threshold();
}

// Collects one message and writes it as a single line when destroyed. Never throws: a message
// past the buffer's 500 inline bytes allocates, and if that fails (out of memory) the line is
// written as far as it got, marked as cut short. (SDK code logs inside noexcept functions,
// where an escaping bad_alloc would terminate the host.)
class line
{
public:
    line(int lvl, const char* file, int line_number) noexcept;
    ~line();
    line(const line&)            = delete;
    line& operator=(const line&) = delete;

    template <typename T> line& operator<<(const T& value) noexcept
    {
        if(m_cut_short) return *this;
        try
        {
            fmt::format_to(std::back_inserter(m_text), "{}", value);
        }
        catch(...) // std::bad_alloc: keep what was written, drop the rest
        {
            m_cut_short = true;
        }
        return *this;
    }

private:
    int                m_level;
    const char*        m_file;
    int                m_line;
    fmt::memory_buffer m_text; // fmt: no locale, no iostream state
    bool               m_cut_short = false;
};

// Makes `cond ? (void)0 : voidify() & line(...) << ...` well-formed.
struct voidify
{
    void operator&(line&) {}
};
} // namespace rocprofiler::logging

// An expression, so it is safe inside an unbraced if/else.
#define ROCP_LOG_AT(LVL)                                                                           \
    !::rocprofiler::logging::enabled(::rocprofiler::logging::LVL)                                  \
        ? (void)0                                                                                  \
        : ::rocprofiler::logging::voidify{} &                                                      \
              ::rocprofiler::logging::line(::rocprofiler::logging::LVL, __FILE__, __LINE__)

#define ROCP_TRACE ROCP_LOG_AT(trace)
#define ROCP_INFO ROCP_LOG_AT(info)
#define ROCP_WARNING ROCP_LOG_AT(warning)
#define ROCP_ERROR ROCP_LOG_AT(error)
