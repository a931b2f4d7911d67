// MIT License - see LICENSE.
//
// The tool's buffers are delivered when they are 3/4 full (few callbacks, cheap) or at exit.
// A program killed by a signal (Ctrl-C, a batch system's time limit, the OOM killer) runs no
// exit handler: whatever its buffers held was lost, which for a run producing less than 3 MiB
// of records was every record. So a thread of the tool flushes them once a second when they
// hold records: at most about a second of records is lost to a kill.
//
// The thread has every signal blocked (it must not take the program's signals), sleeps on a
// condition variable (no busy wake-up: one a second), and stop() ends it promptly.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace rocprof_kfd
{
class periodic_flusher
{
public:
    periodic_flusher() = default;
    ~periodic_flusher() { stop(); }
    periodic_flusher(const periodic_flusher&)            = delete;
    periodic_flusher& operator=(const periodic_flusher&) = delete;

    // Runs `flush` every `interval` until stop(). False when the thread cannot be started
    // (the tool then flushes only at exit, as before).
    bool start(std::chrono::milliseconds interval, std::function<void()> flush);
    // Ends the thread, waiting for a flush in progress. Idempotent. Never call it from inside
    // `flush` or while holding a lock `flush` takes.
    void stop();

private:
    void run();

    std::mutex                m_mutex;
    std::condition_variable   m_wake;
    bool                      m_stopping = false;
    std::chrono::milliseconds m_interval{1000};
    std::function<void()>     m_flush;
    std::thread               m_thread;
};
} // namespace rocprof_kfd
