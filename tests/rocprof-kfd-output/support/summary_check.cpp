// MIT License - see LICENSE.
#include "summary_check.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kfd_out_test
{
namespace
{
// A row's host: only merges of several hosts name one.
std::string
host_of(const nlohmann::json& row)
{
    return row.value("host", std::string{});
}

uint64_t
address_of(const nlohmann::json& v)
{
    return std::stoull(v.get<std::string>(), nullptr, 16);
}

void
check_ranges(const nlohmann::json& rows, const std::vector<range_expect>& expected,
             const std::string& what)
{
    ASSERT_EQ(rows.size(), expected.size()) << what;
    for(size_t i = 0; i < expected.size(); ++i)
    {
        const auto& row = rows[i];
        const auto& e   = expected[i];
        EXPECT_EQ(address_of(row["start"]), e.block * 2 * 1024 * 1024) << what << " row " << i;
        EXPECT_EQ(address_of(row["end"]), (e.block + 1) * 2 * 1024 * 1024 - 1) << what;
        EXPECT_EQ(row["pid"], e.pid) << what << " row " << i;
        EXPECT_EQ(row["faults"], e.faults) << what << " row " << i;
        EXPECT_EQ(row["migrations"], e.migrations) << what << " row " << i;
        EXPECT_EQ(row["htod_bytes"], e.htod) << what << " row " << i;
        EXPECT_EQ(row["dtoh_bytes"], e.dtoh) << what << " row " << i;
        EXPECT_EQ(row["dtod_bytes"], e.dtod) << what << " row " << i;
    }
}
} // namespace

void
check_summary(const nlohmann::json& s, const std::vector<oracle_record>& oracle, uint64_t threshold,
              const std::string& label)
{
    summary_expect e = expect_summary(oracle, threshold);
    ASSERT_EQ(s["schema"], "rocprof-kfd-summary") << label;
    ASSERT_EQ(s["version"], 1) << label;

    // Operations by trigger: exact counts and durations, percentiles within 1/64.
    ASSERT_EQ(s["operations"].size(), e.ops.size()) << label;
    for(const auto& row : s["operations"])
    {
        auto key =
            std::make_pair(row["operation"].get<std::string>(), row["trigger"].get<std::string>());
        ASSERT_TRUE(e.ops.count(key)) << label << ": unexpected " << key.first << "/" << key.second;
        const op_expect& o    = e.ops.at(key);
        std::string      what = label + " " + key.first + "/" + key.second;
        EXPECT_EQ(row["count"], o.count) << what;
        EXPECT_EQ(row["total_ns"], o.total) << what;
        EXPECT_EQ(row["min_ns"], o.min) << what;
        EXPECT_EQ(row["max_ns"], o.max) << what;
        EXPECT_EQ(row["mean_ns"], o.total / o.count) << what;
        for(auto [field, q] : {std::make_pair("p50_ns", 0.5), std::make_pair("p99_ns", 0.99)})
        {
            double exact = static_cast<double>(nearest_rank(o.durations, q));
            EXPECT_LE(std::fabs(row[field].get<double>() - exact), exact / 64 + 1)
                << what << " " << field;
        }
    }
    // Directions.
    ASSERT_EQ(s["migrations_by_direction"].size(), e.directions.size()) << label;
    for(const auto& row : s["migrations_by_direction"])
    {
        auto key = std::make_tuple(host_of(row), row["from_node"].get<uint64_t>(),
                                   row["to_node"].get<uint64_t>());
        ASSERT_TRUE(e.directions.count(key)) << label;
        auto [count, bytes, total] = e.directions.at(key);
        EXPECT_EQ(row["count"], count) << label;
        EXPECT_EQ(row["bytes"], bytes) << label;
        EXPECT_EQ(row["total_ns"], total) << label;
        double gbps = total ? static_cast<double>(bytes) / static_cast<double>(total) : 0;
        EXPECT_NEAR(row["gb_per_s"].get<double>(), gbps, gbps * 1e-5 + 1e-9) << label;
        EXPECT_FALSE(row["from_name"].get<std::string>().empty()) << label;
        EXPECT_FALSE(row["to_name"].get<std::string>().empty()) << label;
    }
    // Faults by GPU.
    ASSERT_EQ(s["faults_by_gpu"].size(), e.faults.size()) << label;
    for(const auto& row : s["faults_by_gpu"])
    {
        auto f = e.faults.at({host_of(row), row["gpu_id"].get<uint64_t>()});
        EXPECT_EQ(row["read_migrated"], std::get<0>(f)) << label;
        EXPECT_EQ(row["read_updated"], std::get<1>(f)) << label;
        EXPECT_EQ(row["write_migrated"], std::get<2>(f)) << label;
        EXPECT_EQ(row["write_updated"], std::get<3>(f)) << label;
    }
    // Queue suspensions.
    ASSERT_EQ(s["queue_suspend_by_gpu"].size(), e.suspends.size()) << label;
    // Shares are of the wall time; of an emulated replay, of the time its records span.
    uint64_t wall = s["metadata"]["wall_ns"];
    if(s["metadata"]["emulated"] == true && !oracle.empty())
    {
        uint64_t first = UINT64_MAX, last = 0;
        for(const auto& r : oracle)
            first = std::min(first, r.start), last = std::max(last, r.end);
        wall = last - first;
    }
    for(const auto& row : s["queue_suspend_by_gpu"])
    {
        auto q = e.suspends.at({host_of(row), row["gpu_id"].get<uint64_t>()});
        EXPECT_EQ(row["count"], q.first) << label;
        EXPECT_EQ(row["total_ns"], q.second) << label;
        if(wall)
        {
            EXPECT_NEAR(row["share_of_wall"].get<double>(),
                        static_cast<double>(q.second) / static_cast<double>(wall),
                        1e-5 * static_cast<double>(q.second) / static_cast<double>(wall) + 1e-9)
                << label;
        }
    }
    // Ranges and thrashing (exact while the tables did not overflow: 4096 ranges).
    EXPECT_EQ(s["range_bytes"], 2 * 1024 * 1024);
    EXPECT_EQ(s["top_ranges_approximate"], e.distinct_ranges > 4096) << label;
    if(e.distinct_ranges <= 4096)
    {
        check_ranges(s["top_ranges_by_faults"], e.top_by_faults, label + " top_ranges_by_faults");
        check_ranges(s["top_ranges_by_bytes"], e.top_by_bytes, label + " top_ranges_by_bytes");
        const auto& t = s["thrashing"];
        EXPECT_EQ(t["threshold"], threshold) << label;
        EXPECT_EQ(t["count"], e.thrashing_count) << label;
        ASSERT_EQ(t["ranges"].size(), e.thrashing.size()) << label;
        for(size_t i = 0; i < e.thrashing.size(); ++i)
        {
            const auto& row = t["ranges"][i];
            EXPECT_EQ(address_of(row["start"]), e.thrashing[i].block * 2 * 1024 * 1024) << label;
            EXPECT_EQ(row["pid"], e.thrashing[i].pid) << label;
            EXPECT_EQ(row["between"][0], e.thrashing[i].a) << label;
            EXPECT_EQ(row["between"][1], e.thrashing[i].b) << label;
            EXPECT_EQ(host_of(row), e.thrashing[i].host) << label;
            EXPECT_EQ(row["migrations"], e.thrashing[i].migrations) << label;
            EXPECT_EQ(row["bytes"], e.thrashing[i].bytes) << label;
        }
    }
    // Timeline: at most 512 bins, every byte and fault in some bin.
    const auto& tl = s["timeline"];
    EXPECT_LE(tl["bins"].get<uint64_t>(), 512u) << label;
    for(const auto& series : tl["migration_bytes"])
    {
        uint64_t sum = 0;
        EXPECT_EQ(series["values"].size(), tl["bins"].get<size_t>()) << label;
        for(const auto& v : series["values"])
            sum += v.get<uint64_t>();
        auto key = std::make_tuple(host_of(series), series["from_node"].get<uint64_t>(),
                                   series["to_node"].get<uint64_t>());
        EXPECT_EQ(sum, std::get<1>(e.directions.at(key))) << label;
    }
    for(const auto& series : tl["faults"])
    {
        uint64_t reads = 0, writes = 0;
        for(const auto& v : series["read"])
            reads += v.get<uint64_t>();
        for(const auto& v : series["write"])
            writes += v.get<uint64_t>();
        auto f = e.faults.at({host_of(series), series["gpu_id"].get<uint64_t>()});
        EXPECT_EQ(reads, std::get<0>(f) + std::get<1>(f)) << label;
        EXPECT_EQ(writes, std::get<2>(f) + std::get<3>(f)) << label;
    }
    // Histograms: log2 buckets, bucket i holds (2^(i-1), 2^i].
    for(const auto& [op, o] : e.by_op)
    {
        const auto&           h = s["histograms"][op];
        std::vector<uint64_t> counts(65, 0);
        for(uint64_t d : o.durations)
        {
            size_t i = 0;
            while(i < 64 && (uint64_t{1} << i) < d)
                ++i;
            counts[i] += 1;
        }
        ASSERT_EQ(h["counts"].size(), h["bucket_upper_ns"].size()) << label;
        for(size_t i = 0; i < 65; ++i)
        {
            uint64_t got = i < h["counts"].size() ? h["counts"][i].get<uint64_t>() : 0;
            EXPECT_EQ(got, counts[i]) << label << " " << op << " bucket " << i;
        }
    }
    // Loss: nothing lost in a lossless replay, and every record accounted for.
    EXPECT_EQ(s["loss"]["lost"], false) << label << ": " << s["loss"]["message"];
    EXPECT_EQ(s["loss"]["records_dropped"], 0) << label;
}
} // namespace kfd_out_test
