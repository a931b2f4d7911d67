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
//   across the callback made that thread and the callback wait for each other forever).
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/context.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
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
