// MIT License - see LICENSE.
//
// Callback threads run buffer callbacks, never on the thread that produced the records.
// Each has a queue of buffers to deliver; a buffer is served by exactly one thread, so its
// records reach the tool in emplacement order. Thread 0 is the default one.
#pragma once

#include <rocprofiler-sdk/fwd.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace rocprofiler::callback_thread
{
inline constexpr uint64_t default_thread = 0;
inline constexpr size_t   max_threads    = 64;

// Reserves a new callback thread; its OS thread starts in start_all().
rocprofiler_status_t create(uint64_t* thread_id);

// Starts the OS thread of every callback thread not yet started (the default one included).
// Called on the initializing thread at the end of initialization, so that the tools'
// thread-creation notifications never run on the KFD reader thread. Idempotent.
void start_all() noexcept;

// At exit: starts a new OS thread for every callback thread that a tool's callback ended
// (pthread_exit), so that its buffers are delivered on a thread of the SDK's rather than
// on the exiting thread, which such a callback would end in the middle of exit.
void restart_ended_by_tool() noexcept;

// True when a tool's callback ended callback thread `thread_id` and it was not restarted.
bool ended_by_tool(uint64_t thread_id) noexcept;

// Runs after every delivery on a callback thread, outside any tool callback (used for
// finalizations a tool asked for from inside its own callback).
void set_after_delivery_hook(void (*hook)()) noexcept;
// Runs that hook after a delivery on another thread (a flush delivering inline). May end the
// thread as a delivery may (the unwind of a tool's pthread_exit).
void run_after_delivery_hook();

// Makes `buffer_id` deliver on `thread_id`.
rocprofiler_status_t assign(uint64_t buffer_id, uint64_t thread_id);

bool exists(uint64_t thread_id);

// Queues a delivery of `buffer_id` on `thread_id`. False if that thread is not running (not
// started, failed to start, or stopped): it never starts a thread itself.
bool schedule(uint64_t thread_id, uint64_t buffer_id) noexcept;

// True when called from callback thread `thread_id`.
bool is_current(uint64_t thread_id) noexcept;

// True when called from any callback thread.
bool on_any_callback_thread() noexcept;

// The OS thread of callback thread `thread_id` while it runs; std::thread::id{} when it is
// not running (not started, ended, stopped) or has not begun serving yet.
std::thread::id os_thread(uint64_t thread_id) noexcept;

// Stops every thread after its queue is empty. A thread still inside a tool callback after
// `timeout` is abandoned (detached) so that exit never hangs.
void stop_all(std::chrono::milliseconds timeout) noexcept;

// In a forked child: forget the parent's threads (they do not exist here).
void forget_after_fork() noexcept;

// fork() safety: hold / release every queue lock around fork.
void lock_all_for_fork() noexcept;
void unlock_all_after_fork() noexcept;
} // namespace rocprofiler::callback_thread
