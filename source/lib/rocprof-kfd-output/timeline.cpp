// MIT License - see LICENSE.
#include "timeline.hpp"

#include <algorithm>

namespace rocprof_kfd
{
namespace
{
// Into scratch, then back into v: both hold max_bins already (v from its first use, scratch
// from the first remap), so a remap allocates nothing however often the bins coarsen.
void
remap_series(std::vector<uint64_t>& v, std::vector<uint64_t>& scratch, uint64_t old_origin,
             uint64_t old_bin, uint64_t new_origin, uint64_t new_bin, size_t new_used)
{
    scratch.assign(new_used, 0);
    for(size_t i = 0; i < v.size(); ++i)
    {
        if(v[i] == 0) continue;
        uint64_t t = old_origin + i * old_bin;
        scratch[static_cast<size_t>((t - new_origin) / new_bin)] += v[i];
    }
    v.assign(scratch.begin(), scratch.end());
}

// A series' storage for the most bins there can be, taken at its first use.
void
grow_series(std::vector<uint64_t>& v, size_t used)
{
    if(v.capacity() < timeline::max_bins) v.reserve(timeline::max_bins);
    v.resize(used, 0);
}
} // namespace

void
timeline::remap(uint64_t origin, uint64_t bin_ns, size_t used)
{
    scratch_.reserve(max_bins);
    for(auto& [key, v] : bytes_)
        remap_series(v, scratch_, origin_, bin_ns_, origin, bin_ns, used);
    for(auto& [key, rw] : faults_)
    {
        remap_series(rw.first, scratch_, origin_, bin_ns_, origin, bin_ns, used);
        remap_series(rw.second, scratch_, origin_, bin_ns_, origin, bin_ns, used);
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
timeline::add_migration(uint64_t from, uint64_t to, uint64_t start_ns, uint64_t end_ns,
                        uint64_t bytes)
{
    if(end_ns < start_ns) end_ns = start_ns;
    cover(start_ns, end_ns);
    auto& v = bytes_[{from, to}];
    grow_series(v, used_);
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
timeline::add_fault(uint64_t gpu, bool read, uint64_t start_ns)
{
    cover(start_ns, start_ns);
    auto& rw = faults_[gpu];
    grow_series(rw.first, used_);
    grow_series(rw.second, used_);
    (read ? rw.first : rw.second)[bin_of(start_ns)] += 1;
}
} // namespace rocprof_kfd
