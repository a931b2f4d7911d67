// MIT License - see LICENSE.
#include "rocprofiler-sdk/logging.hpp"
#include "rocprofiler-sdk/env.hpp"

#include <glog/logging.h>
#include <glog/raw_logging.h>

#include <cstdlib>
#include <cstring>
#include <strings.h>

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

line::line(int lvl, const char* file, int line_number)
    : m_level{lvl}, m_file{file}, m_line{line_number}
{
    fmt::format_to(std::back_inserter(m_text), "rocprofiler-sdk: ");
}

line::~line()
{
    try
    {
        auto        text     = fmt::to_string(m_text);
        auto        severity = (m_level >= error)     ? google::GLOG_ERROR
                               : (m_level >= warning) ? google::GLOG_WARNING
                                                      : google::GLOG_INFO;
        const char* base     = std::strrchr(m_file, '/');
        google::RawLog__(severity, base ? base + 1 : m_file, m_line, "%s", text.c_str());
    }
    catch(...)
    {
    }
}
} // namespace rocprofiler::logging
