// MIT License - see LICENSE.
//
// Lanes of a timeline track: slices on one track must nest, but two page faults or
// migrations of one GPU may overlap. A record goes to the first lane of its (process, GPU,
// operation) whose slices all end before it starts; at most max_lanes lanes per group (past
// that, the lane that frees first is reused and its slices may overlap).
//
// max_lanes is 256, not 16 as it was: every CPU thread touching managed memory that lives on
// a GPU migrates it back on its own CPU fault (svm_migrate_to_ram runs in the faulting
// thread), so an OpenMP program on a node of 64-192 cores can have that many migrations of
// one GPU in flight at once.
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
    static constexpr size_t max_lanes = 256;
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
