// MIT License - see LICENSE.
#include "rocprofiler-sdk/callback_thread.hpp"
#include "common/fork_reachable.hpp"
#include "common/never_destroyed.hpp"
#include "rocprofiler-sdk/api_guard.hpp"
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
#include <new>
#include <string>
#include <thread>

namespace rocprofiler::callback_thread
{
namespace
{
struct worker
{
    std::mutex              mutex;
    std::condition_variable wake;
    std::condition_variable idle;
    std::deque<uint64_t>    queue; // buffer ids; each buffer is queued at most once
    bool                    stopping      = false;
    bool                    running       = false; // OS thread started and not finished
    bool                    failed        = false; // not started, or ended by a tool
    bool                    ended_by_tool = false; // a tool's callback ended the thread
    std::thread::id         os_id         = {};
    // The thread inside start() for this worker (its thread notifications run there): the
    // OS thread may never come to it, see starting_here().
    std::thread::id              starter = {};
    std::unique_ptr<std::thread> thread;
    char                         name[16] = {};
};

// Fixed table: workers are never freed while the process runs (the OS thread may outlive
// a timed-out stop, so its object must stay valid). Slot 0 is the default thread.
std::array<std::atomic<worker*>, max_threads>&
table()
{
    static common::never_destroyed<std::array<std::atomic<worker*>, max_threads>> t;
    return t.get();
}

std::atomic<size_t>     created_count{1};
std::mutex              create_mutex;
std::atomic<void (*)()> after_delivery{nullptr};
thread_local bool       this_is_a_callback_thread = false;

worker*
get(uint64_t id)
{
    if(id >= max_threads) return nullptr;
    return table()[id].load(std::memory_order_acquire);
}

worker*
make_worker(size_t index)
{
    auto* w = new worker{};
    if(index == default_thread)
        std::snprintf(w->name, sizeof(w->name), "rocprof-cb");
    else
        std::snprintf(w->name, sizeof(w->name), "rocprof-cb-%u",
                      static_cast<unsigned>(index % 1000));
    table()[index].store(w, std::memory_order_release);
    return w;
}

// A tool's callback ended this thread (pthread_exit, or a cancellation) inside a delivery:
// the thread is not replaced while the program runs (the tool asked for it to end). Its
// buffers are then delivered by flush, as when the thread failed to start; deliveries queued
// for it are given back to their buffers. At exit it is started again
// (restart_ended_by_tool), so that such a callback never runs on the exiting thread.
void
thread_ended_by_tool(worker* w) noexcept
{
    // First: whoever sees this thread gone (a flush, exit) then sees the line written.
    ROCP_WARNING << "callback thread " << w->name
                 << " was ended by a tool's callback; its buffers are delivered by flush "
                    "(at exit, by a thread started again)";
    {
        std::lock_guard<std::mutex> lock{w->mutex};
        w->running       = false; // nothing is queued for it from now on (schedule)
        w->failed        = true;
        w->ended_by_tool = true;
        w->os_id         = {}; // a new thread may get its id: it is not this worker's
        // Nobody joins a thread that ends on its own: detached, its resources go with it. (If
        // start() has not stored it yet, start() detaches it: see `failed` there.)
        if(w->thread)
        {
            w->thread->detach();
            w->thread.reset();
        }
        w->idle.notify_all();
    }
    // Queued deliveries go back to their buffers one at a time, without the worker's lock
    // (forget_scheduled_delivery takes the buffer's) and without a container of their own (a
    // new deque allocates, and this runs in a noexcept unwind).
    for(;;)
    {
        uint64_t buffer_id = 0;
        {
            std::lock_guard<std::mutex> lock{w->mutex};
            // Started again meanwhile (at exit): what is queued now is the new thread's.
            if(w->queue.empty() || w->running) break;
            buffer_id = w->queue.front();
            w->queue.pop_front();
        }
        buffer::forget_scheduled_delivery(buffer_id);
    }
}

void serve(worker* w);

// True on the thread inside start() for `w`, that is inside its thread notifications: the
// OS thread is created only after the precreate notification returns, which it never does
// when the tool calls exit() there. Nothing on this thread may wait for that thread (exit
// would stall for its whole deadline; a flush from a notification would wait for a thread
// that its own return starts). Under w->mutex.
bool
starting_here(const worker* w)
{
    return w->starter == std::this_thread::get_id();
}

ROCP_CATCHES_FORCED_UNWIND void
run(worker* w)
{
    try
    {
        serve(w);
    }
    catch(abi::__forced_unwind&)
    {
        thread_ended_by_tool(w);
        throw; // glibc aborts the process when the unwind of a thread's end is swallowed
    }
}

void
serve(worker* w)
{
    this_is_a_callback_thread = true;
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
        lock.unlock();
        buffer::deliver(buffer_id);
        if(auto hook = after_delivery.load()) hook();
        lock.lock();
        if(w->queue.empty()) w->idle.notify_all();
    }
    w->running = false;
    w->idle.notify_all();
}

// The thread is created without the worker's lock held: creating it runs the tools'
// thread notifications, which may call any API (a buffer flush takes this lock).
// `after_tool_end`: the thread a tool's callback ended is started again at exit. Until it is
// stored, ended_by_tool stays set (a flush at exit then never delivers its buffers on the
// exiting thread); if it cannot be created, deliveries queued for it meanwhile are given back
// to their buffers, not run here on the exiting thread.
void
start(worker* w, bool after_tool_end = false)
{
    // First: libstdc++'s deque allocates when constructed. A bad_alloc thrown later, while
    // the thread below is joinable, would destroy it (std::terminate); thrown here, it
    // leaves the worker as it was.
    std::deque<uint64_t> orphaned;
    {
        std::lock_guard<std::mutex> lock{w->mutex};
        if(w->running || w->failed || w->stopping) return;
        w->running = true; // deliveries may be queued already; the thread serves them
        w->starter = std::this_thread::get_id();
    }
    auto thread = internal_threading::start_thread(w->name, [w] { run(w); });
    {
        std::lock_guard<std::mutex> lock{w->mutex};
        w->starter = {};
        if(thread)
        {
            if(w->failed)
                thread->detach(); // a tool's callback already ended it (thread_ended_by_tool)
            else
            {
                w->thread = std::move(thread);
                if(after_tool_end) w->ended_by_tool = false;
            }
            return;
        }
        w->running = false;
        w->failed  = true; // logged once by start_thread; deliveries then happen on flush
        orphaned.swap(w->queue);
    }
    for(auto buffer_id : orphaned)
    {
        if(after_tool_end)
            buffer::forget_scheduled_delivery(buffer_id);
        else
            buffer::deliver(buffer_id); // queued for a thread that never came: not on a producer
    }
}
} // namespace

rocprofiler_status_t
create(uint64_t* thread_id)
{
    std::lock_guard<std::mutex> lock{create_mutex};
    auto                        index = created_count.load();
    if(index >= max_threads) return ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
    make_worker(index);
    created_count.store(index + 1);
    *thread_id = index;
    return ROCPROFILER_STATUS_SUCCESS;
}

void
start_all() noexcept
{
    try
    {
        {
            std::lock_guard<std::mutex> lock{create_mutex};
            if(get(default_thread) == nullptr) make_worker(default_thread);
        }
        for(size_t i = 0; i < max_threads; ++i)
            if(auto* w = get(i)) start(w);
    }
    catch(...)
    {
        ROCP_ERROR << "cannot start the callback threads";
    }
}

void
restart_ended_by_tool() noexcept
{
    for(size_t i = 0; i < max_threads; ++i)
    {
        auto* w = get(i);
        if(w == nullptr) continue;
        {
            std::lock_guard<std::mutex> lock{w->mutex};
            if(!w->ended_by_tool || w->stopping) continue;
            w->failed = false; // ended_by_tool stays set until the new thread is stored
        }
        try
        {
            start(w, true);
        }
        catch(const std::bad_alloc&) // before anything was queued for it (see start)
        {
            std::lock_guard<std::mutex> lock{w->mutex};
            w->failed = true;
        }
    }
}

bool
ended_by_tool(uint64_t thread_id) noexcept
{
    auto* w = get(thread_id);
    if(w == nullptr) return false;
    std::lock_guard<std::mutex> lock{w->mutex};
    return w->ended_by_tool;
}

void
set_after_delivery_hook(void (*hook)()) noexcept
{
    after_delivery.store(hook);
}

void
run_after_delivery_hook()
{
    if(auto hook = after_delivery.load()) hook();
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
        auto* w = get(thread_id);
        if(w == nullptr) return false;
        std::lock_guard<std::mutex> lock{w->mutex};
        // Starting on this thread: the caller delivers itself (as when no thread runs).
        if(!w->running || w->stopping || starting_here(w)) return false;
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
    if(w == nullptr || !this_is_a_callback_thread) return false;
    std::lock_guard<std::mutex> lock{w->mutex};
    return w->running && w->os_id == std::this_thread::get_id();
}

bool
on_any_callback_thread() noexcept
{
    return this_is_a_callback_thread;
}

std::thread::id
os_thread(uint64_t thread_id) noexcept
{
    auto* w = get(thread_id);
    if(w == nullptr) return {};
    std::lock_guard<std::mutex> lock{w->mutex};
    return w->running ? w->os_id : std::thread::id{};
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
        // exit() called from a callback on this very worker: it cannot wait for itself (nor
        // join itself); check that before waiting, so such an exit does not stall. Nor from
        // its thread notifications, while this thread starts it (starting_here).
        bool self = w->running && (w->os_id == std::this_thread::get_id() || starting_here(w));
        bool done = self || w->idle.wait_until(lock, deadline, [w] { return !w->running; });
        auto thr  = std::move(w->thread);
        lock.unlock();
        if(!thr) continue;
        if(self || thr->get_id() == std::this_thread::get_id())
            thr->detach();
        else if(done)
            thr->join();
        else
        {
            ROCP_WARNING << "callback thread " << w->name
                         << " is still inside a tool callback at exit; abandoning it";
            thr->detach();
        }
    }
}

namespace
{
// Mutexes locked by the fork prepare handler, so that exactly those are unlocked after.
std::array<worker*, max_threads> locked_for_fork{};
} // namespace

void
forget_after_fork() noexcept
{
    for(size_t i = 0; i < max_threads; ++i)
    {
        auto* w = get(i);
        if(w == nullptr) continue;
        // The OS thread does not exist in the child: leak its std::thread object (joining or
        // detaching it would act on the parent's thread id). The child delivers nothing.
        common::keep_reachable(w->thread.release());
        w->running  = false;
        w->stopping = true;
        w->queue.clear();
    }
}

void
lock_all_for_fork() noexcept
{
    for(size_t i = 0; i < max_threads; ++i)
    {
        locked_for_fork[i] = get(i);
        if(locked_for_fork[i]) locked_for_fork[i]->mutex.lock();
    }
}

void
unlock_all_after_fork() noexcept
{
    for(size_t i = 0; i < max_threads; ++i)
    {
        if(locked_for_fork[i]) locked_for_fork[i]->mutex.unlock();
        locked_for_fork[i] = nullptr;
    }
}
} // namespace rocprofiler::callback_thread
