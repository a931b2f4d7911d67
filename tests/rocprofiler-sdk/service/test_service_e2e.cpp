// MIT License - see LICENSE.
//
// The page-migration service end to end: a log replayed by the KFD emulator through the real
// /dev/kfd code path (open, ioctl, mask write, poll, read) into the SDK and a tool
// (e2e_tool.cpp) in a child process. Expected records are written out by hand from the
// contract's record semantics, never produced by the code under test.
#include "run_process.hpp"
#include "sanitizer.hpp"

#include <gtest/gtest.h>

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using test_support::lines_of;
using test_support::read_file;
using test_support::run_process;
using test_support::scratch_dir;
using test_support::write_file;

namespace
{
const std::string emulator = ROCP_TEST_EMULATOR;
const std::string tool     = ROCP_TEST_E2E_TOOL;
const std::string app      = ROCP_TEST_APP_PLAIN;
const std::string fork_app = ROCP_TEST_APP_FORK;
const std::string wait_app = ROCP_TEST_APP_WAIT;

struct run_output
{
    int                                exit_code = -1;
    std::vector<std::string>           records; // fault/migrate/queue/unmap lines, sorted
    std::vector<std::string>           raw;     // raw event lines, in arrival order
    std::map<std::string, std::string> values;  // configure, start, stopped_with, ...
    std::map<std::string, uint64_t>    stats;
    std::string                        emulator_stats;
};

// Linux 6.12 or later: sched_runtime is a SCHED_OTHER thread's slice.
bool
kernel_keeps_the_slice()
{
    utsname u{};
    int     major = 0, minor = 0;
    if(uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
    return major > 6 || (major == 6 && minor >= 12);
}

run_output
replay(const std::string& log, std::vector<std::pair<std::string, std::string>> env = {},
       const std::string& program = app, std::string* program_output = nullptr)
{
    scratch_dir dir;
    write_file(dir.file("events.log"), log);
    // The SDK must know the emulated FIFO's size (else it takes the host kernel's): a read
    // it wrongly took for a full FIFO would drop outstanding starts.
    bool has_fifo = false;
    for(const auto& [name, value] : env)
        has_fifo = has_fifo || name == "ROCPROFILER_KFD_FIFO_BYTES";
    if(!has_fifo)
    {
        auto at = log.find("#@ fifo ");
        env.emplace_back("ROCPROFILER_KFD_FIFO_BYTES",
                         at == std::string::npos ? "8192"
                                                 : log.substr(at + 8, log.find('\n', at) - at - 8));
    }
    env.emplace_back("LD_PRELOAD", emulator + ":" + tool);
    env.emplace_back("KFD_EMULATOR_LOG", dir.file("events.log"));
    env.emplace_back("KFD_EMULATOR_STATS", dir.file("stats.json"));
    env.emplace_back("E2E_OUT", dir.file("out.csv"));
    auto result = run_process({program}, env, 60, true);
    if(program_output) *program_output = result.output; // stdout and stderr
    run_output out;
    out.exit_code      = result.exit_code;
    out.emulator_stats = read_file(dir.file("stats.json"));
    for(const auto& line : lines_of(read_file(dir.file("out.csv"))))
    {
        auto comma = line.find(',');
        auto head  = line.substr(0, comma);
        auto rest  = comma == std::string::npos ? "" : line.substr(comma + 1);
        if(head == "fault" || head == "migrate" || head == "queue" || head == "unmap" ||
           head.rfind("bad-", 0) == 0 || head == "unknown-operation")
            out.records.push_back(line);
        else if(head == "raw")
            out.raw.push_back(line);
        else if(head == "stats")
        {
            std::stringstream fields{rest};
            std::string       field;
            while(std::getline(fields, field, ','))
            {
                auto eq                        = field.find('=');
                out.stats[field.substr(0, eq)] = std::stoull(field.substr(eq + 1));
            }
        }
        else
            out.values[head] = rest;
    }
    std::sort(out.records.begin(), out.records.end());
    return out;
}

std::vector<std::string>
sorted(std::vector<std::string> v)
{
    std::sort(v.begin(), v.end());
    return v;
}

// Every record shape and kernel-format variant, on two GPUs, with one orphan end and one
// start that never ends. Node 1ea0 and 2b4c; the log's pid 4242 is this process.
const std::string variants_log =
    std::string{"#@ gpu 1ea0 gfx90a\n"
                "#@ gpu 2b4c gfx942\n"
                "#@ self 4242\n"
                "#@ timestamps keep\n"
                "7 1000 -4242 @7fa608127(1ea0) R\n"
                "7 1100 -4242 @7fa608127(2b4c) W\n"
                "8 1500 -4242 @7fa608127(1ea0) M\n"
                "8 1600 -4242 @7fa608127(2b4c) U\n"
                "5 2000 -4242 @7f0f15200(2c02) 0->1ea0 ffffffff:ffffffff 0\n"
                "6 2100 -4242 @7f0f15200(2c02) 0->1ea0 0\n"
                "5 3000 -4242 @7f0000000(10) 2b4c->0 0:2b4c 3\n"
                "6 3300 -4242 @7f0000000(10) 2b4c->0 3 -14\n"
                "9 4000 -4242 1ea0 0\n"
                "a 4100 -4242 1ea0\n"
                "9 4200 -4242 1ea0 2\n"
                "a 4300 -4242 1ea0 "} +
    std::string{"\0\n", 2} +
    "9 4400 -4242 2b4c 3\n"
    "a 4500 -4242 2b4c 0\n"
    "9 4600 -4242 2b4c 1\n"
    "a 4700 -4242 2b4c R\n" // rescheduled: the queues stay evicted
    "a 4800 -4242 2b4c 0\n"
    "b 5000 -4242 @7f93ac200(200) 1ea0 2\n"
    "8 6000 -4242 @1234(1ea0) M\n"
    "7 6100 -4242 @5678(1ea0) R\n";

const std::vector<std::string> variants_records = {
    "fault,SELF,1000,1500,1ea0,7fa608127000,1,1",
    "fault,SELF,1100,1600,2b4c,7fa608127000,0,0",
    "migrate,SELF,2000,2100,7f0f15200000,7f0f17e01fff,0,1ea0,ffffffff,ffffffff,0",
    "migrate,SELF,3000,3300,7f0000000000,7f000000ffff,2b4c,0,0,2b4c,3",
    "queue,SELF,4000,4100,1ea0,0,0",
    "queue,SELF,4200,4300,1ea0,2,0",
    "queue,SELF,4400,4500,2b4c,3,0",
    "queue,SELF,4600,4800,2b4c,1,1",
    "unmap,SELF,5000,5000,1ea0,7f93ac200000,7f93ac400000,2",
};
} // namespace

TEST(service_e2e, every_variant_gives_exactly_the_expected_records)
{
    auto out = replay(variants_log);
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["configure"], "0");
    EXPECT_EQ(out.values["start"], "0");
    EXPECT_EQ(out.records, sorted(variants_records));
    EXPECT_EQ(out.stats["received"], 20u);
    EXPECT_EQ(out.stats["emitted"], 9u);
    EXPECT_EQ(out.stats["ends_without_start"], 1u);
    EXPECT_EQ(out.stats["never_ended"], 1u);
    EXPECT_EQ(out.stats["malformed"], 0u);
    EXPECT_EQ(out.stats["dropped"], 0u);
    EXPECT_EQ(out.values["buffer_drops"], "0");
}

TEST(service_e2e, operation_filter_delivers_and_enables_only_what_is_asked)
{
    auto out = replay(variants_log, {{"E2E_OPS", "2"}});
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.records, sorted({variants_records[0], variants_records[1]}));
    // Kernel mask: ids 7 and 8 (fault) plus 14 (drop reports) only.
    EXPECT_NE(out.emulator_stats.find("\"mask\":\"0x20c0\""), std::string::npos)
        << out.emulator_stats;
    EXPECT_EQ(out.emulator_stats.find("\"mask\":\"0x27f0\""), std::string::npos);
}

TEST(service_e2e, two_operations_of_four)
{
    auto out = replay(variants_log, {{"E2E_OPS", "3,4"}});
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.records, sorted({variants_records[4], variants_records[5], variants_records[6],
                                   variants_records[7], variants_records[8]}));
}

TEST(service_e2e, raw_events_arrive_unpaired_with_their_ids)
{
    auto out = replay(variants_log, {{"E2E_RAW", "1"}});
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["configure_raw"], "0");
    ASSERT_EQ(out.raw.size(), 20u);
    std::map<int, int> per_id;
    for(const auto& line : out.raw)
        per_id[std::stoi(line.substr(4))] += 1;
    EXPECT_EQ(per_id[7], 3); // two paired starts and the one never ended
    EXPECT_EQ(per_id[8], 3); // two paired ends and the orphan
    EXPECT_EQ(per_id[5], 2);
    EXPECT_EQ(per_id[6], 2);
    EXPECT_EQ(per_id[9], 4);
    EXPECT_EQ(per_id[10], 5);
    EXPECT_EQ(per_id[11], 1);
    EXPECT_EQ(out.records.size(), 9u); // pairing is unaffected
}

namespace
{
std::string
fault_pairs(int first, int pairs)
{
    std::string lines;
    char        line[128];
    for(int i = first; i < first + pairs; ++i)
    {
        snprintf(line, sizeof(line), "7 %d -77 @%x(1ea0) R\n8 %d -77 @%x(1ea0) M\n", 1000 + 10 * i,
                 0x10000 + i, 1005 + 10 * i, 0x10000 + i);
        lines += line;
    }
    return lines;
}

std::string
many_faults_log(int pairs, const std::string& pace)
{
    return "#@ gpu 1ea0\n#@ self 77\n#@ timestamps keep\n#@ pace " + pace + "\n" +
           fault_pairs(0, pairs);
}
} // namespace

TEST(service_e2e, finalization_while_events_flow_loses_nothing)
{
    // The app exits at once; the replay (lossless: the emulator waits for FIFO space) is
    // still running. Everything queued before exit must reach the tool.
    auto out = replay(many_faults_log(20000, "lossless"));
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.records.size(), 20000u);
    EXPECT_EQ(out.stats["emitted"], 20000u);
    EXPECT_EQ(out.stats["never_ended"], 0u);
    EXPECT_EQ(out.stats["ends_without_start"], 0u);
    EXPECT_NE(out.emulator_stats.find("\"not_emitted_at_exit\":0"), std::string::npos);
}

TEST(service_e2e, nothing_is_written_after_stop_returns)
{
    auto out = replay(many_faults_log(20000, "lossless"), {{"E2E_STOP_AFTER", "100"}});
    ASSERT_EQ(out.exit_code, 0);
    ASSERT_NE(out.values.count("stopped_with"), 0u);
    auto at_stop = std::stoull(out.values["stopped_with"]);
    EXPECT_GE(at_stop, 100u);
    EXPECT_EQ(out.records.size(), at_stop); // nothing arrived after the stop
}

TEST(service_e2e, other_processes_are_filtered_unless_asked)
{
    // The SDK filters by pid only when it has CAP_SYS_ADMIN (otherwise the kernel sends a
    // process nothing but its own events); the emulator's superuser clients get everyone's.
    if(geteuid() != 0) GTEST_SKIP() << "needs root (CAP_SYS_ADMIN), as CI runs";
    const std::string log = "#@ gpu 1ea0\n#@ self 10\n#@ superuser yes\n#@ timestamps keep\n"
                            "7 100 -10 @1000(1ea0) R\n8 200 -10 @1000(1ea0) M\n"
                            "7 110 -20 @2000(1ea0) W\n8 210 -20 @2000(1ea0) U\n";
    auto              out = replay(log);
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.records, (std::vector<std::string>{"fault,SELF,100,200,1ea0,1000000,1,1"}));
    EXPECT_EQ(out.stats["other_process"], 2u);

    auto all = replay(log, {{"ROCPROFILER_KFD_ALL_PROCESSES", "1"}});
    ASSERT_EQ(all.exit_code, 0);
    EXPECT_EQ(all.records,
              sorted({"fault,SELF,100,200,1ea0,1000000,1,1", "fault,20,110,210,1ea0,2000000,0,0"}));
    EXPECT_EQ(all.stats["other_process"], 0u);
}

TEST(service_e2e, forked_child_never_touches_the_parents_streams)
{
    // The SDK's threads run (and allocate) while the app forks.
    if(test_sanitizer::address_sanitizer) GTEST_SKIP() << test_sanitizer::asan_fork_reason;
    // The parent keeps tracing through the fork; the child closes its copies of the SMI fds,
    // delivers nothing and does not finalize the tool (which would overwrite the output).
    std::string program_output;
    auto        out = replay(many_faults_log(20000, "lossless"), {}, fork_app, &program_output);
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_NE(program_output.find("app: child done=0"), std::string::npos) << program_output;
    EXPECT_NE(program_output.find("app: child exit=0"), std::string::npos) << program_output;
    EXPECT_EQ(out.records.size(), 20000u);
    EXPECT_EQ(out.stats["emitted"], 20000u);
    EXPECT_EQ(out.stats["never_ended"], 0u);
}

TEST(service_e2e, internal_threads_are_announced_to_tools)
{
    auto out = replay(variants_log);
    ASSERT_EQ(out.exit_code, 0);
    // The reader thread and the default callback thread, each announced before and after.
    EXPECT_EQ(out.values["thread_notifications"], "2,2");
}

// The reader asks for a 300 us slice (reader_slice.hpp) and keeps the nice value it inherits
// from the thread that started tracing; the callback thread keeps the scheduler's default.
// Linux 6.12+ reports the slice as sched_runtime; earlier kernels ignore it and report 0. The
// tool looks at both threads in its first callback, which then exits the program: the
// program waits for that, so the reader still runs (no timing involved).
run_output
scheduling_seen_by_the_first_callback(std::vector<std::pair<std::string, std::string>> env)
{
    env.emplace_back("E2E_REPORT_SCHED", "1");
    env.emplace_back("E2E_CALLBACK", "exit");
    std::string printed;
    auto        out = replay(many_faults_log(2000, "lossless"), env, wait_app, &printed);
    EXPECT_EQ(out.exit_code, 0) << printed;
    return out;
}

TEST(service_e2e, reader_thread_asks_for_a_short_slice_and_keeps_its_nice)
{
    auto              out   = scheduling_seen_by_the_first_callback({{"E2E_NICE", "3"}});
    const std::string slice = kernel_keeps_the_slice() ? "300000" : "0";
    EXPECT_EQ(out.values["reader_sched"], "0,3," + slice); // SCHED_OTHER, nice 3
    auto callback = out.values["callback_sched"];
    EXPECT_EQ(callback.rfind("0,3,", 0), 0u) << callback;
    if(kernel_keeps_the_slice()) EXPECT_NE(callback, "0,3,300000"); // the default slice
}

TEST(service_e2e, reader_slice_zero_leaves_the_readers_scheduling_alone)
{
    auto out = scheduling_seen_by_the_first_callback({{"ROCPROFILER_KFD_READER_SLICE_US", "0"}});
    ASSERT_NE(out.values["reader_sched"], "none");
    ASSERT_FALSE(out.values["reader_sched"].empty());
    EXPECT_EQ(out.values["reader_sched"], out.values["callback_sched"]);
}

TEST(service_e2e, slow_callback_still_gets_every_record_at_exit)
{
    auto out = replay(many_faults_log(5000, "lossless"),
                      {{"E2E_CALLBACK", "slow"}, {"E2E_BUFFER_BYTES", "16384"}});
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.records.size(), 5000u);
    EXPECT_EQ(out.stats["dropped"], 0u);
}

TEST(service_e2e, throwing_callback_does_not_harm_the_application)
{
    auto out = replay(variants_log, {{"E2E_CALLBACK", "throw"}});
    EXPECT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.records, sorted(variants_records)); // recorded before throwing
}

TEST(service_e2e, stuck_callback_does_not_hang_exit)
{
    // 100 records fill the 4 KiB buffer and reach the callback, which blocks for good; only
    // then (the gate: the callback starts a context that enables unmaps, id b) does the
    // replay go on, so that 20 000 more records arrive while the callback is stuck and some
    // are still in the buffer at exit, however the threads are scheduled.
    const std::string log =
        many_faults_log(100, "lossless") + "#@ wait-mask 1ea0 with b\n" + fault_pairs(100, 20000);
    auto        start = std::chrono::steady_clock::now();
    std::string output;
    auto        out  = replay(log,
                              {{"E2E_CALLBACK", "hang"},
                               {"E2E_HANG_STARTS_MARKERS", "1"},
                               {"E2E_OPS", "2"}, // page faults only: no unmaps before the gate
                               {"E2E_BUFFER_BYTES", "4096"},
                               {"ROCPROFILER_FINALIZE_TIMEOUT_MS", "500"}},
                              app, &output);
    auto        took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(out.exit_code, 0);
    // The callback is still running at the deadline: the tool's finalize is not called (it
    // would run concurrently with that callback), so the tool writes nothing, and the SDK
    // says why.
    EXPECT_EQ(out.values.count("callbacks"), 0u);
    EXPECT_NE(output.find("its finalize is not called"), std::string::npos) << output;
    // What the stuck callback never got is counted as dropped and reported.
    EXPECT_NE(output.find("records never delivered, counted in records_dropped"), std::string::npos)
        << output;
    // The gate opened: the replay went past the wait (more than the first 200 events).
    const auto emitted = out.emulator_stats.find("\"events_emitted\":");
    ASSERT_NE(emitted, std::string::npos) << out.emulator_stats;
    EXPECT_GT(std::stoull(out.emulator_stats.substr(emitted + 17)), 200u) << out.emulator_stats;
    EXPECT_LT(took, std::chrono::seconds{20});
}

// ---- device error paths and reader faults, through the emulator's fault injection ----

namespace
{
std::string
with_directives(const std::string& directives, const std::string& log = variants_log)
{
    return directives + log;
}
} // namespace

TEST(service_e2e, no_device_is_not_available_and_says_why)
{
    std::string printed;
    auto        out = replay(with_directives("#@ fault open enoent\n"), {}, app, &printed);
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["configure"], "36"); // ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE
    EXPECT_EQ(out.values["start"], "0");      // the context has nothing to start: fine
    EXPECT_TRUE(out.records.empty());
    EXPECT_NE(printed.find("/dev/kfd does not exist"), std::string::npos) << printed;
}

TEST(service_e2e, permission_denied_says_to_join_the_render_group)
{
    std::string printed;
    auto        out = replay(with_directives("#@ fault open eacces\n"), {}, app, &printed);
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["configure"], "36");
    EXPECT_NE(printed.find("'render' group"), std::string::npos) << printed;
}

TEST(service_e2e, old_kernel_is_incompatible)
{
    std::string printed;
    auto        out = replay(with_directives("#@ version 1.9\n"), {}, app, &printed);
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["configure"], "27"); // ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_KERNEL
    EXPECT_NE(printed.find("older than 1.10"), std::string::npos) << printed;
}

TEST(service_e2e, version_ioctl_failure_is_not_available)
{
    auto out = replay(with_directives("#@ fault version einval\n"));
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["configure"], "36");
}

TEST(service_e2e, failing_gpu_is_skipped_and_the_others_traced)
{
    std::string printed;
    auto        out = replay(with_directives("#@ fault smi 2b4c\n"), {}, app, &printed);
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["configure"], "0");
    std::vector<std::string> expected;
    for(const auto& r : variants_records)
        if(r.find(",2b4c,") == std::string::npos) expected.push_back(r);
    EXPECT_EQ(out.records, sorted(expected));
    EXPECT_NE(printed.find("GPU 11084: cannot open its SMI event stream"), std::string::npos)
        << printed;
}

TEST(service_e2e, every_gpu_failing_is_not_available)
{
    auto out = replay(with_directives("#@ fault smi 1ea0\n#@ fault smi 2b4c\n"));
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["configure"], "36");
}

// The emulator injects read faults into read(), which an io_uring reader does not call: these
// tests read with poll() and read() also where the suite runs with the io_uring reader
// (uring_reader.*; the io_uring loop handles a failed READ as the poll loop a failed read).
const std::pair<std::string, std::string> poll_reader = {"ROCPROFILER_KFD_IO_URING", "0"};

TEST(service_e2e, interrupted_reads_lose_nothing)
{
    auto out = replay(with_directives("#@ fault read eintr every 2\n"), {poll_reader});
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.records, sorted(variants_records));
}

TEST(service_e2e, failed_reads_are_survived_and_counted)
{
    auto out = replay(with_directives("#@ fault read efault once\n"), {poll_reader});
    ASSERT_EQ(out.exit_code, 0);
    // What the failed read consumed is gone (as with the kernel); the rest is delivered and
    // every record delivered is a correct one.
    auto expected = sorted(variants_records);
    for(const auto& r : out.records)
        EXPECT_TRUE(std::binary_search(expected.begin(), expected.end(), r)) << r;
    EXPECT_LT(out.records.size(), expected.size());
}

// Waits that used to be bounded by the clock are made unbounded here (the SDK's and the
// emulator's exit timeouts at their maximum): a wait that should not happen then hangs the
// child until run_process kills it, and the test fails whatever the machine's load.
const std::vector<std::pair<std::string, std::string>> no_exit_timeouts = {
    {"ROCPROFILER_FINALIZE_TIMEOUT_MS", "3600000"}, {"KFD_EMULATOR_EXIT_TIMEOUT_MS", "1000000000"}};

TEST(service_e2e, vanishing_gpu_stops_its_stream_without_spinning)
{
    // Line numbers count the directive lines: GPU 2b4c disappears before its queue pairs.
    std::string printed;
    auto        out =
        replay(with_directives("#@ fault vanish 2b4c 19 hup\n"), no_exit_timeouts, app, &printed);
    ASSERT_EQ(out.exit_code, 0) << printed;
    // The emulator's exit wait ended because everything was read, not by a timeout.
    EXPECT_NE(out.emulator_stats.find("\"exit_wait\":\"complete\""), std::string::npos)
        << out.emulator_stats;
    EXPECT_NE(printed.find("event stream was hung up"), std::string::npos) << printed;
    // Every 1ea0 record arrives; of 2b4c only those completed before it vanished.
    for(const auto& r : variants_records)
        if(r.find(",1ea0,") != std::string::npos)
            EXPECT_TRUE(std::count(out.records.begin(), out.records.end(), r) == 1) << r;
    EXPECT_EQ(std::count(out.records.begin(), out.records.end(), variants_records[6]), 0);
    EXPECT_EQ(std::count(out.records.begin(), out.records.end(), variants_records[7]), 0);
}

TEST(service_e2e, finalize_requested_from_inside_a_callback_runs_once_after_it)
{
    // A finalize (or flush) that waited for its own callback would now wait forever.
    std::string printed;
    auto        env = no_exit_timeouts;
    env.emplace_back("E2E_FINALIZE_AFTER", "100");
    auto out = replay(many_faults_log(20000, "lossless"), env, app, &printed);
    ASSERT_EQ(out.exit_code, 0) << printed;
    EXPECT_EQ(printed.find("FINALIZED TWICE"), std::string::npos) << printed;
    EXPECT_EQ(printed.find("CALLBACK AFTER FINALIZE"), std::string::npos) << printed;
    // The tool's finalize wrote what it had then: at least the 100 it asked for. (How many
    // more depends on timing: not asserted.)
    EXPECT_GE(out.records.size(), 100u);
}

namespace
{
uint64_t
json_number(const std::string& json, const std::string& key, size_t from = 0)
{
    auto at = json.find("\"" + key + "\":", from);
    if(at == std::string::npos) return UINT64_MAX;
    return std::stoull(json.substr(at + key.size() + 3));
}
} // namespace

TEST(service_e2e, kernel_fifo_drops_show_up_as_saturated_reads)
{
    // Pace "max": the emulator produces like a kernel, independently of the reader, into
    // 1 KiB FIFOs (Linux before 6.13) and drops silently when they are full. A drop means
    // the FIFO held more than 1024 - 96 bytes, so the next read returns at least that much:
    // the SDK must count a saturated read whenever the emulator dropped anything.
    // Nothing can be read until the whole log was produced (the reader cannot keep up at all),
    // so the FIFO fills and drops whatever the machine's speed.
    std::string log = many_faults_log(2000, "max");
    log             = "#@ fifo 1024\n#@ fault read eagain until-replayed\n" + log;
    auto out        = replay(log, {{"ROCPROFILER_KFD_FIFO_BYTES", "1024"}, poll_reader});
    ASSERT_EQ(out.exit_code, 0);
    auto total   = out.emulator_stats.find("\"total\":");
    auto dropped = json_number(out.emulator_stats, "dropped_fifo_full", total);
    ASSERT_NE(dropped, UINT64_MAX) << out.emulator_stats;
    auto queued = json_number(out.emulator_stats, "events_queued", total);
    // Everything the emulator queued reached the SDK, nothing more.
    EXPECT_EQ(out.stats["received"], queued);
    ASSERT_GT(dropped, 0u) << out.emulator_stats;
    EXPECT_GT(out.stats["saturations"], 0u) << "emulator dropped " << dropped;
}

TEST(service_e2e, exit_called_from_inside_a_callback_finishes_cleanly)
{
    // The app waits forever: only the callback's exit() ends it, and with no exit timeouts an
    // exit that waited for the callback that called it would never end (run_process kills it).
    std::string printed;
    auto        env = no_exit_timeouts;
    env.emplace_back("E2E_CALLBACK", "exit");
    auto out = replay(many_faults_log(2000, "lossless"), env, wait_app, &printed);
    EXPECT_EQ(out.exit_code, 0) << printed;
    EXPECT_EQ(printed.find("app: main done"), std::string::npos) << printed;
    EXPECT_EQ(out.values["callbacks"], "1"); // the tool's finalize ran (it wrote the file)
    EXPECT_EQ(printed.find("FINALIZED TWICE"), std::string::npos) << printed;
    EXPECT_FALSE(out.records.empty()); // what the callback recorded before exiting
}

// ---------------------------------------------------------------- the kernel's model, end to end
//
// Expected records written from the kernel's rules (kfd-smi-interface.md, "Pairing facts").

TEST(service_e2e, nested_evictions_and_rescheduled_restores_make_the_kernels_suspensions)
{
    const std::string log = "#@ gpu 1ea0\n#@ self 4242\n#@ timestamps keep\n"
                            // SVM eviction, userptr eviction inside it, two restores
                            "9 100 -4242 1ea0 0\n"
                            "9 200 -4242 1ea0 1\n"
                            "a 300 -4242 1ea0\n"
                            "a 400 -4242 1ea0\n"
                            // a restore attempt rescheduled twice (R, then id 14), then done
                            "9 500 -4242 1ea0 2\n"
                            "a 600 -4242 1ea0 R\n"
                            "e 650 -4242 1ea0\n"
                            "a 700 -4242 1ea0 0\n";
    auto out = replay(log);
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.records, sorted({"queue,SELF,100,400,1ea0,0,0", "queue,SELF,500,700,1ea0,2,1"}));
    EXPECT_EQ(out.stats["ends_without_start"], 0u);
    EXPECT_EQ(out.stats["aged_out"], 0u);
    EXPECT_EQ(out.stats["never_ended"], 0u);
    EXPECT_EQ(out.stats["lost_in_gap"], 0u);
    EXPECT_EQ(out.stats["received"], 8u);
}

TEST(service_e2e, stopped_context_never_pairs_across_the_gap)
{
    // Issue 7, case 3: evict at 0, restore at 500 ms, evict at 1000 ms, restore at 1500 ms;
    // the context stops at 250 ms and starts again at 1250 ms (the unmap markers drive the
    // tool; `#@ wait-mask` holds the replay so the middle lines always fall in the gap).
    // Neither suspension can be reported: the first lost its end, the second its start.
    // A fault after the restart pairs normally.
    const std::string log = "#@ gpu 1ea0\n#@ self 4242\n#@ timestamps keep\n"
                            "#@ wait-mask 1ea0 with 9\n" // the main context has started
                            "9 1000000000 -4242 1ea0 2\n"
                            "b 1250000000 -4242 @100(1) 1ea0 0\n" // marker 1: stop
                            "#@ wait-mask 1ea0 without 9\n"
                            "a 1500000000 -4242 1ea0\n"
                            "9 2000000000 -4242 1ea0 1\n"
                            "b 2250000000 -4242 @200(1) 1ea0 0\n" // marker 2: start
                            "#@ wait-mask 1ea0 with 9\n"
                            "a 2500000000 -4242 1ea0\n"
                            "7 2600000000 -4242 @300(1ea0) R\n"
                            "8 2600001000 -4242 @300(1ea0) M\n";
    // The main context traces everything but unmaps: the markers' records would race with the
    // stop their raw copies trigger.
    auto out = replay(log, {{"E2E_GAP_MARKERS", "1"}, {"E2E_OPS", "1,2,3"}});
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["gap_stop"], "0");
    EXPECT_EQ(out.values["gap_start"], "0");
    EXPECT_EQ(out.values.count("gap_timeout"), 0u);
    EXPECT_EQ(out.records, sorted({"fault,SELF,2600000000,2600001000,1ea0,300000,1,1"}));
    EXPECT_EQ(out.stats["lost_in_gap"], 1u);        // the eviction at 0
    EXPECT_EQ(out.stats["ends_without_start"], 1u); // the restore at 1500 ms
    EXPECT_EQ(out.stats["never_ended"], 0u);
    // the kernel (emulator) really withheld the two lines of the gap
    EXPECT_NE(out.emulator_stats.find("\"filtered_mask\":2"), std::string::npos)
        << out.emulator_stats;
}

TEST(service_e2e, suspensions_pair_again_after_a_stop_that_left_evictions_enabled)
{
    // A stop that leaves one id of a pair kind in the mask still ends that kind's pairing:
    // here a second context, started first, traces raw QUEUE_EVICTION events, so stopping
    // the QUEUE_SUSPEND context masks only the restores. The eviction at 12.5 s reaches the
    // SDK, its restore at 12.6 s does not (the kernel, as the emulator, withholds it);
    // paired, that eviction would leave a depth of 1 that no later restore brings back to 0,
    // and no suspension after the restart would ever be reported. Each time the kind is
    // paired again after only its evictions were traced (the start, the restart), the
    // kernel's eviction count is unknown, as after a gap: the suspension ending within 10 s
    // of the first event after it is withheld (counted lost in the gap), later ones are
    // reported.
    const std::string log = "#@ gpu 1ea0\n#@ self 4242\n#@ timestamps keep\n"
                            "#@ wait-mask 1ea0 with a\n" // the main context has started
                            "9 1000000000 -4242 1ea0 2\n"
                            "a 1100000000 -4242 1ea0\n"
                            "9 12000000000 -4242 1ea0 2\n"
                            "a 12100000000 -4242 1ea0\n"
                            "b 12250000000 -4242 @100(1) 1ea0 0\n" // marker 1: stop
                            "#@ wait-mask 1ea0 without a\n"
                            "9 12500000000 -4242 1ea0 2\n"
                            "a 12600000000 -4242 1ea0\n"
                            "b 13250000000 -4242 @200(1) 1ea0 0\n" // marker 2: start
                            "#@ wait-mask 1ea0 with a\n"
                            "9 14000000000 -4242 1ea0 2\n"
                            "a 14100000000 -4242 1ea0\n"
                            "9 30000000000 -4242 1ea0 1\n"
                            "a 30100000000 -4242 1ea0\n";
    auto out = replay(log, {{"E2E_GAP_MARKERS", "1"},
                            {"E2E_MARKER_ALSO_OPS", "9"},
                            {"E2E_OPS", "3"}}); // QUEUE_SUSPEND only
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.values["gap_stop"], "0");
    EXPECT_EQ(out.values["gap_start"], "0");
    EXPECT_EQ(out.values.count("gap_timeout"), 0u);
    EXPECT_EQ(out.records, sorted({"queue,SELF,12000000000,12100000000,1ea0,2,0",
                                   "queue,SELF,30000000000,30100000000,1ea0,1,0"}));
    EXPECT_EQ(out.stats["lost_in_gap"], 2u); // 1.0-1.1 s and 14.0-14.1 s, withheld
    EXPECT_EQ(out.stats["ends_without_start"], 0u);
    EXPECT_EQ(out.stats["never_ended"], 0u);
    EXPECT_EQ(out.stats["aged_out"], 0u);
    // the kernel (emulator) really withheld the restore of the gap, and only it
    EXPECT_NE(out.emulator_stats.find("\"filtered_mask\":1"), std::string::npos)
        << out.emulator_stats;
}

TEST(service_e2e, starts_traced_without_their_ends_are_not_paired_or_counted_lost)
{
    // Raw PAGE_FAULT_START events alone (no page-migration service for faults, so no fault
    // ends are enabled): they are delivered as raw records, and none is taken for a start
    // whose end was lost.
    const std::string log = "#@ gpu 1ea0\n#@ self 4242\n#@ timestamps keep\n"
                            "7 1000 -4242 @10(1ea0) R\n"
                            "8 1100 -4242 @10(1ea0) M\n"
                            "7 2000 -4242 @20(1ea0) W\n"
                            "7 3000 -4242 @30(1ea0) R\n";
    auto              out = replay(log, {{"E2E_OPS", "4"}, {"E2E_RAW", "1"}, {"E2E_RAW_OPS", "7"}});
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_TRUE(out.records.empty());
    EXPECT_EQ(out.raw.size(), 3u);
    EXPECT_EQ(out.stats["received"], 3u); // the end is not enabled
    EXPECT_EQ(out.stats["never_ended"], 0u);
    EXPECT_EQ(out.stats["aged_out"], 0u);
    EXPECT_EQ(out.stats["timed_out"], 0u);
    EXPECT_EQ(out.stats["ends_without_start"], 0u);
    EXPECT_EQ(out.stats["lost_in_gap"], 0u);
}

TEST(service_e2e, raw_events_of_both_halves_are_not_paired_without_a_page_migration_service)
{
    // A kfd_events service on every id enables both halves of every kind, but asks for raw
    // records only: nothing is paired, so an end without its start and a start without its
    // end are no loss (found by a review: they were counted as such).
    const std::string log = "#@ gpu 1ea0\n#@ self 4242\n#@ timestamps keep\n"
                            "8 1100 -4242 @10(1ea0) M\n"
                            "7 2000 -4242 @20(1ea0) W\n"
                            "9 3000 -4242 1ea0 2\n";
    auto out = replay(log, {{"E2E_OPS", "4"}, {"E2E_RAW", "1"}}); // page-migration: unmaps only
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_TRUE(out.records.empty());
    EXPECT_EQ(out.raw.size(), 3u);
    EXPECT_EQ(out.stats["received"], 3u);
    EXPECT_EQ(out.stats["ends_without_start"], 0u);
    EXPECT_EQ(out.stats["never_ended"], 0u);
    EXPECT_EQ(out.stats["aged_out"], 0u);
    EXPECT_EQ(out.stats["lost_in_gap"], 0u);
}

TEST(service_e2e, start_before_a_saturated_read_is_dropped_not_paired_after_it)
{
    // A read of a (nearly) full FIFO means the kernel probably dropped what came next, so
    // no start seen before it may pair with an end read after it. Deterministic: 256-byte
    // FIFOs replayed losslessly; the 210-byte VM fault line only fits with the fault start
    // before it, and the fault end only after the reader took both (a read of > 160 bytes:
    // saturated for a 256-byte FIFO).
    const std::string task(200, 'p');
    const std::string log = "#@ gpu 1ea0\n#@ self 77\n#@ timestamps keep\n#@ fifo 256\n"
                            "7 100 -77 @10(1ea0) R\n"
                            "1 4d:" +
                            task +
                            "\n"
                            "8 200 -77 @10(1ea0) M\n"
                            "7 300 -77 @20(1ea0) R\n"
                            "8 400 -77 @20(1ea0) M\n";
    std::string printed;
    auto        out = replay(log, {{"E2E_RAW", "1"}}, app, &printed);
    ASSERT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.records, sorted({"fault,SELF,300,400,1ea0,20000,1,1"}));
    // the exit warning says so
    EXPECT_NE(printed.find("1 starts dropped at a gap in the stream"), std::string::npos)
        << printed;
    EXPECT_GE(out.stats["saturations"], 1u);
    EXPECT_EQ(out.stats["lost_in_gap"], 1u);
    EXPECT_EQ(out.stats["ends_without_start"], 1u);
    EXPECT_EQ(out.stats["received"], 5u);
    EXPECT_EQ(out.stats["malformed"], 0u);
}
