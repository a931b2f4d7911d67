// MIT License - see LICENSE.
#include "flusher.hpp"

#include <pthread.h>
#include <signal.h>

namespace rocprof_kfd
{
bool
periodic_flusher::start(std::chrono::milliseconds interval, std::function<void()> flush)
{
    if(m_thread.joinable()) return true;
    m_interval = interval;
    m_flush    = std::move(flush);
    m_stopping = false;
    // The new thread inherits this mask: every signal blocked from its first instruction.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    bool started = true;
    try
    {
        m_thread = std::thread([this] { run(); });
    }
    catch(...) // std::system_error: no thread
    {
        started = false;
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return started;
}

void
periodic_flusher::stop()
{
    {
        std::lock_guard<std::mutex> lock{m_mutex};
        m_stopping = true;
    }
    m_wake.notify_all();
    if(m_thread.joinable()) m_thread.join();
}

void
periodic_flusher::run()
{
    pthread_setname_np(pthread_self(), "rocprof-kfd-fl");
    std::unique_lock<std::mutex> lock{m_mutex};
    while(!m_wake.wait_for(lock, m_interval, [this] { return m_stopping; }))
    {
        lock.unlock(); // stop() may be called meanwhile: it waits for this flush
        m_flush();
        lock.lock();
    }
}
} // namespace rocprof_kfd
