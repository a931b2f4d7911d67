// MIT License - see LICENSE.
//
// What the reader's tests share: a pipe standing in for an SMI fd (its read also returns
// min(count, queued)), lines of 64 bytes, and run_reader on its own thread.
#pragma once

#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/kfd/reader.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

// The ppoll() calls this process made so far (reader_drain_test.cpp interposes ppoll).
int reader_test_ppoll_calls();

namespace reader_test
{
inline uint64_t
boottime_ns()
{
    timespec now{};
    clock_gettime(CLOCK_BOOTTIME, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

using rocprofiler::kfd::gpu_stream;
using rocprofiler::kfd::reader_config;
using rocprofiler::kfd::reader_read_size;

// `count` distinct lines of exactly 64 bytes with their '\n'.
inline std::string
lines_of_64_bytes(size_t first, size_t count)
{
    std::string text;
    char        line[80];
    for(size_t i = first; i < first + count; ++i)
    {
        std::snprintf(line, sizeof(line), "9 %020zu -1 1ea0 1 %030d", i, 0);
        text += line;
        text += '\n';
    }
    return text;
}

struct pipe_stream
{
    int                      ends[2] = {-1, -1};
    gpu_stream               stream;
    reader_config            config;
    std::vector<std::string> received;

    pipe_stream()
    {
        EXPECT_EQ(pipe2(ends, O_NONBLOCK | O_CLOEXEC), 0);
        // Room for several full reads at once.
        EXPECT_GE(fcntl(ends[1], F_SETPIPE_SZ, 1 << 20), static_cast<int>(4 * reader_read_size));
        stream.gpu_id = 0x1ea0;
        stream.fd     = ends[0];
        // The reader reads only an fd that is still the file it identified.
        stream.identity = rocprofiler::kfd::device::identify(ends[0]);
        config.streams.push_back(&stream);
        config.use_io_uring = false; // the poll loop; reader_uring_test.cpp sets it
        config.on_chunk     = [this](gpu_stream& s, const char* data, size_t size, uint64_t) {
            s.splitter.feed(data, size,
                                [this](std::string_view line) { received.emplace_back(line); });
        };
    }
    ~pipe_stream()
    {
        rocprofiler::kfd::device::close_owned(ends[0], stream.identity); // and its duplicate
        close(ends[1]);
    }

    void queue(const std::string& text)
    {
        ASSERT_EQ(write(ends[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    }

    // A page-fault start paired before, waiting for its end.
    void add_outstanding_fault_start()
    {
        rocprofiler::kfd::event start{};
        ASSERT_EQ(rocprofiler::kfd::parse_line("7 100 -1 @10(1ea0) R", start),
                  rocprofiler::kfd::parse_result::ok);
        stream.pairing.on_page_fault_start(start);
        ASSERT_EQ(stream.pairing.outstanding(), 1u);
    }

    bool pipe_is_empty()
    {
        char byte = 0;
        return read(ends[0], &byte, 1) == -1 && errno == EAGAIN;
    }
};

inline std::vector<std::string>
expected_lines(size_t first, size_t count)
{
    std::vector<std::string> lines;
    const std::string        text = lines_of_64_bytes(first, count);
    for(size_t i = 0; i < count; ++i)
        lines.push_back(text.substr(i * 64, 63));
    return lines;
}

// run_reader on a pipe_stream's config, with a wake-up fd and a stop flag; stopped, joined
// and its fd closed when it goes out of scope.
struct reader_loop
{
    pipe_stream&      p;
    int               wake = rocprofiler::kfd::device::make_wake_fd();
    std::atomic<bool> stop{false};
    std::thread       thread;

    explicit reader_loop(pipe_stream& stream) : p(stream)
    {
        p.config.wake_fd       = wake;
        p.config.wake_identity = rocprofiler::kfd::device::identify(wake);
        p.config.stop          = &stop;
    }
    ~reader_loop()
    {
        stop_and_join();
        rocprofiler::kfd::device::close_owned(wake, p.config.wake_identity);
    }
    void start()
    {
        thread = std::thread{[this] { rocprofiler::kfd::run_reader(p.config); }};
    }
    void stop_and_join()
    {
        stop.store(true);
        rocprofiler::kfd::device::wake(wake);
        if(thread.joinable()) thread.join();
    }
};
} // namespace reader_test
