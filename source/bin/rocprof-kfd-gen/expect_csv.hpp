// MIT License - see LICENSE.
//
// The expected records as CSV (docs/kfd-emulator.md, "The --expect file"):
// operation,pid,start_ns,end_ns,node_or_from,to,prefetch,preferred,trigger,addr_start,
// addr_end,read_fault,migrated,rescheduled — decimal numbers, empty where not applicable.
#pragma once

#include "workload.hpp"

#include <string>

namespace kfd_gen
{
inline constexpr const char* expect_header =
    "operation,pid,start_ns,end_ns,node_or_from,to,prefetch,preferred,trigger,addr_start,"
    "addr_end,read_fault,migrated,rescheduled";

std::string expect_line(const record& r);

// The header line, then one line per record.
std::string expect_csv(const workload& w);
} // namespace kfd_gen
