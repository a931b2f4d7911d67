// MIT License - see LICENSE.
#include "names.hpp"

#include "text.hpp"

#include <cstring>

namespace rocprof_kfd
{
namespace
{
const char* const operation_names[] = {"none", "page_migrate", "page_fault", "queue_suspend",
                                       "unmap_from_gpu"};
const char* const event_names[]     = {"", "page-migrate", "page-fault", "queue-suspend",
                                       "unmap-from-gpu"};

// Trigger names per operation, indexed by trigger value (from 0).
const char* const migrate_triggers[] = {"prefetch", "pagefault_gpu", "pagefault_cpu",
                                        "ttm_eviction"};
const char* const queue_triggers[]   = {"svm",     "userptr",         "ttm",
                                        "suspend", "criu_checkpoint", "criu_restore"};
const char* const unmap_triggers[]   = {"mmu_notify", "mmu_notify_migrate", "unmap_from_cpu"};

struct trigger_table
{
    const char* const* names;
    int                count;
};

trigger_table
triggers_of(int operation)
{
    switch(operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        return {migrate_triggers, 4};
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        return {queue_triggers, 6};
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        return {unmap_triggers, 3};
    default:
        return {nullptr, 0};
    }
}
} // namespace

const agent_info*
find_agent(const std::vector<agent_info>& agents, node_key node)
{
    for(const auto& a : agents)
        if(make_node_key(a.host, a.gpu_id) == node) return &a;
    return nullptr;
}

std::string
agent_name(const std::vector<agent_info>& agents, node_key node)
{
    if(const agent_info* a = find_agent(agents, node)) return a->name;
    if(node_of(node) == 0) return "CPU";
    return "gpu_id " + std::to_string(node_of(node));
}

const char*
operation_name(int operation)
{
    if(operation < 1 || operation > operation_count) return operation_names[0];
    return operation_names[operation];
}

int
operation_from_name(const std::string& name)
{
    for(int op = 1; op <= operation_count; ++op)
        if(name == operation_names[op]) return op;
    return 0;
}

int
operation_from_event_name(const std::string& name)
{
    for(int op = 1; op <= operation_count; ++op)
        if(name == event_names[op]) return op;
    return 0;
}

int
record_trigger(const record& r)
{
    switch(r.operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        return r.page_migrate.trigger;
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        return r.queue_suspend.trigger;
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        return r.unmap_from_gpu.trigger;
    default:
        return -1;
    }
}

std::string
trigger_name(int operation, int trigger)
{
    byte_buffer out;
    append_trigger_name(out, operation, trigger);
    return out.str();
}

void
append_trigger_name(byte_buffer& out, int operation, int trigger)
{
    if(trigger == -1)
    {
        out += "none";
        return;
    }
    trigger_table t = triggers_of(operation);
    if(trigger >= 0 && trigger < t.count)
    {
        out += t.names[trigger];
        return;
    }
    out += "unknown_";
    append_signed(out, trigger);
}

int
trigger_from_name(int operation, const std::string& name)
{
    trigger_table t = triggers_of(operation);
    for(int i = 0; i < t.count; ++i)
        if(name == t.names[i]) return i;
    if(name.rfind("unknown_", 0) == 0) return std::atoi(name.c_str() + 8);
    return -1;
}
} // namespace rocprof_kfd
