// MIT License - see LICENSE.
//
// The reader thread's loop: blocks in poll() over every GPU's SMI fd plus a wake-up fd (no
// timeout: zero CPU while idle), drains each readable fd until EAGAIN, splits the bytes
// into lines (carrying partial lines across reads) and hands each line to the service. It
// never waits for a tool: the service only copies records into buffers.
#pragma once

#include "rocprofiler-sdk/kfd/pairing.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace rocprofiler::kfd
{
// Loss accounting of one GPU; written by the reader thread, read by anyone.
struct stream_counters
{
    std::atomic<uint64_t> events_received{0};
    std::atomic<uint64_t> lines_malformed{0};
    std::atomic<uint64_t> events_other_process{0};
    std::atomic<uint64_t> records_emitted{0};
    std::atomic<uint64_t> ends_without_start{0};
    std::atomic<uint64_t> starts_aged_out{0};
    std::atomic<uint64_t> starts_never_ended{0};
    std::atomic<uint64_t> records_dropped{0};
    std::atomic<uint64_t> kernel_reported_drops{0};
    std::atomic<uint64_t> fifo_saturations{0};
    std::atomic<uint64_t> raw_events_dropped{0};
};

// One GPU's event stream. Only the reader thread touches splitter and pairing.
struct gpu_stream
{
    uint32_t        gpu_id             = 0;
    int             fd                 = -1;
    bool            watching           = true;
    int             consecutive_errors = 0;
    line_splitter   splitter;
    pairing_engine  pairing;
    stream_counters counters;
};

struct reader_config
{
    std::vector<gpu_stream*> streams;
    int                      wake_fd = -1;
    const std::atomic<bool>* stop    = nullptr;
    // Bytes of one kernel FIFO: a read returning nearly this much means the FIFO was
    // (nearly) full, so the kernel probably dropped events.
    size_t fifo_capacity = 8192;
    // Called for every complete line, with the CLOCK_BOOTTIME time of the read.
    std::function<void(gpu_stream&, std::string_view, uint64_t)> on_line;
    // Called around each batch of lines from one read (the service's delivery lock).
    std::function<void()> begin_batch;
    std::function<void()> end_batch;
};

// The thread body. Returns when *stop is set, after one last drain of every fd.
void run_reader(reader_config& config) noexcept;

// Reads everything queued on one stream now (until EAGAIN).
void drain_stream(reader_config& config, gpu_stream& stream) noexcept;
} // namespace rocprofiler::kfd
