// MIT License - see LICENSE.
//
// The page-migration service: wiring between contexts/buffers and the KFD reader. It owns
// the device (the /dev/kfd fd and one SMI fd per GPU), the reader thread, the kernel event
// mask (only what active contexts need), pid filtering and the loss counters.
#pragma once

#include "rocprofiler-sdk/context.hpp"

#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/fwd.h>

#include <chrono>

namespace rocprofiler::kfd::service
{
// Whether the service can run here: /dev/kfd opens, the KFD version is >= 1.10 and there is
// at least one GPU. Checked once; logs one line saying why not and what to do.
rocprofiler_status_t check_available() noexcept;

// A context that uses the service was started: opens the device and prepares the reader on
// first use, then enables the events it needs, at once if the reader thread runs, else
// when start_reader_if_needed() has created it (no events queue with nobody to read them).
rocprofiler_status_t context_started(const context::context& ctx) noexcept;

// Starts the reader thread if it was prepared and is not running, then enables the events
// of every active context. Called after context_started with no SDK lock held (thread
// creation runs the tools' notifications).
rocprofiler_status_t start_reader_if_needed() noexcept;

// A context was stopped: returns once the reader can no longer write to its buffers.
void context_stopped(const context::context& ctx) noexcept;

// Reads everything the kernel has queued now and hands it to the contexts (bounded wait).
// Used when a tool finalizes early: its records queued in the kernel still reach it.
void drain_now() noexcept;

// At finalization: last drain of every fd while contexts are still active, stop the reader
// (waiting at most `bound`; a reader that cannot be woken is abandoned at once), count
// starts never ended, log a warning if anything was lost.
void shutdown(std::chrono::milliseconds bound) noexcept;

// fork() safety: hold / release the service's locks (control, then the reader's drain lock)
// around fork, so that a child never inherits one held by another thread.
void lock_for_fork() noexcept;
void unlock_after_fork() noexcept;

// In a forked child: close the inherited SMI fds without touching the parent's clients.
void forget_after_fork() noexcept;

// Records that reached a buffer but were never delivered (abandoned at finalization):
// counted in the all-GPU total of records_dropped (no GPU is known for them).
void count_abandoned_records(uint64_t count) noexcept;

rocprofiler_status_t get_loss_stats(uint64_t gpu_id, rocprofiler_kfd_loss_stats_t* stats) noexcept;
} // namespace rocprofiler::kfd::service
