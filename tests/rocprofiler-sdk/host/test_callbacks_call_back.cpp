// MIT License - see LICENSE.
//
// Callbacks that call back into the SDK, at the level of the buffers and callback threads
// (each test is its own process through ctest, so the callback threads one test stops do not
// affect another):
// - a callback running inline (no callback thread running) that flushes its own buffer gets
//   BUFFER_BUSY instead of waiting forever for itself;
// - exit() from inside a callback reaches stop_all() on that very callback thread: it must
//   not wait for itself (a wait of one hour here would time the test out).
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/context.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

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
} // namespace

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
