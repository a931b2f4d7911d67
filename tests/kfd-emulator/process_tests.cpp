// MIT License - see LICENSE.
//
// The emulator inside a process's life: replay completed at exit (the "no application" use),
// a bounded exit, fork(), and what the library exports and links.
#include "emulator_fixture.hpp"
#include "sanitizer.hpp"

#include <algorithm>
#include <set>

namespace kfd_test
{
namespace
{
constexpr uint32_t gpu_a = 0x1ea0;
constexpr uint32_t self  = 100;

using Process = EmulatorTest;

std::vector<std::string>
many_faults(size_t count)
{
    std::vector<std::string> lines{"#@ gpu 1ea0", "#@ fifo 1024", "#@ self 100"};
    for(size_t i = 0; i < count; ++i)
        lines.push_back(fault_start(1000 + i, self, 0x1000 + i, gpu_a));
    return lines;
}

TEST_F(Process, ExitWaitsUntilTheWholeLogWasRead)
{
    // main() returns right after enabling events; a reader thread (like the SDK's) drains.
    auto result = probe(log(many_faults(3000)),
                        {"open", "smi:1ea0", "bgdrain:8192", "mask:0:" + all_events, "exitnow"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    json s = stats();
    EXPECT_EQ(s["producer"]["exit_wait"].str, "complete");
    EXPECT_EQ(s["total"]["not_emitted_at_exit"].u64(), 0u);
    EXPECT_EQ(s["total"]["events_queued"].u64(), 3000u);
    EXPECT_EQ(s["total"]["dropped_fifo_full"].u64(), 0u);
    const json& client = s["gpus"][0]["clients"][0];
    EXPECT_EQ(client["bytes_read"].u64(), client["bytes_queued"].u64());
    EXPECT_EQ(client["fifo_bytes_at_exit"].u64(), 0u);
}

TEST_F(Process, ExitGivesUpWhenNobodyReads)
{
    auto result =
        probe(log(many_faults(3000)), {"open", "smi:1ea0", "mask:0:" + all_events, "exitnow"},
              {{"KFD_EMULATOR_EXIT_TIMEOUT_MS", "300"}});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_LT(result.seconds, 5.0);
    EXPECT_NE(result.err.find("kfd-emulator: exit: gave up"), std::string::npos) << result.err;
    json s = stats();
    EXPECT_EQ(s["producer"]["exit_wait"].str, "timeout");
    uint64_t not_emitted = s["total"]["not_emitted_at_exit"].u64();
    EXPECT_GT(not_emitted, 2900u); // a 1024-byte FIFO holds a few dozen lines
    EXPECT_EQ(s["total"]["events_queued"].u64() + not_emitted, 3000u);
}

TEST_F(Process, NoWaitWhenNoClientEnabledEvents)
{
    auto result = probe(log(many_faults(50)), {"open", "smi:1ea0", "exitnow"});
    EXPECT_LT(result.seconds, 3.0); // the exit wait (5 s) was not entered
    json s = stats();
    EXPECT_FALSE(s["producer"]["started"].b);
    EXPECT_EQ(s["producer"]["exit_wait"].str, "not-started");
    EXPECT_EQ(s["total"]["not_emitted_at_exit"].u64(), 50u);
}

TEST_F(Process, ForkedChildCannotStealTheParentsEvents)
{
    auto result = probe(log(many_faults(20)),
                        {"open", "smi:1ea0", "forkread:0", "mask:0:" + all_events,
                         "drain:0:8192:1000:20", "cat:/sys/class/kfd/kfd/topology/nodes/1/gpu_id"});
    EXPECT_EQ(line_with(result, "child read "), "err EAGAIN") << result.out;
    EXPECT_EQ(line_with(result, "child version "), "err EBADF"); // amdkfd: not in a child
    EXPECT_EQ(line_with(result, "forkread done "), "0");
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 20u);
    // The child's exit removed neither the parent's topology nor wrote statistics.
    EXPECT_EQ(line_with(result, "cat "), "ok 7840\\n");
    json s = stats();
    EXPECT_EQ(s["pid"].u64(), s["gpus"][0]["clients"][0]["pid"].u64());
    EXPECT_EQ(s["total"]["events_queued"].u64(), 20u);
}

TEST_F(Process, OtherLibrariesForkHandlersMayUseOurFds)
{
    // A fork child handler registered before the emulator's (so it runs first in the child)
    // closes the SMI fds, while the parent's reader thread keeps reading: no deadlock, and
    // the parent still gets every event.
    if(test_sanitizer::address_sanitizer) GTEST_SKIP() << test_sanitizer::asan_fork_reason;
    auto result = probe(log(many_faults(3000)),
                        {"atforkclose", "open", "smi:1ea0", "bgdrain:8192", "mask:0:" + all_events,
                         "forkread:0", "forkread:0", "forkread:0", "exitnow"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(lines_with(result, "forkread done 0").size(), 3u) << result.out;
    EXPECT_EQ(lines_with(result, "child closed 1").size(), 3u);
    // The fd was closed in the child: its read sees a closed fd, not the parent's FIFO.
    EXPECT_EQ(lines_with(result, "child read err EBADF").size(), 3u);
    json s = stats();
    EXPECT_EQ(s["producer"]["exit_wait"].str, "complete");
    EXPECT_EQ(s["total"]["events_queued"].u64(), 3000u);
    EXPECT_EQ(s["total"]["not_emitted_at_exit"].u64(), 0u);
}

TEST_F(Process, ForkedChildOpeningTheDeviceGetsItsOwnReplay)
{
    auto result = probe(log(many_faults(5)), {"pid", "forkfresh:1ea0:300:5"});
    EXPECT_EQ(line_with(result, "forkfresh done "), "0");
    auto lines = split_lines(drained(result, 0));
    ASSERT_EQ(lines.size(), 5u) << result.out << result.err;
    // Its events carry the child's pid, not the parent's.
    EXPECT_EQ(lines[0].find(" -" + std::to_string(probe_pid(result)) + " "), std::string::npos);
    // The child's statistics go to <path>.<child pid>, never over the parent's file.
    EXPECT_FALSE(file_exists(stats_path()));
    auto listing = run_child("/bin/ls", {dir.path()}, {});
    EXPECT_NE(listing.out.find("stats.json."), std::string::npos) << listing.out;
}

TEST(Library, ExportsOnlyTheInterposedFunctions)
{
    auto symbols = run_child("/usr/bin/nm", {"-D", "--defined-only", emulator_library()}, {});
    ASSERT_EQ(symbols.exit_code, 0) << symbols.err;
    const std::set<std::string> allowed{"open",       "open64",     "openat",     "openat64",
                                        "__open_2",   "__open64_2", "__openat_2", "__openat64_2",
                                        "fopen",      "fopen64",    "ioctl",      "read",
                                        "__read_chk", "write",      "close"};
    std::set<std::string>       exported;
    for(const auto& line : symbols.lines)
    {
        std::string name = line.substr(line.rfind(' ') + 1);
        if(line.find(" T ") != std::string::npos || line.find(" W ") != std::string::npos ||
           line.find(" D ") != std::string::npos || line.find(" B ") != std::string::npos)
            exported.insert(name.substr(0, name.find('@')));
    }
    EXPECT_EQ(exported, allowed);
}

TEST(Library, LinksNothingButTheCRuntime)
{
    auto dynamic = run_child("/usr/bin/readelf", {"-d", emulator_library()}, {});
    ASSERT_EQ(dynamic.exit_code, 0) << dynamic.err;
    for(const auto& line : dynamic.lines)
    {
        if(line.find("(NEEDED)") == std::string::npos) continue;
        bool runtime = line.find("libc.so") != std::string::npos ||
                       line.find("libstdc++") != std::string::npos ||
                       line.find("libgcc_s") != std::string::npos ||
                       line.find("libm.so") != std::string::npos ||
                       line.find("libpthread") != std::string::npos ||
                       line.find("libdl") != std::string::npos;
        // A sanitizer build links its runtime into everything, this library included.
        bool sanitizer = test_sanitizer::active && (line.find("libasan.so") != std::string::npos ||
                                                    line.find("libubsan.so") != std::string::npos ||
                                                    line.find("libtsan.so") != std::string::npos);
        EXPECT_TRUE(runtime || sanitizer) << line;
    }
}
} // namespace
} // namespace kfd_test
