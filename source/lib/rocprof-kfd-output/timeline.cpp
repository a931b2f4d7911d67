// MIT License - see LICENSE.
#include "timeline.hpp"

#include <algorithm>

namespace rocprof_kfd
{
namespace
{
void
remap_series(std::vector<uint64_t>& v, uint64_t old_origin, uint64_t old_bin, uint64_t new_origin,
             uint64_t new_bin, size_t new_used)
{
    std::vector<uint64_t> out(new_used, 0);
    for(size_t i = 0; i < v.size(); ++i)
    {
        if(v[i] == 0) continue;
        uint64_t t = old_origin + i * old_bin;
        out[static_cast<size_t>((t - new_origin) / new_bin)] += v[i];
    }
    v.swap(out);
}
} // namespace

void
timeline::remap(uint64_t origin, uint64_t bin_ns, size_t used)
{
    for(auto& [key, v] : bytes_)
        remap_series(v, origin_, bin_ns_, origin, bin_ns, used);
    for(auto& [key, rw] : faults_)
    {
        remap_series(rw.first, origin_, bin_ns_, origin, bin_ns, used);
        remap_series(rw.second, origin_, bin_ns_, origin, bin_ns, used);
    }
    origin_ = origin;
    bin_ns_ = bin_ns;
    used_   = used;
}

void
timeline::cover(uint64_t lo, uint64_t hi)
{
    if(empty_)
    {
        empty_  = false;
        origin_ = lo / bin_ns_ * bin_ns_;
        used_   = 1;
    }
    uint64_t bin  = bin_ns_;
    uint64_t low  = std::min(origin_, lo);
    uint64_t high = std::max(origin_ + used_ * bin_ns_ - 1, hi);
    for(;;)
    {
        uint64_t first = low / bin * bin;
        uint64_t n     = (high - first) / bin + 1;
        if(n <= max_bins)
        {
            if(first == origin_ && bin == bin_ns_)
                used_ = static_cast<size_t>(n); // growing to the right: series grow on use
            else
                remap(first, bin, static_cast<size_t>(n));
            return;
        }
        bin *= 2;
    }
}

void
timeline::add_migration(uint32_t from, uint32_t to, uint64_t start_ns, uint64_t end_ns,
                        uint64_t bytes)
{
    if(end_ns < start_ns) end_ns = start_ns;
    cover(start_ns, end_ns);
    auto& v = bytes_[{from, to}];
    v.resize(used_, 0);
    size_t first = bin_of(start_ns);
    size_t last  = bin_of(end_ns);
    if(first == last || end_ns == start_ns)
    {
        v[first] += bytes;
        return;
    }
    // Spread by overlap; the last bin takes the rounding remainder so the total is exact.
    uint64_t duration = end_ns - start_ns;
    uint64_t given    = 0;
    for(size_t b = first; b < last; ++b)
    {
        uint64_t bin_end = origin_ + (b + 1) * bin_ns_;
        uint64_t lo      = std::max(start_ns, origin_ + b * bin_ns_);
        auto share = static_cast<uint64_t>(static_cast<unsigned __int128>(bytes) * (bin_end - lo) /
                                           duration);
        v[b] += share;
        given += share;
    }
    v[last] += bytes - given;
}

void
timeline::add_fault(uint32_t gpu_id, bool read, uint64_t start_ns)
{
    cover(start_ns, start_ns);
    auto& rw = faults_[gpu_id];
    rw.first.resize(used_, 0);
    rw.second.resize(used_, 0);
    (read ? rw.first : rw.second)[bin_of(start_ns)] += 1;
}
} // namespace rocprof_kfd
