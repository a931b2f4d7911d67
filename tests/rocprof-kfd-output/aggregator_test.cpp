// MIT License - see LICENSE.
//
// The summary aggregator's bounded structures against exhaustive computations: quantiles
// within the documented precision, heavy hitters exact below capacity and flagged above,
// the timeline's conservation of bytes while it coarsens, suspension intervals bounded.
#include "oracle.hpp"

#include <rocprof-kfd-output/heavy_hitters.hpp>
#include <rocprof-kfd-output/histogram.hpp>
#include <rocprof-kfd-output/lanes.hpp>
#include <rocprof-kfd-output/summary.hpp>
#include <rocprof-kfd-output/timeline.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

using namespace rocprof_kfd;

TEST(histogram, quantiles_within_documented_precision)
{
    std::mt19937_64 rng(7);
    for(int trial = 0; trial < 20; ++trial)
    {
        log_linear_histogram                h;
        std::vector<uint64_t>               values;
        std::lognormal_distribution<double> dist(8.0 + trial * 0.5, 1.5);
        for(int i = 0; i < 5000; ++i)
        {
            auto v = static_cast<uint64_t>(dist(rng));
            h.add(v);
            values.push_back(v);
        }
        for(double q : {0.5, 0.99, 0.01, 1.0})
        {
            uint64_t exact = kfd_out_test::nearest_rank(values, q);
            uint64_t got   = h.quantile(q);
            EXPECT_LE(std::abs(static_cast<double>(got) - static_cast<double>(exact)),
                      static_cast<double>(exact) * log_linear_histogram::rel_precision + 1)
                << "q=" << q << " exact=" << exact << " got=" << got;
        }
        EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end()));
        EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end()));
    }
}

TEST(histogram, bucket_bounds_cover_every_value_once)
{
    for(uint64_t v : {0ull, 1ull, 63ull, 64ull, 65ull, 127ull, 128ull, 1000ull, 123456789ull,
                      (1ull << 63) + 5, ~0ull})
    {
        size_t i = log_linear_histogram::index_of(v);
        ASSERT_LT(i, log_linear_histogram::bucket_count);
        EXPECT_LE(log_linear_histogram::lower_bound_of(i), v);
        EXPECT_GE(log_linear_histogram::upper_bound_of(i), v);
    }
    // log2 buckets: bucket i holds (2^(i-1), 2^i], bucket 0 holds 0 and 1.
    EXPECT_EQ(log2_histogram::index_of(0), 0u);
    EXPECT_EQ(log2_histogram::index_of(1), 0u);
    EXPECT_EQ(log2_histogram::index_of(2), 1u);
    EXPECT_EQ(log2_histogram::index_of(3), 2u);
    EXPECT_EQ(log2_histogram::index_of(4), 2u);
    EXPECT_EQ(log2_histogram::index_of(5), 3u);
    EXPECT_EQ(log2_histogram::index_of(1024), 10u);
    EXPECT_EQ(log2_histogram::index_of(1025), 11u);
}

TEST(heavy_hitters, exact_below_capacity_and_flagged_above)
{
    heavy_hitters                hh(16);
    std::map<uint64_t, uint64_t> truth;
    for(uint64_t k = 0; k < 16; ++k)
        for(uint64_t n = 0; n <= k; ++n)
        {
            hh.add({k, 0, 0}, 1).faults += 1;
            truth[k] += 1;
        }
    EXPECT_FALSE(hh.approximate());
    auto top = hh.top(5);
    ASSERT_EQ(top.size(), 5u);
    for(size_t i = 0; i < 5; ++i)
    {
        EXPECT_EQ(top[i].key.block, 15 - i);
        EXPECT_EQ(top[i].weight, truth[15 - i]);
        EXPECT_EQ(top[i].counters.faults, truth[15 - i]);
    }
    // Many light keys: the table stays at capacity, says approximate, keeps the heavy key.
    for(uint64_t k = 100; k < 10000; ++k)
    {
        hh.add({k, 0, 0}, 1);
        hh.add({15, 0, 0}, 1);
    }
    EXPECT_TRUE(hh.approximate());
    EXPECT_EQ(hh.size(), 16u);
    EXPECT_EQ(hh.top(1).at(0).key.block, 15u);
}

namespace
{
// Space-saving written the plain way (Metwally et al.): every entry in a map, the lightest
// found by a scan, ties to the smallest key. What heavy_hitters must match exactly.
struct plain_space_saving
{
    size_t                                             capacity;
    std::map<range_key, std::pair<uint64_t, uint64_t>> entries; // weight, faults
    void                                               add(const range_key& key, uint64_t weight)
    {
        auto it = entries.find(key);
        if(it == entries.end())
        {
            uint64_t base = 0;
            if(entries.size() >= capacity)
            {
                auto lightest = entries.begin();
                for(auto e = entries.begin(); e != entries.end(); ++e)
                    if(e->second.first < lightest->second.first) lightest = e;
                base = lightest->second.first;
                entries.erase(lightest);
            }
            it = entries.emplace(key, std::make_pair(base, uint64_t{0})).first;
        }
        it->second.first += weight;
        it->second.second += 1;
    }
};
} // namespace

TEST(heavy_hitters, evicts_exactly_as_plain_space_saving_does)
{
    for(uint64_t seed = 1; seed <= 20; ++seed)
    {
        std::mt19937_64    rng(seed);
        size_t             capacity = 1 + seed % 9;
        heavy_hitters      hh(capacity);
        plain_space_saving plain{capacity, {}};
        // Skewed keys (a few heavy, many light), weights 0-3: every path of the eviction
        // (stale heap items, ties, weight 0) is taken.
        std::geometric_distribution<uint64_t>   key_of(0.15);
        std::uniform_int_distribution<uint64_t> weight_of(0, 3);
        for(int i = 0; i < 3000; ++i)
        {
            range_key key{key_of(rng), static_cast<uint32_t>(i % 2), 0};
            auto      w = weight_of(rng);
            hh.add(key, w).faults += 1;
            plain.add(key, w);
        }
        auto got = hh.all();
        ASSERT_EQ(got.size(), plain.entries.size()) << "seed " << seed;
        size_t i = 0;
        for(const auto& [key, value] : plain.entries)
        {
            EXPECT_EQ(got[i].key.block, key.block) << "seed " << seed;
            EXPECT_EQ(got[i].key.a, key.a) << "seed " << seed;
            EXPECT_EQ(got[i].weight, value.first) << "seed " << seed;
            EXPECT_EQ(got[i].counters.faults, value.second) << "seed " << seed;
            ++i;
        }
    }
}

// A larger table: its index grows several times and erases run through long probe runs.
TEST(heavy_hitters, a_grown_table_evicts_as_plain_space_saving_does)
{
    std::mt19937_64                         rng(7);
    heavy_hitters                           hh(300);
    plain_space_saving                      plain{300, {}};
    std::uniform_int_distribution<uint64_t> key_of(0, 1999), weight_of(0, 5);
    for(int i = 0; i < 20000; ++i)
    {
        range_key key{key_of(rng) * 4096, 0, static_cast<uint32_t>(i % 3)};
        auto      w = weight_of(rng);
        hh.add(key, w).faults += 1;
        plain.add(key, w);
    }
    auto got = hh.all();
    ASSERT_EQ(got.size(), plain.entries.size());
    size_t i = 0;
    for(const auto& [key, value] : plain.entries)
    {
        EXPECT_EQ(got[i].key.block, key.block);
        EXPECT_EQ(got[i].key.b, key.b);
        EXPECT_EQ(got[i].weight, value.first);
        EXPECT_EQ(got[i].counters.faults, value.second);
        ++i;
    }
}

TEST(timeline, coarsens_to_512_bins_and_keeps_every_byte)
{
    timeline        tl;
    std::mt19937_64 rng(3);
    uint64_t        total = 0, faults = 0;
    uint64_t        base = 5'000'000'000ull;
    for(int i = 0; i < 20000; ++i)
    {
        uint64_t start = base + rng() % 3'000'000'000ull; // out of order, 3 s span
        uint64_t bytes = 4096 * (1 + rng() % 512);
        tl.add_migration(0, 7, start, start + rng() % 5'000'000, bytes);
        total += bytes;
        if(i % 3 == 0)
        {
            tl.add_fault(7, i % 2, start);
            faults += 1;
        }
    }
    EXPECT_LE(tl.bins(), timeline::max_bins);
    EXPECT_EQ(tl.start_ns() % tl.bin_ns(), 0u);
    EXPECT_GE(tl.bins() * tl.bin_ns(), 3'000'000'000ull);
    uint64_t sum = 0;
    for(uint64_t v : tl.migration_bytes().at({0, 7}))
        sum += v;
    EXPECT_EQ(sum, total);
    uint64_t fsum = 0;
    for(uint64_t v : tl.faults().at(7).first)
        fsum += v;
    for(uint64_t v : tl.faults().at(7).second)
        fsum += v;
    EXPECT_EQ(fsum, faults);
}

TEST(summary_builder, suspension_intervals_stay_bounded)
{
    summary_builder s;
    for(uint64_t i = 0; i < 5000; ++i)
    {
        record r                = {};
        r.operation             = ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND;
        r.start_timestamp       = 1000 + i * 100;
        r.end_timestamp         = r.start_timestamp + 50;
        r.queue_suspend.node_id = 9;
        s.add(r);
    }
    const auto& q = s.suspensions().at(9);
    EXPECT_EQ(q.count, 5000u);
    EXPECT_EQ(q.total_ns, 5000u * 50);
    EXPECT_LE(q.intervals.size(), max_intervals_per_gpu);
    EXPECT_TRUE(q.intervals_merged);
    uint64_t lo = UINT64_MAX, hi = 0;
    for(auto [a, b] : q.intervals)
        lo = std::min(lo, a), hi = std::max(hi, b);
    EXPECT_EQ(lo, 1000u);
    EXPECT_EQ(hi, 1000 + 4999 * 100 + 50);
}

TEST(summary_builder, merge_neighbour_intervals_sorts_then_halves)
{
    std::vector<std::pair<uint64_t, uint64_t>> v = {
        {50, 60}, {0, 40}, {10, 20}, {30, 35}, {70, 71}};
    merge_neighbour_intervals(v);
    // Sorted: [0,40] [10,20] [30,35] [50,60] [70,71]; pairs keep the first start and the
    // later end ([0,40] covers [10,20]); the odd last one stays as it was.
    std::vector<std::pair<uint64_t, uint64_t>> want = {{0, 40}, {30, 60}, {70, 71}};
    EXPECT_EQ(v, want);
}

// A long run of suspensions allocates their list once: every merge works in its storage.
TEST(summary_builder, suspension_intervals_keep_their_storage_through_merges)
{
    summary_builder s;
    // The same merges, done by building a new list each time (as the summary first did).
    std::vector<std::pair<uint64_t, uint64_t>> reference;
    const std::pair<uint64_t, uint64_t>*       storage = nullptr;
    std::mt19937_64                            rng(5);
    for(uint64_t i = 0; i < 20000; ++i)
    {
        record r                = {};
        r.operation             = ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND;
        r.start_timestamp       = 1000 + i * 100 + rng() % 300; // some out of order
        r.end_timestamp         = r.start_timestamp + rng() % 500;
        r.queue_suspend.node_id = 3;
        s.add(r);
        reference.emplace_back(r.start_timestamp, r.end_timestamp);
        if(reference.size() > max_intervals_per_gpu)
        {
            std::sort(reference.begin(), reference.end());
            std::vector<std::pair<uint64_t, uint64_t>> halved;
            for(size_t k = 0; k < reference.size(); k += 2)
                halved.emplace_back(reference[k].first,
                                    k + 1 < reference.size()
                                        ? std::max(reference[k].second, reference[k + 1].second)
                                        : reference[k].second);
            reference.swap(halved);
        }
        const auto& q = s.suspensions().at(3);
        if(i == 0) storage = q.intervals.data();
        ASSERT_EQ(q.intervals.data(), storage) << "reallocated at suspension " << i;
    }
    const auto& q = s.suspensions().at(3);
    EXPECT_TRUE(q.intervals_merged);
    EXPECT_EQ(q.intervals, reference);
}

// Coarsening remaps every series many times; none of them is reallocated for it.
TEST(timeline, coarsening_keeps_each_series_storage)
{
    timeline tl;
    tl.add_migration(0, 7, 5'000'000'000ull, 5'000'000'100ull, 4096);
    tl.add_fault(7, true, 5'000'000'000ull);
    const uint64_t* bytes  = tl.migration_bytes().at({0, 7}).data();
    const uint64_t* reads  = tl.faults().at(7).first.data();
    const uint64_t* writes = tl.faults().at(7).second.data();
    uint64_t        total  = 4096;
    // Spans that double and double again, to the left and to the right of the first bins.
    for(uint64_t span = 1000; span < 100'000'000'000ull; span *= 3)
    {
        tl.add_migration(0, 7, 5'000'000'000ull + span, 5'000'000'000ull + span + 10, 4096);
        tl.add_fault(7, false, 5'000'000'000ull - span / 2);
        total += 4096;
    }
    EXPECT_GT(tl.bin_ns(), 1'000'000ull); // it did coarsen, many times
    EXPECT_EQ(tl.migration_bytes().at({0, 7}).data(), bytes);
    EXPECT_EQ(tl.faults().at(7).first.data(), reads);
    EXPECT_EQ(tl.faults().at(7).second.data(), writes);
    uint64_t sum = 0;
    for(uint64_t v : tl.migration_bytes().at({0, 7}))
        sum += v;
    EXPECT_EQ(sum, total);
}

TEST(summary_builder, migration_bytes_split_across_ranges_by_overlap)
{
    summary_builder s;
    record          r = {};
    r.operation       = ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE;
    r.start_timestamp = 10;
    r.end_timestamp   = 20;
    // 1 MiB before a 2 MiB boundary to 3 MiB after it: blocks 0x1ff.., 0x200.., 0x201..
    r.page_migrate.start_addr = 0x40000000 - 0x100000;
    r.page_migrate.end_addr   = 0x40000000 + 0x300000 - 1;
    r.page_migrate.from_node  = 0;
    r.page_migrate.to_node    = 5;
    s.add(r);
    auto top = s.top_by_bytes();
    ASSERT_EQ(top.size(), 3u);
    EXPECT_EQ(top[0].weight, 0x200000u); // the whole middle block
    EXPECT_EQ(top[1].weight, 0x100000u);
    EXPECT_EQ(top[2].weight, 0x100000u);
    EXPECT_EQ(top[0].counters.htod_bytes, 0x200000u);
    EXPECT_EQ(s.directions().at({0, 5}).bytes, 0x400000u);
}

namespace
{
record
migration(uint32_t pid, uint64_t address, uint32_t from, uint32_t to, uint64_t at)
{
    record r                  = {};
    r.operation               = ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE;
    r.pid                     = pid;
    r.start_timestamp         = at;
    r.end_timestamp           = at + 10;
    r.page_migrate.start_addr = address;
    r.page_migrate.end_addr   = address + 0x1000 - 1;
    r.page_migrate.from_node  = from;
    r.page_migrate.to_node    = to;
    return r;
}
} // namespace

TEST(summary_builder, equal_addresses_of_two_processes_are_two_ranges)
{
    // Two processes, in one input (a system-wide run) and in two (a merge): one moves its
    // range to the GPU, the other moves the range at the same address back, twice each.
    // Their address spaces are distinct: no range went back and forth, and each process's
    // range has its own counts.
    for(uint32_t second_input : {0u, 2u})
    {
        summary_builder s(2);
        const uint64_t  address = 0x7f0000000000;
        for(uint64_t i = 0; i < 2; ++i)
        {
            s.add(migration(100, address, 0, 5, 100 * i), second_input == 0 ? 0 : 1);
            s.add(migration(200, address, 5, 0, 100 * i + 50), second_input);
        }
        EXPECT_TRUE(s.thrashing().empty());
        auto top = s.top_by_bytes();
        ASSERT_EQ(top.size(), 2u);
        EXPECT_EQ(top[0].key.pid, 100u);
        EXPECT_EQ(top[1].key.pid, 200u);
        EXPECT_EQ(top[1].counters.dtoh_bytes, 0x2000u);
    }
    // A merge: equal pids of two inputs (two hosts) are two processes too.
    summary_builder s(2);
    const uint64_t  address = 0x7f0000000000;
    for(uint64_t i = 0; i < 2; ++i)
    {
        s.add(migration(100, address, 0, 5, 100 * i), 1);
        s.add(migration(100, address, 5, 0, 100 * i + 50), 2);
    }
    EXPECT_TRUE(s.thrashing().empty());
    ASSERT_EQ(s.top_by_bytes().size(), 2u);
    // One process moving its range back and forth is thrashing, with its pid.
    for(uint64_t i = 0; i < 2; ++i)
    {
        s.add(migration(300, address, 0, 5, 1000 + 100 * i), 1);
        s.add(migration(300, address, 5, 0, 1000 + 100 * i + 50), 1);
    }
    ASSERT_EQ(s.thrashing().size(), 1u);
    EXPECT_EQ(s.thrashing()[0].pid, 300u);
    EXPECT_EQ(s.thrashing()[0].migrations, 4u);
}

TEST(summary_builder, a_range_names_its_pid)
{
    summary_builder s;
    s.add(migration(100, 0x1000, 0, 5, 1));
    s.add(migration(100, 0x1000, 5, 0, 2));
    EXPECT_EQ(s.top_by_bytes().at(0).key.pid, 100u);
}

TEST(lanes, overlapping_slices_get_lanes_in_which_they_are_disjoint)
{
    // 200 migrations of one GPU in flight at once (CPU faults of 200 threads), arriving in
    // end order, then as many again later: each lane's slices are disjoint, the 200 first
    // ones use 200 lanes, the later ones reuse them, and nothing overlaps.
    lane_allocator                                               lanes;
    const lane_allocator::group                                  g{1, 5, 1};
    std::map<size_t, std::vector<std::pair<uint64_t, uint64_t>>> by_lane;
    for(uint64_t round = 0; round < 2; ++round)
        for(uint64_t i = 0; i < 200; ++i)
        {
            const uint64_t start = round * 10000 + i, end = round * 10000 + 1000 + i;
            by_lane[lanes.assign(g, start, end)].emplace_back(start, end);
        }
    EXPECT_EQ(by_lane.size(), 200u);
    EXPECT_EQ(lanes.overlaps(), 0u);
    for(auto& [lane, slices] : by_lane)
    {
        std::sort(slices.begin(), slices.end());
        for(size_t i = 1; i < slices.size(); ++i)
            EXPECT_LE(slices[i - 1].second, slices[i].first) << "lane " << lane;
    }
    // Another GPU's slices have lanes of their own.
    EXPECT_EQ(lanes.assign({1, 6, 1}, 0, 1000), 0u);
}

TEST(lanes, past_the_most_lanes_a_slice_shares_the_lane_that_frees_first)
{
    lane_allocator              lanes;
    const lane_allocator::group g{0, 5, 1};
    for(uint64_t i = 0; i < lane_allocator::max_lanes; ++i)
        EXPECT_EQ(lanes.assign(g, 100, 1000 + i), i);
    EXPECT_EQ(lanes.overlaps(), 0u);
    EXPECT_EQ(lanes.assign(g, 100, 5000), 0u); // lane 0 ends first (at 1000)
    EXPECT_EQ(lanes.overlaps(), 1u);
}
