// MIT License - see LICENSE.
//
// A bounded heavy-hitter table (the space-saving algorithm of Metwally et al.): at most
// `capacity` keys, each with a weight (faults, bytes, migrations: whatever the table ranks
// by) and the counters of the address range it names. While no key was ever evicted every
// number is exact; after an eviction `approximate()` is true, a weight may overestimate by
// at most the weight of the evicted minimum, and the other counters count from the moment
// the key (re)entered the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

namespace rocprof_kfd
{
// A range (block index) and, for thrashing, an unordered pair of locations (a < b), of one
// process: addresses of two processes are different memory, even when equal. A process is
// its pid within one input (a system-wide run traces several); a merge numbers its inputs
// (0 outside a merge), as pids of two hosts may be equal.
struct range_key
{
    uint64_t block = 0;
    uint32_t a     = 0;
    uint32_t b     = 0;
    uint32_t pid   = 0;
    uint32_t input = 0;
    bool     operator<(const range_key& o) const
    {
        return std::tie(block, a, b, pid, input) < std::tie(o.block, o.a, o.b, o.pid, o.input);
    }
};

struct range_counters
{
    uint64_t faults     = 0;
    uint64_t migrations = 0;
    uint64_t htod_bytes = 0;
    uint64_t dtoh_bytes = 0;
    uint64_t dtod_bytes = 0;
    uint64_t bytes      = 0; // thrashing: bytes moved between the pair
    uint32_t directions = 0; // thrashing: bit 0 a->b seen, bit 1 b->a seen
};

struct heavy_entry
{
    range_key      key;
    uint64_t       weight = 0;
    range_counters counters;
};

class heavy_hitters
{
public:
    explicit heavy_hitters(size_t capacity) : capacity_(capacity) {}

    // Adds weight to key and returns its counters to update (inserting, and evicting the
    // lightest key when full). The reference is valid until the next call.
    range_counters& add(const range_key& key, uint64_t weight);

    bool   approximate() const { return evicted_; }
    size_t size() const { return entries_.size(); }
    // The n heaviest entries, weight descending then key ascending.
    std::vector<heavy_entry> top(size_t n) const;
    // Every entry, in key order.
    std::vector<heavy_entry> all() const;

private:
    struct slot
    {
        uint64_t       weight = 0;
        range_counters counters;
    };
    struct stored
    {
        range_key key;
        slot      value;
    };
    // (weight, key) of every entry, lightest first (a min-heap), each with the weight it
    // had when pushed: weights only grow, so an entry's pushed weight is at most its weight
    // now. Eviction pops until the top is up to date, pushing stale ones back with their
    // weight now: it then is the lightest entry (ties: the smallest key), exactly as a
    // fully ordered index would find it, without re-ordering on every add.
    using heap_item = std::pair<uint64_t, range_key>;
    uint64_t                 evict_lightest(); // returns its weight
    std::vector<heavy_entry> unordered_entries() const;

    // The entries: a dense array, and an index over it with open addressing (linear
    // probing, backward-shift deletion; a power of two at least twice the entries, grown
    // as they come): no heap node per key, one hash per lookup, 4 bytes per index cell.
    static constexpr uint32_t empty_cell = UINT32_MAX;
    size_t                    cell_of(const range_key& key) const; // its cell or an empty one
    stored*                   find(const range_key& key);
    stored&                   insert(const range_key& key, uint64_t weight);
    void                      erase(const range_key& key);
    void                      rebuild_index(size_t cells);

    size_t                 capacity_;
    std::vector<stored>    entries_;
    std::vector<uint32_t>  index_; // entries_ position, or empty_cell
    std::vector<heap_item> heap_;
    bool                   evicted_ = false;
};
} // namespace rocprof_kfd
