// MIT License - see LICENSE.
//
// The process-wide agent list: every CPU and GPU node of the KFD topology, read once.
#pragma once

#include <rocprofiler-sdk/agent.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rocprofiler::agent
{
// Name of the environment variable that redirects the topology root (containers, tests).
constexpr char topology_root_env[] = "ROCPROFILER_KFD_TOPOLOGY_ROOT";

// $ROCPROFILER_KFD_TOPOLOGY_ROOT when set and not empty, else /sys/class/kfd/kfd/topology.
std::string topology_root();

// Every CPU and GPU agent, in node order, read once (lazily, thread-safe) from
// topology_root(). The pointers stay valid until process exit: the list is small, read
// once and never freed, so that finalization code running at exit can still use it.
const std::vector<const rocprofiler_agent_v0_t*>& get_agents();

// gpu_id of every GPU agent, in node order.
std::vector<uint64_t> get_gpu_ids();

// The agent with this KFD gpu_id, or nullptr.
const rocprofiler_agent_v0_t* find_gpu(uint64_t gpu_id);
} // namespace rocprofiler::agent
