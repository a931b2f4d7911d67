// MIT License - see LICENSE.
#include "lanes.hpp"

namespace rocprof_kfd
{
size_t
lane_allocator::assign(const group& g, uint64_t start, uint64_t end)
{
    auto& v = lanes_[g];
    for(size_t i = 0; i < v.size(); ++i)
    {
        if(start >= v[i].last_end)
        {
            v[i].last_end = end;
            return i;
        }
        if(end <= v[i].first_start)
        {
            v[i].first_start = start;
            return i;
        }
    }
    if(v.size() < max_lanes)
    {
        v.push_back({start, end});
        return v.size() - 1;
    }
    overlaps_ += 1;
    size_t best = 0;
    for(size_t i = 1; i < v.size(); ++i)
        if(v[i].last_end < v[best].last_end) best = i;
    if(end > v[best].last_end) v[best].last_end = end;
    return best;
}
} // namespace rocprof_kfd
