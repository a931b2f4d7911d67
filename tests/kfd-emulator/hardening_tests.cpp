// MIT License - see LICENSE.
//
// The emulator is preloaded into arbitrary processes: it must not hang them, touch their
// fds, change their errno, leave files behind or clobber another process's statistics.
// Each test runs a case that used to go wrong.
#include "emulator_fixture.hpp"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <fstream>

namespace kfd_test
{
namespace
{
constexpr uint32_t gpu_a = 0x1ea0;
constexpr uint32_t self  = 100;

using Hardening = EmulatorTest;

std::vector<std::string>
faults(size_t count, const std::vector<std::string>& directives = {})
{
    std::vector<std::string> lines{"#@ gpu 1ea0", "#@ self 100"};
    lines.insert(lines.end(), directives.begin(), directives.end());
    for(size_t i = 0; i < count; ++i)
        lines.push_back(fault_start(1000 + i, self, 0x1000 + i, gpu_a));
    return lines;
}

// Two events 100 s apart, replayed in real time: the producer sleeps for the second one.
std::vector<std::string>
sparse_realtime_log()
{
    return {"#@ gpu 1ea0", "#@ self 100", "#@ pace realtime",
            fault_start(1000000000ull, self, 0x1000, gpu_a),
            fault_start(101000000000ull, self, 0x2000, gpu_a)};
}

pid_t
dead_pid()
{
    pid_t child = fork();
    if(child == 0) _exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    return child;
}

TEST_F(Hardening, VforkChildLeavesTheParentsStateAlone)
{
    auto result =
        probe(log(faults(20)),
              {"open", "smi:1ea0", "mask:0:" + all_events, "vforkclose:0", "drain:0:8192:300:20"},
              {}, 10);
    EXPECT_EQ(line_with(result, "vforkclose done "), "0") << result.err;
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 20u) << result.out << result.err;
    EXPECT_EQ(result.exit_code, 0);
    json s = stats();
    EXPECT_EQ(s["producer"]["exit_wait"].str, "complete");
    EXPECT_EQ(s["total"]["events_queued"].u64(), 20u);
}

TEST_F(Hardening, ExitDoesNotWaitForASleepingProducerNobodyReads)
{
    auto result = probe(log(sparse_realtime_log()), {"open", "smi:1ea0", "mask:0:7fff", "exitnow"},
                        {{"KFD_EMULATOR_EXIT_TIMEOUT_MS", "200"}}, 10);
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_LT(result.seconds, 5.0);
    json s = stats();
    EXPECT_EQ(s["producer"]["exit_wait"].str, "timeout");
    EXPECT_EQ(s["total"]["not_emitted_at_exit"].u64(), 1u);
}

TEST_F(Hardening, ExitTimeoutZeroDoesNotWait)
{
    auto result = probe(log(sparse_realtime_log()),
                        {"open", "smi:1ea0", "mask:0:7fff", "drain:0:8192:50", "exitnow"},
                        {{"KFD_EMULATOR_EXIT_TIMEOUT_MS", "0"}}, 10);
    EXPECT_LT(result.seconds, 5.0);
    EXPECT_EQ(stats()["producer"]["exit_wait"].str, "skipped");
}

TEST_F(Hardening, ExitEndsAtTheOverallLimitWhileTheReaderKeepsUp)
{
    // The reader keeps up, so the sleep counts as progress: only the overall limit ends it.
    auto result = probe(log(sparse_realtime_log()),
                        {"open", "smi:1ea0", "bgdrain:8192", "mask:0:7fff", "exitnow"},
                        {{"KFD_EMULATOR_EXIT_MAX_MS", "300"}}, 10);
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_LT(result.seconds, 5.0);
    EXPECT_NE(result.err.find("KFD_EMULATOR_EXIT_MAX_MS"), std::string::npos) << result.err;
    EXPECT_EQ(stats()["producer"]["exit_wait"].str, "limit");
}

TEST_F(Hardening, NeverClosesAProgramsFdThatReusedOurNumbers)
{
    // close_range() closes the SMI fd and our private end behind our back; the program
    // reuses the numbers; its next read of the old SMI fd number makes the emulator notice
    // and drop the client, without closing whatever the program now has there.
    // The replay is drained first, so that the producer thread is done with its own log fd
    // (a transient low number it may hold while the program refills the freed numbers).
    auto result =
        probe(log(faults(20)), {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:50",
                                "closerange:0", "fillfds:0:1100", "read:0:16", "checkfds"});
    EXPECT_EQ(line_with(result, "closerange "), "0") << result.out;
    EXPECT_EQ(line_with(result, "read 0 "), "0 "); // /dev/null, passed through
    EXPECT_EQ(line_with(result, "checkfds closed "), "0") << result.out << result.err;
}

TEST_F(Hardening, LogThatIsAFifoIsRefusedAtOnce)
{
    std::string fifo = dir.file("kfd.fifo");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    auto result = probe(fifo, {"open", "cat:/sys/class/kfd/kfd/topology/nodes/1/gpu_id"}, {}, 10);
    EXPECT_LT(result.seconds, 5.0);
    EXPECT_EQ(line_with(result, "open "), "err ENOENT") << result.err;
    EXPECT_NE(result.err.find("not a regular file"), std::string::npos) << result.err;
    json s = stats();
    EXPECT_NE(s["error"].str.find("not a regular file"), std::string::npos);
    EXPECT_FALSE(s["producer"]["started"].b);
}

TEST_F(Hardening, FirstInterposedCallKeepsErrno)
{
    auto result = probe(log(faults(3, {"#@ fifo 4096", "#@ version 1.16"})), {"errnoopen"});
    EXPECT_EQ(line_with(result, "errnoopen "), "ok EDOM") << result.err;
}

TEST_F(Hardening, StaleTopologyFoldersOfDeadProcessesAreRemoved)
{
    // A process killed by a signal leaves its folder, named with its pid.
    auto killed = probe(log(faults(3)), {"pid", "open", "selfkill"});
    EXPECT_EQ(killed.exit_code, -1);
    std::string leaked = "kfd-emulator-" + line_with(killed, "pid ") + "-";
    EXPECT_NE(run_child("/bin/ls", {dir.path()}, {}).out.find(leaked), std::string::npos);

    std::string stale = dir.file("kfd-emulator-" + std::to_string(dead_pid()) + "-abcdef");
    std::string live  = dir.file("kfd-emulator-" + std::to_string(getpid()) + "-abcdef");
    std::string other = dir.file("kfd-emulator-keepme");
    for(const auto& path : {stale, stale + "/nodes", stale + "/nodes/1", live, other})
        ASSERT_EQ(mkdir(path.c_str(), 0700), 0) << path;
    std::ofstream(stale + "/nodes/1/gpu_id") << "1\n";

    // The next process removes the folders of dead processes, and only those.
    auto result = probe(log(faults(3)), {"open", "cat:/sys/class/kfd/kfd/topology/nodes/1/gpu_id"});
    EXPECT_EQ(line_with(result, "cat "), "ok 7840\\n") << result.err;
    EXPECT_FALSE(file_exists(stale));
    EXPECT_TRUE(file_exists(live));
    EXPECT_TRUE(file_exists(other));
    EXPECT_EQ(run_child("/bin/ls", {dir.path()}, {}).out.find(leaked), std::string::npos);
}

TEST_F(Hardening, RelativeStatsPathIsFixedAtLoad)
{
    ASSERT_EQ(mkdir(dir.file("sub").c_str(), 0700), 0);
    char before[PATH_MAX];
    ASSERT_NE(getcwd(before, sizeof(before)), nullptr);
    ASSERT_EQ(chdir(dir.path().c_str()), 0);
    auto result = probe(log(faults(3)), {"chdir:sub", "open", "closekfd"},
                        {{"KFD_EMULATOR_STATS", "stats.json"}});
    ASSERT_EQ(chdir(before), 0);
    EXPECT_EQ(line_with(result, "chdir "), "ok");
    EXPECT_TRUE(file_exists(dir.file("stats.json"))) << result.err;
    EXPECT_FALSE(file_exists(dir.file("sub/stats.json")));
}

TEST_F(Hardening, StatisticsTempFileNeverFollowsAPlantedSymlink)
{
    // Another user planted a symlink where the statistics' temporary file used to go
    // (<stats>.tmp.<pid>, the pid is known once the process runs): it must not be followed.
    std::string victim = dir.write("victim", "precious\n");
    std::string shell  = "cd '" + dir.path() + "' && ln -s victim stats.json.tmp.$$ && exec '" +
                        probe_program() + "' open closekfd";
    auto result = run_child("/bin/sh", {"-c", shell},
                            {{"LD_PRELOAD", emulator_library()},
                             {"KFD_EMULATOR_LOG", log(faults(3))},
                             {"KFD_EMULATOR_STATS", stats_path()},
                             {"TMPDIR", dir.path()}});
    EXPECT_EQ(line_with(result, "open "), "ok") << result.err;
    EXPECT_EQ(read_file(victim), "precious\n");
    EXPECT_TRUE(stats().has("pid")) << read_file(stats_path());
    // Nothing but the planted link is left next to the statistics.
    auto listing = run_child("/bin/ls", {dir.path()}, {});
    auto names   = split_lines(listing.out);
    ASSERT_EQ(names.size(), 4u) << listing.out;
    EXPECT_EQ(names[0], "kfd.log");
    EXPECT_EQ(names[1], "stats.json");
    EXPECT_EQ(names[2].rfind("stats.json.tmp.", 0), 0u) << names[2];
    EXPECT_EQ(names[3], "victim");
}

TEST_F(Hardening, ExitTimeoutsOutOfRangeAreRefusedNotWrapped)
{
    // 2^64 used to become LONG_MAX ms, which overflowed the exit deadline's int64 ns.
    auto result = probe(log(faults(3)),
                        {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:200", "exitnow"},
                        {{"KFD_EMULATOR_EXIT_TIMEOUT_MS", "18446744073709551616"},
                         {"KFD_EMULATOR_EXIT_MAX_MS", "-1"}});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("ignoring KFD_EMULATOR_EXIT_TIMEOUT_MS=18446744073709551616"),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("ignoring KFD_EMULATOR_EXIT_MAX_MS=-1"), std::string::npos)
        << result.err;
    EXPECT_EQ(stats()["producer"]["exit_wait"].str, "complete");
}

TEST_F(Hardening, TheProducersTimerSlackIsTheOneAskedFor)
{
    // A paced producer's sleeps end up to its timer slack late, which sets how events bunch
    // up: benchmarks choose it, and the statistics say what the producer ran with.
    ASSERT_NE(prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL), 2000); // not merely inherited
    auto result = probe(log(faults(3)),
                        {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:200", "exitnow"},
                        {{"KFD_EMULATOR_TIMER_SLACK_NS", "2000"}});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(stats()["producer"]["timer_slack_ns"].u64(), 2000u);
}

TEST_F(Hardening, WithoutATimerSlackTheProducerKeepsTheOneItInherits)
{
    // The probe inherits this process's slack; so does the producer, from the probe's thread.
    const auto inherited = static_cast<uint64_t>(prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL));
    ASSERT_NE(inherited, 2000u);
    auto result = probe(log(faults(3)),
                        {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:200", "exitnow"},
                        {{"KFD_EMULATOR_TIMER_SLACK_NS", "2 us"}});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("ignoring KFD_EMULATOR_TIMER_SLACK_NS=2 us: not a number of ns"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(stats()["producer"]["timer_slack_ns"].u64(), inherited);
}

TEST_F(Hardening, ExecdProgramDoesNotClobberTheStatistics)
{
    auto result = probe(log(faults(5)), {"pid", "open", "smi:1ea0", "mask:0:" + all_events,
                                         "drain:0:8192:200", "spawn:open,closekfd"});
    EXPECT_EQ(line_with(result, "spawn done "), "0");
    // The running parent's claim holds: the exec'd program writes stats.json.<its pid>.
    auto listing = run_child("/bin/ls", {dir.path()}, {});
    EXPECT_NE(listing.out.find("stats.json."), std::string::npos) << listing.out;
    json s = stats();
    EXPECT_EQ(s["pid"].u64(), probe_pid(result));
    EXPECT_EQ(s["total"]["events_queued"].u64(), 5u);
}

TEST_F(Hardening, EdgeTriggeredEpollIsWokenForEveryMessage)
{
    // A FIFO that holds one message but not two (lossless pace keeps one message of room;
    // timestamps kept, so that only the pid changes the length of a message):
    // reading part of the first makes room for the second while the first is still unread.
    std::string line   = fault_start(1000, self, 0x1000, gpu_a);
    size_t      base   = line.size() - 3 + 1; // without the 3 digits of pid 100, with '\n'
    size_t      fifo   = 2 * base + 97;       // see must_wait_for_space: pid of 1 to 7 digits
    auto        lines  = faults(2, {"#@ fifo " + std::to_string(fifo), "#@ timestamps keep"});
    auto        result = probe(log(lines),
                               {"open", "smi:1ea0", "epollet:0", "mask:0:" + all_events, "epwait:2000",
                                "read:0:20", "epwait:2000", "drain:0:8192:50"},
                               {}, 10);
    auto        waits  = lines_with(result, "epwait ");
    ASSERT_EQ(waits.size(), 2u) << result.out;
    EXPECT_EQ(waits[0], "1");
    EXPECT_EQ(waits[1], "1") << "no new edge for the second message";
}
} // namespace
} // namespace kfd_test
