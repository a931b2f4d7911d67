// MIT License - see LICENSE.
//
// Read coalescing (what network cards call interrupt coalescing): after a read that emptied a
// busy stream's FIFO, the reader may wait a bounded time and then read again, instead of
// sleeping in poll() until the next event. Each wake-up and read then carries many events
// instead of the few that arrived since the last one: fewer system calls, and fewer of the
// cold-cache wake-ups that cost the traced program more than the events themselves.
//
// A wait must never let the kernel's FIFO fill (what does not fit is dropped without a trace),
// so it is bounded twice, whatever rate was observed:
// - by a burst far above what one GPU's fault handling emits: at most half the time the FIFO
//   takes to fill at burst_bytes_per_second (8 KiB: 102 us; 40 MB/s is about 900k events/s of
//   45-byte lines, several times the rates seen in fault storms);
// - by the observed rate: at most an eighth of the time the FIFO takes to fill at it, and only
//   when the FIFO, at that rate, lasts the wait plus wake_allowance_ns: the time the reader may
//   take to run again once the wait's timer fires. On a VM the timer must wake a vCPU that
//   went idle, which the hypervisor runs again when it can: on the project's 2-vCPU KVM VM,
//   8 KiB FIFOs at 200k events/s (filled in 0.9 ms) dropped events in 9 of 12 runs with
//   waits of 102 us and in 1 of 12 without them. Bare metal is no exception where it
//   matters: an HPC job keeps every core busy, and a woken reader may then wait for the
//   running thread's time slice (milliseconds) before it runs. So for 45-byte lines an
//   8 KiB FIFO is waited on only from about 56k (see min_bytes_per_nap) to about 87k
//   events/s; larger FIFOs keep the benefit at higher rates.
// It is taken only when it is expected to gather at least min_bytes_per_nap at the observed
// rate (a quiet stream keeps waking per event: at such rates that costs next to nothing) and
// is at least min_nap_ns long (a shorter wait costs more in timer overhead than it saves). So
// a 1 KiB FIFO (Linux 6.0-6.12: 12.8 us at the burst rate) is never waited on, and no wait
// follows a read that found the FIFO (nearly) full: the reader is behind and reads at once.
// Nor is a stream faster than max_coalesced_bytes_per_second (about 350k events/s) waited on:
// its reads carry many events anyway, and a reader that gives up its CPU on purpose while a
// busy producer and the tool's thread want it may wait longer than the FIFO lasts to get it
// back (measured: more drops at 500k-1M events/s with waits than without).
//
// Pure: numbers in, a duration out; the reader's loop applies it (reader.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rocprofiler::kfd::read_coalescing
{
inline constexpr uint64_t burst_bytes_per_second         = 40'000'000;
inline constexpr uint64_t max_coalesced_bytes_per_second = 16'000'000;
inline constexpr uint64_t min_bytes_per_nap              = 256;
inline constexpr uint64_t min_nap_ns                     = 20'000;
inline constexpr uint64_t wake_allowance_ns              = 2'000'000;
// Reads further apart than this say nothing about a rate worth coalescing.
inline constexpr uint64_t max_interval_ns = 1'000'000'000;

struct last_read
{
    size_t   fifo_capacity      = 0; // bytes of the kernel's FIFO
    size_t   bytes              = 0; // what this read returned
    uint64_t ns_since_previous  = 0; // since the stream's previous read that returned bytes
    bool     fifo_was_saturated = false;
};

// Nanoseconds to wait before reading the stream again; 0: wait in poll() as usual.
constexpr uint64_t
nap_ns(const last_read& read) noexcept
{
    if(read.fifo_was_saturated || read.bytes == 0) return 0;
    if(read.ns_since_previous == 0 || read.ns_since_previous > max_interval_ns) return 0;
    // bytes / ns > max / 1e9, without dividing
    if(read.bytes * 1'000'000'000 > max_coalesced_bytes_per_second * read.ns_since_previous)
        return 0;
    const uint64_t capacity = read.fifo_capacity;
    // Half the FIFO at the burst rate; an eighth of it at the observed rate
    // (bytes / ns_since_previous bytes per ns).
    uint64_t by_burst = capacity / 2 * 1'000'000'000 / burst_bytes_per_second;
    uint64_t by_rate  = capacity / 8 * read.ns_since_previous / read.bytes;
    uint64_t nap      = by_burst < by_rate ? by_burst : by_rate;
    if(nap < min_nap_ns) return 0;
    // The FIFO must last nap + wake_allowance_ns at the observed rate: capacity bytes take
    // capacity * ns_since_previous / bytes ns (compared without dividing).
    if(capacity * read.ns_since_previous < (nap + wake_allowance_ns) * read.bytes) return 0;
    // Bytes expected during the nap at the observed rate.
    uint64_t expected = read.bytes * nap / read.ns_since_previous;
    return expected >= min_bytes_per_nap ? nap : 0;
}
} // namespace rocprofiler::kfd::read_coalescing
