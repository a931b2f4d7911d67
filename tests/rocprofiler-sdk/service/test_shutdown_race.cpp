// MIT License - see LICENSE.
//
// Finalization that begins while a context start is creating the reader thread (it holds no
// lock then: the tools' thread notifications run). The shutdown must not close the fds or
// finish the pairing state of a reader that already runs: the starting thread hands it over
// and the reader is stopped, joined and its fds closed once, with no false "the program closed
// our fds" warning. The interleaving is forced by the tool's post-create notification, which
// runs after the reader thread exists and before the starting thread takes the lock again.
//
// Each scenario runs in a child process (this binary, with the KFD emulator preloaded): a
// shutdown happens once per process.
#include "rocprofiler-sdk/kfd/service.hpp"

#include "run_process.hpp"

#include <rocprofiler-sdk/buffer.h>
#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/context.h>
#include <rocprofiler-sdk/internal_threading.h>
#include <rocprofiler-sdk/registration.h>

#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace
{
std::string              scenario;
std::atomic<bool>        armed{false};
std::thread              other;
rocprofiler_context_id_t ctx{};

// The state letter of thread `tid` of this process (R, S, ...), or 0.
char
thread_state(long tid)
{
    std::ifstream stat{"/proc/self/task/" + std::to_string(tid) + "/stat"};
    std::string   text;
    std::getline(stat, text);
    auto paren = text.rfind(')'); // the name may hold spaces
    return paren == std::string::npos || paren + 2 >= text.size() ? 0 : text[paren + 2];
}

void
shut_down_now()
{
    using std::chrono::milliseconds;
    if(scenario == "same_thread")
        rocprofiler::kfd::service::shutdown(milliseconds{1000});
    else if(scenario == "exit")
    {
        std::printf("child: exiting from the notification\n");
        std::fflush(stdout);
        std::exit(0); // the SDK's exit handler finalizes on this thread, mid-start
    }
    else if(scenario == "other_thread_without_waiting")
    {
        std::thread{[] { rocprofiler::kfd::service::shutdown(milliseconds{0}); }}.join();
    }
    else if(scenario == "other_thread_waiting")
    {
        std::atomic<long> tid{0};
        other = std::thread{[&tid]
                            {
                                tid = syscall(SYS_gettid);
                                rocprofiler::kfd::service::shutdown(milliseconds{5000});
                            }};
        // Gate: return to the starting thread only once the other thread sleeps, which it does
        // nowhere but in shutdown's wait for the reader's handover.
        while(tid.load() == 0)
            std::this_thread::yield();
        for(int i = 0; i < 100000 && thread_state(tid.load()) != 'S'; ++i)
            std::this_thread::sleep_for(std::chrono::microseconds{100});
    }
}

void
postcreate(rocprofiler_runtime_library_t, void*)
{
    if(armed.exchange(false)) shut_down_now(); // the reader's notification only
}

void
on_records(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**, size_t,
           void*, uint64_t)
{
}

int
initialize(rocprofiler_client_finalize_t, void*)
{
    rocprofiler_buffer_id_t buffer{};
    bool                    ok =
        rocprofiler_at_internal_thread_create(nullptr, postcreate, ROCPROFILER_LIBRARY, nullptr) ==
            ROCPROFILER_STATUS_SUCCESS &&
        rocprofiler_create_context(&ctx) == ROCPROFILER_STATUS_SUCCESS &&
        rocprofiler_create_buffer(ctx, 4096, 2048, ROCPROFILER_BUFFER_POLICY_LOSSLESS, on_records,
                                  nullptr, &buffer) == ROCPROFILER_STATUS_SUCCESS &&
        rocprofiler_configure_buffer_tracing_service(ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
                                                     nullptr, 0,
                                                     buffer) == ROCPROFILER_STATUS_SUCCESS;
    std::printf("child: configured=%d\n", ok ? 1 : 0);
    return 0;
}

rocprofiler_tool_configure_result_t*
configure(uint32_t, const char*, uint32_t, rocprofiler_client_id_t*)
{
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), initialize, nullptr, nullptr};
    return &result;
}

// Threads of this process named like the reader.
int
reader_threads()
{
    int  count = 0;
    DIR* tasks = opendir("/proc/self/task");
    if(tasks == nullptr) return -1;
    while(auto* entry = readdir(tasks))
    {
        if(entry->d_name[0] == '.') continue;
        std::ifstream comm{std::string{"/proc/self/task/"} + entry->d_name + "/comm"};
        std::string   name;
        std::getline(comm, name);
        if(name == "rocprof-kfd") ++count;
    }
    closedir(tasks);
    return count;
}

// Runs after the SDK's exit handler (registered later, during initialization): by then the
// reader must have stopped by itself, since the thread that started it never returns.
void
report_reader_at_exit()
{
    int readers = reader_threads();
    for(int i = 0; i < 2000 && readers != 0; ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds{1});
        readers = reader_threads();
    }
    std::printf("child: at exit reader_threads=%d\n", readers);
    std::fflush(stdout);
}

int
run_scenario()
{
    if(scenario == "exit") std::atexit(report_reader_at_exit);
    if(rocprofiler_force_configure(configure) != ROCPROFILER_STATUS_SUCCESS) return 2;
    armed       = true;
    auto status = rocprofiler_start_context(ctx);
    if(other.joinable()) other.join();
    // A joined thread can still be listed for a moment (its id is cleared, which ends the
    // join, before its task is removed).
    int readers = reader_threads();
    for(int i = 0; i < 2000 && readers != 0; ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds{1});
        readers = reader_threads();
    }
    std::printf("child: start=%d notified=%d reader_threads=%d\n", static_cast<int>(status),
                armed.load() ? 0 : 1, readers);
    std::fflush(stdout);
    return 0;
}

const char* const log_text = "#@ gpu 1ea0 gfx90a\n"
                             "#@ self 4242\n"
                             "7 1000 -4242 @7fa608127(1ea0) R\n"
                             "8 1500 -4242 @7fa608127(1ea0) M\n";

std::string
run_child(const std::string& name)
{
    test_support::scratch_dir dir;
    test_support::write_file(dir.file("events.log"), log_text);
    std::vector<std::pair<std::string, std::string>> env = {
        {"LD_PRELOAD", ROCP_TEST_EMULATOR},
        {"KFD_EMULATOR_LOG", dir.file("events.log")},
        {"ROCPROFILER_KFD_FIFO_BYTES", "8192"}};
    // exit() inside the starting thread's notification: that thread never returns to join
    // the reader (which has stopped by itself), so ThreadSanitizer would report its
    // std::thread as leaked at exit. Nothing runs any more; only that report is turned off.
    if(name == "exit")
    {
        const char* tsan = std::getenv("TSAN_OPTIONS");
        env.emplace_back("TSAN_OPTIONS", std::string{tsan ? tsan : ""} + (tsan ? ":" : "") +
                                             "report_thread_leaks=0");
    }
    auto result =
        test_support::run_process({"/proc/self/exe", "--scenario=" + name}, env, 60, true);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return result.output;
}

void
expect_clean_handover(const std::string& output)
{
    EXPECT_NE(output.find("child: configured=1"), std::string::npos) << output;
    // The start succeeded, the notification ran, and the reader is stopped and joined.
    EXPECT_NE(output.find("child: start=0 notified=1 reader_threads=0"), std::string::npos)
        << output;
    // Nobody but the SDK closed its fds: no warning may say otherwise.
    EXPECT_EQ(output.find("tracing stopped"), std::string::npos) << output;
    EXPECT_EQ(output.find("abandoning"), std::string::npos) << output;
}
} // namespace

TEST(shutdown_race, finalization_from_the_starting_threads_notification)
{
    expect_clean_handover(run_child("same_thread"));
}

// exit() from the notification: the starting thread never comes back, so the exit handler's
// shutdown tells the reader to stop by itself; the exit is clean and says nothing false.
TEST(shutdown_race, exit_from_the_starting_threads_notification)
{
    auto output = run_child("exit");
    EXPECT_NE(output.find("child: exiting from the notification"), std::string::npos) << output;
    EXPECT_EQ(output.find("child: start="), std::string::npos) << output;
    EXPECT_NE(output.find("child: at exit reader_threads=0"), std::string::npos) << output;
    EXPECT_EQ(output.find("tracing stopped"), std::string::npos) << output;
}

TEST(shutdown_race, finalization_on_another_thread_that_does_not_wait)
{
    expect_clean_handover(run_child("other_thread_without_waiting"));
}

TEST(shutdown_race, finalization_on_another_thread_that_waits)
{
    expect_clean_handover(run_child("other_thread_waiting"));
}

int
main(int argc, char** argv)
{
    if(argc > 1 && std::strncmp(argv[1], "--scenario=", 11) == 0)
    {
        scenario = argv[1] + 11;
        return run_scenario();
    }
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
