// MIT License - see LICENSE.
//
// What the reader's two loops share (reader.cpp: ppoll and read(); reader_uring.cpp:
// io_uring): what a read's bytes do, when a busy stream is read again, how a stream ends.
// Reader thread only.
#pragma once

#include "rocprofiler-sdk/kfd/reader.hpp"

#include <cstddef>
#include <cstdint>

namespace rocprofiler::kfd::reader_detail
{
// Consecutive failed reads after which a GPU's fd is given up (never spin on an error).
inline constexpr int max_consecutive_errors = 16;

uint64_t boottime_ns() noexcept;
// Stops reading the stream for good (its outstanding starts can no longer end), one warning.
void stop_watching(gpu_stream& stream, const char* why) noexcept;
// Hands one read's bytes to the service; returns whether the FIFO was (nearly) full. Throws
// what the service throws (out of memory).
bool handle_chunk(reader_config& config, gpu_stream& stream, const char* data, size_t size,
                  uint64_t now);
// After a read of `size` bytes that emptied the FIFO: how long to wait before reading the
// stream again rather than at its next byte (read_coalescing.hpp), in ns, or 0. The poll loop
// naps that long; the io_uring loop links its next READ after a timeout that long.
uint64_t coalescing_wait_ns(const reader_config& config, const gpu_stream& stream, size_t size,
                            bool saturated, uint64_t now) noexcept;
// The earliest end of a stream's coalescing wait, 0 when none waits.
uint64_t earliest_nap_end(const reader_config& config) noexcept;

// The io_uring loop (reader_uring.cpp). open_uring_reader sets up the ring with every fd
// registered (before the reader says it polls: from then on the program may close or reuse
// the numbers); null where io_uring cannot be used (refused by the kernel or a seccomp
// filter, no wake-up fd, a number no longer the SDK's): the poll loop then runs.
// run_uring_reader runs until a stop (or lost fds) and ends with no request in flight;
// run_reader's last drain follows. It frees the state (or keeps it, if reads did not end).
struct uring_state;
uring_state* open_uring_reader(reader_config& config) noexcept;
void         run_uring_reader(uring_state* state) noexcept;
} // namespace rocprofiler::kfd::reader_detail
