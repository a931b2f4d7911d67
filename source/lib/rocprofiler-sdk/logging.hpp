// MIT License - see LICENSE.
//
// Logging for the SDK. glog does the formatting and output; the level is our own, read once
// from ROCPROFILER_LOG_LEVEL (trace|info|warning|error|none; default warning), so that the
// SDK is quiet by default and never changes the glog settings of a host application that
// also uses glog. We never call InitGoogleLogging (a second call by the host would abort it)
// and never log at FATAL.
#pragma once

#include <glog/logging.h>

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
} // namespace rocprofiler::logging

// An expression (glog's LOG_IF), so it is safe inside an unbraced if/else.
#define ROCP_LOG_IF_ENABLED(LVL, GLOG_SEVERITY)                                                    \
    LOG_IF(GLOG_SEVERITY, ::rocprofiler::logging::enabled(::rocprofiler::logging::LVL))            \
        << "rocprofiler-sdk: "

#define ROCP_TRACE ROCP_LOG_IF_ENABLED(trace, INFO)
#define ROCP_INFO ROCP_LOG_IF_ENABLED(info, INFO)
#define ROCP_WARNING ROCP_LOG_IF_ENABLED(warning, WARNING)
#define ROCP_ERROR ROCP_LOG_IF_ENABLED(error, ERROR)
