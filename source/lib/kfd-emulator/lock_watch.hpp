// MIT License - see LICENSE.
//
// Taking the emulator's lock in lossless pace, where the reader and the producer hand the
// FIFOs back and forth and each holds the lock for microseconds at a time. A thread that
// found it held used to sleep in futex at once, and the holder's unlock then had to wake it:
// two system calls and a wake-up of another CPU per collision (on a VM an inter-processor
// interrupt). Watching the lock for a bounded time lets the holder finish first; where it
// does not run meanwhile (one CPU for both) the watch ends and the thread sleeps as before.
#pragma once

#include "state.hpp"

#include <chrono>
#include <cstdint>
#include <mutex>

namespace kfd_emu
{
constexpr int64_t lock_watch_ns = 20'000;

// Spins (with pause) until ready() is true or `ns` have passed; returns ready()'s last answer.
// The clock is read every 16 tries, not on each. Shared by the lock watch and the producer's
// watch for a read (producer.cpp).
template <typename Ready>
bool
watch_until(int64_t ns, Ready&& ready)
{
    const steady::time_point limit = steady::now() + std::chrono::nanoseconds(ns);
    for(unsigned i = 1;; ++i)
    {
        if(ready()) return true;
        if((i & 15) == 0 && steady::now() >= limit) return false;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

// Tries to take the lock for at most lock_watch_ns; true when it did.
inline bool
lock_within_watch(std::unique_lock<std::mutex>& lock)
{
    return watch_until(lock_watch_ns, [&] { return lock.try_lock(); });
}

// lock.lock(), after a watch when `watch` (lossless pace).
inline void
lock_watching(std::unique_lock<std::mutex>& lock, bool watch)
{
    if(lock.try_lock()) return;
    if(watch && lock_within_watch(lock)) return;
    lock.lock();
}
} // namespace kfd_emu
