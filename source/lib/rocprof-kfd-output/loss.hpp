// MIT License - see LICENSE.
//
// The loss counters of ext/kfd.h as a table (name, member), so every writer and reader lists
// the same fields in the same order, and the verdict the summary gives about them.
#pragma once

#include "model.hpp"

#include <string>

namespace rocprof_kfd
{
struct loss_field
{
    const char* name;
    uint64_t rocprofiler_kfd_loss_stats_t::*member;
    bool                                    definite; // counts records that are certainly missing
    bool                                    probable; // a sign that records were probably lost
};

// Every counter of rocprofiler_kfd_loss_stats_t but size and gpu_id, in struct order.
extern const loss_field loss_fields[];
extern const size_t     loss_field_count;

struct loss_verdict
{
    bool        lost          = false;
    bool        probably_lost = false;
    std::string message; // one line: "no loss" or what was lost
};

loss_verdict judge_loss(const loss_info& loss);
} // namespace rocprof_kfd
