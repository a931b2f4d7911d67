// MIT License - see LICENSE.
// The contents of one summary.json (schema "rocprof-kfd-summary" version 1, described in
// docs/rocprof-kfd-design.md) as plain data, and the pure function that reads it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rocprof_kfd_report
{
// Thrown by parse_summary for text that is not a valid version-1 summary; what() says which
// field is wrong (the caller adds the file name).
struct InputError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

struct Metadata
{
    std::vector<std::string>   command;
    int64_t                    pid  = 0;
    int64_t                    ppid = 0;
    std::string                hostname;
    std::optional<std::string> rank;
    std::string                sdk_version;
    std::string                kernel_release;
    std::optional<std::string> kfd_version;
    bool                       emulated = false;
    uint64_t                   start_ns = 0;
    uint64_t                   end_ns   = 0;
    uint64_t                   wall_ns  = 0;
    std::optional<std::string> run_id;            // none in summaries written before it
    std::optional<uint64_t>    boot_time_unix_ns; // likewise
};

struct Agent
{
    uint64_t    gpu_id  = 0;
    uint64_t    node_id = 0;
    std::string name;
    std::string type;
};

struct Loss
{
    std::vector<std::pair<std::string, uint64_t>> counters; // in the file's order
    // Other true/false members (the tool writes "available": false when the SDK's loss
    // extension could not be read).
    std::vector<std::pair<std::string, bool>> flags;
    bool                                      lost          = false;
    bool                                      probably_lost = false;
    std::string                               message;
};

struct OperationStats
{
    std::string operation;
    std::string trigger;
    uint64_t count = 0, total_ns = 0, mean_ns = 0, min_ns = 0, p50_ns = 0, p99_ns = 0, max_ns = 0;
};

struct Direction
{
    uint64_t    from_node = 0, to_node = 0;
    std::string from_name, to_name;
    uint64_t    count = 0, bytes = 0, total_ns = 0;
    double      gb_per_s = 0;
};

struct GpuFaults
{
    uint64_t    gpu_id = 0;
    std::string name;
    uint64_t    read_migrated = 0, read_updated = 0, write_migrated = 0, write_updated = 0;
};

struct GpuQueueSuspend
{
    uint64_t    gpu_id = 0;
    std::string name;
    uint64_t    count = 0, total_ns = 0;
    double      share_of_wall = 0;
};

// pid: the process whose address space the range is in; has_pid false in summaries written
// before 2026-12-07, which had none.
struct AddressRange
{
    uint64_t start = 0, end = 0;
    uint64_t faults = 0, migrations = 0, htod_bytes = 0, dtoh_bytes = 0, dtod_bytes = 0;
    uint64_t pid     = 0;
    bool     has_pid = false;
};

struct ThrashingRange
{
    uint64_t start = 0, end = 0;
    uint64_t between[2] = {0, 0};
    uint64_t migrations = 0, bytes = 0;
    uint64_t pid     = 0;
    bool     has_pid = false;
};

struct MigrationSeries
{
    uint64_t            from_node = 0, to_node = 0;
    std::vector<double> values; // bytes per bin
};

struct FaultSeries
{
    uint64_t            gpu_id = 0;
    std::vector<double> read, write; // faults per bin
};

struct Timeline
{
    uint64_t                     start_ns = 0, bin_ns = 0, bins = 0;
    std::vector<MigrationSeries> migration_bytes;
    std::vector<FaultSeries>     faults;
};

struct Histogram
{
    std::vector<uint64_t> bucket_upper_ns;
    std::vector<uint64_t> counts;
    uint64_t              p50_ns = 0, p99_ns = 0;
};

struct QueueIntervals
{
    uint64_t                                   gpu_id = 0;
    std::vector<std::pair<uint64_t, uint64_t>> intervals; // [start_ns, end_ns]
    bool                                       intervals_merged = false;
};

// One process a merged summary (rocprof-kfd-merge) was made from.
struct MergedInput
{
    std::string                directory;
    std::string                hostname;
    std::optional<std::string> rank;
    int64_t                    pid      = 0;
    uint64_t                   records  = 0;
    bool                       complete = true;
};

struct Summary
{
    bool                             complete = true; // false: written before the run ended
    Metadata                         metadata;
    std::vector<MergedInput>         inputs; // non-empty for a merged summary
    std::vector<Agent>               agents;
    Loss                             loss;
    std::vector<OperationStats>      operations;
    std::vector<Direction>           migrations_by_direction;
    std::vector<GpuFaults>           faults_by_gpu;
    std::vector<GpuQueueSuspend>     queue_suspend_by_gpu;
    uint64_t                         range_bytes = 0;
    std::vector<AddressRange>        top_ranges_by_faults;
    std::vector<AddressRange>        top_ranges_by_bytes;
    bool                             top_ranges_approximate = false;
    uint64_t                         thrashing_threshold    = 0;
    bool                             thrashing_approximate  = false;
    std::vector<ThrashingRange>      thrashing;           // the heaviest (at most 10)
    uint64_t                         thrashing_count = 0; // all (older summaries: the rows)
    Timeline                         timeline;
    std::map<std::string, Histogram> histograms; // "page_fault", "page_migrate", ...
    std::vector<QueueIntervals>      queue_suspensions;
    // A merged summary of several hosts names each GPU's host: its GPUs (and nodes) are keyed
    // gpu_id | host number << 32, the hosts numbered from 1 here (hosts[0] is "": none named).
    // Equal gpu_ids of two hosts are two GPUs.
    std::vector<std::string> hosts{std::string{}};
};

// A node key's gpu_id (0: the CPU), and its host ("" when none is named).
inline uint64_t
gpu_id_of(uint64_t key)
{
    return key & 0xffffffffu;
}
inline const std::string&
host_of(const Summary& s, uint64_t key)
{
    const uint64_t number = key >> 32;
    return number < s.hosts.size() ? s.hosts[number] : s.hosts[0];
}

// What queue_suspend_by_gpu's share_of_wall is a share of: the wall time, or for an emulated
// replay the time its records span (summary_json.cpp, share_base_ns).
inline const char*
share_base(const Summary& s)
{
    return s.metadata.emulated ? "the records' time span" : "wall time";
}

// Reads one summary.json document. Throws InputError for invalid JSON, another schema or
// version, or a field of the wrong type or shape. Sections that are absent read as empty
// (a tool run with some event kinds disabled may leave them out).
Summary parse_summary(const std::string& text);

// "0x7f0000" -> 0x7f0000; throws InputError naming `field` otherwise.
uint64_t parse_address(const std::string& text, const std::string& field);
} // namespace rocprof_kfd_report
