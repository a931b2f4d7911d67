// MIT License - see LICENSE.
#include "heavy_hitters.hpp"

#include <algorithm>

namespace rocprof_kfd
{
range_counters&
heavy_hitters::add(const range_key& key, uint64_t weight)
{
    auto it = entries_.find(key);
    if(it == entries_.end())
    {
        uint64_t base = 0;
        if(entries_.size() >= capacity_)
        {
            // Space-saving: the newcomer replaces the lightest key and inherits its weight.
            auto lightest = by_weight_.begin();
            base          = lightest->first;
            entries_.erase(lightest->second);
            by_weight_.erase(lightest);
            evicted_ = true;
        }
        it = entries_.emplace(key, slot{base, {}}).first;
        by_weight_.emplace(base, key);
    }
    if(weight != 0)
    {
        by_weight_.erase({it->second.weight, key});
        it->second.weight += weight;
        by_weight_.emplace(it->second.weight, key);
    }
    return it->second.counters;
}

std::vector<heavy_entry>
heavy_hitters::all() const
{
    std::vector<heavy_entry> out;
    out.reserve(entries_.size());
    for(const auto& [key, s] : entries_)
        out.push_back({key, s.weight, s.counters});
    return out;
}

std::vector<heavy_entry>
heavy_hitters::top(size_t n) const
{
    std::vector<heavy_entry> out = all();
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
