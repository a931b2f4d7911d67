// MIT License - see LICENSE.
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/internal_threading.hpp"
#include "rocprofiler-sdk/logging.hpp"

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace rocprofiler::callback_thread
{
namespace
{
struct worker
{
    std::mutex                   mutex;
    std::condition_variable      wake;
    std::condition_variable      idle;
    std::deque<uint64_t>         queue; // buffer ids; each buffer is queued at most once
    bool                         stopping = false;
    bool                         running  = false; // OS thread started and not finished
    bool                         busy     = false; // inside a delivery
    std::thread::id              os_id    = {};
    std::unique_ptr<std::thread> thread;
    char                         name[16] = {};
};

// Fixed table: workers are never freed while the process runs (the OS thread may outlive
// a timed-out stop, so its object must stay valid).
std::array<std::atomic<worker*>, max_threads>&
table()
{
    static auto* t = new std::array<std::atomic<worker*>, max_threads>{};
    return *t;
}

std::atomic<size_t> created_count{1}; // slot 0 is the default thread
std::mutex          create_mutex;

worker*
get(uint64_t id)
{
    if(id >= max_threads) return nullptr;
    return table()[id].load(std::memory_order_acquire);
}

worker*
get_or_make_default()
{
    auto* w = get(default_thread);
    if(w != nullptr) return w;
    std::lock_guard<std::mutex> lock{create_mutex};
    w = get(default_thread);
    if(w == nullptr)
    {
        w = new worker{};
        std::snprintf(w->name, sizeof(w->name), "rocprof-cb");
        table()[default_thread].store(w, std::memory_order_release);
    }
    return w;
}

void
run(worker* w)
{
    std::unique_lock<std::mutex> lock{w->mutex};
    w->os_id = std::this_thread::get_id();
    for(;;)
    {
        w->wake.wait(lock, [w] { return w->stopping || !w->queue.empty(); });
        if(w->queue.empty())
        {
            if(w->stopping) break;
            continue;
        }
        auto buffer_id = w->queue.front();
        w->queue.pop_front();
        w->busy = true;
        lock.unlock();
        buffer::deliver(buffer_id);
        lock.lock();
        w->busy = false;
        if(w->queue.empty()) w->idle.notify_all();
    }
    w->running = false;
    w->idle.notify_all();
}

// Starts the OS thread if needed; called with w->mutex held.
bool
ensure_running(worker* w)
{
    if(w->running) return true;
    if(w->stopping) return false;
    w->thread = internal_threading::start_thread(w->name, [w] { run(w); });
    if(!w->thread) return false;
    w->running = true;
    return true;
}
} // namespace

rocprofiler_status_t
create(uint64_t* thread_id)
{
    std::lock_guard<std::mutex> lock{create_mutex};
    auto                        index = created_count.load();
    if(index >= max_threads) return ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
    auto* w = new worker{};
    std::snprintf(w->name, sizeof(w->name), "rocprof-cb-%zu", index);
    table()[index].store(w, std::memory_order_release);
    created_count.store(index + 1);
    *thread_id = index;
    return ROCPROFILER_STATUS_SUCCESS;
}

bool
exists(uint64_t thread_id)
{
    return thread_id == default_thread || get(thread_id) != nullptr;
}

rocprofiler_status_t
assign(uint64_t buffer_id, uint64_t thread_id)
{
    if(!buffer::exists(buffer_id)) return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
    if(!exists(thread_id)) return ROCPROFILER_STATUS_ERROR_THREAD_NOT_FOUND;
    return buffer::set_callback_thread(buffer_id, thread_id);
}

bool
schedule(uint64_t thread_id, uint64_t buffer_id) noexcept
{
    try
    {
        auto* w = (thread_id == default_thread) ? get_or_make_default() : get(thread_id);
        if(w == nullptr) return false;
        std::lock_guard<std::mutex> lock{w->mutex};
        if(!ensure_running(w)) return false;
        w->queue.push_back(buffer_id);
        w->wake.notify_one();
        return true;
    }
    catch(...)
    {
        return false;
    }
}

bool
is_current(uint64_t thread_id) noexcept
{
    auto* w = get(thread_id);
    if(w == nullptr) return false;
    std::lock_guard<std::mutex> lock{w->mutex};
    return w->running && w->os_id == std::this_thread::get_id();
}

void
stop_all(std::chrono::milliseconds timeout) noexcept
{
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for(size_t i = 0; i < max_threads; ++i)
    {
        auto* w = get(i);
        if(w == nullptr) continue;
        std::unique_lock<std::mutex> lock{w->mutex};
        w->stopping = true;
        w->wake.notify_all();
        bool done = w->idle.wait_until(lock, deadline, [w] { return !w->running; });
        auto thr  = std::move(w->thread);
        lock.unlock();
        if(!thr) continue;
        if(done)
        {
            thr->join();
        }
        else
        {
            ROCP_WARNING << "callback thread " << w->name
                         << " is still inside a tool callback at exit; abandoning it";
            thr->detach();
        }
    }
}

void
forget_after_fork() noexcept
{
    for(size_t i = 0; i < max_threads; ++i)
    {
        auto* w = get(i);
        if(w == nullptr) continue;
        // The OS thread does not exist in the child: leak its std::thread object (joining or
        // detaching it would act on the parent's thread id), and start afresh if needed.
        (void)w->thread.release();
        w->running = false;
        w->busy    = false;
        w->queue.clear();
    }
}

void
lock_all_for_fork() noexcept
{
    for(size_t i = 0; i < max_threads; ++i)
        if(auto* w = get(i)) w->mutex.lock();
}

void
unlock_all_after_fork() noexcept
{
    for(size_t i = 0; i < max_threads; ++i)
        if(auto* w = get(i)) w->mutex.unlock();
}
} // namespace rocprofiler::callback_thread
