// MIT License - see LICENSE.
//
// The `#@` directives that shape a replay: version, timestamps, pace (and when lossless
// replay starts), and the statistics file that accounts for every line.
#include "emulator_fixture.hpp"

#include <chrono>

namespace kfd_test
{
namespace
{
constexpr uint32_t gpu_a = 0x1ea0;
constexpr uint32_t gpu_b = 0xfc7d;
constexpr uint32_t self  = 100;

using Directive = EmulatorTest;

std::vector<std::string>
faults(size_t count, uint64_t first_ns, uint64_t step_ns, uint32_t node = gpu_a)
{
    std::vector<std::string> lines;
    for(size_t i = 0; i < count; ++i)
        lines.push_back(fault_start(first_ns + i * step_ns, self, 0x1000 + i, node));
    return lines;
}

std::vector<std::string>
concat(std::vector<std::string> a, const std::vector<std::string>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// The ns field of each line.
std::vector<int64_t>
timestamps(const std::string& bytes)
{
    std::vector<int64_t> out;
    for(const auto& line : split_lines(bytes))
        out.push_back(std::stoll(line.substr(2, line.find(' ', 2) - 2)));
    return out;
}

TEST_F(Directive, VersionIsWhatTheLogSays)
{
    auto result =
        probe(log({"#@ version 1.9", fault_start(1, self, 1, gpu_a)}), {"open", "version"});
    EXPECT_EQ(line_with(result, "version "), "1 9");
}

TEST_F(Directive, TimestampsKeepLeavesThemVerbatim)
{
    auto result = probe(log(concat({"#@ timestamps keep"}, faults(3, 5000, 250))),
                        {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:1000"});
    EXPECT_EQ(timestamps(drained(result, 0)), (std::vector<int64_t>{5000, 5250, 5500}));
}

TEST_F(Directive, TimestampsRebaseStartsNowAndKeepsDifferences)
{
    auto lines = faults(3, 5000, 250);
    lines.push_back(fault_start(4000, self, 0x9, gpu_a)); // earlier than the first: fine
    auto result = probe(log(lines), {"now", "open", "smi:1ea0", "mask:0:" + all_events,
                                     "drain:0:8192:1000", "now"});
    auto nows   = lines_with(result, "now ");
    ASSERT_EQ(nows.size(), 2u);
    auto ts = timestamps(drained(result, 0));
    ASSERT_EQ(ts.size(), 4u) << result.out;
    EXPECT_GE(ts[0], std::stoll(nows[0])); // CLOCK_BOOTTIME "now" at the start of replay
    EXPECT_LE(ts[0], std::stoll(nows[1]));
    EXPECT_EQ(ts[1] - ts[0], 250);
    EXPECT_EQ(ts[2] - ts[0], 500);
    EXPECT_EQ(ts[3] - ts[0], -1000);
    EXPECT_EQ(stats()["ns_offset"].num, static_cast<double>(ts[0] - 5000));
}

TEST_F(Directive, RealtimePaceFollowsTheLogsClock)
{
    // Three events 300 ms apart in the log arrive about 300 ms apart.
    auto lines = concat({"#@ pace realtime"}, faults(3, 1000000000, 300000000));
    auto start = std::chrono::steady_clock::now();
    auto result =
        probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:1000"});
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 3u) << result.out;
    EXPECT_GE(seconds, 0.6);
}

TEST_F(Directive, RatePaceSpacesEvents)
{
    auto lines = concat({"#@ pace rate 20"}, faults(6, 1, 1)); // 5 gaps of 50 ms
    auto start = std::chrono::steady_clock::now();
    auto result =
        probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:800"});
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 6u) << result.out;
    EXPECT_GE(seconds, 0.25);
}

TEST_F(Directive, LosslessWaitsForSpaceAndDropsNothing)
{
    // 2000 events through a 1024-byte FIFO: far more than fits at once.
    auto lines  = concat({"#@ fifo 1024", "#@ pace lossless"}, faults(2000, 1, 1));
    auto result = probe(
        log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:1000", "close:0"});
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 2000u);
    json s = stats();
    EXPECT_EQ(s["total"]["events_queued"].u64(), 2000u);
    EXPECT_EQ(s["total"]["dropped_fifo_full"].u64(), 0u);
    // Lossless keeps one message (96 bytes) of headroom: never a "nearly full" FIFO. And it
    // fills the FIFO up to that headroom: the producer delivers a stage (at least 4 KiB of
    // messages, more than this FIFO holds) under the lock, so no read comes between two
    // of its messages before the FIFO has no room.
    EXPECT_LE(s["gpus"][0]["clients"][0]["max_fifo_fill"].u64(), 1024u - 96u);
    EXPECT_GT(s["gpus"][0]["clients"][0]["max_fifo_fill"].u64(), 1024u - 2 * 96u);
}

TEST_F(Directive, MaxPaceDropsWhereLosslessWouldWait)
{
    auto lines  = concat({"#@ fifo 1024", "#@ pace max"}, faults(2000, 1, 1));
    auto result = probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "sleep:600",
                                     "drain:0:8192:1000", "close:0"});
    json s      = stats();
    EXPECT_GT(s["total"]["dropped_fifo_full"].u64(), 1000u);
    EXPECT_EQ(s["total"]["events_queued"].u64() + s["total"]["dropped_fifo_full"].u64(), 2000u);
    EXPECT_EQ(split_lines(drained(result, 0)).size(), s["total"]["events_queued"].u64());
}

TEST_F(Directive, LosslessStartsOnceEveryGpuHasAnEnabledClient)
{
    auto lines = concat({"#@ gpu 1ea0", "#@ gpu fc7d"},
                        concat(faults(5, 1, 1, gpu_a), faults(5, 10, 1, gpu_b)));
    auto result =
        probe(log(lines), {"open", "smi:1ea0", "smi:fc7d", "mask:0:" + all_events,
                           "drain:0:8192:1000", "mask:1:" + all_events, "drainall:8192:1000"});
    auto drains = lines_with(result, "drain 0 ");
    ASSERT_EQ(drains.size(), 2u) << result.out;
    EXPECT_EQ(drains[0], "0 "); // gpu b had no enabled client yet: nothing was produced
    EXPECT_EQ(split_lines(unescape(drains[1].substr(drains[1].find(' ') + 1))).size(), 5u);
    EXPECT_EQ(split_lines(drained(result, 1)).size(), 5u);
}

TEST_F(Directive, RouteSendsNodeLessEventsToAGpu)
{
    auto lines  = {std::string("#@ gpu 1ea0"),   std::string("#@ gpu fc7d"), vmfault(self, "to-a"),
                   std::string("#@ route fc7d"), vmfault(self, "to-b"),      std::string("2 1:5")};
    auto result = probe(log(lines), {"open", "smi:1ea0", "smi:fc7d", "mask:0:" + all_events,
                                     "mask:1:" + all_events, "drainall:8192:1000"});
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 1u) << result.out;
    EXPECT_EQ(split_lines(drained(result, 1)).size(), 2u);
}

TEST_F(Directive, WaitMaskHoldsTheNextEventUntilTheMasksChange)
{
    // A before the first wait; B only once no client enables id 7 (so it is filtered);
    // C only once a client enables it again. The probe's drains wait for silence: the
    // replay cannot pass a wait before the probe writes the mask it waits for.
    auto lines  = {std::string("#@ gpu 1ea0"),
                   fault_start(1, self, 0xa, gpu_a),
                   std::string("#@ wait-mask 1ea0 without 7"),
                   fault_start(2, self, 0xb, gpu_a),
                   std::string("#@ wait-mask 1ea0 with 7"),
                   fault_start(3, self, 0xc, gpu_a)};
    auto result = probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:300",
                                     "mask:0:7fbf", "drain:0:8192:300", "mask:0:" + all_events,
                                     "drain:0:8192:300", "close:0"});
    auto drains = lines_with(result, "drain 0 ");
    ASSERT_EQ(drains.size(), 3u) << result.out;
    auto payload = [&](size_t i) { return unescape(drains[i].substr(drains[i].find(' ') + 1)); };
    // (pid and timestamps are rewritten: compare the pages)
    ASSERT_EQ(split_lines(payload(0)).size(), 1u);
    EXPECT_NE(payload(0).find(" @a(1ea0) R"), std::string::npos) << payload(0);
    EXPECT_EQ(drains[1], "0 "); // B was filtered by the mask
    ASSERT_EQ(split_lines(payload(2)).size(), 1u);
    EXPECT_NE(payload(2).find(" @c(1ea0) R"), std::string::npos) << payload(2);
    json s = stats();
    EXPECT_EQ(s["total"]["filtered_mask"].u64(), 1u);
    EXPECT_EQ(s["total"]["events_queued"].u64(), 2u);
    EXPECT_EQ(s["warnings"].items.size(), 0u);
}

TEST_F(Directive, BadWaitMaskIsReportedAndDoesNotPause)
{
    auto result = probe(log({"#@ wait-mask 1ea0 sometimes 7", fault_start(1, self, 1, gpu_a)}),
                        {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:300"});
    EXPECT_NE(result.err.find("wait-mask"), std::string::npos) << result.err;
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 1u);
}

// --- the statistics file --------------------------------------------------------------------

uint64_t
accounted(const json& c)
{
    return c["events_queued"].u64() + c["dropped_fifo_full"].u64() + c["filtered"].u64() +
           c["no_client"].u64() + c["after_vanish"].u64() + c["not_emitted_at_exit"].u64();
}

TEST_F(Directive, StatisticsAccountForEveryLine)
{
    // gpu a: 3 own faults, 1 of another process (filtered), 1 queue event masked out;
    // gpu b: 2 faults; a line for a GPU that is not emulated and a garbage line.
    auto lines = std::vector<std::string>{"#@ gpu 1ea0",
                                          "#@ gpu fc7d gfx942",
                                          "#@ self 100",
                                          "#@ fifo 1024",
                                          fault_start(1, self, 1, gpu_a),
                                          fault_start(2, 200, 2, gpu_a),
                                          queue_evict(3, self, gpu_a),
                                          fault_start(4, self, 3, gpu_a),
                                          fault_start(5, self, 4, gpu_b),
                                          "garbage line",
                                          fault_start(6, self, 5, gpu_a),
                                          fault_start(7, self, 6, gpu_b),
                                          fault_start(8, self, 7, 0x4444)};
    auto result =
        probe(log(lines), {"pid", "open", "smi:1ea0", "smi:fc7d", "mask:0:" + mask_of({7, 8}),
                           "mask:1:" + mask_of({7}), "drainall:8192:1000"});
    ASSERT_EQ(result.exit_code, 0);
    json s = stats();
    EXPECT_EQ(s["schema"].str, "kfd-emulator-stats/1");
    EXPECT_EQ(s["pid"].u64(), probe_pid(result));
    EXPECT_EQ(s["self_pid_log"].u64(), 100u);
    EXPECT_EQ(s["fifo_bytes"].u64(), 1024u);
    EXPECT_EQ(s["pace"].str, "lossless");
    EXPECT_EQ(s["version"].str, "1.17");
    EXPECT_TRUE(s["producer"]["started"].b);
    EXPECT_TRUE(s["producer"]["finished"].b);
    EXPECT_EQ(s["producer"]["exit_wait"].str, "complete");

    const json& a = s["gpus"][0];
    EXPECT_EQ(a["gpu_id"].u64(), 0x1ea0u);
    EXPECT_EQ(a["gpu_id_hex"].str, "1ea0");
    EXPECT_EQ(a["lines_read"].u64(), 5u);
    EXPECT_EQ(a["events_queued"].u64(), 3u);
    EXPECT_EQ(a["filtered_pid"].u64(), 1u);
    EXPECT_EQ(a["filtered_mask"].u64(), 1u);
    EXPECT_EQ(a["filtered"].u64(), 2u);
    EXPECT_EQ(a["not_emitted_at_exit"].u64(), 0u);
    EXPECT_EQ(accounted(a), a["lines_read"].u64());
    const json& client = a["clients"][0];
    EXPECT_EQ(client["pid"].u64(), probe_pid(result));
    EXPECT_EQ(client["mask"].str, "0xc0");
    EXPECT_EQ(client["bytes_read"].u64(), client["bytes_queued"].u64());
    EXPECT_EQ(client["bytes_read"].u64(), drained(result, 0).size());

    const json& b = s["gpus"][1];
    EXPECT_EQ(b["name"].str, "gfx942");
    EXPECT_EQ(b["lines_read"].u64(), 2u);
    EXPECT_EQ(b["events_queued"].u64(), 2u);

    // The line for gpu 4444 and the garbage one are malformed: counted in the total only.
    const json& total = s["total"];
    EXPECT_EQ(total["lines_read"].u64(), 9u);
    EXPECT_EQ(total["malformed"].u64(), 2u);
    EXPECT_EQ(accounted(total) + total["malformed"].u64(), total["lines_read"].u64());
}

TEST_F(Directive, LinesMalformedInAFieldThatDoesNotRouteThemAreNotDelivered)
{
    // The page and npages fields do not route an event, but a line with a bad one is not a
    // kernel message: it is counted as malformed and never delivered.
    auto lines = std::vector<std::string>{"#@ gpu 1ea0",
                                          fault_start(1, self, 1, gpu_a),
                                          "7 2 -100 @zz(1ea0) M",
                                          "5 3 -100 @7f0(q) 0->1ea0 ffffffff:ffffffff 1",
                                          "b 4 -100 @7f0() 1ea0 2",
                                          fault_start(5, self, 2, gpu_a)};
    auto result =
        probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "drainall:8192:1000"});
    ASSERT_EQ(result.exit_code, 0);
    auto got = split_lines(drained(result, 0));
    ASSERT_EQ(got.size(), 2u) << drained(result, 0);
    EXPECT_EQ(stats()["total"]["malformed"].u64(), 3u);
}

TEST_F(Directive, NoStatisticsWithoutADeviceOpen)
{
    auto result = probe(log({fault_start(1, self, 1, gpu_a)}),
                        {"cat:/sys/class/kfd/kfd/topology/nodes/1/gpu_id"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_FALSE(file_exists(stats_path()));
}

TEST_F(Directive, BadDirectivesAreReportedNotFatal)
{
    auto result = probe(log({"#@ pace sideways", fault_start(1, self, 1, gpu_a)}),
                        {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:1000"});
    EXPECT_NE(result.err.find("kfd-emulator: warning: line 1"), std::string::npos) << result.err;
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 1u);
    EXPECT_EQ(stats()["warnings"].items.size(), 1u);
}
} // namespace
} // namespace kfd_test
