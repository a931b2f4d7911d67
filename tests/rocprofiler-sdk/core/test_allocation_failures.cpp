// MIT License - see LICENSE.
//
// Out of memory inside the SDK's noexcept paths that start and run its threads: every
// allocation, one at a time, is made to fail (the n-th from arming and every one after it,
// for n = 0, 1, 2, ... until a run makes fewer than n allocations). Each run must end with a
// documented outcome, never std::terminate (a bad_alloc escaping a noexcept function) and
// never a joinable std::thread destroyed. The global operator new is replaced in this binary
// only.
#include "replaced_operator_new.hpp"
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/context.hpp"
#include "rocprofiler-sdk/internal_threading.hpp"
#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/kfd/reader.hpp"
#include "rocprofiler-sdk/logging.hpp"

#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/internal_threading.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

namespace
{
// Allocations since arming; from the `fail_from`-th on (0-based) they throw. Atomic: the
// threads started under test allocate too.
std::atomic<bool>   g_armed{false};
std::atomic<size_t> g_count{0};
std::atomic<size_t> g_fail_from{0};
std::atomic<size_t> g_failed{0};

void*
counted_or_failed(std::size_t size)
{
    if(g_armed.load())
    {
        if(g_count.fetch_add(1) >= g_fail_from.load())
        {
            g_failed.fetch_add(1);
            throw std::bad_alloc{};
        }
    }
    void* memory = std::malloc(size == 0 ? 1 : size);
    if(memory == nullptr) throw std::bad_alloc{};
    return memory;
}

void
arm(size_t fail_from)
{
    g_count.store(0);
    g_failed.store(0);
    g_fail_from.store(fail_from);
    g_armed.store(true);
}

// Disarms; true when the run made an allocation that was failed.
bool
disarm()
{
    g_armed.store(false);
    return g_failed.load() > 0;
}

// Sweeps `run` over every failure point (bounded, so that a path that allocates without end
// fails the test rather than hanging it). Returns how many runs had a failure injected.
template <typename F>
size_t
sweep(F&& run)
{
    size_t injected = 0;
    for(size_t n = 0; n < 1000; ++n)
    {
        arm(n);
        run();
        if(!disarm()) return injected; // nothing failed: every point was covered
        ++injected;
    }
    ADD_FAILURE() << "more than 1000 allocations in one run";
    return injected;
}

std::atomic<int> g_precreate{0};
std::atomic<int> g_postcreate{0};

void
precreate(rocprofiler_runtime_library_t, void*)
{
    g_precreate.fetch_add(1);
}

void
postcreate(rocprofiler_runtime_library_t, void*)
{
    g_postcreate.fetch_add(1);
}

int
initialize(rocprofiler_client_finalize_t, void*)
{
    // A notifier makes start_thread copy the notifier list (an allocation) before and after
    // creating the thread.
    EXPECT_EQ(
        rocprofiler_at_internal_thread_create(precreate, postcreate, ROCPROFILER_LIBRARY, nullptr),
        ROCPROFILER_STATUS_SUCCESS);
    return 0;
}

rocprofiler_tool_configure_result_t*
configure(uint32_t, const char*, uint32_t, rocprofiler_client_id_t*)
{
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), initialize, nullptr, nullptr};
    return &result;
}
} // namespace

void*
test_allocation::allocate(std::size_t size)
{
    return counted_or_failed(size);
}

// start_thread either returns a thread that ran its body, or nullptr: out of memory in the
// tools' notifications (before or after the thread exists) never ends the program.
TEST(allocation_failures, starting_an_internal_thread)
{
    ASSERT_EQ(rocprofiler_force_configure(configure), ROCPROFILER_STATUS_SUCCESS);
    size_t started = 0, refused = 0;
    auto   injected = sweep(
        [&]
        {
            std::atomic<bool> ran{false};
            auto              thread =
                rocprofiler::internal_threading::start_thread("alloc-test", [&] { ran = true; });
            if(thread)
            {
                thread->join();
                ++started;
                EXPECT_TRUE(ran.load());
            }
            else
                ++refused;
        });
    EXPECT_GE(injected, 3u); // at least: the copy before, the thread's state, the copy after
    EXPECT_GT(refused, 0u);
    EXPECT_GT(started, 1u); // the last run, and one whose copy after creation failed
    EXPECT_GT(g_postcreate.load(), 0);
}

// The reader, out of memory anywhere, still finishes (finished set, waiters released) and
// reads nothing it cannot hand on.
TEST(allocation_failures, running_the_reader)
{
    using rocprofiler::kfd::gpu_stream;
    using rocprofiler::kfd::reader_config;
    size_t completed = 0;
    auto   injected  = sweep(
        [&]
        {
            g_armed.store(false); // the setup below is not under test
            int ends[2] = {-1, -1};
            ASSERT_EQ(pipe2(ends, O_NONBLOCK | O_CLOEXEC), 0);
            const std::string line = "2 1@1a2b3c(2) 1234 0x7f00 1 1\n";
            ASSERT_EQ(write(ends[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
            auto stream      = std::make_unique<gpu_stream>();
            stream->gpu_id   = 0x1ea0;
            stream->fd       = ends[0];
            stream->identity = rocprofiler::kfd::device::identify(ends[0]);
            auto config      = std::make_unique<reader_config>();
            config->streams.push_back(stream.get());
            std::atomic<bool> stop{true}; // one pass, then the last drain
            config->stop     = &stop;
            size_t bytes     = 0;
            config->on_chunk = [&bytes](gpu_stream&, const char*, size_t size, uint64_t)
            { bytes += size; };
            g_armed.store(true);

            rocprofiler::kfd::run_reader(*config);

            g_armed.store(false);
            EXPECT_TRUE(config->finished);
            EXPECT_TRUE(config->polling);
            if(config->read_buffer) EXPECT_EQ(bytes, line.size());
            if(bytes == line.size()) ++completed;
            rocprofiler::kfd::device::close_owned(ends[0], stream->identity);
            close(ends[1]);
            g_armed.store(true);
        });
    EXPECT_GE(injected, 2u); // at least the read buffer and the poll list
    EXPECT_GT(completed, 0u);
}

namespace
{
// Runs `log` with stderr sent to a temporary file; returns what was written there.
template <typename F>
std::string
stderr_of(F&& log)
{
    FILE* file  = tmpfile();
    int   saved = dup(STDERR_FILENO);
    EXPECT_NE(file, nullptr);
    EXPECT_GE(saved, 0);
    if(file == nullptr || saved < 0) return {};
    dup2(fileno(file), STDERR_FILENO);
    log();
    dup2(saved, STDERR_FILENO);
    close(saved);
    std::string text(static_cast<size_t>(ftell(file) >= 0 ? lseek(fileno(file), 0, SEEK_END) : 0),
                     '\0');
    EXPECT_EQ(pread(fileno(file), text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    fclose(file);
    return text;
}

// A noexcept function that logs a line past the log buffer's 500 inline bytes (one that
// names a long path, say): a bad_alloc escaping it would call std::terminate.
void
log_a_long_line(const std::string& long_value) noexcept
{
    ROCP_WARNING << "value: " << long_value << " (end)";
}
} // namespace

// A log line that runs out of memory is written as far as it got and marked as cut short:
// one line, never an exception out of the noexcept code that logs it.
TEST(allocation_failures, logging_a_long_line)
{
    const std::string long_value(2000, 'v');
    size_t            cut = 0, whole = 0;
    auto              injected = sweep(
        [&]
        {
            auto text = stderr_of(
                [&]
                {
                    log_a_long_line(long_value);
                    g_armed.store(false); // capturing and checking allocate
                });
            ASSERT_FALSE(text.empty());
            EXPECT_EQ(text.back(), '\n');
            EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line";
            EXPECT_NE(text.find("rocprofiler-sdk["), std::string::npos) << text;
            if(text.find(" (end)\n") != std::string::npos)
                ++whole;
            else if(text.find(" [log line cut short: out of memory]\n") != std::string::npos)
                ++cut;
            else
                ADD_FAILURE() << "neither whole nor marked as cut short: " << text;
            g_armed.store(true);
        });
    EXPECT_GE(injected, 1u); // at least the buffer's growth past its inline bytes
    EXPECT_GE(cut, 1u);
    EXPECT_EQ(whole, 1u); // the last run, where nothing failed
}

// The SDK's process-wide tables and locks are built on their first use, which often happens
// inside noexcept code (an API call's first check, a fork handler, a thread's end): with
// every allocation failing from the start, the first API calls of a process return their
// statuses, never std::terminate. (ctest runs each test in a process of its own, so these
// calls are the first uses.)
TEST(allocation_failures, first_api_calls_of_a_process)
{
    arm(0);
    rocprofiler_context_id_t ctx{};
    const auto               created = rocprofiler_create_context(&ctx);
    const auto               flushed = rocprofiler_flush_buffer(rocprofiler_buffer_id_t{1});
    const auto               started = rocprofiler_start_context(rocprofiler_context_id_t{1});
    int                      active  = 0;
    const auto queried = rocprofiler_context_is_active(rocprofiler_context_id_t{1}, &active);
    rocprofiler_kfd_loss_stats_t stats{};
    stats.size              = sizeof(stats);
    const auto stats_status = rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &stats);
    disarm();
    EXPECT_EQ(created, ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED);
    EXPECT_EQ(flushed, ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
    EXPECT_NE(started, ROCPROFILER_STATUS_SUCCESS);
    EXPECT_NE(queried, ROCPROFILER_STATUS_SUCCESS);
    (void)stats_status; // any status: reaching it is the test
}

namespace
{
std::atomic<int>      g_calls{0};
std::atomic<uint64_t> g_records{0};
std::atomic<uint64_t> g_drops{0};

void
count_batch(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
            size_t count, void*, uint64_t drops)
{
    g_calls.fetch_add(1);
    g_records.fetch_add(count);
    g_drops.fetch_add(drops);
}
} // namespace

// Without memory for a batch's header array the callback cannot be given the batch: its
// records are dropped and counted so (not as delivered), the flush still returns, and the
// tool hears of them in its next callback's drop count.
TEST(allocation_failures, a_batch_without_memory_for_its_headers_is_counted_as_dropped)
{
    namespace rb     = rocprofiler::buffer;
    uint64_t context = 0;
    ASSERT_EQ(rocprofiler::context::create(1, &context), ROCPROFILER_STATUS_SUCCESS);
    uint64_t id = 0;
    ASSERT_EQ(rb::create(context, 1 << 20, 1 << 20, ROCPROFILER_BUFFER_POLICY_DISCARD, count_batch,
                         nullptr, &id),
              ROCPROFILER_STATUS_SUCCESS);
    // A callback thread never started: the flush delivers on this thread.
    uint64_t thread = 0;
    ASSERT_EQ(rocprofiler::callback_thread::create(&thread), ROCPROFILER_STATUS_SUCCESS);
    ASSERT_EQ(rocprofiler::callback_thread::assign(id, thread), ROCPROFILER_STATUS_SUCCESS);
    const uint64_t record[12] = {};
    for(int i = 0; i < 3; ++i)
        ASSERT_TRUE(rb::emplace(id, ROCPROFILER_BUFFER_CATEGORY_TRACING,
                                ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, record, sizeof(record)));
    arm(0);
    const auto flushed = rb::flush(id, std::chrono::seconds{30});
    EXPECT_TRUE(disarm());
    EXPECT_EQ(flushed, ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(g_calls.load(), 0);
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.delivered, 0u);
    EXPECT_EQ(t.discarded, 3u);
    EXPECT_EQ(t.dropped, 3u);
    EXPECT_EQ(t.in_delivery + t.pending_count, 0u);
    // With memory again, the next flush tells the tool.
    EXPECT_EQ(rb::flush(id, std::chrono::seconds{30}), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(g_calls.load(), 1);
    EXPECT_EQ(g_records.load(), 0u);
    EXPECT_EQ(g_drops.load(), 3u);
}
