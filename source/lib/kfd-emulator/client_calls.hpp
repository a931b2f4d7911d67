// MIT License - see LICENSE.
//
// What the emulator costs the threads that call it: the intercepted read() calls, and the
// system calls the emulator itself makes inside the intercepted calls of the program's threads
// (the SDK's reader), by kind. The SDK's benchmarks subtract them from the system calls they
// count on the SDK's threads to get the SDK's own. Relaxed atomics (no thread_local): the
// producer thread is told apart by its pthread_t and counts nothing here.
#pragma once

#include "stats_json.hpp"

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace kfd_emu
{
struct client_call_counters
{
    std::atomic<uint64_t> reads_intercepted{0};
    std::atomic<uint64_t> syscalls[client_syscall_kinds] = {};
};
extern client_call_counters g_client_calls;
// The replay's producer thread while it runs (0: none); its system calls are not counted.
extern std::atomic<unsigned long> g_producer_thread;

inline void
count_client_syscall(client_syscall kind, uint64_t n = 1)
{
    if(pthread_self() == g_producer_thread.load(std::memory_order_relaxed)) return;
    g_client_calls.syscalls[kind].fetch_add(n, std::memory_order_relaxed);
}

inline void
count_intercepted_read()
{
    g_client_calls.reads_intercepted.fetch_add(1, std::memory_order_relaxed);
}

// True when glibc's unlock of `m`, held by the caller, will make a FUTEX_WAKE: its lock word
// says another thread waits, or waited (a thread that took the lock after a wait leaves the
// word at 2, so its own unlock wakes too).
inline bool
unlock_will_wake(std::mutex& m)
{
#if defined(__GLIBC__)
    // pthread_mutex_t's __data.__lock: 0 (free), 1 (held) or 2 (held, maybe waiters).
    return __atomic_load_n(&m.native_handle()->__data.__lock, __ATOMIC_RELAXED) > 1;
#else
    (void)m;
    return false;
#endif
}

// Releases a lock the program's thread holds, counting the FUTEX_WAKE of its unlock: without
// it a benchmark would count the emulator's lock hand-off as a system call of the SDK's. The
// word is read just before the unlock: a thread that starts to wait in between is missed.
inline void
unlock_counted(std::unique_lock<std::mutex>& lock)
{
    if(!lock.owns_lock()) return;
    if(unlock_will_wake(*lock.mutex())) count_client_syscall(sc_futex_unlock_wake);
    lock.unlock();
}

// The counts so far, for the statistics.
client_call_report client_calls_so_far();
// A fork child starts from zero (its statistics are its own).
void reset_client_calls();
} // namespace kfd_emu
