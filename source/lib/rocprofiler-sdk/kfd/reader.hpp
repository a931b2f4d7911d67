// MIT License - see LICENSE.
//
// The reader thread's loop: it blocks in poll() over every GPU's SMI fd and a wake-up fd and
// drains each readable fd until its FIFO is empty; or, where asked for and the kernel allows
// io_uring, it keeps a READ of each of those fds queued on a ring, one system call per wake-up
// (reader_uring.cpp). Either way no timeout while idle (zero CPU), and each read's bytes go to the
// service, which splits them into lines (carrying partial lines across reads). A busy stream may
// instead be read again after a bounded wait (read_coalescing.hpp), during which it is not read
// (left out of poll(), no READ queued) and the wait for readiness ends with that wait. It never
// waits for a tool: the service only copies records into buffers.
#pragma once

#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/kfd/pairing.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
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
    std::atomic<uint64_t> starts_lost_in_gap{0};
    std::atomic<uint64_t> starts_timed_out{0};
    std::atomic<uint64_t> migrate_trigger_mismatches{0};
    std::atomic<uint64_t> lines_overlong{0};
    std::atomic<uint64_t> fields_out_of_range{0};
};

// One GPU's event stream. Only the reader thread touches splitter and pairing.
struct gpu_stream
{
    uint32_t            gpu_id = 0;
    int                 fd     = -1;
    device::fd_identity identity;       // fd is used only while it is still this file
    std::atomic<bool>   watching{true}; // written by the reader, read by the service
    int                 consecutive_errors = 0;
    // Read coalescing (read_coalescing.hpp; reader thread only): CLOCK_BOOTTIME of the last
    // read that returned bytes, and while non-zero, when the stream is read again without
    // waiting for poll() (it is left out of poll() until then).
    uint64_t previous_read_ns = 0;
    uint64_t nap_until_ns     = 0;
    // READs the io_uring loop linked after a timeout (interrupt mitigation; reader_uring.cpp).
    // Written by the reader, read by tests and benchmarks.
    std::atomic<uint64_t> reads_delayed{0};
    // Pair kinds (pair_kind_bits) whose events stopped reaching this stream (a mask without
    // them was written): applied by the reader after its next requested drain, which reads
    // every event queued before that write.
    std::atomic<uint32_t> pending_gap{0};
    // Pair kinds (pair_kind_bits) paired again after some of their events were read unpaired
    // (pair_kinds_to_invalidate): the reader opens their gap before it pairs the first event
    // read under the new paired_kinds, not at a later drain (events the kernel queued after
    // the mask write may be read before that drain, and paired across the gap). Set by the
    // service before paired_kinds.
    std::atomic<uint32_t> paired_again{0};
    // Pair kinds (pair_kind_bits) that an active page-migration service traces (their start
    // and end ids are then both in the mask): only their events are fed to the pairing
    // engine. Written by the service before it writes a mask, read by the reader per read.
    std::atomic<uint32_t> paired_kinds{pair_kind_all};
    line_splitter         splitter;
    pairing_engine        pairing;
    stream_counters       counters;
};

// Copies the engine's counters into the stream's atomics (reader thread only).
inline void
publish_pairing_counters(gpu_stream& stream) noexcept
{
    const auto& c   = stream.pairing.counters();
    auto&       out = stream.counters;
    out.ends_without_start.store(c.ends_without_start, std::memory_order_relaxed);
    out.starts_aged_out.store(c.starts_aged_out, std::memory_order_relaxed);
    out.starts_never_ended.store(c.starts_never_ended, std::memory_order_relaxed);
    out.starts_lost_in_gap.store(c.starts_lost_in_gap, std::memory_order_relaxed);
    out.starts_timed_out.store(c.starts_timed_out, std::memory_order_relaxed);
    out.migrate_trigger_mismatches.store(c.migrate_trigger_mismatches, std::memory_order_relaxed);
    out.fields_out_of_range.store(c.fields_out_of_range, std::memory_order_relaxed);
}

// Drops the stream's outstanding starts of `kinds` (pair_kind_bits): events of those kinds
// stopped reaching it, or may have been lost (reader thread only).
inline void
open_gap(gpu_stream& stream, uint32_t kinds) noexcept
{
    if(kinds == 0) return;
    stream.pairing.invalidate(kinds);
    publish_pairing_counters(stream);
}

// The stream's pair kinds for the read about to be delivered, with the gap of each kind
// paired again opened first (reader thread only). A kind whose paired_again bit is seen
// before its paired_kinds bit keeps the bit for a later read.
inline uint32_t
paired_kinds_for_read(gpu_stream& stream) noexcept
{
    const uint32_t paired = stream.paired_kinds.load(std::memory_order_acquire);
    const uint32_t again  = stream.paired_again.exchange(0, std::memory_order_acquire);
    if(again == 0) return paired;
    if(const uint32_t later = again & ~paired; later != 0)
        stream.paired_again.fetch_or(later, std::memory_order_relaxed);
    open_gap(stream, again & paired);
    return paired;
}

struct reader_config
{
    std::vector<gpu_stream*> streams;
    int                      wake_fd = -1;
    device::fd_identity      wake_identity;
    // Set once any of the SDK's fds was found taken away (closed, or its number reused by
    // the program): tracing stops, and no number found not ours is used again.
    std::atomic<bool> fds_lost{false};
    // Set by the reader as it returns (under drain_mutex, with drain_cv): exit waits for it
    // with a bound, never joins a reader that cannot be woken.
    bool finished = false;
    // Set by the reader just before its first poll (under drain_mutex, with drain_cv): the
    // service enables the kernel's events once the reader runs (wait_until_polling).
    bool polling = false;
    // Set by the reader as it leaves its poll loop (stop or lost fds): it is finishing.
    std::atomic<bool>        leaving{false};
    const std::atomic<bool>* stop = nullptr;
    // Bytes of one kernel FIFO: a read returning nearly this much means the FIFO was
    // (nearly) full, so the kernel probably dropped events.
    size_t fifo_capacity = 8192;
    // The FIFO size the reader's waits are sized from (read_coalescing.hpp): fifo_capacity as
    // known before any read (told, or from the kernel version), kept when a read raises
    // fifo_capacity (0 until then). A size inferred from a read may exceed the truth: it is
    // rounded up, and a file that is not the kernel's (an emulator's socket) can return more
    // than its FIFO holds. A wait sized from too large a FIFO lets it overflow; one sized from
    // too small a FIFO costs only a wake-up.
    size_t wait_fifo_capacity = 0;
    // Wait a bounded time after a small read of a busy stream and read again, rather than
    // poll() per event (read_coalescing.hpp). ROCPROFILER_KFD_READ_COALESCING=0 turns it off.
    bool coalesce_reads = true;
    // Read through io_uring where the kernel allows it (reader_uring.cpp: one system call per
    // wake-up), else with poll() and read(). The service sets it from ROCPROFILER_KFD_IO_URING
    // (off by default: BENCHMARKS.md, "An io_uring reader in the SDK").
    bool use_io_uring = true;
    // The time slice the reader asks the scheduler for, so that a wake-up preempts sooner
    // (reader_slice.hpp); 0: none. ROCPROFILER_KFD_READER_SLICE_US sets it.
    uint64_t slice_ns = 0;
    // getpid() of the reader's process, taken as the reader starts (0 until then: the
    // identity check asks getpid() itself).
    pid_t self_pid = 0;
    // Called once per read with its bytes and the CLOCK_BOOTTIME time of the read; splits
    // them into lines with stream.splitter (one call per read, not per line).
    std::function<void(gpu_stream&, const char*, size_t, uint64_t)> on_chunk;
    // Odd while the reader handles the lines of one read: a context stop waits for the
    // batch that may have seen the context active (see service.cpp).
    std::atomic<uint64_t> batch_sequence{0};
    // Synchronous drains (a tool finalizing early): a request is served by draining every
    // fd once, then drains_done catches up and drain_cv is notified.
    std::atomic<uint64_t>   drain_requests{0};
    std::atomic<uint64_t>   drains_done{0};
    std::mutex              drain_mutex;
    std::condition_variable drain_cv;
    // The reader's read buffer, on the heap (a thread_local this size would be static TLS
    // that every thread of a host program pays for). Allocated as the reader starts,
    // before its first poll (drain_stream alone allocates it at its first read).
    std::unique_ptr<char[]> read_buffer;
};

// The thread body. Returns when *stop is set, after one last drain of every fd.
void run_reader(reader_config& config) noexcept;

// Waits until the reader is about to poll for the first time, at most `bound`; returns
// whether it is (false: not yet, or it finished without polling).
bool wait_until_polling(reader_config& config, std::chrono::milliseconds bound) noexcept;

// Reads everything queued on one stream now: until a read returns less than it asked for
// (the kernel's FIFO is then empty) or EAGAIN.
void drain_stream(reader_config& config, gpu_stream& stream) noexcept;

// One of the SDK's fds is no longer its own: stops every stream with one warning. The
// numbers are never read, written or closed again.
void lose_fds(reader_config& config, const char* which) noexcept;

// Bytes each read asks for (more than any kernel FIFO holds).
inline constexpr size_t reader_read_size = 64 * 1024;
} // namespace rocprofiler::kfd
