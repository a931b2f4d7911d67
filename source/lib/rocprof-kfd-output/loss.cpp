// MIT License - see LICENSE.
#include "loss.hpp"

namespace rocprof_kfd
{
#define ROCPROF_KFD_LOSS(name, definite, probable)                                                 \
    loss_field                                                                                     \
    {                                                                                              \
#        name, &rocprofiler_kfd_loss_stats_t::name, definite, probable                             \
    }

const loss_field loss_fields[] = {
    ROCPROF_KFD_LOSS(events_received, false, false),
    ROCPROF_KFD_LOSS(lines_malformed, true, false),
    ROCPROF_KFD_LOSS(events_other_process, false, false),
    ROCPROF_KFD_LOSS(records_emitted, false, false),
    ROCPROF_KFD_LOSS(ends_without_start, true, false),
    ROCPROF_KFD_LOSS(starts_aged_out, true, false),
    ROCPROF_KFD_LOSS(starts_never_ended, true, false),
    ROCPROF_KFD_LOSS(records_dropped, true, false),
    ROCPROF_KFD_LOSS(kernel_reported_drops, true, false),
    ROCPROF_KFD_LOSS(fifo_saturations, false, true),
    ROCPROF_KFD_LOSS(raw_events_dropped, true, false),
    ROCPROF_KFD_LOSS(starts_lost_in_gap, true, false),
    ROCPROF_KFD_LOSS(starts_timed_out, true, false),
    ROCPROF_KFD_LOSS(migrate_trigger_mismatches, false, true),
    ROCPROF_KFD_LOSS(lines_overlong, true, false),
    ROCPROF_KFD_LOSS(fields_out_of_range, false, false),
};
#undef ROCPROF_KFD_LOSS

const size_t loss_field_count = sizeof(loss_fields) / sizeof(loss_fields[0]);

loss_verdict
judge_loss(const loss_info& loss)
{
    loss_verdict v;
    if(!loss.valid)
    {
        v.probably_lost = true;
        v.message       = "loss accounting not available (the SDK's counters could not be read)";
        return v;
    }
    std::string definite, probable;
    for(size_t i = 0; i < loss_field_count; ++i)
    {
        uint64_t value = loss.stats.*loss_fields[i].member;
        if(value == 0) continue;
        std::string item = std::string(loss_fields[i].name) + "=" + std::to_string(value);
        if(loss_fields[i].definite) definite += (definite.empty() ? "" : ", ") + item;
        if(loss_fields[i].probable) probable += (probable.empty() ? "" : ", ") + item;
    }
    if(loss.buffer_drops != 0)
        definite +=
            (definite.empty() ? "" : ", ") + ("buffer_drops=" + std::to_string(loss.buffer_drops));
    if(loss.records_not_received != 0)
        definite += (definite.empty() ? "" : ", ") +
                    ("records_not_received=" + std::to_string(loss.records_not_received));
    v.lost          = !definite.empty();
    v.probably_lost = !probable.empty();
    if(v.lost && v.probably_lost)
        v.message = "records were lost (" + definite + ") and probably more (" + probable + ")";
    else if(v.lost)
        v.message = "records were lost (" + definite + ")";
    else if(v.probably_lost)
        v.message = "records were probably lost (" + probable + ")";
    else
        v.message = "no loss";
    return v;
}
} // namespace rocprof_kfd
