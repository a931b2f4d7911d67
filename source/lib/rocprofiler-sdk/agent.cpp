// MIT License - see LICENSE.
//
// The agent list and rocprofiler_query_available_agents.
#include "rocprofiler-sdk/agent.hpp"
#include "rocprofiler-sdk/api_guard.hpp"
#include "rocprofiler-sdk/cancellation.hpp"
#include "rocprofiler-sdk/env.hpp"
#include "rocprofiler-sdk/topology.hpp"

#include <rocprofiler-sdk/agent.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace rocprofiler::agent
{
namespace
{
// Read once and never freed (see get_agents()).
struct agent_list
{
    topology::topology                         storage;
    std::vector<const rocprofiler_agent_v0_t*> agents;
    // What the C API hands to tools: the same pointers as `const void*`, followed by one
    // NULL entry so that the array is never empty (num_agents 0 still gets a valid array).
    std::vector<const void*> c_array;
};

const agent_list&
get_agent_list()
{
    static const agent_list* list = []
    {
        auto* created    = new agent_list{};
        created->storage = topology::read(topology_root());
        created->agents  = created->storage.agent_pointers();
        created->c_array.assign(created->agents.begin(), created->agents.end());
        created->c_array.push_back(nullptr);
        return created;
    }();
    return *list;
}
} // namespace

std::string
topology_root()
{
    const char* root = env::get(topology_root_env);
    if(root != nullptr && root[0] != '\0') return root;
    return topology::default_sysfs_root;
}

const std::vector<const rocprofiler_agent_v0_t*>&
get_agents()
{
    return get_agent_list().agents;
}

std::vector<uint64_t>
get_gpu_ids()
{
    auto ids = std::vector<uint64_t>{};
    for(const auto* agent : get_agents())
        if(agent->type == ROCPROFILER_AGENT_TYPE_GPU) ids.push_back(agent->gpu_id);
    return ids;
}

const rocprofiler_agent_v0_t*
find_gpu(uint64_t gpu_id)
{
    for(const auto* agent : get_agents())
        if(agent->type == ROCPROFILER_AGENT_TYPE_GPU && agent->gpu_id == gpu_id) return agent;
    return nullptr;
}
} // namespace rocprofiler::agent

// The callback gets the process-wide array: it stays valid until process exit, as the
// contract asks (valid until finalization). Tools must not write into it.
rocprofiler_status_t
rocprofiler_query_available_agents(rocprofiler_agent_version_t             version,
                                   rocprofiler_query_available_agents_cb_t callback,
                                   size_t agent_size, void* user_data)
{
    return rocprofiler::api_call(
        "rocprofiler_query_available_agents",
        [&](int callers_cancel_state)
        {
            if(callback == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
            // Checked as an integer: loading an out-of-range
            // value as the enum would be undefined.
            int32_t version_value = 0;
            std::memcpy(&version_value, &version, sizeof(version_value));
            if(version_value != ROCPROFILER_AGENT_INFO_VERSION_0)
                return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
            // A caller built against a smaller (older) struct reads a
            // prefix of ours: fine. A larger one would read past our
            // structs.
            if(agent_size > sizeof(rocprofiler_agent_v0_t))
                return ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI;

            const auto& list = rocprofiler::agent::get_agent_list();
            // The array type is `const void**` in the C API; the entries
            // are not ours to change.
            auto** agents = const_cast<const void**>(list.c_array.data());
            // The tool's code, as cancellable as its caller.
            const rocprofiler::cancellation::scoped_state as_caller{callers_cancel_state};
            return callback(version, agents, list.agents.size(), user_data);
        });
}
