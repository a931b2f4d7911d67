// MIT License - see LICENSE.
//
// Plain data shared by the writers, the aggregator and the readers: the record (the SDK's
// public struct), the agents, the run's metadata and its loss accounting.
#pragma once

#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/ext/kfd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rocprof_kfd
{
using record = rocprofiler_buffer_tracing_page_migration_record_t;

struct agent_info
{
    uint64_t    gpu_id  = 0; // KFD gpu_id; 0 = system memory (the CPU)
    uint32_t    node_id = 0; // topology node
    std::string name;        // "CPU" or the gfx name
    bool        is_gpu = false;
};

struct loss_info
{
    bool                         valid        = false; // false: the counters could not be read
    rocprofiler_kfd_loss_stats_t stats        = {};
    uint64_t                     buffer_drops = 0; // drop counts the tool's callbacks saw
    // Records the tool's buffer handed to its callback that the callback could not take in (a
    // batch whose handling failed): the buffer's delivered count less the records taken in.
    uint64_t records_not_received = 0;
};

// One input of a merge (summary.json "inputs").
struct merged_input
{
    std::string                directory;
    std::string                hostname;
    std::optional<std::string> rank;
    uint32_t                   pid      = 0;
    uint64_t                   records  = 0;
    bool                       complete = false;
    std::string                stem; // "" for plain names, else the files' prefix before '_'
};

struct run_info
{
    std::vector<std::string>   command;
    uint32_t                   pid  = 0;
    uint32_t                   ppid = 0;
    std::string                hostname;
    std::optional<std::string> rank;
    std::string                sdk_version;
    std::string                kernel_release;
    std::optional<std::string> kfd_version;
    bool                       emulated = false;
    uint64_t                   start_ns = 0; // CLOCK_BOOTTIME
    uint64_t                   end_ns   = 0;
    // The Unix time (CLOCK_REALTIME) at which CLOCK_BOOTTIME was 0, read as the run started:
    // a timestamp plus this is its Unix time. It lets a merge put the records of several hosts,
    // each on its own boot clock, on one time axis. Absent in outputs written before it existed.
    std::optional<uint64_t>   boot_time_unix_ns;
    std::vector<agent_info>   agents;
    loss_info                 loss;
    std::vector<merged_input> inputs; // merged summaries only
};

// The agent with this gpu_id, or nullptr.
const agent_info* find_agent(const std::vector<agent_info>& agents, uint64_t gpu_id);
// "CPU" for gpu_id 0 without an agent, the agent's name, or "gpu_id <n>".
std::string agent_name(const std::vector<agent_info>& agents, uint64_t gpu_id);
} // namespace rocprof_kfd
