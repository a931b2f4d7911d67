// MIT License - see LICENSE.
//
// Duration histograms of bounded size.
//
// log_linear_histogram: values below 64 ns are counted exactly; above, each power of two is
// split into 64 equal sub-buckets, so a quantile is reported within 1/64 (1.6 %) of the
// true nearest-rank value (the midpoint of its bucket, clamped to [min, max]: at most 1/128
// off). 3776 counters, allocated at the first value.
//
// log2 buckets (summary.json "histograms"): bucket i holds (2^(i-1), 2^i] ns, bucket 0 holds
// 0 and 1.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rocprof_kfd
{
class log_linear_histogram
{
public:
    static constexpr int      sub_bits      = 6;
    static constexpr uint64_t sub_count     = uint64_t{1} << sub_bits;
    static constexpr size_t   bucket_count  = sub_count + (64 - sub_bits) * sub_count;
    static constexpr double   rel_precision = 1.0 / sub_count;

    void add(uint64_t value);
    // Adds every count of another histogram.
    void merge(const log_linear_histogram& other);

    uint64_t count() const { return count_; }
    uint64_t min() const { return count_ ? min_ : 0; }
    uint64_t max() const { return max_; }
    // Nearest-rank quantile (q in (0, 1]): the value of rank ceil(q * count), approximated.
    uint64_t quantile(double q) const;

    static size_t   index_of(uint64_t value);
    static uint64_t lower_bound_of(size_t index);
    static uint64_t upper_bound_of(size_t index); // inclusive

private:
    std::vector<uint64_t> counts_;
    uint64_t              count_ = 0;
    uint64_t              min_   = UINT64_MAX;
    uint64_t              max_   = 0;
};

struct log2_histogram
{
    std::array<uint64_t, 65> counts = {};
    void                     add(uint64_t value) { counts[index_of(value)] += 1; }
    static size_t            index_of(uint64_t value);
    // Inclusive upper bound of bucket i: 2^i (UINT64_MAX for i = 64).
    static uint64_t upper_bound_of(size_t index);
    // Number of buckets up to the last non-empty one.
    size_t used() const;
};
} // namespace rocprof_kfd
