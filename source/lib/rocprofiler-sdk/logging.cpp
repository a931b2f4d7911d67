// MIT License - see LICENSE.
#include "rocprofiler-sdk/logging.hpp"

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
    // Numeric glog-style levels: 0 info, 1 warning, 2 error.
    if(text[0] >= '0' && text[0] <= '3' && text[1] == '\0') return info + (text[0] - '0');
    return fallback;
}

int
threshold()
{
    static const int value = parse_level(std::getenv("ROCPROFILER_LOG_LEVEL"), warning);
    return value;
}
} // namespace rocprofiler::logging
