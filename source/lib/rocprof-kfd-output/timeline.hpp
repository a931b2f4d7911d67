// MIT License - see LICENSE.
//
// The summary's timeline: at most 512 bins of bin_ns each from start_ns (a multiple of
// bin_ns). When a record falls outside, the bins grow to cover it; past 512 bins adjacent
// bins are merged and bin_ns doubles. Series: migrated bytes per (from, to) direction
// (spread over the bins a migration spans, in proportion to the overlap) and read/write
// fault counts per GPU (in the bin of the fault's start).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace rocprof_kfd
{
class timeline
{
public:
    static constexpr size_t   max_bins       = 512;
    static constexpr uint64_t initial_bin_ns = 1024;

    // Nodes as node_keys (model.hpp): a GPU of one host.
    void add_migration(uint64_t from, uint64_t to, uint64_t start_ns, uint64_t end_ns,
                       uint64_t bytes);
    void add_fault(uint64_t gpu, bool read, uint64_t start_ns);

    uint64_t start_ns() const { return origin_; }
    uint64_t bin_ns() const { return bin_ns_; }
    size_t   bins() const { return used_; }

    using direction = std::pair<uint64_t, uint64_t>;
    const std::map<direction, std::vector<uint64_t>>& migration_bytes() const { return bytes_; }
    // GPU -> {read counts, write counts}
    const std::map<uint64_t, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>>&
    faults() const
    {
        return faults_;
    }

private:
    void   cover(uint64_t lo, uint64_t hi); // make [lo, hi] fall in the bins
    void   remap(uint64_t origin, uint64_t bin_ns, size_t used);
    size_t bin_of(uint64_t t) const { return static_cast<size_t>((t - origin_) / bin_ns_); }

    bool                                       empty_  = true;
    uint64_t                                   origin_ = 0;
    uint64_t                                   bin_ns_ = initial_bin_ns;
    size_t                                     used_   = 0;
    std::map<direction, std::vector<uint64_t>> bytes_;
    std::map<uint64_t, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> faults_;
    std::vector<uint64_t> scratch_; // remap's work space, reused
};
} // namespace rocprof_kfd
