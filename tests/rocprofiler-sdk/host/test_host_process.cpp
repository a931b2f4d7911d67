// MIT License - see LICENSE.
//
// The SDK inside someone else's process: each test runs a small host program written the way
// HPC/ML programs are (own signal handling, small thread stacks, fds closed at start, plugins
// dlclosed, a static glog, fork from a busy process, tools that call back, exit from a
// callback, setuid, bad environment values) with the SDK and a tool, and checks that the
// program is unharmed. The KFD emulator stands in for the driver.
//
// ROCP_HOST_TEST_LIBRARY_PATH (optional, in the test's own environment) is put in the
// programs' LD_LIBRARY_PATH: pointing it at an older build of the SDK shows which of these
// promises that build breaks.
#include "run_process.hpp"
#include "sanitizer.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using test_support::lines_starting_with;
using test_support::read_file;
using test_support::run_process;
using test_support::scratch_dir;
using test_support::write_file;

namespace
{
const std::string emulator    = ROCP_TEST_EMULATOR;
const std::string sdk         = ROCP_TEST_SDK_LIB;
const std::string tool        = ROCP_TEST_HOST_TOOL;
const std::string app_plain   = ROCP_TEST_APP_PLAIN;
const std::string app_sdk     = ROCP_TEST_APP_SDK;
const std::string sigwait_app = ROCP_TEST_HOST_SIGWAIT;
const std::string small       = ROCP_TEST_HOST_SMALL_STACK;
const std::string fd_reuse    = ROCP_TEST_HOST_FD_REUSE;
const std::string dlclose_it  = ROCP_TEST_HOST_DLCLOSE;
const std::string sdk_dlclose = ROCP_TEST_HOST_SDK_DLCLOSE;
const std::string dlopen_it   = ROCP_TEST_HOST_DLOPEN;
const std::string glog_app    = ROCP_TEST_HOST_GLOG;
const std::string fork_app    = ROCP_TEST_HOST_FORK;
const std::string atfork_app  = ROCP_TEST_HOST_ATFORK_FIRST;
const std::string start_fails = ROCP_TEST_HOST_READER_START_FAILS;
const std::string wait_app    = ROCP_TEST_HOST_WAIT;

using env_list = std::vector<std::pair<std::string, std::string>>;

// Page faults on one GPU (start/end pairs), paced so that nothing is ever dropped.
std::string
fault_log(int pairs)
{
    std::string log = "#@ gpu 1ea0 gfx90a\n#@ self 4242\n#@ fifo 1024\n";
    for(int i = 0; i < pairs; ++i)
    {
        auto ts = std::to_string(1000 + 10 * i);
        log += "7 " + ts + " -4242 @7fa60" + std::to_string(1000 + i) + "(1ea0) R\n";
        log += "8 " + ts + "5 -4242 @7fa60" + std::to_string(1000 + i) + "(1ea0) M\n";
    }
    return log;
}

// Runs `argv` with the emulator replaying `log` and the given environment; stdout and
// stderr merged.
test_support::process_result
run_traced(const scratch_dir& dir, const std::vector<std::string>& argv, const std::string& log,
           env_list env, const std::string& preload_extra = tool)
{
    write_file(dir.file("events.log"), log);
    std::string preload = emulator;
    if(!preload_extra.empty()) preload += ":" + preload_extra;
    env.emplace_back("LD_PRELOAD", preload);
    env.emplace_back("KFD_EMULATOR_LOG", dir.file("events.log"));
    env.emplace_back("KFD_EMULATOR_STATS", dir.file("stats.json"));
    if(const char* old = std::getenv("ROCP_HOST_TEST_LIBRARY_PATH"))
        env.emplace_back("LD_LIBRARY_PATH", old);
    return run_process(argv, env, 60, true);
}

bool
contains(const std::string& text, const std::string& what)
{
    return text.find(what) != std::string::npos;
}
} // namespace

// 1. Signals: every SDK thread blocks asynchronous signals.
TEST(host_process, signals_sigterm_blocked_in_main_reaches_sigwait_not_an_sdk_thread)
{
    scratch_dir dir;
    auto        r = run_traced(dir, {sigwait_app}, fault_log(50), {});
    EXPECT_EQ(r.signal, 0) << r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-sigwait: got SIGTERM")) << r.output;
    EXPECT_TRUE(contains(r.output, "host-sigwait: got SIGUSR1")) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: initialize create_buffer=0 configure=0 start=0"))
        << r.output;
}

// 2. Small stacks: no large static TLS, so a preloaded SDK leaves 16 KiB stacks usable.
TEST(host_process, small_stacks_pthread_create_with_16k_stack_under_preloaded_sdk)
{
    env_list env = {{"LD_PRELOAD", sdk}};
    if(const char* old = std::getenv("ROCP_HOST_TEST_LIBRARY_PATH"))
        env.emplace_back("LD_LIBRARY_PATH", old);
    auto r = run_process({small}, env, 60, true);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "stack=16384 pthread_create=ok")) << r.output;
    EXPECT_TRUE(contains(r.output, "stack=65536 pthread_create=ok")) << r.output;
}

// 3. fd reuse: fds owned by identity, never by number; exit never waits for a reader that
// cannot be woken.
TEST(host_process, fd_reuse_after_close_range_leaves_program_files_and_pipes_alone)
{
    scratch_dir dir;
    auto        r = run_traced(dir, {fd_reuse, dir.path}, fault_log(200),
                               {{"KFD_EMULATOR_EXIT_TIMEOUT_MS", "0"}});
    EXPECT_EQ(r.signal, 0) << r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-fd-reuse: pipe intact")) << r.output;
    for(int i = 0; i < 16; ++i)
        EXPECT_EQ(read_file(dir.file("f" + std::to_string(i))), "file " + std::to_string(i) + "\n")
            << "file f" << i << " was written by someone else";
    // One warning says tracing stopped (a read racing with the program's close_range may
    // also report the stream's end: that read was refused or empty, never the program's data).
    size_t stopped = 0;
    for(const auto& line : lines_starting_with(r.output, "rocprofiler-sdk"))
        stopped += contains(line, "page-migration tracing stopped") ? 1 : 0;
    EXPECT_EQ(stopped, 1u) << r.output;
}

// 4. dlclose: a tool the SDK found loaded is pinned, so its callbacks and finalize still
// run after the program dlcloses it.
TEST(host_process, dlclose_of_a_found_tool_then_callbacks_and_finalize)
{
    scratch_dir dir;
    auto        r = run_traced(dir, {dlclose_it, tool}, fault_log(50), {}, "");
    EXPECT_EQ(r.signal, 0) << r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-dlclose: force_configure=0 dlclose=0")) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: finalize records=50")) << r.output;
}

// 4b. dlclose of the SDK itself while a callback runs: the SDK stays loaded (the callback
// returns into its code after dlclose returned) and finalizes at exit, not inside dlclose.
TEST(host_process, dlclose_of_the_sdk_while_a_callback_runs)
{
    scratch_dir dir;
    auto        r = run_traced(dir, {sdk_dlclose, sdk}, fault_log(50),
                               {{"ROCPROFILER_FINALIZE_TIMEOUT_MS", "300"}}, "");
    EXPECT_EQ(r.signal, 0) << r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-sdk-dlclose: force_configure=0 in_callback=1 dlclose=0"))
        << r.output;
    EXPECT_TRUE(contains(r.output, "host-sdk-dlclose: callback returns after dlclose=1"))
        << r.output;
    // At exit, after the callback returned: the finalize line comes after the callback's.
    const auto returned  = r.output.find("callback returns after dlclose");
    const auto finalized = r.output.find("host-sdk-dlclose: finalize callbacks=");
    EXPECT_NE(finalized, std::string::npos) << r.output;
    EXPECT_GT(finalized, returned) << r.output;
}

// 5. Static glog: the SDK carries no glog, so the host's own neither breaks nor silences it.
TEST(host_process, static_glog_with_rdynamic_and_init_google_logging_still_sees_sdk_warnings)
{
    env_list env;
    if(const char* old = std::getenv("ROCP_HOST_TEST_LIBRARY_PATH"))
        env.emplace_back("LD_LIBRARY_PATH", old);
    auto r = run_process({glog_app}, env, 60, true);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-glog: main ran")) << r.output;
    auto sdk_lines = lines_starting_with(r.output, "rocprofiler-sdk[");
    ASSERT_EQ(sdk_lines.size(), 1u) << r.output;
    EXPECT_TRUE(contains(sdk_lines[0], "initialize returned -1")) << sdk_lines[0];
    // A real timestamp (this century), not glog's zero prefix.
    EXPECT_TRUE(contains(sdk_lines[0], " W 20")) << sdk_lines[0];
}

// 6. fork under contention: the child never inherits an SDK lock held by another thread.
TEST(host_process, fork_under_contention_every_child_exits_promptly)
{
    scratch_dir dir;
    auto        r =
        run_traced(dir, {fork_app}, fault_log(100), {{"KFD_EMULATOR_EXIT_TIMEOUT_MS", "0"}}, "");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-fork: configure=0 start=0")) << r.output;
    EXPECT_TRUE(contains(r.output, "host-fork: children_exited=40 of 40")) << r.output;
}

// 6b. Fork handlers of the program's, registered before the SDK's, that call the SDK: glibc
// runs them while the SDK's prepare handler holds its locks. The calls return
// NOT_AVAILABLE (36) there instead of waiting for those locks, and work again after.
TEST(host_process, fork_handlers_registered_before_the_sdks_can_call_it)
{
    for(const std::string mode : {"prepare", "child"})
    {
        scratch_dir dir;
        auto        r = run_traced(dir, {atfork_app, mode}, fault_log(10), {}, "");
        EXPECT_EQ(r.signal, 0) << mode << "\n" << r.output;
        EXPECT_EQ(r.exit_code, 0) << mode << "\n" << r.output;
        if(mode == "prepare")
            EXPECT_TRUE(contains(r.output, "host-atfork-first: prepare flush=36")) << r.output;
        else
            EXPECT_TRUE(
                contains(r.output, "host-atfork-first: child stop_context=36 loss_stats=36"))
                << r.output;
        EXPECT_TRUE(
            contains(r.output, "host-atfork-first: force_configure=0 child=exit 7 flush after=0"))
            << mode << "\n"
            << r.output;
    }
}

// 6c. The reader thread cannot be created while a second context is started from the
// notification of that start: the first start fails and is undone, and the kernel's events
// stay disabled, since nothing reads them (the log floods the FIFO as soon as a mask enables
// page faults). Started again, the reader runs and both contexts get every record.
TEST(host_process, a_reader_that_cannot_start_leaves_the_kernels_events_disabled)
{
    {
        scratch_dir dir;
        auto        log = fault_log(300);
        log.insert(log.find("7 "), "#@ pace max\n#@ wait-mask 1ea0 with 7\n");
        auto r = run_traced(dir, {start_fails, "exit"}, log,
                            {{"KFD_EMULATOR_EXIT_TIMEOUT_MS", "0"}}, "");
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_TRUE(contains(r.output, "host-reader-start-fails: first=28 second=0 again=-1"))
            << r.output;
        const auto stats = read_file(dir.file("stats.json"));
        EXPECT_TRUE(contains(stats, "\"mask\":\"0x0\"")) << stats;
        EXPECT_TRUE(contains(stats, "\"dropped_fifo_full\":0,")) << stats;
    }
    {
        scratch_dir dir;
        auto        r = run_traced(dir, {start_fails, "100"}, fault_log(50), {}, "");
        EXPECT_EQ(r.exit_code, 0) << r.output;
        // 50 page faults paired into one record each, in each of the two contexts.
        EXPECT_TRUE(
            contains(r.output, "host-reader-start-fails: first=28 second=0 again=0 records=100"))
            << r.output;
    }
}

// 7. Callbacks that call back: no tool code runs under an SDK lock.
TEST(host_process, callbacks_that_call_back_precreate_reads_stats_and_restarts_its_context)
{
    scratch_dir dir;
    // The stop in the pre-callback opens a gap (starts outstanding then are dropped): the log
    // waits until the marker context, started after the restart, enables unmaps (id b; the
    // tool's own context traces everything but unmaps, so its first start does not open the
    // gate), so every fault flows after the restart and all 50 pair.
    auto log = fault_log(50);
    log.insert(log.find("7 "), "#@ wait-mask 1ea0 with b\n");
    auto r = run_traced(dir, {app_plain}, log, {{"HOST_TOOL_MODE", "precreate-calls-api"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: marker create_buffer=0 configure=0")) << r.output;
    EXPECT_TRUE(
        contains(r.output, "host-tool: precreate loss_stats=0 stop=0 start=0 marker_start=0"))
        << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: finalize records=50")) << r.output;
}

// 8. exit() from inside a callback (main is still running, waiting): the exit status is the
// callback's, the tool's finalize runs once.
TEST(host_process, exit_from_a_callback_keeps_exit_status_and_finalize)
{
    scratch_dir dir;
    auto        r =
        run_traced(dir, {wait_app}, fault_log(50),
                   {{"HOST_TOOL_MODE", "exit-in-callback"}, {"KFD_EMULATOR_EXIT_TIMEOUT_MS", "0"}});
    EXPECT_EQ(r.exit_code, 42) << r.output;
    EXPECT_EQ(lines_starting_with(r.output, "host-tool: finalize").size(), 1u) << r.output;
}

// 8b. pthread_exit from inside a buffer callback ends the SDK's callback thread, not the
// process: the program exits normally, and the records that come later are delivered at exit
// by the finalization's flush (on the exiting thread): none is lost.
TEST(host_process, a_callback_that_ends_its_thread_ends_only_that_thread)
{
    scratch_dir dir;
    auto        r =
        run_traced(dir, {app_plain}, fault_log(50), {{"HOST_TOOL_MODE", "end-thread-in-callback"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "was ended by a tool's callback")) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: finalize records=50 emitted=50 dropped=0"))
        << r.output;
}

namespace
{
// The numbers on the tool's finalize line: records it received, and the SDK's counts.
struct finalize_counts
{
    long records = -1, emitted = -1, dropped = -1;
};

finalize_counts
counts_at_finalize(const std::string& output)
{
    finalize_counts c;
    auto            lines = lines_starting_with(output, "host-tool: finalize records=");
    if(lines.size() == 1)
        std::sscanf(lines[0].c_str(), "host-tool: finalize records=%ld emitted=%ld dropped=%ld",
                    &c.records, &c.emitted, &c.dropped);
    return c;
}
} // namespace

// 8c. A tool whose every callback ends its thread: the callback thread it ended is started
// again at exit, so that its buffers are never delivered on the exiting thread (such a
// callback would end it in the middle of exit: glibc aborts, or the process hangs without its
// main thread). The program exits normally, the tool's finalize runs once, and every record is
// either delivered or counted as dropped (which, depends on when the first callback ran). The
// second buffer is delivered only at exit, whole, on the thread started again there: without
// that thread its records would all be dropped.
TEST(host_process, a_callback_that_always_ends_its_thread_never_runs_on_the_exiting_thread)
{
    scratch_dir dir;
    auto        r  = run_traced(dir, {app_plain}, fault_log(50),
                                {{"HOST_TOOL_MODE", "end-thread-in-every-callback"}});
    auto        at = counts_at_finalize(r.output);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "was ended by a tool's callback")) << r.output;
    // 50 records in the buffer whose context started first, up to 50 in the other one
    EXPECT_GE(at.emitted, 50) << r.output;
    EXPECT_LE(at.emitted, 100) << r.output;
    EXPECT_EQ(at.records + at.dropped, at.emitted) << r.output;
    EXPECT_GE(at.records, 1) << r.output;
    EXPECT_TRUE(contains(r.output, " late_records=50\n")) << r.output;
    EXPECT_FALSE(contains(r.output, "CALLBACK ON THE MAIN THREAD")) << r.output;
}

// 8d. A tool that asks for its finalization from a callback: it runs on the callback thread
// after the callback, and delivers the tool's other buffer there; that buffer's callback ends
// the thread. The program (which never exits on its own) is ended by the tool once that
// thread is gone. The finalization is finished at exit: the tool's finalize runs once, and
// every record was delivered (the ones handed to the callback that ended the thread count).
TEST(host_process, a_callback_that_ends_the_thread_of_a_deferred_finalization)
{
    scratch_dir dir;
    auto        r = run_traced(
               dir, {wait_app}, fault_log(50),
               {{"HOST_TOOL_MODE", "finalize-then-end-thread"}, {"KFD_EMULATOR_EXIT_TIMEOUT_MS", "0"}});
    auto at = counts_at_finalize(r.output);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "was ended by a tool's callback")) << r.output;
    EXPECT_FALSE(contains(r.output, "events_received never reached")) << r.output;
    EXPECT_GE(at.emitted, 50) << r.output; // as in 8c
    EXPECT_LE(at.emitted, 100) << r.output;
    EXPECT_EQ(at.records, at.emitted) << r.output;
    EXPECT_EQ(at.dropped, 0) << r.output;
}

// 11. A tool that finalized itself configures nothing more and gets no callbacks.
TEST(host_process, finalize_in_initialize_then_configure_returns_finalized)
{
    scratch_dir dir;
    auto r = run_traced(dir, {app_plain}, fault_log(50), {{"HOST_TOOL_MODE", "finalize-in-init"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    // 20 = ROCPROFILER_STATUS_ERROR_FINALIZED
    EXPECT_TRUE(contains(r.output, "after own finalize: create_context=20")) << r.output;
    EXPECT_TRUE(contains(r.output, "initialize create_buffer=20 configure=20 start=20"))
        << r.output;
    EXPECT_FALSE(contains(r.output, "CALLBACK AFTER FINALIZE")) << r.output;
    EXPECT_EQ(lines_starting_with(r.output, "host-tool: finalize").size(), 1u) << r.output;
}

// 7b. No SDK lock is held while a tool's initialize or finalize runs: a tool that waits there
// for a thread of its own calling the SDK does not hang the program (15 =
// ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED: tools are configured once).
TEST(host_process, initialize_waiting_for_its_own_thread_calling_the_sdk_does_not_hang)
{
    scratch_dir dir;
    auto r = run_traced(dir, {app_plain}, fault_log(50), {{"HOST_TOOL_MODE", "init-joins-thread"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: initialize thread: force_configure=15 loss_stats=0"))
        << r.output;
    EXPECT_TRUE(contains(r.output, "initialize create_buffer=0 configure=0 start=0")) << r.output;
    EXPECT_FALSE(contains(r.output, "SECOND TOOL CONFIGURED")) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: finalize records=50")) << r.output;
}

// The same when the program dlopens the tool (Python's ctypes, plugin hosts): the SDK comes
// with it and initializes inside that dlopen, which holds the loader's lock. The SDK's pinning
// of the tool's library (a dlopen) on the tool's thread once waited for that lock, and the
// tool's initialize for the thread: the program hung.
TEST(host_process, initialize_waiting_for_its_thread_inside_a_programs_dlopen_does_not_hang)
{
    env_list env = {{"HOST_TOOL_MODE", "init-thread-makes-buffer"}};
    if(const char* old = std::getenv("ROCP_HOST_TEST_LIBRARY_PATH"))
        env.emplace_back("LD_LIBRARY_PATH", old);
    auto r = run_process({dlopen_it, tool}, env, 60, true);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(
        contains(r.output, "host-tool: initialize thread: create_context=0 create_buffer=0"))
        << r.output;
    EXPECT_FALSE(contains(r.output, "THREAD NEVER RETURNED")) << r.output;
    EXPECT_TRUE(contains(r.output, "host-dlopen: loaded")) << r.output;
}

// A callback delivered inline by a flush (no callback thread runs during initialize) that
// calls the tool's finalize function: the finalize runs after the callback returned, once,
// not nested inside it.
TEST(host_process, finalize_asked_from_an_inline_callback_runs_after_it)
{
    scratch_dir dir;
    auto        r = run_traced(dir, {app_plain}, fault_log(50),
                               {{"HOST_TOOL_MODE", "finalize-in-inline-callback"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    auto returned  = r.output.find("host-tool: inline callback: finalize function returned");
    auto finalized = r.output.find("host-tool: finalize records=50");
    ASSERT_NE(returned, std::string::npos) << r.output;
    ASSERT_NE(finalized, std::string::npos) << r.output;
    EXPECT_LT(returned, finalized) << r.output;
    EXPECT_FALSE(contains(r.output, "FINALIZE INSIDE ITS OWN CALLBACK")) << r.output;
    EXPECT_EQ(lines_starting_with(r.output, "host-tool: finalize").size(), 1u) << r.output;
}

// The tool's finalize function called from another thread while its initialize runs (and
// waits for that thread): the call returns, initialize goes on, the tool is finalized once
// when initialization ends and gets no callback after it.
TEST(host_process, finalize_from_another_thread_during_initialize_runs_once_after_it)
{
    scratch_dir dir;
    auto        r =
        run_traced(dir, {app_plain}, fault_log(50), {{"HOST_TOOL_MODE", "init-thread-finalizes"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    auto init_done = r.output.find("host-tool: initialize thread: finalize function returned");
    auto finalized = r.output.find("host-tool: finalize records=");
    ASSERT_NE(init_done, std::string::npos) << r.output;
    ASSERT_NE(finalized, std::string::npos) << r.output;
    EXPECT_LT(init_done, finalized) << r.output;
    EXPECT_TRUE(contains(r.output, "initialize create_buffer=0 configure=0 start=0")) << r.output;
    EXPECT_EQ(lines_starting_with(r.output, "host-tool: finalize").size(), 1u) << r.output;
    EXPECT_FALSE(contains(r.output, "CALLBACK AFTER FINALIZE")) << r.output;
}

// The tool's finalize, at exit, waits for a thread of its own that calls the SDK and the
// finalize function again: exit completes, finalize runs once.
TEST(host_process, finalize_waiting_for_its_own_thread_calling_the_sdk_does_not_hang)
{
    scratch_dir dir;
    auto r = run_traced(dir, {app_plain}, fault_log(50), {{"HOST_TOOL_MODE", "fini-joins-thread"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: finalize thread: force_configure=15 loss_stats=0"))
        << r.output;
    EXPECT_EQ(lines_starting_with(r.output, "host-tool: finalize records=50").size(), 1u)
        << r.output;
}

// 9. AT_SECURE: a setuid program linking the SDK ignores the SDK's variables and loads no
// tool named by its caller's environment (as ld.so ignores LD_PRELOAD there).
TEST(host_process, at_secure_setuid_program_loads_no_tool_from_the_environment)
{
    // LeakSanitizer aborts at exit in a setuid (non-dumpable) process, and such a process
    // cannot read its own environment to be told otherwise (ASAN_OPTIONS).
    if(test_sanitizer::address_sanitizer)
        GTEST_SKIP() << "LeakSanitizer cannot run in a setuid program; this test runs in the "
                        "normal and TSan suites";
    if(geteuid() != 0) GTEST_SKIP() << "needs root to make a setuid-nobody copy of a program";
    scratch_dir dir;
    auto        copy = dir.file("setuid-app");
    write_file(copy, read_file(app_sdk));
    ASSERT_EQ(chown(copy.c_str(), 65534, 65534), 0);
    ASSERT_EQ(chmod(copy.c_str(), 04755), 0);
    ASSERT_EQ(chmod(dir.path.c_str(), 0755), 0);
    env_list env = {{"ROCP_TOOL_LIBRARIES", tool},
                    {"HOST_TOOL_MODE", "evil"},
                    {"ROCPROFILER_LOG_LEVEL", "trace"}};
    if(const char* old = std::getenv("ROCP_HOST_TEST_LIBRARY_PATH"))
        env.emplace_back("LD_LIBRARY_PATH", old);
    auto r = run_process({copy}, env, 60, true);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "app: main is_initialized")) << r.output;
    EXPECT_FALSE(contains(r.output, "EVIL-CODE-RAN")) << r.output;
    EXPECT_TRUE(contains(r.output, "ROCP_TOOL_LIBRARIES ignored")) << r.output;
}

// 10. Bad environment values: rejected with one line naming the variable, default kept.
TEST(host_process, bad_environment_values_are_rejected_by_name_and_defaults_kept)
{
    scratch_dir dir;
    auto        r = run_traced(dir, {app_plain}, fault_log(300),
                               {{"ROCPROFILER_KFD_FIFO_BYTES", "256abc"},
                                {"ROCPROFILER_FINALIZE_TIMEOUT_MS", "-1"},
                                {"ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES", "99999999999999999999999"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    auto sdk_lines = lines_starting_with(r.output, "rocprofiler-sdk");
    EXPECT_EQ(sdk_lines.size(), 3u) << r.output;
    for(const char* name :
        {"ROCPROFILER_KFD_FIFO_BYTES='256abc'", "ROCPROFILER_FINALIZE_TIMEOUT_MS='-1'",
         "ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES='99999999999999999999999'"})
        EXPECT_TRUE(contains(r.output, name)) << name << "\n" << r.output;
    // 256 bytes would make every read of this log look like a full kernel FIFO.
    EXPECT_TRUE(contains(r.output, "host-tool: finalize records=300 emitted=300 dropped=0 "
                                   "saturations=0"))
        << r.output;
}

// 10. Lines longer than the kernel writes are counted and reported, not silently skipped.
TEST(host_process, overlong_kernel_lines_are_counted_in_lines_overlong)
{
    scratch_dir dir;
    auto        log = fault_log(10) + "7 9000 -4242 @7fa60(1ea0) R" + std::string(300, ' ') + "\n";
    auto        r   = run_traced(dir, {app_plain}, log, {});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: finalize records=10 emitted=10 dropped=0 "
                                   "saturations=0 overlong=1"))
        << r.output;
    EXPECT_TRUE(contains(r.output, "1 overlong lines")) << r.output;
}

// 10. A driver that keeps answering EAGAIN: the ioctl is retried a bounded number of times,
// then configuration reports NOT_AVAILABLE (36) with one line; the program runs on.
TEST(host_process, bad_driver_ioctl_always_eagain_is_retried_a_bounded_number_of_times)
{
    scratch_dir dir;
    auto        r = run_traced(dir, {app_plain}, "#@ fault version eagain\n" + fault_log(5), {});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: initialize create_buffer=0 configure=36"))
        << r.output;
    EXPECT_TRUE(contains(r.output, "cannot read the KFD version")) << r.output;
}

// 9. User namespaces: CAP_SYS_ADMIN inside a user namespace is not what the kernel's
// capable() checks, so the kernel sends only this process's own events (named by pids of
// the initial pid namespace, not getpid()). The SDK must not filter them away. Emulated with
// events of pid 5555 standing for "our events as the kernel names them".
TEST(host_process, user_namespace_root_does_not_filter_away_its_own_events)
{
    if(access("/usr/bin/unshare", X_OK) != 0) GTEST_SKIP() << "needs unshare(1)";
    scratch_dir dir;
    std::string log = "#@ gpu 1ea0 gfx90a\n#@ self 4242\n#@ superuser yes\n";
    for(int i = 0; i < 20; ++i)
    {
        auto ts = std::to_string(1000 + 10 * i);
        log += "7 " + ts + " -5555 @7fa60" + std::to_string(1000 + i) + "(1ea0) R\n";
        log += "8 " + ts + "5 -5555 @7fa60" + std::to_string(1000 + i) + "(1ea0) M\n";
    }
    write_file(dir.file("events.log"), log);
    std::vector<std::string> argv = {"/usr/bin/unshare", "--user", "--map-root-user",
                                     "/usr/bin/env",
                                     // under a sanitizer its runtime comes first
                                     "LD_PRELOAD=" + test_sanitizer::preload(emulator + ":" + tool),
                                     "KFD_EMULATOR_LOG=" + dir.file("events.log"),
                                     "KFD_EMULATOR_STATS=" + dir.file("stats.json")};
    if(const char* old = std::getenv("ROCP_HOST_TEST_LIBRARY_PATH"))
        argv.push_back(std::string{"LD_LIBRARY_PATH="} + old);
    argv.push_back(app_plain);
    auto r = run_process(argv, {}, 60, true);
    if(contains(r.output, "unshare: unshare failed"))
        GTEST_SKIP() << "user namespaces are not available here: " << r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "host-tool: finalize records=20 emitted=20")) << r.output;
}
