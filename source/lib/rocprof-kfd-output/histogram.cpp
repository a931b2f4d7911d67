// MIT License - see LICENSE.
#include "histogram.hpp"

#include <cmath>

namespace rocprof_kfd
{
namespace
{
int
log2_floor(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}
} // namespace

size_t
log_linear_histogram::index_of(uint64_t value)
{
    if(value < sub_count) return static_cast<size_t>(value);
    int      e   = log2_floor(value); // >= sub_bits
    uint64_t sub = (value >> (e - sub_bits)) & (sub_count - 1);
    return static_cast<size_t>(sub_count + static_cast<uint64_t>(e - sub_bits) * sub_count + sub);
}

uint64_t
log_linear_histogram::lower_bound_of(size_t index)
{
    if(index < sub_count) return index;
    uint64_t e   = (index - sub_count) / sub_count + sub_bits;
    uint64_t sub = (index - sub_count) % sub_count;
    return (uint64_t{1} << e) + (sub << (e - sub_bits));
}

uint64_t
log_linear_histogram::upper_bound_of(size_t index)
{
    if(index < sub_count) return index;
    uint64_t e = (index - sub_count) / sub_count + sub_bits;
    return lower_bound_of(index) + ((uint64_t{1} << (e - sub_bits)) - 1);
}

void
log_linear_histogram::add(uint64_t value)
{
    if(counts_.empty()) counts_.assign(bucket_count, 0);
    counts_[index_of(value)] += 1;
    count_ += 1;
    if(value < min_) min_ = value;
    if(value > max_) max_ = value;
}

void
log_linear_histogram::merge(const log_linear_histogram& other)
{
    if(other.count_ == 0) return;
    if(counts_.empty()) counts_.assign(bucket_count, 0);
    for(size_t i = 0; i < bucket_count; ++i)
        counts_[i] += other.counts_[i];
    count_ += other.count_;
    if(other.min_ < min_) min_ = other.min_;
    if(other.max_ > max_) max_ = other.max_;
}

uint64_t
log_linear_histogram::quantile(double q) const
{
    if(count_ == 0) return 0;
    auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
    if(rank < 1) rank = 1;
    if(rank > count_) rank = count_;
    uint64_t seen = 0;
    for(size_t i = 0; i < bucket_count; ++i)
    {
        seen += counts_[i];
        if(seen < rank) continue;
        uint64_t lo  = lower_bound_of(i);
        uint64_t mid = lo + (upper_bound_of(i) - lo) / 2;
        if(mid < min_) mid = min_;
        if(mid > max_) mid = max_;
        return mid;
    }
    return max_;
}

size_t
log2_histogram::index_of(uint64_t value)
{
    if(value <= 1) return 0;
    return static_cast<size_t>(64 - __builtin_clzll(value - 1));
}

uint64_t
log2_histogram::upper_bound_of(size_t index)
{
    return index >= 64 ? UINT64_MAX : uint64_t{1} << index;
}

size_t
log2_histogram::used() const
{
    size_t n = 0;
    for(size_t i = 0; i < counts.size(); ++i)
        if(counts[i]) n = i + 1;
    return n;
}
} // namespace rocprof_kfd
