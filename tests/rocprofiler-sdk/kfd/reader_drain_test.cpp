// MIT License - see LICENSE.
//
// drain_stream: a read that returns less than it asked for ends the drain (the kernel's FIFO
// is then empty: its read takes min(count, queued)), without the read that would say EAGAIN.
// Whatever the sizes, every queued line is still received: several full reads, an exact
// multiple of the read size (the last full read is followed by EAGAIN), and data queued after
// a drain (the next drain gets it). A pipe stands in for the SMI fd: its read also returns
// min(count, queued).
#include "reader_test_support.hpp"
#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/kfd/read_coalescing.hpp"
#include "rocprofiler-sdk/kfd/reader.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace
{
using namespace reader_test;
using rocprofiler::kfd::gpu_stream;
using rocprofiler::kfd::reader_config;
using rocprofiler::kfd::reader_read_size;

TEST(kfd_reader_drain, several_full_reads_then_a_short_one)
{
    pipe_stream  p;
    const size_t count = 4 * reader_read_size / 64 + 123; // 4 full reads + 123 lines
    p.queue(lines_of_64_bytes(0, count));
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    EXPECT_EQ(p.received, expected_lines(0, count));
    EXPECT_TRUE(p.pipe_is_empty());
    EXPECT_TRUE(p.stream.watching.load());
}

TEST(kfd_reader_drain, exact_multiple_of_the_read_size)
{
    pipe_stream  p;
    const size_t count = 2 * reader_read_size / 64; // two full reads, then EAGAIN
    p.queue(lines_of_64_bytes(0, count));
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    EXPECT_EQ(p.received, expected_lines(0, count));
    EXPECT_TRUE(p.pipe_is_empty());
    EXPECT_TRUE(p.stream.watching.load());
}

TEST(kfd_reader_drain, a_read_whose_handling_fails_opens_a_gap)
{
    // Its events are lost (out of memory handling them): no start seen before may pair with
    // an end read after it.
    pipe_stream p;
    p.add_outstanding_fault_start();
    p.config.on_chunk = [](gpu_stream&, const char*, size_t, uint64_t) { throw std::bad_alloc{}; };
    p.queue(lines_of_64_bytes(0, 3));
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    EXPECT_EQ(p.stream.pairing.outstanding(), 0u);
    EXPECT_EQ(p.stream.counters.starts_lost_in_gap.load(), 1u);
    EXPECT_TRUE(p.stream.watching.load());
}

TEST(kfd_reader_drain, what_arrives_after_a_drain_is_read_by_the_next)
{
    pipe_stream p;
    p.queue(lines_of_64_bytes(0, 10));
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    EXPECT_EQ(p.received.size(), 10u);
    p.queue(lines_of_64_bytes(10, 5));
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    EXPECT_EQ(p.received, expected_lines(0, 15));
    EXPECT_TRUE(p.pipe_is_empty());
}

TEST(kfd_reader_drain, a_line_split_across_drains_is_joined)
{
    pipe_stream       p;
    const std::string text = lines_of_64_bytes(0, 3);
    p.queue(text.substr(0, 100)); // one line and a part of the second
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    EXPECT_EQ(p.received.size(), 1u);
    p.queue(text.substr(100));
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    EXPECT_EQ(p.received, expected_lines(0, 3));
}

using rocprofiler::kfd::read_coalescing::last_read;
using rocprofiler::kfd::read_coalescing::nap_ns;

// A busy stream (60000 bytes 5 ms after the previous read: 12 MB/s, a 64 KiB FIFO): the drain
// sets a wait, the one the rule gives for what was read, counted from this read.
TEST(kfd_reader_coalescing, a_busy_stream_waits_before_its_next_read)
{
    pipe_stream p;
    p.config.fifo_capacity    = 65536;
    const auto before         = boottime_ns() - 5'000'000;
    p.stream.previous_read_ns = before;
    p.queue(lines_of_64_bytes(0, 937)); // 937 lines: 59968 bytes, not saturated
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    ASSERT_EQ(p.received.size(), 937u);
    ASSERT_NE(p.stream.nap_until_ns, 0u);
    last_read read{};
    read.fifo_capacity     = 65536;
    read.bytes             = 937 * 64;
    read.ns_since_previous = p.stream.previous_read_ns - before;
    // Under any delay of this test the rate only falls (under 16 MB/s), the wait stays well
    // above the 20 us minimum (it grows with the interval) and gathers far more than 256 bytes.
    EXPECT_EQ(p.stream.nap_until_ns - p.stream.previous_read_ns, nap_ns(read));
}

// A read larger than the FIFO it was told raises the size used for saturation, not the one
// waits are sized from: told 8 KiB, 60000 bytes 5 ms after the previous read (12 MB/s) fill
// 8 KiB in 683 us, less than a wait plus 2 ms: no wait (65536 bytes would have given one, as
// the test above shows).
TEST(kfd_reader_coalescing, a_read_larger_than_the_fifo_does_not_lengthen_waits)
{
    pipe_stream p;
    p.config.fifo_capacity    = 8192;
    p.stream.previous_read_ns = boottime_ns() - 5'000'000;
    p.queue(lines_of_64_bytes(0, 937)); // 59968 bytes
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    ASSERT_EQ(p.received.size(), 937u);
    EXPECT_EQ(p.config.fifo_capacity, 65536u) << "the read proves a FIFO of at least 59968";
    EXPECT_EQ(p.config.wait_fifo_capacity, 8192u);
    EXPECT_EQ(p.stream.nap_until_ns, 0u);
    EXPECT_EQ(p.stream.counters.fifo_saturations.load(), 0u);
}

TEST(kfd_reader_coalescing, turned_off_never_waits)
{
    pipe_stream p;
    p.config.fifo_capacity    = 65536;
    p.config.coalesce_reads   = false;
    p.stream.previous_read_ns = boottime_ns() - 5'000'000;
    p.queue(lines_of_64_bytes(0, 937));
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    EXPECT_EQ(p.received.size(), 937u);
    EXPECT_EQ(p.stream.nap_until_ns, 0u);
}

TEST(kfd_reader_coalescing, a_read_that_finds_nothing_ends_the_wait)
{
    pipe_stream p;
    p.stream.nap_until_ns = boottime_ns(); // its wait is over and nothing came
    rocprofiler::kfd::drain_stream(p.config, p.stream);
    EXPECT_TRUE(p.received.empty());
    EXPECT_EQ(p.stream.nap_until_ns, 0u); // back to poll()
    EXPECT_TRUE(p.stream.watching.load());
}

// The reader's loop leaves a waiting stream out of poll() and reads it when its wait ends:
// lines queued during a wait arrive (if the loop never read it, the gate below fails).
TEST(kfd_reader_coalescing, the_loop_reads_a_waiting_stream_when_its_wait_ends)
{
    pipe_stream             p;
    std::mutex              m;
    std::condition_variable cv;
    size_t                  lines = 0;
    p.config.on_chunk             = [&](gpu_stream& s, const char* data, size_t size, uint64_t)
    {
        s.splitter.feed(data, size,
                        [&](std::string_view)
                        {
                            std::lock_guard<std::mutex> lock{m};
                            ++lines;
                            cv.notify_all();
                        });
    };
    reader_loop loop{p};
    ASSERT_GE(loop.wake, 0);
    p.stream.nap_until_ns = boottime_ns() + 2'000'000; // waiting: not polled for 2 ms
    p.queue(lines_of_64_bytes(0, 10));
    loop.start();
    {
        std::unique_lock<std::mutex> lock{m};
        EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return lines == 10; }));
    }
    loop.stop_and_join();
    EXPECT_EQ(lines, 10u);
}
} // namespace

namespace
{
TEST(kfd_reader_stop, a_gap_requested_before_the_stop_is_applied_by_the_last_drain)
{
    // A gap whose drain the reader had not served when it was stopped: its starts are
    // counted lost in the gap, as a served drain would count them.
    pipe_stream p;
    p.add_outstanding_fault_start();
    p.stream.pending_gap.store(rocprofiler::kfd::pair_kind_page_fault); // no drain requested
    reader_loop loop{p};
    loop.start();
    loop.stop_and_join();
    EXPECT_EQ(p.stream.pairing.outstanding(), 0u);
    EXPECT_EQ(p.stream.counters.starts_lost_in_gap.load(), 1u);
    EXPECT_EQ(p.stream.pending_gap.load(), 0u);
}

// The service enables events only once the reader runs: wait_until_polling returns when the
// reader is about to poll, and is bounded when no reader runs.
TEST(kfd_reader_start, wait_returns_once_the_reader_polls)
{
    pipe_stream p;
    reader_loop loop{p};
    ASSERT_GE(loop.wake, 0);
    EXPECT_FALSE(p.config.polling);
    loop.start();
    EXPECT_TRUE(rocprofiler::kfd::wait_until_polling(p.config, std::chrono::seconds(60)));
    EXPECT_NE(p.config.read_buffer, nullptr); // allocated before the first poll, not read
    // Lines queued now are read by the loop that was waiting.
    p.queue(lines_of_64_bytes(0, 3));
    loop.stop_and_join();
    EXPECT_EQ(p.received, expected_lines(0, 3));
}

TEST(kfd_reader_start, wait_is_bounded_when_no_reader_runs)
{
    reader_config config;
    EXPECT_FALSE(rocprofiler::kfd::wait_until_polling(config, std::chrono::milliseconds(1)));
    config.finished = true; // a reader that ended without polling: no wait at all
    EXPECT_FALSE(rocprofiler::kfd::wait_until_polling(config, std::chrono::hours(1)));
}
} // namespace

// ppoll made to fail with ENOMEM (the kernel short of memory for its poll table) a number of
// times, then libc's: this binary's definition comes before libc's.
namespace
{
std::atomic<int> g_ppoll_failures{0};
std::atomic<int> g_ppoll_calls{0};
} // namespace

extern "C" int
ppoll(struct pollfd* fds, nfds_t count, const struct timespec* timeout, const sigset_t* mask)
{
    using ppoll_fn   = int (*)(struct pollfd*, nfds_t, const struct timespec*, const sigset_t*);
    static auto real = reinterpret_cast<ppoll_fn>(dlsym(RTLD_NEXT, "ppoll"));
    g_ppoll_calls.fetch_add(1);
    if(g_ppoll_failures.load() > 0)
    {
        g_ppoll_failures.fetch_sub(1);
        errno = ENOMEM;
        return -1;
    }
    return real(fds, count, timeout, mask);
}

// A poll that fails for want of kernel memory is tried again: the reader does not stop (the
// kernel's events would stay enabled with nobody reading them), and reads what comes later.
TEST(kfd_reader_loop, a_poll_short_of_memory_is_tried_again)
{
    pipe_stream             p;
    std::mutex              mutex;
    std::condition_variable arrived;
    size_t                  lines = 0;
    p.config.on_chunk             = [&](gpu_stream&, const char* data, size_t size, uint64_t)
    {
        std::lock_guard<std::mutex> lock{mutex};
        lines += static_cast<size_t>(std::count(data, data + size, '\n'));
        arrived.notify_all();
    };
    g_ppoll_calls.store(0);
    g_ppoll_failures.store(3);
    reader_loop loop{p};
    loop.start();
    // The three failures, then a fourth poll that waits: the reader is still polling.
    for(int i = 0; i < 5000 && g_ppoll_calls.load() < 4; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds{1});
    ASSERT_GE(g_ppoll_calls.load(), 4) << "the reader stopped polling after a failed poll";
    p.queue(lines_of_64_bytes(0, 10));
    {
        std::unique_lock<std::mutex> lock{mutex};
        EXPECT_TRUE(arrived.wait_for(lock, std::chrono::seconds{10}, [&] { return lines == 10; }));
    }
    EXPECT_TRUE(p.stream.watching.load());
}

// For reader_uring_test.cpp: the ppoll calls this process made so far.
int
reader_test_ppoll_calls()
{
    return g_ppoll_calls.load();
}
