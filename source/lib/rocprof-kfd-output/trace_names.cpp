// MIT License - see LICENSE.
#include "trace_names.hpp"

#include "names.hpp"

namespace rocprof_kfd
{
std::string
slice_name(const record& r)
{
    switch(r.operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
        return std::string(r.page_fault.read_fault ? "read" : "write") + " fault (" +
               (r.page_fault.migrated ? "migrated" : "updated") + ")";
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        return "migrate (" + trigger_name(r.operation, r.page_migrate.trigger) + ")";
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        return "queue suspend (" + trigger_name(r.operation, r.queue_suspend.trigger) + ")";
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        return "unmap (" + trigger_name(r.operation, r.unmap_from_gpu.trigger) + ")";
    default:
        return "unknown";
    }
}

uint32_t
record_gpu(const record& r)
{
    switch(r.operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
        return r.page_fault.node_id;
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        return r.page_migrate.to_node != 0 ? r.page_migrate.to_node : r.page_migrate.from_node;
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        return r.queue_suspend.node_id;
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        return r.unmap_from_gpu.node_id;
    default:
        return 0;
    }
}

std::string
lane_track_name(const std::vector<agent_info>& agents, uint32_t gpu, int operation, size_t lane)
{
    static const char* const what[] = {"", "migrations", "page faults", "queue suspensions",
                                       "unmaps"};
    std::string name = "GPU " + agent_name(agents, gpu) + " (" + std::to_string(gpu) + ") " +
                       (operation >= 1 && operation <= 4 ? what[operation] : "events");
    if(lane > 0) name += " #" + std::to_string(lane + 1);
    return name;
}

std::string
process_label(const run_info& run)
{
    std::string label = run.rank ? "rank " + *run.rank + " @ " + run.hostname : run.hostname;
    label += ": " + (run.command.empty() ? std::string("?") : run.command.front()) + " (pid " +
             std::to_string(run.pid) + ")";
    return label;
}
} // namespace rocprof_kfd
