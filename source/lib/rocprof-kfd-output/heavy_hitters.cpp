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
} // namespace

uint64_t
heavy_hitters::evict_lightest()
{
    for(;;)
    {
        std::pop_heap(heap_.begin(), heap_.end(), heavier);
        auto top = heap_.back();
        heap_.pop_back();
        auto it = entries_.find(top.second);
        if(it == entries_.end()) continue; // cannot happen: one heap item per entry
        if(it->second.weight == top.first)
        {
            entries_.erase(it);
            return top.first;
        }
        heap_.emplace_back(it->second.weight, top.second); // stale: back with its weight now
        std::push_heap(heap_.begin(), heap_.end(), heavier);
    }
}

range_counters&
heavy_hitters::add(const range_key& key, uint64_t weight)
{
    auto it = entries_.find(key);
    if(it == entries_.end())
    {
        uint64_t base = 0;
        if(entries_.size() >= capacity_ && !heap_.empty())
        {
            // Space-saving: the newcomer replaces the lightest key and inherits its weight.
            base     = evict_lightest();
            evicted_ = true;
        }
        it = entries_.emplace(key, slot{base, {}}).first;
        heap_.emplace_back(base, key);
        std::push_heap(heap_.begin(), heap_.end(), heavier);
    }
    it->second.weight += weight;
    return it->second.counters;
}

std::vector<heavy_entry>
heavy_hitters::unordered_entries() const
{
    std::vector<heavy_entry> out;
    out.reserve(entries_.size());
    for(const auto& [key, s] : entries_)
        out.push_back({key, s.weight, s.counters});
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
