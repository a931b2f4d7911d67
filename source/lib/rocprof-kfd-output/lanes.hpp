// MIT License - see LICENSE.
//
// Lanes of a timeline track: slices on one track must nest, but two page faults or
// migrations of one GPU may overlap. A record goes to the first lane of its (process, GPU,
// operation) whose slices all end before it starts; at most max_lanes lanes per group (past
// that, the lane that frees first is reused and its slices may overlap).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace rocprof_kfd
{
class lane_allocator
{
public:
    static constexpr size_t max_lanes = 16;
    using group                       = std::tuple<uint32_t, uint32_t, int>; // process, gpu, op

    // The lane (0-based) for a slice [start, end] of the group.
    size_t   assign(const group& g, uint64_t start, uint64_t end);
    uint64_t overlaps() const { return overlaps_; }

private:
    // Each lane: the intervals it holds are disjoint; we keep the latest end and the
    // earliest start so an arrival before everything on the lane also fits.
    struct lane
    {
        uint64_t first_start = 0;
        uint64_t last_end    = 0;
    };
    std::map<group, std::vector<lane>> lanes_;
    uint64_t                           overlaps_ = 0;
};
} // namespace rocprof_kfd
