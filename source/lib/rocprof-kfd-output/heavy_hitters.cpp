// MIT License - see LICENSE.
#include "heavy_hitters.hpp"

#include <algorithm>
#include <utility>

namespace rocprof_kfd
{
namespace
{
// std::push_heap/pop_heap build a max-heap: "greater" puts the lightest on top.
bool
heavier(const std::pair<uint64_t, range_key>& x, const std::pair<uint64_t, range_key>& y)
{
    if(x.first != y.first) return x.first > y.first;
    return y.second < x.second;
}

size_t
hash_of(const range_key& k)
{
    uint64_t h = k.block * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t{k.a} << 32 | k.b) * 0xc2b2ae3d27d4eb4full;
    h ^= (uint64_t{k.pid} << 32 | k.input) * 0x165667b19e3779f9ull;
    return static_cast<size_t>(h ^ (h >> 29));
}

bool
same_key(const range_key& x, const range_key& y)
{
    return x.block == y.block && x.a == y.a && x.b == y.b && x.pid == y.pid && x.input == y.input;
}
} // namespace

size_t
heavy_hitters::cell_of(const range_key& key) const
{
    size_t mask = index_.size() - 1;
    for(size_t c = hash_of(key) & mask;; c = (c + 1) & mask)
        if(index_[c] == empty_cell || same_key(entries_[index_[c]].key, key)) return c;
}

heavy_hitters::stored*
heavy_hitters::find(const range_key& key)
{
    if(index_.empty()) return nullptr;
    uint32_t at = index_[cell_of(key)];
    return at == empty_cell ? nullptr : &entries_[at];
}

void
heavy_hitters::rebuild_index(size_t cells)
{
    index_.assign(cells, empty_cell);
    for(size_t i = 0; i < entries_.size(); ++i)
        index_[cell_of(entries_[i].key)] = static_cast<uint32_t>(i);
}

heavy_hitters::stored&
heavy_hitters::insert(const range_key& key, uint64_t weight)
{
    if(2 * (entries_.size() + 1) > index_.size())
        rebuild_index(std::max<size_t>(16, 2 * index_.size()));
    entries_.push_back({key, slot{weight, {}}});
    index_[cell_of(key)] = static_cast<uint32_t>(entries_.size() - 1);
    return entries_.back();
}

void
heavy_hitters::erase(const range_key& key)
{
    size_t   mask = index_.size() - 1;
    size_t   hole = cell_of(key);
    uint32_t at   = index_[hole];
    if(at == empty_cell) return;
    // Backward shift: later cells of the probe run that may move into the hole do.
    for(size_t c = (hole + 1) & mask; index_[c] != empty_cell; c = (c + 1) & mask)
    {
        size_t home = hash_of(entries_[index_[c]].key) & mask;
        // c's entry may fill the hole when its home is not in (hole, c] (cyclically).
        if(((c - home) & mask) >= ((c - hole) & mask))
        {
            index_[hole] = index_[c];
            hole         = c;
        }
    }
    index_[hole] = empty_cell;
    // The dense array stays dense: its last entry moves into the freed position.
    size_t last = entries_.size() - 1;
    if(at != last)
    {
        index_[cell_of(entries_[last].key)] = at;
        entries_[at]                        = entries_[last];
    }
    entries_.pop_back();
}

uint64_t
heavy_hitters::evict_lightest()
{
    for(;;)
    {
        std::pop_heap(heap_.begin(), heap_.end(), heavier);
        auto top = heap_.back();
        heap_.pop_back();
        stored* e = find(top.second);
        if(!e) continue; // cannot happen: one heap item per entry
        if(e->value.weight == top.first)
        {
            erase(top.second);
            return top.first;
        }
        heap_.emplace_back(e->value.weight, top.second); // stale: back with its weight now
        std::push_heap(heap_.begin(), heap_.end(), heavier);
    }
}

range_counters&
heavy_hitters::add(const range_key& key, uint64_t weight)
{
    stored* e = find(key);
    if(!e)
    {
        uint64_t base = 0;
        if(entries_.size() >= capacity_ && !heap_.empty())
        {
            // Space-saving: the newcomer replaces the lightest key and inherits its weight.
            base     = evict_lightest();
            evicted_ = true;
        }
        e = &insert(key, base);
        heap_.emplace_back(base, key);
        std::push_heap(heap_.begin(), heap_.end(), heavier);
    }
    e->value.weight += weight;
    return e->value.counters;
}

std::vector<heavy_entry>
heavy_hitters::unordered_entries() const
{
    std::vector<heavy_entry> out;
    out.reserve(entries_.size());
    for(const auto& e : entries_)
        out.push_back({e.key, e.value.weight, e.value.counters});
    return out;
}

std::vector<heavy_entry>
heavy_hitters::all() const
{
    // In key order, as callers (and the outputs they write) always got them.
    auto out = unordered_entries();
    std::sort(out.begin(), out.end(),
              [](const heavy_entry& x, const heavy_entry& y) { return x.key < y.key; });
    return out;
}

std::vector<heavy_entry>
heavy_hitters::top(size_t n) const
{
    auto out = unordered_entries();
    std::sort(out.begin(), out.end(),
              [](const heavy_entry& x, const heavy_entry& y)
              {
                  if(x.weight != y.weight) return x.weight > y.weight;
                  return x.key < y.key;
              });
    if(out.size() > n) out.resize(n);
    return out;
}
} // namespace rocprof_kfd
