// MIT License - see LICENSE.
//
// A handler table for parse_line_dispatch whose every entry records its call: how many calls,
// and the last one's slot, event and line (a view into the caller's line, not a copy, so that
// the twin checker can also see the handler got the very bytes it parsed).
#pragma once

#include "rocprofiler-sdk/kfd/parser.hpp"

#include <cstdint>
#include <string_view>
#include <utility>

namespace kfd_test
{
struct dispatch_log
{
    int                     calls = 0;
    uint32_t                slot  = 0;
    rocprofiler::kfd::event ev{};
    std::string_view        line;
};

template <uint32_t slot>
void
record_call(void* context, rocprofiler::kfd::event& ev, std::string_view line)
{
    auto& log = *static_cast<dispatch_log*>(context);
    ++log.calls;
    log.slot = slot;
    log.ev   = ev;
    log.line = line;
}

template <uint32_t... slot>
rocprofiler::kfd::event_handlers
recording_handlers(dispatch_log& log, std::integer_sequence<uint32_t, slot...>)
{
    rocprofiler::kfd::event_handlers h;
    h.context = &log;
    ((h.on_id[slot] = record_call<slot>), ...);
    return h;
}

// Every slot of the table (ids 0 to 14) records.
inline rocprofiler::kfd::event_handlers
recording_handlers(dispatch_log& log)
{
    return recording_handlers(log, std::make_integer_sequence<uint32_t, 15>{});
}
} // namespace kfd_test
