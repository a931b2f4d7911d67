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
    uint32_t    host   = 0; // its host's number (node_key): in merges of several hosts
};

// A node (the CPU, 0, or a GPU's gpu_id) of one host. A merge of several hosts numbers them
// (run_info::hosts) and keeps equal gpu_ids of two hosts apart: nodes built alike often have
// equal gpu_ids (the kernel derives them from the PCI location and the device's properties),
// and one GPU's counts summed with another's, on another clock, are nobody's. Elsewhere the
// host is 0 and the key is the gpu_id itself.
using node_key = uint64_t;

constexpr node_key
make_node_key(uint32_t host, uint64_t node)
{
    return (uint64_t{host} << 32) | (node & 0xffffffffu);
}
constexpr uint32_t
node_of(node_key key)
{
    return static_cast<uint32_t>(key);
}
constexpr uint32_t
host_of(node_key key)
{
    return static_cast<uint32_t>(key >> 32);
}

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
    std::optional<uint64_t> boot_time_unix_ns;
    // The rocprof-kfd invocation the process ran under (ROCPROF_KFD_RUN_ID): tells a rerun's
    // outputs from an earlier run's left in the same folder. Absent without rocprof-kfd.
    std::optional<std::string> run_id;
    std::vector<agent_info>    agents;
    loss_info                  loss;
    std::vector<merged_input>  inputs; // merged summaries only
    // Merged summaries of several hosts: the hosts by number (node_key). Empty otherwise, and
    // then the outputs name no host per GPU.
    std::vector<std::string> hosts;
};

// The agent of this node (a gpu_id, or a node_key), or nullptr.
const agent_info* find_agent(const std::vector<agent_info>& agents, node_key node);
// "CPU" for node 0 without an agent, the agent's name, or "gpu_id <n>".
std::string agent_name(const std::vector<agent_info>& agents, node_key node);
} // namespace rocprof_kfd
