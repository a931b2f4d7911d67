// MIT License - see LICENSE.
// Unit tests of the report's pure parts: number formatting, scales and ticks, the summary
// reader's errors, the bandwidth series and the interval joining the strip chart draws.
#include "plots.hpp"
#include "summary.hpp"
#include "svg.hpp"
#include "tables.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rocprof_kfd_report
{
namespace
{
std::string
minimal(const std::string& extra = "")
{
    return R"({"schema":"rocprof-kfd-summary","version":1)" + extra + "}";
}

std::string
error_of(const std::string& text)
{
    try
    {
        parse_summary(text);
    }
    catch(const InputError& e)
    {
        return e.what();
    }
    return "";
}

TEST(Format, NumbersKeepSignificantDigitsWithoutTrailingZeros)
{
    EXPECT_EQ(format_number(0), "0");
    EXPECT_EQ(format_number(1.5), "1.5");
    EXPECT_EQ(format_number(12.3456), "12.35");
    EXPECT_EQ(format_number(1200), "1200");
    EXPECT_EQ(format_number(0.000125, 3), "0.000125");
    EXPECT_EQ(format_number(-2.5), "-2.5");
}

TEST(Format, AxisLabelsUseSiPrefixesForLargeValues)
{
    EXPECT_EQ(format_si(950), "950");
    EXPECT_EQ(format_si(5000), "5000");
    EXPECT_EQ(format_si(12000), "12k");
    EXPECT_EQ(format_si(4e6), "4M");
    EXPECT_EQ(format_si(2.5e6), "2.5M");
    EXPECT_EQ(format_si(1.5e10), "15G");
}

TEST(Format, BytesAndDurationsUseReadableUnits)
{
    EXPECT_EQ(format_bytes(512), "512 B");
    EXPECT_EQ(format_bytes(2 * 1024 * 1024), "2.00 MiB");
    EXPECT_EQ(format_bytes(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
    EXPECT_EQ(format_duration(850), "850 ns");
    EXPECT_EQ(format_duration(12300), "12.3 µs");
    EXPECT_EQ(format_duration(4.56e6), "4.56 ms");
    EXPECT_EQ(format_duration(1.2e9), "1.2 s");
}

TEST(Format, EscapeCoversMarkupAndQuotes)
{
    EXPECT_EQ(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    EXPECT_EQ(escape(std::string("a\nb")), "a?b");
}

TEST(Scales, NiceCeilingIsOneTwoOrFiveTimesAPowerOfTen)
{
    EXPECT_DOUBLE_EQ(nice_ceiling(0), 1);
    EXPECT_DOUBLE_EQ(nice_ceiling(0.7), 1);
    EXPECT_DOUBLE_EQ(nice_ceiling(1.2), 2);
    EXPECT_DOUBLE_EQ(nice_ceiling(3), 5);
    EXPECT_DOUBLE_EQ(nice_ceiling(7), 10);
    EXPECT_DOUBLE_EQ(nice_ceiling(43), 50);
    EXPECT_DOUBLE_EQ(nice_ceiling(20), 20);
}

TEST(Scales, NiceTicksCoverTheRangeInRoundSteps)
{
    const std::vector<double> t = nice_ticks(0, 100, 5);
    ASSERT_EQ(t.size(), 6u);
    EXPECT_DOUBLE_EQ(t.front(), 0);
    EXPECT_DOUBLE_EQ(t[1], 20);
    EXPECT_DOUBLE_EQ(t.back(), 100);
    const std::vector<double> u = nice_ticks(0.3, 1.7, 4);
    EXPECT_DOUBLE_EQ(u.front(), 0.5);
    EXPECT_DOUBLE_EQ(u.back(), 1.5);
    EXPECT_EQ(nice_ticks(3, 3, 5).size(), 1u);
}

TEST(Scales, LinearScaleMapsEndsAndMiddle)
{
    const LinearScale y{0, 50, 200, 10};
    EXPECT_DOUBLE_EQ(y(0), 200);
    EXPECT_DOUBLE_EQ(y(50), 10);
    EXPECT_DOUBLE_EQ(y(25), 105);
    EXPECT_DOUBLE_EQ((LinearScale{3, 3, 7, 9})(100), 7);
}

TEST(Scales, TimeUnitKeepsAtLeastTwoUnitsOnTheAxis)
{
    EXPECT_STREQ(time_unit_for(5e9).name, "s");
    EXPECT_STREQ(time_unit_for(1.5e9).name, "ms");
    EXPECT_STREQ(time_unit_for(3e6).name, "ms");
    EXPECT_STREQ(time_unit_for(5e3).name, "µs");
    EXPECT_STREQ(time_unit_for(500).name, "ns");
}

TEST(Reader, RejectsInvalidJsonSchemaAndVersion)
{
    EXPECT_NE(error_of("{").find("invalid JSON"), std::string::npos);
    EXPECT_NE(error_of("[]").find("not a rocprof-kfd summary"), std::string::npos);
    EXPECT_NE(error_of(R"({"schema":"other","version":1})").find("schema"), std::string::npos);
    EXPECT_NE(error_of(R"({"schema":"rocprof-kfd-summary","version":2})").find("version 2"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"schema":"rocprof-kfd-summary"})").find("version"), std::string::npos);
    EXPECT_EQ(error_of(minimal()), "");
}

TEST(Reader, NamesTheFieldOfTheWrongType)
{
    EXPECT_EQ(error_of(minimal(R"(,"metadata":{"pid":"x"})")), "metadata.pid: expected an integer");
    EXPECT_EQ(error_of(minimal(R"(,"faults_by_gpu":[{"gpu_id":-1}])")),
              "faults_by_gpu[0].gpu_id: expected a non-negative integer");
    EXPECT_EQ(error_of(minimal(R"(,"top_ranges_by_faults":[{"start":"12"}])")),
              "top_ranges_by_faults[0].start: expected an address string \"0x...\"");
    EXPECT_EQ(error_of(minimal(
                  R"(,"timeline":{"bin_ns":10,"bins":2,"faults":[{"read":[1],"write":[1,2]}]})")),
              "timeline.faults[0].read: expected as many values as timeline.bins");
    EXPECT_EQ(error_of(minimal(R"(,"queue_suspensions":[{"intervals":[[5,4]]}])")),
              "queue_suspensions[0].intervals[0]: expected end_ns >= start_ns");
    EXPECT_EQ(error_of(minimal(R"(,"thrashing":{"ranges":[{"between":[1]}]})")),
              "thrashing.ranges[0].between: expected two node ids");
}

TEST(Reader, ReadsEverySection)
{
    const Summary s = parse_summary(minimal(R"(,
        "metadata":{"command":["./a","b"],"pid":7,"rank":"3","hostname":"h","wall_ns":1000},
        "agents":[{"gpu_id":0,"node_id":0,"name":"CPU","type":"cpu"},
                  {"gpu_id":4660,"node_id":1,"name":"gfx90a","type":"gpu"}],
        "loss":{"events_received":5,"records_dropped":2,"lost":true,"message":"2 dropped"},
        "top_ranges_by_faults":[{"start":"0x200000","end":"0x3fffff","faults":9}],
        "thrashing":{"threshold":4,"ranges":[{"start":"0x0","end":"0x1fffff","between":[0,4660],"migrations":6,"bytes":64}]},
        "timeline":{"start_ns":100,"bin_ns":10,"bins":2,
                    "migration_bytes":[{"from_node":0,"to_node":4660,"values":[20,0]}],
                    "faults":[{"gpu_id":4660,"read":[1,0],"write":[0,3]}]},
        "histograms":{"page_fault":{"bucket_upper_ns":[1,2],"counts":[0,4],"p50_ns":2,"p99_ns":2}},
        "queue_suspensions":[{"gpu_id":4660,"intervals":[[100,150]],"intervals_merged":true}])"));
    EXPECT_EQ(s.metadata.command.size(), 2u);
    EXPECT_EQ(*s.metadata.rank, "3");
    ASSERT_EQ(s.loss.counters.size(), 2u);
    EXPECT_EQ(s.loss.counters[0].first, "events_received"); // the file's order
    EXPECT_EQ(s.loss.counters[1].second, 2u);
    EXPECT_TRUE(s.loss.lost);
    EXPECT_EQ(s.top_ranges_by_faults[0].start, 0x200000u);
    EXPECT_EQ(s.thrashing[0].between[1], 4660u);
    EXPECT_EQ(s.timeline.faults[0].write[1], 3);
    EXPECT_EQ(s.histograms.at("page_fault").counts[1], 4u);
    EXPECT_TRUE(s.queue_suspensions[0].intervals_merged);
    EXPECT_EQ(device_label(s, 4660), "gfx90a node 1");
    EXPECT_EQ(device_label(s, 0), "CPU");
    EXPECT_EQ(device_label(s, 99), "gpu_id 99");
}

TEST(Reader, ReadsWhatTheToolAndMergeAddToTheSchema)
{
    // The bundled tool also writes "complete", loss "buffer_drops"/"available",
    // thrashing "approximate"; rocprof-kfd-merge writes "inputs".
    const Summary s = parse_summary(minimal(R"(,"complete":false,
        "inputs":[{"directory":"a/1","hostname":"h","rank":"1","pid":4,"records":10,"complete":false}],
        "loss":{"events_received":5,"buffer_drops":3,"available":false,"lost":false,
                "probably_lost":true,"message":"m"},
        "thrashing":{"threshold":4,"approximate":true,"ranges":[]})"));
    EXPECT_FALSE(s.complete);
    ASSERT_EQ(s.inputs.size(), 1u);
    EXPECT_EQ(s.inputs[0].directory, "a/1");
    EXPECT_FALSE(s.inputs[0].complete);
    ASSERT_EQ(s.loss.counters.size(), 2u);
    EXPECT_EQ(s.loss.counters[1].first, "buffer_drops");
    ASSERT_EQ(s.loss.flags.size(), 1u);
    EXPECT_EQ(s.loss.flags[0], (std::pair<std::string, bool>{"available", false}));
    EXPECT_TRUE(s.loss.probably_lost);
    EXPECT_TRUE(s.thrashing_approximate);
    EXPECT_TRUE(parse_summary(minimal()).complete);
}

TEST(Reader, EqualGpuIdsOfTwoHostsAreTwoGpus)
{
    // A merged summary of two hosts built alike: each names its host, and the report keeps
    // hostA's GPU 4660 apart from hostB's (before, the two read as one GPU).
    const Summary s = parse_summary(minimal(R"(,
        "agents":[{"gpu_id":4660,"node_id":1,"name":"gfx90a","type":"gpu","host":"hostA"},
                  {"gpu_id":4660,"node_id":2,"name":"gfx90a","type":"gpu","host":"hostB"}],
        "migrations_by_direction":[{"from_node":0,"to_node":4660,"host":"hostB","count":1,
                                    "bytes":8,"total_ns":2,"gb_per_s":4}],
        "faults_by_gpu":[{"gpu_id":4660,"host":"hostA","read_migrated":1},
                         {"gpu_id":4660,"host":"hostB","read_migrated":2}],
        "queue_suspend_by_gpu":[{"gpu_id":4660,"host":"hostB","count":1,"total_ns":5}],
        "queue_suspensions":[{"gpu_id":4660,"host":"hostB","intervals":[[1,6]]}])"));
    ASSERT_EQ(s.faults_by_gpu.size(), 2u);
    const uint64_t a = s.faults_by_gpu[0].gpu_id, b = s.faults_by_gpu[1].gpu_id;
    EXPECT_NE(a, b);
    EXPECT_EQ(gpu_id_of(a), 4660u);
    EXPECT_EQ(gpu_id_of(b), 4660u);
    EXPECT_EQ(device_label(s, a), "gfx90a node 1 @ hostA");
    EXPECT_EQ(device_label(s, b), "gfx90a node 2 @ hostB");
    EXPECT_EQ(gpu_data_attributes(s, b), " data-gpu-id=\"4660\" data-host=\"hostB\"");
    EXPECT_EQ(s.queue_suspend_by_gpu[0].gpu_id, b);
    EXPECT_EQ(s.queue_suspensions[0].gpu_id, b);
    EXPECT_EQ(s.migrations_by_direction[0].to_node, b);
    EXPECT_EQ(device_label(s, s.migrations_by_direction[0].from_node), "CPU @ hostB");
    EXPECT_EQ(rank_totals(s).htod_bytes, 8); // hostB's CPU is a CPU
    EXPECT_NE(error_of(minimal(R"(,"faults_by_gpu":[{"gpu_id":4660,"host":7}])")), "");
}

TEST(Reader, ThrashingRowsOfTwoHostsNameEachHostsNodes)
{
    const Summary s = parse_summary(minimal(R"(,"agents":[
        {"gpu_id":4660,"node_id":1,"name":"gfx90a","type":"gpu","host":"hostA"},
        {"gpu_id":4660,"node_id":1,"name":"gfx90a","type":"gpu","host":"hostB"}],
        "thrashing":{"threshold":4,"approximate":false,"count":1,"ranges":[{"start":"0x100000",
        "end":"0x1fffff","pid":42,"between":[0,4660],"host":"hostB","migrations":8,
        "bytes":32768}]})"));
    const std::string table = thrashing_table(s);
    EXPECT_NE(table.find("CPU @ hostB ⇄ gfx90a node 1 @ hostB"), std::string::npos) << table;
}

TEST(Plots, BandwidthIsBytesPerNanosecondLargestDirectionFirst)
{
    Summary s;
    s.timeline.bin_ns = 1000;
    s.timeline.bins   = 2;
    s.timeline.migration_bytes.push_back({0, 5, {1000, 0}});
    s.timeline.migration_bytes.push_back({5, 0, {4000, 3000}});
    const auto series = bandwidth_series(s);
    ASSERT_EQ(series.size(), 2u);
    EXPECT_EQ(series[0].from_node, 5u); // 7000 bytes in all, drawn first
    EXPECT_DOUBLE_EQ(series[0].gb_per_s[0], 4.0);
    EXPECT_DOUBLE_EQ(series[1].gb_per_s[0], 1.0);
}

TEST(Plots, MoreThanSevenDirectionsFoldIntoOther)
{
    Summary s;
    s.timeline.bin_ns = 1;
    s.timeline.bins   = 1;
    for(uint64_t g = 1; g <= 9; ++g)
        s.timeline.migration_bytes.push_back({0, g, {static_cast<double>(g)}});
    const auto series = bandwidth_series(s);
    ASSERT_EQ(series.size(), 8u);
    EXPECT_TRUE(series.back().other);
    EXPECT_DOUBLE_EQ(series.back().gb_per_s[0], 1 + 2); // the two smallest
    EXPECT_EQ(series.back().label, "other (2 directions)");
}

TEST(Plots, CloseIntervalsAreJoinedOthersKept)
{
    const auto j = join_close_intervals({{100, 110}, {0, 10}, {12, 20}, {50, 60}}, 3);
    ASSERT_EQ(j.size(), 3u);
    EXPECT_EQ(j[0], (std::pair<uint64_t, uint64_t>{0, 20}));
    EXPECT_EQ(j[1], (std::pair<uint64_t, uint64_t>{50, 60}));
    EXPECT_EQ(j[2], (std::pair<uint64_t, uint64_t>{100, 110}));
}

TEST(Plots, TimeDomainCoversBinsAndIntervals)
{
    Summary s;
    s.timeline.start_ns = 1000;
    s.timeline.bin_ns   = 10;
    s.timeline.bins     = 5;
    s.queue_suspensions.push_back({1, {{990, 1020}, {1040, 1200}}, false});
    const TimeDomain d = time_domain(s);
    EXPECT_EQ(d.t0, 990u);
    EXPECT_EQ(d.t1, 1200u);
}
} // namespace
} // namespace rocprof_kfd_report
