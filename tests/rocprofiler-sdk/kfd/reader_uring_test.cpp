// MIT License - see LICENSE.
//
// The reader's io_uring loop (reader_uring.cpp), on a pipe standing in for an SMI fd: every
// line arrives through the ring; a synchronous drain and the stop read what was queued before
// them, also for a stream in a coalescing wait (whose READ is not queued) or in a linked wait
// (whose READ the kernel issues when a timeout ends: the drain cancels it); a gap requested
// before the stop is applied after its last read; the end of the file ends the stream; the
// program's close of the fd number and reuse of it for a file of its own change nothing (the
// ring reads the SDK's file by reference, never the program's); and where the kernel refuses
// io_uring (a seccomp filter, as a container's), the poll loop reads instead. Gates, not
// sleeps: each wait is for a condition, bounded only so that a failure does not hang.
#include "reader_test_support.hpp"
#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/kfd/reader.hpp"
#include "seccomp_refusal.hpp"

#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace
{
using namespace reader_test;
using rocprofiler::kfd::gpu_stream;

// Collects the stream's lines (reader thread) and lets the test wait for a number of them.
struct line_gate
{
    std::mutex               mutex;
    std::condition_variable  arrived;
    std::vector<std::string> lines;

    explicit line_gate(pipe_stream& p)
    {
        p.config.use_io_uring = true;
        p.config.on_chunk     = [this](gpu_stream& s, const char* data, size_t size, uint64_t)
        {
            s.splitter.feed(data, size,
                            [this](std::string_view line)
                            {
                                std::lock_guard<std::mutex> lock{mutex};
                                lines.emplace_back(line);
                                arrived.notify_all();
                            });
        };
    }
    bool wait_for(size_t count)
    {
        std::unique_lock<std::mutex> lock{mutex};
        return arrived.wait_for(lock, std::chrono::seconds(60),
                                [&] { return lines.size() >= count; });
    }
    std::vector<std::string> taken()
    {
        std::lock_guard<std::mutex> lock{mutex};
        return lines;
    }
};

// A drain request as the service makes one (service.cpp: request_drain), waited for.
bool
drain_now(reader_loop& loop)
{
    auto& config    = loop.p.config;
    auto  requested = config.drain_requests.fetch_add(1) + 1;
    rocprofiler::kfd::device::wake(loop.wake);
    std::unique_lock<std::mutex> lock{config.drain_mutex};
    return config.drain_cv.wait_for(lock, std::chrono::seconds(60),
                                    [&] { return config.drains_done.load() >= requested; });
}

// Waits (bounded) until the condition holds; true if it did.
template <typename Condition>
bool
eventually(Condition&& condition)
{
    for(int i = 0; i < 60000 && !condition(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return condition();
}

TEST(kfd_reader_uring, every_line_arrives_through_the_ring_without_poll)
{
    pipe_stream p;
    line_gate   gate{p};
    reader_loop loop{p};
    ASSERT_GE(loop.wake, 0);
    loop.start();
    ASSERT_TRUE(rocprofiler::kfd::wait_until_polling(p.config, std::chrono::seconds(60)));
    const int polls_before = reader_test_ppoll_calls();
    // Several full READs (64 KiB each) then a short one; then more after the FIFO emptied.
    p.queue(lines_of_64_bytes(0, 3000));
    ASSERT_TRUE(gate.wait_for(3000));
    p.queue(lines_of_64_bytes(3000, 7));
    ASSERT_TRUE(gate.wait_for(3007));
    loop.stop_and_join();
    EXPECT_EQ(gate.taken(), expected_lines(0, 3007));
    EXPECT_EQ(reader_test_ppoll_calls(), polls_before) << "the poll loop ran, not the ring";
    EXPECT_TRUE(p.stream.watching.load());
}

// A stream in a coalescing wait has no READ queued: a drain must queue one and read what was
// there before the request. The wait (an hour) would otherwise outlast the test.
TEST(kfd_reader_uring, a_drain_reads_what_was_queued_before_it_even_during_a_wait)
{
    pipe_stream p;
    line_gate   gate{p};
    reader_loop loop{p};
    p.stream.nap_until_ns = boottime_ns() + 3600'000'000'000ull;
    loop.start();
    ASSERT_TRUE(rocprofiler::kfd::wait_until_polling(p.config, std::chrono::seconds(60)));
    p.queue(lines_of_64_bytes(0, 20));
    ASSERT_TRUE(drain_now(loop));
    EXPECT_EQ(gate.taken(), expected_lines(0, 20)) << "the drain returned before the lines";
    // After the drain the stream is read as usual (no wait set: its read was a drain's).
    p.queue(lines_of_64_bytes(20, 5));
    EXPECT_TRUE(gate.wait_for(25));
    loop.stop_and_join();
    EXPECT_EQ(gate.taken(), expected_lines(0, 25));
}

TEST(kfd_reader_uring, the_stop_reads_what_was_queued_then_applies_the_gaps_asked_before_it)
{
    pipe_stream p;
    line_gate   gate{p};
    p.add_outstanding_fault_start();
    reader_loop loop{p};
    p.stream.nap_until_ns = boottime_ns() + 3600'000'000'000ull; // no READ queued
    loop.start();
    ASSERT_TRUE(rocprofiler::kfd::wait_until_polling(p.config, std::chrono::seconds(60)));
    p.queue(lines_of_64_bytes(0, 12));
    p.stream.pending_gap.store(rocprofiler::kfd::pair_kind_page_fault); // no drain requested
    loop.stop_and_join();
    EXPECT_EQ(gate.taken(), expected_lines(0, 12));
    EXPECT_EQ(p.stream.counters.starts_lost_in_gap.load(), 1u);
    EXPECT_EQ(p.stream.pending_gap.load(), 0u);
    EXPECT_TRUE(p.config.finished);
}

// After a read that emptied a busy FIFO the next READ is linked after a timeout (interrupt
// mitigation). A FIFO of 16 GiB makes that wait minutes long (read_coalescing.hpp: half the
// FIFO at the burst rate), so that only the cancellation a drain or the stop makes can read
// what arrives during it.
TEST(kfd_reader_uring, a_drain_and_the_stop_cancel_a_linked_wait_and_read_at_once)
{
    pipe_stream p;
    line_gate   gate{p};
    p.config.fifo_capacity = size_t{1} << 34;
    reader_loop loop{p};
    loop.start();
    ASSERT_TRUE(rocprofiler::kfd::wait_until_polling(p.config, std::chrono::seconds(60)));
    // Two reads within a second of each other give a rate; the second links a wait. They are
    // at least 2 ms apart, so that the rate is under the 16 MB/s above which no wait is taken
    // (640 bytes in 2 ms: 0.32 MB/s): a lower bound on the interval, not a race.
    p.queue(lines_of_64_bytes(0, 10));
    ASSERT_TRUE(gate.wait_for(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    p.queue(lines_of_64_bytes(10, 10));
    ASSERT_TRUE(gate.wait_for(20));
    ASSERT_TRUE(eventually([&] { return p.stream.reads_delayed.load() >= 1; }));
    p.queue(lines_of_64_bytes(20, 10));
    ASSERT_TRUE(drain_now(loop));
    EXPECT_EQ(gate.taken(), expected_lines(0, 30)) << "the drain left the wait's lines unread";
    // Again (2 ms after the drain's read), and the stop: it reads them at once too (the wait
    // would outlast the test).
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    p.queue(lines_of_64_bytes(30, 10));
    ASSERT_TRUE(gate.wait_for(40));
    ASSERT_TRUE(eventually([&] { return p.stream.reads_delayed.load() >= 2; }));
    p.queue(lines_of_64_bytes(40, 10));
    loop.stop_and_join();
    EXPECT_EQ(gate.taken(), expected_lines(0, 50));
    EXPECT_TRUE(p.config.finished);
}

TEST(kfd_reader_uring, the_end_of_the_file_ends_the_stream)
{
    pipe_stream p;
    line_gate   gate{p};
    reader_loop loop{p};
    loop.start();
    ASSERT_TRUE(rocprofiler::kfd::wait_until_polling(p.config, std::chrono::seconds(60)));
    p.queue(lines_of_64_bytes(0, 4));
    ASSERT_TRUE(gate.wait_for(4));
    ::close(p.ends[1]); // the writer is gone: the READ returns 0
    p.ends[1] = -1;
    EXPECT_TRUE(eventually([&] { return !p.stream.watching.load(); }));
    loop.stop_and_join();
    EXPECT_EQ(gate.taken(), expected_lines(0, 4));
}

// The program closes the SDK's fd number and opens a pipe of its own there (close_range at
// start, then its own files). The ring still reads the SDK's file, and never the program's.
TEST(kfd_reader_uring, a_program_reusing_the_fd_number_is_never_read)
{
    pipe_stream p;
    line_gate   gate{p};
    reader_loop loop{p};
    loop.start();
    ASSERT_TRUE(rocprofiler::kfd::wait_until_polling(p.config, std::chrono::seconds(60)));
    int program[2];
    ASSERT_EQ(pipe2(program, O_NONBLOCK | O_CLOEXEC), 0);
    ASSERT_EQ(dup2(program[0], p.ends[0]), p.ends[0]); // the SDK's number is the program's now
    const std::string mine = "the program's own bytes\n";
    ASSERT_EQ(write(program[1], mine.data(), mine.size()), static_cast<ssize_t>(mine.size()));
    p.queue(lines_of_64_bytes(0, 6)); // into the SDK's file
    ASSERT_TRUE(gate.wait_for(6));
    loop.stop_and_join();
    EXPECT_EQ(gate.taken(), expected_lines(0, 6));
    char buffer[64] = {};
    EXPECT_EQ(read(program[0], buffer, sizeof(buffer)), static_cast<ssize_t>(mine.size()));
    EXPECT_EQ(std::string(buffer, mine.size()), mine) << "the reader took the program's bytes";
    ::close(program[0]);
    ::close(program[1]);
    // The number is the program's copy now: closed here; the fixture closes the SDK's file
    // through a duplicate of its reference.
    ::close(p.ends[0]);
    p.ends[0] = ::dup(p.stream.identity.reference);
}

// Where io_uring is refused (Docker's default seccomp profile, kernel.io_uring_disabled), the
// reader reads with poll() and read(): every line still arrives.
TEST(kfd_reader_uring, refused_io_uring_falls_back_to_the_poll_loop)
{
    pipe_stream       p;
    line_gate         gate{p};
    int               wake = rocprofiler::kfd::device::make_wake_fd();
    std::atomic<bool> stop{false};
    ASSERT_GE(wake, 0);
    p.config.wake_fd       = wake;
    p.config.wake_identity = rocprofiler::kfd::device::identify(wake);
    p.config.stop          = &stop;
    bool        refused    = false;
    const int   polls      = reader_test_ppoll_calls();
    std::thread reader{[&]
                       {
                           refused = rocprofiler::test::refuse_in_this_thread(SYS_io_uring_setup);
                           rocprofiler::kfd::run_reader(p.config);
                       }};
    ASSERT_TRUE(rocprofiler::kfd::wait_until_polling(p.config, std::chrono::seconds(60)));
    p.queue(lines_of_64_bytes(0, 9));
    EXPECT_TRUE(gate.wait_for(9));
    stop.store(true);
    rocprofiler::kfd::device::wake(wake);
    reader.join();
    rocprofiler::kfd::device::close_owned(wake, p.config.wake_identity);
    if(!refused) GTEST_SKIP() << "no seccomp filter on this machine: nothing was refused";
    EXPECT_EQ(gate.taken(), expected_lines(0, 9));
    EXPECT_GT(reader_test_ppoll_calls(), polls) << "the poll loop did not run";
}
} // namespace
