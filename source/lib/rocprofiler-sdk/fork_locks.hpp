// MIT License - see LICENSE.
//
// Which thread holds the SDK's locks across a fork. The SDK's prepare handler takes every
// lock an API call can reach and its parent and child handlers release them. Fork handlers
// registered before the SDK's (by the program, or by a listed tool from its constructor) run
// inside that window on the forking thread: glibc runs prepare handlers in reverse order of
// registration, parent and child handlers in order. An API call from one of them would wait
// for a lock its own thread holds, forever; it returns ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE
// instead (api_guard.hpp).
#pragma once

#include <pthread.h>

#include <atomic>

namespace rocprofiler::fork_locks
{
inline std::atomic<bool>      held{false};
inline std::atomic<pthread_t> holder{};

// From the SDK's prepare handler, before it takes the first lock.
inline void
taken_by_this_thread() noexcept
{
    holder.store(pthread_self(), std::memory_order_relaxed);
    held.store(true, std::memory_order_release);
}

// From its parent and child handlers, after the last lock is released.
inline void
released() noexcept
{
    held.store(false, std::memory_order_release);
}

inline bool
held_by_this_thread() noexcept
{
    return held.load(std::memory_order_acquire) &&
           pthread_equal(holder.load(std::memory_order_relaxed), pthread_self()) != 0;
}
} // namespace rocprofiler::fork_locks
