// MIT License - see LICENSE.
//
// The summary aggregator: every record goes through add(); memory stays bounded whatever
// the number of records (fixed-size histograms, heavy-hitter tables of fixed capacity, a
// timeline of at most 512 bins, at most 1000 suspension intervals per GPU, maps keyed by
// operation/trigger and by GPU). summary_json() and summary_text() render it
// (docs/rocprof-kfd-design.md has the schema).
#pragma once

#include "heavy_hitters.hpp"
#include "histogram.hpp"
#include "model.hpp"
#include "timeline.hpp"

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rocprof_kfd
{
inline constexpr uint64_t range_bytes           = 2 * 1024 * 1024; // SVM granularity
inline constexpr size_t   top_ranges            = 10;
inline constexpr size_t   max_thrashing_ranges  = 10;
inline constexpr size_t   max_intervals_per_gpu = 1000;
inline constexpr size_t   range_table_capacity  = 4096;

struct operation_stats
{
    uint64_t             count    = 0;
    uint64_t             total_ns = 0;
    log_linear_histogram durations;
};

struct direction_stats
{
    uint64_t count    = 0;
    uint64_t bytes    = 0;
    uint64_t total_ns = 0;
};

struct fault_stats
{
    uint64_t read_migrated  = 0;
    uint64_t read_updated   = 0;
    uint64_t write_migrated = 0;
    uint64_t write_updated  = 0;
};

struct suspend_stats
{
    uint64_t                                   count    = 0;
    uint64_t                                   total_ns = 0;
    std::vector<std::pair<uint64_t, uint64_t>> intervals;
    bool                                       intervals_merged = false;
};

struct thrashing_range
{
    uint64_t start      = 0;
    uint64_t end        = 0; // inclusive
    uint32_t a          = 0;
    uint32_t b          = 0;
    uint64_t migrations = 0;
    uint64_t bytes      = 0;
    uint32_t pid        = 0;
    uint32_t host       = 0; // a and b are this host's nodes (node_key)
};

class summary_builder
{
public:
    explicit summary_builder(uint64_t thrashing_threshold = 4,
                             size_t   table_capacity      = range_table_capacity);

    // input: in a merge, the number of the input the record comes from (pids of two inputs
    // may be equal); 0 otherwise. An address range is of one (input, pid). host: in a merge
    // of several hosts, the number of the record's host (node_key); its nodes are its own.
    void add(const record& r, uint32_t input = 0, uint32_t host = 0);

    uint64_t records() const { return records_; }
    uint64_t first_ns() const { return first_ns_; }
    uint64_t last_ns() const { return last_ns_; }
    uint64_t thrashing_threshold() const { return threshold_; }

    // (operation, trigger) -> stats, in that order.
    const std::map<std::pair<int, int>, operation_stats>& operations() const { return ops_; }
    // Per operation (index 1..4): all triggers together.
    const log_linear_histogram& durations(int operation) const { return op_durations_[operation]; }
    const log2_histogram&       log2_durations(int operation) const { return op_log2_[operation]; }
    // Keyed by node_key (model.hpp): (from, to) and GPU.
    const std::map<std::pair<uint64_t, uint64_t>, direction_stats>& directions() const
    {
        return directions_;
    }
    const std::map<uint64_t, fault_stats>&   faults() const { return faults_; }
    const std::map<uint64_t, suspend_stats>& suspensions() const { return suspends_; }
    const timeline&                          bins() const { return timeline_; }

    std::vector<heavy_entry>     top_by_faults() const;
    std::vector<heavy_entry>     top_by_bytes() const;
    bool                         top_ranges_approximate() const;
    std::vector<thrashing_range> thrashing() const;       // the max_thrashing_ranges heaviest
    uint64_t                     thrashing_count() const; // all of them
    bool                         thrashing_approximate() const { return thrash_.approximate(); }

private:
    void add_migration(const record& r, uint32_t input, uint32_t host);
    void add_suspension(uint64_t gpu, uint64_t start, uint64_t end);

    uint64_t threshold_;
    uint64_t records_  = 0;
    uint64_t first_ns_ = UINT64_MAX;
    uint64_t last_ns_  = 0;

    std::map<std::pair<int, int>, operation_stats>           ops_;
    std::array<log_linear_histogram, 5>                      op_durations_;
    std::array<log2_histogram, 5>                            op_log2_;
    std::map<std::pair<uint64_t, uint64_t>, direction_stats> directions_;
    std::map<uint64_t, fault_stats>                          faults_;
    std::map<uint64_t, suspend_stats>                        suspends_;
    heavy_hitters                                            by_faults_;
    heavy_hitters                                            by_bytes_;
    heavy_hitters                                            thrash_;
    std::vector<uint32_t> host_of_input_; // a merge's input -> its host (thrashing rows)
    timeline              timeline_;
};

// Halves a list of suspension intervals: sorted, then each pair of neighbours becomes one
// interval from the first's start to the later end of the two (an odd last one stays).
// In place: the list's storage is kept.
void merge_neighbour_intervals(std::vector<std::pair<uint64_t, uint64_t>>& intervals);

// summary.json (schema "rocprof-kfd-summary", version 1). complete = false for the
// placeholder written at start and for summaries rebuilt by --repair.
std::string summary_json(const run_info& run, const summary_builder& s, bool complete);
// The "metadata" object and the "agents" array of summary.json and results.json.
// end_known = false (results.json, whose metadata is written as the run starts): end_ns and
// wall_ns are null, the document's tail gives them.
std::string metadata_json(const run_info& run, const summary_builder& s, bool end_known = true);
// Each agent names its host when there are several (run_info::hosts).
std::string agents_json(const std::vector<agent_info>&  agents,
                        const std::vector<std::string>& hosts);
// The "loss" object of summary.json and results.json.
std::string loss_json(const loss_info& loss);
// summary.txt and the summary printed on stderr.
std::string summary_text(const run_info& run, const summary_builder& s);
// The run's wall time: end - start, or the records' span when the end is unknown.
uint64_t wall_ns(const run_info& run, const summary_builder& s);
// What shares of time (a GPU's queue suspensions) are of: the wall time; for an emulated
// replay the time its records span (a replay is faster than the run the log came from, and
// its records keep the log's spacing or even its timestamps: their share of the replay's wall
// time could exceed 100%).
uint64_t share_base_ns(const run_info& run, const summary_builder& s);
} // namespace rocprof_kfd
