// MIT License - see LICENSE.
//
// The reader thread asks the scheduler for a short time slice (Linux 6.12+, EEVDF: the
// sched_runtime of sched_setattr(2) for SCHED_OTHER, clamped by the kernel to 0.1-100 ms).
//
// Why: the reader's work per wake-up is short (an 8 KiB FIFO is about 180 events, some 10 us
// of parsing and pairing), but it is urgent: the kernel's FIFO lasts 0.36 ms at 500k events/s
// (8 KiB) and 0.2 ms at 100k/s (1 KiB), and what does not fit is dropped without a trace.
// With the default slice (`se.slice` in /proc/PID/task/TID/sched: 1.4 ms on the project's
// 2-CPU VM, the base slice scaled by 1 + log2 of the CPUs), a reader
// woken on a CPU where another thread runs (the tool's callback thread, the program's own
// threads) waits until that thread has run to parity, up to a whole slice; a shorter slice
// gives the woken reader an earlier virtual deadline, and the kernel then lets it preempt
// (sched/eevdf: "Allow shorter slices to wakeup-preempt"). Its share of the CPU does not
// change: that is set by its weight (nice), which is kept.
//
// Measured (BENCHMARKS.md, 2026-12-06): 8 KiB FIFO at 500k events/s on the project's 2-vCPU
// VM, alternated runs without drops: 9 of 24 with the default slice, 17 of 24 with 300 us
// (in the first 16 of them: default 5, 100 us 9, 300 us 12); 1 KiB at 100k/s, median drops 34-65 (default), 38-58 (100 us), 11-27 (300 us). Any
// slice shorter than the running thread's lets the reader preempt it; the shortest also ends
// the reader's own turn after 100 us when it has a backlog to drain, so 300 us.
//
// Only the reader's own scheduling is touched, never a thread of the program, and only when it
// runs under SCHED_OTHER (inherited from the thread that started tracing): a program that runs
// itself as SCHED_BATCH, SCHED_IDLE or real-time has chosen for its threads, and the reader
// keeps that choice. Kernels before 6.12 ignore sched_runtime for SCHED_OTHER; a refused call
// (a seccomp filter) leaves the thread as it was. ROCPROFILER_KFD_READER_SLICE_US=0 asks for
// nothing.
#pragma once

#include <cstdint>

namespace rocprofiler::kfd::reader_slice
{
inline constexpr uint64_t default_slice_us = 300;
inline constexpr uint64_t max_slice_us     = 100'000;

// What the scheduling attributes of a thread are, as sched_getattr(2) gives them.
struct attributes
{
    uint32_t policy  = 0;
    uint64_t flags   = 0;
    int32_t  nice    = 0;
    uint64_t runtime = 0; // the slice on 6.12+; 0 or the default slice otherwise
};

// Pure: the attributes to set for a slice of `slice_ns`, or false when nothing should be set
// (slice 0, a policy other than SCHED_OTHER). Policy, nice and reset-on-fork are kept.
bool with_slice(const attributes& current, uint64_t slice_ns, attributes& wanted) noexcept;

enum class outcome
{
    set,       // asked for (a kernel before 6.12 accepts and ignores it)
    not_asked, // slice 0, or a policy other than SCHED_OTHER
    refused,   // sched_getattr/sched_setattr failed (errno kept in `error`)
};

// Applies with_slice to the calling thread. Never changes another thread.
outcome request_for_this_thread(uint64_t slice_ns, int& error) noexcept;
} // namespace rocprofiler::kfd::reader_slice
