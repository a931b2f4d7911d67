// MIT License - see LICENSE.
//
// Callbacks that call back into the SDK, at the level of the buffers and callback threads
// (each test is its own process through ctest, so the callback threads one test stops do not
// affect another):
// - a callback running inline (no callback thread running) that flushes its own buffer gets
//   BUFFER_BUSY instead of waiting forever for itself;
// - exit() from inside a callback reaches stop_all() on that very callback thread: it must
//   not wait for itself (a wait of one hour here would time the test out);
// - no SDK lock is held while a callback runs: a second delivery of the same buffer, asked
//   for while the callback waits for the thread asking, returns at once, and the running
//   delivery then hands over what was emplaced meanwhile, in order (a delivery lock held
//   across the callback made that thread and the callback wait for each other forever);
// - callbacks on two callback threads that flush (or destroy) each other's buffers: the wait
//   that would close the cycle gets BUSY instead of both waiting forever, also when the
//   cycle goes through a buffer queued behind a waiting callback.
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/context.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace rb = rocprofiler::buffer;

namespace
{
struct probe
{
    std::mutex              mutex;
    std::condition_variable done_cv;
    bool                    done        = false;
    int                     flush_rc    = -1;
    bool                    stop_called = false;
    uint64_t                buffer      = 0;
};

uint64_t
make_buffer(rocprofiler_buffer_tracing_cb_t callback, probe& p)
{
    uint64_t ctx = 0;
    EXPECT_EQ(rocprofiler::context::create(1, &ctx), ROCPROFILER_STATUS_SUCCESS);
    uint64_t id = 0;
    EXPECT_EQ(rb::create(ctx, 4096, 4096, ROCPROFILER_BUFFER_POLICY_DISCARD, callback, &p, &id),
              ROCPROFILER_STATUS_SUCCESS);
    p.buffer = id;
    return id;
}

void
put(uint64_t id)
{
    uint64_t record = 7;
    ASSERT_TRUE(rb::emplace(id, ROCPROFILER_BUFFER_CATEGORY_TRACING,
                            ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, &record, sizeof(record)));
}

void
flush_own_buffer(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
                 size_t, void* data, uint64_t)
{
    auto* p     = static_cast<probe*>(data);
    p->flush_rc = rb::flush(p->buffer);
}

void
stop_callback_threads(rocprofiler_context_id_t, rocprofiler_buffer_id_t,
                      rocprofiler_record_header_t**, size_t, void* data, uint64_t)
{
    auto* p = static_cast<probe*>(data);
    rocprofiler::callback_thread::stop_all(std::chrono::hours{1}); // as exit() would
    std::lock_guard<std::mutex> lock{p->mutex};
    p->stop_called = true;
    p->done        = true;
    p->done_cv.notify_all();
}
// A callback that, on its first call, announces itself and waits until the test opens the
// gate; it records every payload it gets and the thread it ran on.
struct gated_probe
{
    std::mutex              mutex;
    std::condition_variable cv;
    bool                    entered = false;
    bool                    gate    = false;
    std::vector<uint64_t>   seen;
    std::vector<int>        batch_sizes;
    std::thread::id         first_thread;
    std::thread::id         last_thread;
};

void
gated_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t,
               rocprofiler_record_header_t** headers, size_t n, void* data, uint64_t)
{
    auto*                        p = static_cast<gated_probe*>(data);
    std::unique_lock<std::mutex> lock{p->mutex};
    for(size_t i = 0; i < n; ++i)
        p->seen.push_back(*static_cast<const uint64_t*>(headers[i]->payload));
    p->batch_sizes.push_back(static_cast<int>(n));
    p->last_thread = std::this_thread::get_id();
    if(p->entered) return;
    p->entered      = true;
    p->first_thread = std::this_thread::get_id();
    p->cv.notify_all();
    p->cv.wait(lock, [&] { return p->gate; });
}

void
put_value(uint64_t id, uint64_t value)
{
    ASSERT_TRUE(rb::emplace(id, ROCPROFILER_BUFFER_CATEGORY_TRACING,
                            ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, &value, sizeof(value)));
}

// A buffer served by a callback thread of its own or a given one; `deliver_at_once`: a
// watermark of 0 (each record is delivered as it comes), else only a flush delivers.
uint64_t
buffer_on_thread(rocprofiler_buffer_tracing_cb_t callback, void* data, uint64_t thread,
                 bool deliver_at_once)
{
    uint64_t ctx = 0;
    EXPECT_EQ(rocprofiler::context::create(1, &ctx), ROCPROFILER_STATUS_SUCCESS);
    uint64_t id = 0;
    EXPECT_EQ(rb::create(ctx, 1 << 16, deliver_at_once ? 0 : 1 << 16,
                         ROCPROFILER_BUFFER_POLICY_DISCARD, callback, data, &id),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(rocprofiler::callback_thread::assign(id, thread), ROCPROFILER_STATUS_SUCCESS);
    return id;
}

uint64_t
new_callback_thread()
{
    uint64_t thread = 0;
    EXPECT_EQ(rocprofiler::callback_thread::create(&thread), ROCPROFILER_STATUS_SUCCESS);
    return thread;
}

// What callbacks that wait for each other's buffers saw. Never freed: if the SDK let them
// deadlock, their threads still use it when the test gives up.
struct cross_probe
{
    std::mutex              mutex;
    std::condition_variable cv;
    int                     inside     = 0; // callbacks that reached their flush or destroy
    int                     finished   = 0;
    bool                    destroy    = false; // destroy the other buffer instead of flushing it
    uint64_t                buffers[3] = {0, 0, 0};
    int                     status[3]  = {-1, -1, -1};
    bool                    called[3]  = {false, false, false};
};
cross_probe* const cross = new cross_probe{};

// Callback of buffers[me] (data: me): once, waits until both callbacks run, then flushes (or
// destroys) the other one's buffer.
void
cross_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
               size_t, void* data, uint64_t)
{
    const int                    me = static_cast<int>(reinterpret_cast<intptr_t>(data));
    std::unique_lock<std::mutex> lock{cross->mutex};
    if(cross->called[me]) return;
    cross->called[me] = true;
    ++cross->inside;
    cross->cv.notify_all();
    cross->cv.wait(lock, [] { return cross->inside == 2; });
    const uint64_t other = cross->buffers[1 - me];
    const bool     kill  = cross->destroy;
    lock.unlock();
    const int status = kill ? rb::destroy(other) : rb::flush(other);
    lock.lock();
    cross->status[me] = status;
    ++cross->finished;
    cross->cv.notify_all();
}

// Waits (at most a generous 20 s: a deadlock never ends) until `done`.
template <typename Pred>
bool
wait_for(cross_probe& p, Pred done)
{
    std::unique_lock<std::mutex> lock{p.mutex};
    return p.cv.wait_for(lock, std::chrono::seconds{20}, done);
}

void
run_cross(bool destroy)
{
    cross->destroy    = destroy;
    cross->buffers[0] = buffer_on_thread(cross_callback, reinterpret_cast<void*>(intptr_t{0}),
                                         new_callback_thread(), true);
    cross->buffers[1] = buffer_on_thread(cross_callback, reinterpret_cast<void*>(intptr_t{1}),
                                         new_callback_thread(), true);
    rocprofiler::callback_thread::start_all();
    put_value(cross->buffers[0], 1);
    put_value(cross->buffers[1], 2);
    ASSERT_TRUE(wait_for(*cross, [] { return cross->finished == 2; }))
        << "the two callbacks wait for each other forever";
    std::vector<int> statuses{cross->status[0], cross->status[1]};
    std::sort(statuses.begin(), statuses.end());
    // The first wait waits for the other callback, which gets BUSY and returns.
    EXPECT_EQ(statuses,
              (std::vector<int>{ROCPROFILER_STATUS_SUCCESS, ROCPROFILER_STATUS_ERROR_BUFFER_BUSY}));
}

// A chain: buffer 0's callback (its own thread) flushes buffer 2, which is queued on the
// thread where buffer 1's callback waits, in a flush, for buffer 0.
enum chain_buffer : int
{
    chain_x = 0, // on thread 1; its callback flushes chain_t
    chain_y = 1, // on thread 2; its callback flushes chain_x
    chain_t = 2, // on thread 2 too
};

void
chain_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
               size_t, void* data, uint64_t)
{
    const int                    me = static_cast<int>(reinterpret_cast<intptr_t>(data));
    std::unique_lock<std::mutex> lock{cross->mutex};
    if(cross->called[me]) return;
    cross->called[me] = true;
    if(me == chain_t) return;
    const uint64_t target = cross->buffers[me == chain_x ? chain_t : chain_x];
    lock.unlock();
    const int status = rb::flush(target);
    lock.lock();
    cross->status[me] = status;
    ++cross->finished;
    cross->cv.notify_all();
}
} // namespace

TEST(callbacks_that_call_back, delivery_asked_while_a_callback_runs_returns_and_keeps_order)
{
    gated_probe p;
    uint64_t    ctx = 0;
    ASSERT_EQ(rocprofiler::context::create(1, &ctx), ROCPROFILER_STATUS_SUCCESS);
    uint64_t id = 0;
    ASSERT_EQ(
        rb::create(ctx, 4096, 4096, ROCPROFILER_BUFFER_POLICY_DISCARD, gated_callback, &p, &id),
        ROCPROFILER_STATUS_SUCCESS);
    put_value(id, 1);
    // No callback thread was started: this flush delivers inline, on its own thread, and the
    // callback waits there for the gate.
    int         flush_rc = -1;
    std::thread flusher{[&] { flush_rc = rb::flush(id); }};
    {
        std::unique_lock<std::mutex> lock{p.mutex};
        p.cv.wait(lock, [&] { return p.entered; });
    }
    put_value(id, 2);
    rb::deliver(id); // must return while the callback still waits (it waits for this thread)
    {
        std::lock_guard<std::mutex> lock{p.mutex};
        EXPECT_EQ(p.seen, (std::vector<uint64_t>{1})); // nothing delivered behind its back
        p.gate = true;
        p.cv.notify_all();
    }
    flusher.join();
    EXPECT_EQ(flush_rc, ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{p.mutex};
    EXPECT_EQ(p.seen, (std::vector<uint64_t>{1, 2}));
    EXPECT_EQ(p.batch_sizes, (std::vector<int>{1, 1}));
    // The delivery that was running took the second record too.
    EXPECT_EQ(p.last_thread, p.first_thread);
}

TEST(callbacks_that_call_back, inline_callback_flushing_its_own_buffer_gets_busy)
{
    probe p;
    auto  id = make_buffer(flush_own_buffer, p);
    put(id);
    // No callback thread was started: this flush delivers inline, on this thread.
    EXPECT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(p.flush_rc, ROCPROFILER_STATUS_ERROR_BUFFER_BUSY);
}

TEST(exit_from_a_callback, stop_all_on_the_callback_thread_itself_does_not_wait_for_itself)
{
    rocprofiler::callback_thread::start_all();
    probe p;
    auto  id = make_buffer(stop_callback_threads, p);
    put(id);
    ASSERT_EQ(rb::flush(id, std::chrono::milliseconds::max()), ROCPROFILER_STATUS_SUCCESS);
    std::unique_lock<std::mutex> lock{p.mutex};
    p.done_cv.wait(lock, [&] { return p.done; });
    EXPECT_TRUE(p.stop_called);
}

// Callbacks on two callback threads that flush each other's buffers once both run: one of the
// two flushes would close a cycle of waits and returns BUSY; the other waits for that
// callback, which then returns. (Both waited forever.)
TEST(callbacks_that_call_back, callbacks_flushing_each_others_buffers_do_not_deadlock)
{
    run_cross(false);
}

// The same with rocprofiler_destroy_buffer, which flushes first.
TEST(callbacks_that_call_back, callbacks_destroying_each_others_buffers_do_not_deadlock)
{
    run_cross(true);
}

// The cycle need not go through a running callback of the buffer waited for: X's callback
// flushes T, which is queued on the thread where Y's callback waits (in a flush) for X. X's
// flush is the one that would close the cycle, and gets BUSY; Y's flush then returns. T is
// delivered afterwards. (X waited forever for T, and Y for X.)
TEST(callbacks_that_call_back, a_cycle_through_a_buffer_queued_behind_a_waiting_callback_is_busy)
{
    const uint64_t thread_1 = new_callback_thread();
    const uint64_t thread_2 = new_callback_thread();
    auto           data     = [](int which) { return reinterpret_cast<void*>(intptr_t{which}); };
    cross->buffers[chain_x] = buffer_on_thread(chain_callback, data(chain_x), thread_1, false);
    cross->buffers[chain_y] = buffer_on_thread(chain_callback, data(chain_y), thread_2, true);
    cross->buffers[chain_t] = buffer_on_thread(chain_callback, data(chain_t), thread_2, false);
    rocprofiler::callback_thread::start_all();
    put_value(cross->buffers[chain_x], 1); // delivered when Y's callback flushes X
    put_value(cross->buffers[chain_t], 2); // delivered when X's callback flushes T
    put_value(cross->buffers[chain_y], 3); // delivered at once: Y's callback starts the chain
    ASSERT_TRUE(wait_for(*cross, [] { return cross->finished == 2; }))
        << "the callbacks wait for each other forever";
    EXPECT_EQ(cross->status[chain_x], ROCPROFILER_STATUS_ERROR_BUFFER_BUSY);
    EXPECT_EQ(cross->status[chain_y], ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(rb::flush(cross->buffers[chain_t]), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{cross->mutex};
    EXPECT_TRUE(cross->called[chain_t]);
}
