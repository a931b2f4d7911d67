// MIT License - see LICENSE.
//
// Buffers through their internal interface (records are emplaced by the test, as the KFD
// reader does): watermark, flush, DISCARD drops, LOSSLESS growth and cap, a blocked
// callback never blocking the producer, a throwing callback, several producers, ordering,
// callback threads.
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/context.hpp"
#include "thread_end.hpp"

#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/ext/kfd.h>

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace rb = rocprofiler::buffer;

namespace
{
constexpr uint32_t category = ROCPROFILER_BUFFER_CATEGORY_TRACING;
constexpr uint32_t kind     = ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION;

// A 96-byte test record: who produced it and its sequence number.
struct test_record
{
    uint64_t producer;
    uint64_t sequence;
    uint64_t padding[10];
};

// Collects what callbacks receive; optionally blocks inside the callback until released.
struct sink
{
    std::mutex               mutex;
    std::condition_variable  changed;
    std::vector<test_record> records;
    uint64_t                 drops           = 0;
    int                      calls           = 0;
    bool                     gate_open       = true;
    bool                     inside          = false;
    bool                     throw_once      = false;
    bool                     end_thread_once = false; // pthread_exit in the callback, once
    bool                     cancel_once     = false; // pthread_cancel of its own thread, once
    bool                     test_cancel     = false; // pthread_testcancel in the callback
    std::string              thread_name;
    std::thread::id          thread_id;

    void wait_inside()
    {
        std::unique_lock<std::mutex> lock{mutex};
        changed.wait(lock, [&] { return inside; });
    }
    void open_gate()
    {
        std::lock_guard<std::mutex> lock{mutex};
        gate_open = true;
        changed.notify_all();
    }
};

void
sink_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t,
              rocprofiler_record_header_t** headers, size_t count, void* data, uint64_t drop_count)
{
    auto*                        s = static_cast<sink*>(data);
    std::unique_lock<std::mutex> lock{s->mutex};
    s->calls += 1;
    s->drops += drop_count;
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    s->thread_name = name;
    s->thread_id   = std::this_thread::get_id();
    for(size_t i = 0; i < count; ++i)
    {
        EXPECT_EQ(headers[i]->category, category);
        EXPECT_EQ(headers[i]->kind, kind);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(headers[i]->payload) % 8, 0u);
        s->records.push_back(*static_cast<const test_record*>(headers[i]->payload));
    }
    s->inside = true;
    s->changed.notify_all();
    s->changed.wait(lock, [&] { return s->gate_open; });
    s->inside = false;
    if(s->throw_once)
    {
        s->throw_once = false;
        throw std::runtime_error("tool bug");
    }
    if(s->cancel_once)
    {
        s->cancel_once = false;
        pthread_cancel(pthread_self());
    }
    if(s->test_cancel)
    {
        lock.unlock();
        pthread_testcancel();
        return;
    }
    if(s->end_thread_once)
    {
        s->end_thread_once = false;
        lock.unlock();
        pthread_exit(nullptr);
    }
}

uint64_t
make_context()
{
    // What initialization does once the tools are initialized: start callback threads.
    rocprofiler::callback_thread::start_all();
    uint64_t id = 0;
    EXPECT_EQ(rocprofiler::context::create(1, &id), ROCPROFILER_STATUS_SUCCESS);
    return id;
}

uint64_t
make_buffer(sink& s, size_t size, size_t watermark, rocprofiler_buffer_policy_t policy)
{
    uint64_t id = 0;
    EXPECT_EQ(rb::create(make_context(), size, watermark, policy, sink_callback, &s, &id),
              ROCPROFILER_STATUS_SUCCESS);
    return id;
}

// A DISCARD buffer served by a callback thread of its own (the default one serves the other
// tests). `started`: the thread runs; otherwise it is never started (make_context() started
// the threads before this one was created), as when it fails to start.
uint64_t
buffer_on_its_own_thread(sink& s, bool started)
{
    uint64_t id = 0;
    EXPECT_EQ(rb::create(make_context(), 1 << 20, 0, ROCPROFILER_BUFFER_POLICY_DISCARD,
                         sink_callback, &s, &id),
              ROCPROFILER_STATUS_SUCCESS);
    uint64_t thread = 0;
    EXPECT_EQ(rocprofiler::callback_thread::create(&thread), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(rocprofiler::callback_thread::assign(id, thread), ROCPROFILER_STATUS_SUCCESS);
    if(started) rocprofiler::callback_thread::start_all();
    return id;
}

bool
put(uint64_t buffer, uint64_t producer, uint64_t sequence)
{
    test_record r{};
    r.producer = producer;
    r.sequence = sequence;
    return rb::emplace(buffer, category, kind, &r, sizeof(r));
}
} // namespace

TEST(buffer, nothing_is_delivered_below_the_watermark)
{
    sink s;
    auto id = make_buffer(s, 100 * sizeof(test_record), 5 * sizeof(test_record),
                          ROCPROFILER_BUFFER_POLICY_DISCARD);
    for(int i = 0; i < 4; ++i)
        ASSERT_TRUE(put(id, 0, i));
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.emplaced, 4u);
    EXPECT_EQ(t.delivered, 0u); // no delivery was ever requested
    ASSERT_TRUE(put(id, 0, 4)); // reaches the watermark
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 5u);
    EXPECT_EQ(s.calls, 1);
    for(uint64_t i = 0; i < 5; ++i)
        EXPECT_EQ(s.records[i].sequence, i);
}

TEST(buffer, explicit_flush_delivers_everything_emplaced_before_it)
{
    sink s;
    auto id = make_buffer(s, 1 << 20, 1 << 20, ROCPROFILER_BUFFER_POLICY_DISCARD);
    ASSERT_TRUE(put(id, 0, 7));
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 1u);
    EXPECT_EQ(s.records[0].sequence, 7u);
}

TEST(buffer, callbacks_run_on_the_default_callback_thread_not_the_producer)
{
    sink s;
    auto id = make_buffer(s, 1 << 20, 0, ROCPROFILER_BUFFER_POLICY_DISCARD);
    ASSERT_TRUE(put(id, 0, 0));
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_NE(s.thread_id, std::this_thread::get_id());
    EXPECT_EQ(s.thread_name, "rocprof-cb");
}

TEST(buffer, assigned_callback_thread_runs_the_callback)
{
    sink     s;
    auto     id     = make_buffer(s, 1 << 20, 0, ROCPROFILER_BUFFER_POLICY_DISCARD);
    uint64_t thread = 0;
    ASSERT_EQ(rocprofiler::callback_thread::create(&thread), ROCPROFILER_STATUS_SUCCESS);
    ASSERT_EQ(rocprofiler::callback_thread::assign(id, thread), ROCPROFILER_STATUS_SUCCESS);
    rocprofiler::callback_thread::start_all();
    EXPECT_EQ(rocprofiler::callback_thread::assign(id, 999),
              ROCPROFILER_STATUS_ERROR_THREAD_NOT_FOUND);
    EXPECT_EQ(rocprofiler::callback_thread::assign(123456, thread),
              ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
    ASSERT_TRUE(put(id, 0, 0));
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.thread_name, "rocprof-cb-" + std::to_string(thread));
}

TEST(buffer, discard_drops_what_does_not_fit_and_reports_the_count)
{
    sink s;
    s.gate_open = false;
    auto id     = make_buffer(s, 10 * sizeof(test_record), 10 * sizeof(test_record),
                              ROCPROFILER_BUFFER_POLICY_DISCARD);
    for(int i = 0; i < 10; ++i)
        ASSERT_TRUE(put(id, 0, i));
    s.wait_inside(); // the first 10 are with the (blocked) callback; the buffer is empty
    int stored = 0;
    for(int i = 10; i < 25; ++i)
        stored += put(id, 0, i) ? 1 : 0;
    EXPECT_EQ(stored, 10);
    s.open_gate();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.records.size(), 20u);
    EXPECT_EQ(s.drops, 5u);
    EXPECT_EQ(t.dropped, 5u);
    for(uint64_t i = 0; i < 20; ++i)
        EXPECT_EQ(s.records[i].sequence, i); // the last five were the ones dropped
}

TEST(buffer, lossless_grows_while_the_callback_is_blocked_and_producer_never_waits)
{
    sink s;
    s.gate_open = false;
    auto id     = make_buffer(s, 16 * sizeof(test_record), 8 * sizeof(test_record),
                              ROCPROFILER_BUFFER_POLICY_LOSSLESS);
    for(int i = 0; i < 8; ++i)
        ASSERT_TRUE(put(id, 0, i));
    s.wait_inside();
    // The callback is blocked until the gate opens: if emplace waited for it, this loop
    // would never finish (the test would time out instead of passing).
    constexpr int total = 20000;
    for(int i = 8; i < total; ++i)
        ASSERT_TRUE(put(id, 0, i)) << i;
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.emplaced, static_cast<uint64_t>(total));
    EXPECT_EQ(t.delivered, 0u);                           // still inside the first callback
    EXPECT_GT(t.pending_bytes, 16 * sizeof(test_record)); // grew past the requested size
    s.open_gate();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), static_cast<size_t>(total));
    EXPECT_EQ(s.drops, 0u);
    for(int i = 0; i < total; ++i)
        ASSERT_EQ(s.records[i].sequence, static_cast<uint64_t>(i));
}

TEST(buffer, lossless_drops_and_counts_only_past_its_cap)
{
    setenv("ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES",
           std::to_string(40 * sizeof(test_record)).c_str(), 1);
    sink s;
    s.gate_open = false;
    auto id     = make_buffer(s, 10 * sizeof(test_record), 10 * sizeof(test_record),
                              ROCPROFILER_BUFFER_POLICY_LOSSLESS);
    unsetenv("ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES");
    for(int i = 0; i < 10; ++i)
        ASSERT_TRUE(put(id, 0, i));
    s.wait_inside();
    // The cap counts each record's 16-byte entry header too (what the buffer really holds):
    // 40 x 96 bytes of cap hold 34 entries of 16 + 96 bytes.
    constexpr int fit    = 40 * sizeof(test_record) / (16 + sizeof(test_record));
    int           stored = 0;
    for(int i = 0; i < 50; ++i)
        stored += put(id, 0, 100 + i) ? 1 : 0;
    EXPECT_EQ(stored, fit);
    s.open_gate();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.records.size(), 10u + fit);
    EXPECT_EQ(s.drops, 50u - fit);
}

TEST(buffer, a_throwing_callback_does_not_stop_later_deliveries)
{
    sink s;
    s.throw_once = true;
    auto id      = make_buffer(s, 1 << 20, 0, ROCPROFILER_BUFFER_POLICY_DISCARD);
    ASSERT_TRUE(put(id, 0, 1));
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    ASSERT_TRUE(put(id, 0, 2));
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 2u);
    EXPECT_EQ(s.records[1].sequence, 2u);
    EXPECT_EQ(s.calls, 2);
}

TEST(buffer, several_producers_keep_their_own_order_and_lose_nothing)
{
    sink          s;
    auto          id = make_buffer(s, 64 * 1024, 16 * 1024, ROCPROFILER_BUFFER_POLICY_LOSSLESS);
    constexpr int producers = 4;
    constexpr int each      = 20000;
    std::vector<std::thread> threads;
    for(int p = 0; p < producers; ++p)
        threads.emplace_back(
            [=]
            {
                for(int i = 0; i < each; ++i)
                    EXPECT_TRUE(put(id, p, i));
            });
    for(auto& t : threads)
        t.join();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), static_cast<size_t>(producers * each));
    std::vector<uint64_t> next(producers, 0);
    for(const auto& r : s.records)
    {
        ASSERT_LT(r.producer, static_cast<uint64_t>(producers));
        ASSERT_EQ(r.sequence, next[r.producer]) << "producer " << r.producer;
        next[r.producer] += 1;
    }
    EXPECT_EQ(s.drops, 0u);
}

namespace
{
std::atomic<int> flush_status_in_callback{-1};
void
flushing_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t id,
                  rocprofiler_record_header_t**, size_t, void*, uint64_t)
{
    flush_status_in_callback = rb::flush(id.handle);
}
} // namespace

TEST(buffer, flush_from_its_own_callback_is_busy_not_a_deadlock)
{
    uint64_t id = 0;
    ASSERT_EQ(rb::create(make_context(), 1024, 0, ROCPROFILER_BUFFER_POLICY_DISCARD,
                         flushing_callback, nullptr, &id),
              ROCPROFILER_STATUS_SUCCESS);
    test_record r{};
    ASSERT_TRUE(rb::emplace(id, category, kind, &r, sizeof(r)));
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(flush_status_in_callback.load(), ROCPROFILER_STATUS_ERROR_BUFFER_BUSY);
}

TEST(buffer, destroy_delivers_then_rejects_everything)
{
    sink s;
    auto id = make_buffer(s, 1 << 20, 1 << 20, ROCPROFILER_BUFFER_POLICY_DISCARD);
    ASSERT_TRUE(put(id, 0, 3));
    EXPECT_EQ(rb::destroy(id), ROCPROFILER_STATUS_SUCCESS);
    {
        std::lock_guard<std::mutex> lock{s.mutex};
        ASSERT_EQ(s.records.size(), 1u);
    }
    EXPECT_EQ(rb::destroy(id), ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
    EXPECT_EQ(rb::flush(id), ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
    EXPECT_FALSE(put(id, 0, 4));
    EXPECT_FALSE(rb::exists(id));
}

// Until `done`, in steps of a millisecond, at most a generous 20 s: false if it never came.
template <typename Pred>
bool
eventually(Pred done)
{
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds{20};
    while(!done())
    {
        if(std::chrono::steady_clock::now() > give_up) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds{1});
    }
    return true;
}

// Destroys `id` on a thread of its own while the sink's callback waits at its closed gate, and
// checks, once destroy has begun (the buffer is no longer there for new uses), that destroy
// has not returned while the callback still runs; then opens the gate. Returns destroy's
// status.
int
destroy_while_the_callback_waits(sink& s, uint64_t id, bool& took_a_new_record)
{
    std::atomic<bool> returned{false};
    std::atomic<int>  status{-1};
    std::thread       destroyer{[&]
                          {
                              status   = rb::destroy(id);
                              returned = true;
                          }};
    const bool        began = eventually([&] { return !rb::exists(id); });
    EXPECT_TRUE(began) << "destroy never began while the callback ran";
    took_a_new_record = put(id, 0, 2); // a producer going on meanwhile
    EXPECT_FALSE(returned.load()) << "destroy returned while its callback still runs";
    s.open_gate();
    destroyer.join();
    return status.load();
}

// Records keep coming while destroy runs (the reviewer's repro: a tool that frees the
// callback's data after destroy saw its callback run after destroy returned, 4 runs of 6).
// destroy takes no new record from its start (dropped and counted), delivers what was there,
// and returns only once no callback of the buffer runs; none runs after.
TEST(buffer, destroy_takes_no_new_records_and_returns_after_the_running_callback)
{
    sink           s;
    const uint64_t id = buffer_on_its_own_thread(s, true); // watermark 0: delivered at once
    s.gate_open       = false;
    ASSERT_TRUE(put(id, 0, 1));
    s.wait_inside(); // on the callback thread, at the gate
    bool took = true;
    EXPECT_EQ(destroy_while_the_callback_waits(s, id, took), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_FALSE(took) << "a record stored during destroy";
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.emplaced, 1u);
    EXPECT_EQ(t.delivered, 1u);
    EXPECT_EQ(t.dropped, 1u); // the record put during destroy
    EXPECT_EQ(t.in_delivery, 0u);
    EXPECT_FALSE(put(id, 0, 3));
    EXPECT_EQ(rb::flush(id), ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.calls, 1);
    EXPECT_FALSE(s.inside);
}

// A closed buffer (as exit and a tool's finalize close them) whose callback still runs:
// destroy's flush has nothing to wait for, but destroy waits for that callback. (It returned
// at once.)
TEST(buffer, destroy_of_a_closed_buffer_waits_for_its_running_callback)
{
    sink           s;
    const uint64_t id = buffer_on_its_own_thread(s, true);
    s.gate_open       = false;
    ASSERT_TRUE(put(id, 0, 1));
    s.wait_inside();
    rb::close(id);
    bool took = true;
    EXPECT_EQ(destroy_while_the_callback_waits(s, id, took), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_FALSE(took);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.calls, 1);
    EXPECT_FALSE(s.inside);
}

TEST(buffer, closed_buffer_never_calls_back_again)
{
    sink s;
    auto id = make_buffer(s, 1 << 20, 0, ROCPROFILER_BUFFER_POLICY_DISCARD);
    rb::close(id);
    EXPECT_FALSE(put(id, 0, 1));
    EXPECT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.calls, 0);
}

TEST(buffer, create_rejects_bad_arguments)
{
    sink     s;
    uint64_t id  = 0;
    auto     ctx = make_context();
    EXPECT_EQ(rb::create(ctx, 1024, 0, ROCPROFILER_BUFFER_POLICY_DISCARD, nullptr, &s, &id),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rb::create(ctx, 0, 0, ROCPROFILER_BUFFER_POLICY_DISCARD, sink_callback, &s, &id),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rb::create(ctx, 1024, 0, ROCPROFILER_BUFFER_POLICY_NONE, sink_callback, &s, &id),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rb::create(ctx, 1024, 0, ROCPROFILER_BUFFER_POLICY_LAST, sink_callback, &s, &id),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(
        rb::create(987654, 1024, 0, ROCPROFILER_BUFFER_POLICY_DISCARD, sink_callback, &s, &id),
        ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND);
    EXPECT_EQ(
        rb::create(ctx, 1024, 0, ROCPROFILER_BUFFER_POLICY_DISCARD, sink_callback, &s, nullptr),
        ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
}

TEST(context, life_cycle_statuses)
{
    namespace rc = rocprofiler::context;
    uint64_t id  = 0;
    ASSERT_EQ(rc::create(1, &id), ROCPROFILER_STATUS_SUCCESS);
    ASSERT_NE(rc::find(id), nullptr);
    EXPECT_FALSE(rc::find(id)->active.load());
    EXPECT_EQ(rc::stop(id), ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_STARTED);
    EXPECT_EQ(rc::start(id), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_TRUE(rc::find(id)->active.load());
    EXPECT_EQ(rc::start(id), ROCPROFILER_STATUS_SUCCESS); // already active: no-op
    EXPECT_EQ(rc::stop(id), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_FALSE(rc::find(id)->active.load());
    EXPECT_EQ(rc::stop(id), ROCPROFILER_STATUS_SUCCESS); // stopping a stopped context
    EXPECT_EQ(rc::start(0), ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND);
    EXPECT_EQ(rc::stop(424242), ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND);
    EXPECT_EQ(rc::find(0), nullptr);
}

TEST(context, start_and_stop_from_many_threads)
{
    namespace rc = rocprofiler::context;
    uint64_t id  = 0;
    ASSERT_EQ(rc::create(1, &id), ROCPROFILER_STATUS_SUCCESS);
    std::vector<std::thread> threads;
    for(int t = 0; t < 4; ++t)
        threads.emplace_back(
            [id]
            {
                for(int i = 0; i < 1000; ++i)
                {
                    EXPECT_EQ(rc::start(id), ROCPROFILER_STATUS_SUCCESS);
                    EXPECT_EQ(rc::stop(id), ROCPROFILER_STATUS_SUCCESS);
                }
            });
    for(auto& t : threads)
        t.join();
    EXPECT_FALSE(rc::find(id)->active.load());
}

TEST(buffer, watermark_equal_to_size_does_not_drop_with_a_fast_callback)
{
    // 136-byte records into 1000 bytes: the 7th fills the buffer to 952 bytes, below the
    // watermark; delivery must start then, not when the 8th record is dropped.
    sink s;
    auto id = make_buffer(s, 1000, 1000, ROCPROFILER_BUFFER_POLICY_DISCARD);
    rocprofiler_buffer_tracing_page_migration_record_t rec{};
    uint64_t                                           stored = 0;
    for(int i = 0; i < 7; ++i)
        stored += rb::emplace(id, category, kind, &rec, sizeof(rec)) ? 1 : 0;
    EXPECT_EQ(stored, 7u);
    // The delivery was requested by the 7th record: flush only waits for it.
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.delivered, 7u);
    EXPECT_EQ(t.dropped, 0u);
}

TEST(buffer, without_a_callback_thread_flush_delivers_on_the_flushing_thread)
{
    // A buffer whose callback thread never started (e.g. it failed to): records are not
    // stuck, flush delivers them.
    sink           s;
    const uint64_t id = buffer_on_its_own_thread(s, false);
    ASSERT_TRUE(put(id, 0, 5));
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 1u);
    EXPECT_EQ(s.thread_id, std::this_thread::get_id());
}

// A flush that waits for records that never come fails after this instead of hanging.
constexpr std::chrono::seconds bounded{10};

// Puts record 1 into a new buffer `id` of sink `s` and flushes it: the thread that delivered
// it (a default id when it was not delivered, which the caller's checks then catch).
std::thread::id
first_delivery(sink& s, uint64_t id)
{
    EXPECT_TRUE(put(id, 0, 1));
    EXPECT_EQ(rb::flush(id, bounded), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.records.size(), 1u);
    return s.records.size() == 1 ? s.thread_id : std::thread::id{};
}

// A tool's callback that ends the callback thread it runs on (pthread_exit): glibc aborts the
// process if the SDK swallows that unwind. The thread ends; the records it was given count as
// delivered, and the buffer stays usable: the thread is not replaced, so later records are
// delivered by flush on the flushing thread, as when a callback thread failed to start.
TEST(buffer, a_callback_that_ends_its_callback_thread_leaves_the_buffer_usable)
{
    sink           s;
    const uint64_t id = buffer_on_its_own_thread(s, true);
    s.end_thread_once = true;
    EXPECT_NE(first_delivery(s, id), std::this_thread::get_id());
    ASSERT_TRUE(put(id, 0, 2));
    EXPECT_EQ(rb::flush(id, bounded), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 2u);
    EXPECT_EQ(s.records[1].sequence, 2u);
    EXPECT_EQ(s.thread_id, std::this_thread::get_id()) << "delivered by flush";
}

// The same callback run by flush on the flushing thread (no callback thread running): the
// flushing thread ends, as the tool asked, and the buffer delivers what comes later.
TEST(buffer, a_callback_that_ends_the_flushing_thread_leaves_the_buffer_usable)
{
    static sink     s; // reached from the thread body below, which captures nothing
    static uint64_t id = buffer_on_its_own_thread(s, false);
    s.end_thread_once  = true;
    auto flush_once    = [](void*) -> void*
    {
        put(id, 0, 1);
        rb::flush(id, bounded);
        return reinterpret_cast<void*>(1); // not reached
    };
    EXPECT_EQ(rocprofiler::test::value_the_thread_ended_with(flush_once), nullptr);
    ASSERT_TRUE(put(id, 0, 2));
    EXPECT_EQ(rb::flush(id, bounded), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 2u);
    EXPECT_EQ(s.records[0].sequence, 1u);
    EXPECT_EQ(s.records[1].sequence, 2u);
    EXPECT_EQ(s.calls, 2);
}

// A callback that cancels the thread it runs on (pthread_cancel(pthread_self())) and returns:
// SDK threads run with cancellation disabled, so the request stays pending and the thread
// goes on serving its buffers (acted on at a cancellation point in the SDK's own code, such
// as the write of a log line in a destructor, it would end the process).
TEST(buffer, a_callback_that_cancels_its_callback_thread_does_not_end_it)
{
    sink           s;
    const uint64_t id           = buffer_on_its_own_thread(s, true);
    s.cancel_once               = true;
    const std::thread::id first = first_delivery(s, id);
    EXPECT_NE(first, std::this_thread::get_id());
    ASSERT_TRUE(put(id, 0, 2));
    EXPECT_EQ(rb::flush(id, bounded), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 2u);
    EXPECT_EQ(s.thread_id, first) << "the same callback thread delivered both";
}

namespace
{
// A program's thread that calls `flush` once its cancellation is pending (pthread_cancel
// before the gate opens; the gate has no cancellation point), then reaches a cancellation
// point of its own.
struct cancelled_flusher
{
    std::atomic<bool> open{false};
    std::atomic<bool> returned{false};
    void (*flush)(cancelled_flusher&) = nullptr;
    uint64_t  id                      = 0;
    pthread_t thread{};

    // A buffer on its own callback thread holds one record whose callback waits for the
    // sink's gate; the thread then flushes it with `flush_with`.
    void start_on_a_waiting_callback(sink& s, void (*flush_with)(cancelled_flusher&))
    {
        id          = buffer_on_its_own_thread(s, true);
        s.gate_open = false;
        ASSERT_TRUE(put(id, 0, 1));
        flush = flush_with;
        ASSERT_EQ(pthread_create(&thread, nullptr, body, this), 0);
        ASSERT_EQ(pthread_cancel(thread), 0);
        open.store(true);
    }
    // The value the thread ended with.
    void* join()
    {
        void* result = nullptr;
        EXPECT_EQ(pthread_join(thread, &result), 0);
        return result;
    }
    static void* body(void* arg)
    {
        auto* f = static_cast<cancelled_flusher*>(arg);
        while(!f->open.load())
        {
        }
        f->flush(*f);
        f->returned.store(true);
        pthread_testcancel();
        return nullptr;
    }
};
} // namespace

// rocprofiler_flush_buffer waits as long as the tool's callback runs: that wait stays a
// cancellation point of a program's thread that can be cancelled (every other step of an
// API call is none: cancellation.hpp).
TEST(buffer, a_flush_waiting_for_a_callback_can_be_cancelled)
{
    sink              s;
    cancelled_flusher f;
    f.start_on_a_waiting_callback(s, [](cancelled_flusher& self)
                                  { rocprofiler_flush_buffer(rocprofiler_buffer_id_t{self.id}); });
    EXPECT_EQ(f.join(), PTHREAD_CANCELED);
    EXPECT_FALSE(f.returned.load());
    s.open_gate();
    EXPECT_EQ(rb::flush(f.id, bounded), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.records.size(), 1u);
}

// The SDK's own flushes (at exit, from a tool's finalize) are no cancellation point: the
// flush waits for the callback (which never returns here) until its timeout, then returns,
// and the thread is cancelled at its next cancellation point.
TEST(buffer, the_sdks_own_flush_is_no_cancellation_point)
{
    sink              s;
    cancelled_flusher f;
    f.start_on_a_waiting_callback(s,
                                  [](cancelled_flusher& self) {
                                      EXPECT_EQ(rb::flush(self.id, std::chrono::milliseconds{100}),
                                                ROCPROFILER_STATUS_ERROR);
                                  });
    EXPECT_EQ(f.join(), PTHREAD_CANCELED);
    EXPECT_TRUE(f.returned.load()) << "cancelled inside the flush";
    s.open_gate();
    EXPECT_EQ(rb::flush(f.id, bounded), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.records.size(), 1u);
}

// A callback that rocprofiler_flush_buffer runs on the program's thread (no callback thread)
// is the tool's code: as cancellable as that thread was when it called. Cancelled there, the
// thread ends as with pthread_exit, and the buffer stays usable.
TEST(buffer, a_callback_run_by_a_flush_is_as_cancellable_as_its_caller)
{
    static sink s; // reached from the thread body, which captures nothing
    s.test_cancel = true;
    cancelled_flusher f;
    f.id    = buffer_on_its_own_thread(s, false);
    f.flush = [](cancelled_flusher& self)
    {
        put(self.id, 0, 1);
        rocprofiler_flush_buffer(rocprofiler_buffer_id_t{self.id});
    };
    ASSERT_EQ(pthread_create(&f.thread, nullptr, cancelled_flusher::body, &f), 0);
    ASSERT_EQ(pthread_cancel(f.thread), 0);
    f.open.store(true);
    EXPECT_EQ(f.join(), PTHREAD_CANCELED);
    EXPECT_FALSE(f.returned.load()) << "the callback ran with cancellation disabled";
    s.test_cancel = false;
    ASSERT_TRUE(put(f.id, 0, 2));
    EXPECT_EQ(rb::flush(f.id, bounded), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 2u);
    EXPECT_EQ(s.records[1].sequence, 2u);
}

TEST(buffer, flush_waits_until_drops_are_reported)
{
    // Records taken by a blocked callback, then more than fit: the overflow is dropped.
    // flush must return only after a callback reported those drops.
    sink s;
    s.gate_open = false;
    auto id     = make_buffer(s, 4 * sizeof(test_record), 4 * sizeof(test_record),
                              ROCPROFILER_BUFFER_POLICY_DISCARD);
    for(int i = 0; i < 4; ++i)
        ASSERT_TRUE(put(id, 0, i));
    s.wait_inside();
    for(int i = 4; i < 8; ++i)
        ASSERT_TRUE(put(id, 0, i));
    EXPECT_FALSE(put(id, 0, 8)); // dropped
    EXPECT_FALSE(put(id, 0, 9)); // dropped
    s.open_gate();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.records.size(), 8u);
    EXPECT_EQ(s.drops, 2u);
}

// Drops that a running delivery already took are not yet reported either: a flush must wait
// for that callback to return. It once returned at once (it counted only the drops not yet
// taken), so a tool that flushed and then read its drop count could miss them.
TEST(buffer, flush_waits_for_drops_a_running_delivery_took)
{
    sink s;
    s.gate_open = false;
    auto id     = make_buffer(s, 100 * sizeof(test_record), 5 * sizeof(test_record),
                              ROCPROFILER_BUFFER_POLICY_DISCARD);
    // Larger than the buffer: dropped, and its drop report asks for a delivery at once.
    const std::vector<std::byte> too_large(200 * sizeof(test_record));
    EXPECT_FALSE(rb::emplace(id, category, kind, too_large.data(), too_large.size()));
    s.wait_inside(); // the callback holds the drop report, and stays there
    // The gate stays closed throughout this flush: it can only time out. (The length of the
    // bound does not decide the outcome.)
    EXPECT_EQ(rb::flush(id, std::chrono::milliseconds{50}), ROCPROFILER_STATUS_ERROR);
    s.open_gate();
    ASSERT_EQ(rb::flush(id, bounded), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.drops, 1u);
    EXPECT_FALSE(s.inside); // the callback returned before the flush did
}

namespace
{
// A batch of test records numbered first..first+count-1, built in place as the KFD reader
// builds them.
void
fill_batch(rb::record_batch& batch, uint64_t first, int count)
{
    for(int i = 0; i < count; ++i)
    {
        auto* r = static_cast<test_record*>(batch.reserve(sizeof(test_record)));
        ASSERT_NE(r, nullptr);
        *r          = test_record{};
        r->sequence = first + static_cast<uint64_t>(i);
        batch.commit(category, kind, sizeof(test_record));
    }
}
} // namespace

// append_batch stores or drops each record as emplace would at that point: the same DISCARD
// size, in order, the drops counted and reported, and the outcome split by kind.
TEST(buffer, batch_drops_exactly_what_emplace_would)
{
    sink s;
    s.gate_open         = false;
    auto             id = make_buffer(s, 10 * sizeof(test_record), 10 * sizeof(test_record),
                                      ROCPROFILER_BUFFER_POLICY_DISCARD);
    rb::record_batch batch;
    fill_batch(batch, 0, 10);
    rb::batch_outcome first;
    rb::append_batch(id, batch, kind, first);
    EXPECT_EQ(first.stored[0], 10u);
    s.wait_inside(); // the first 10 are with the (blocked) callback; the buffer is empty
    batch.clear();
    fill_batch(batch, 10, 15);
    rb::batch_outcome second;
    rb::append_batch(id, batch, kind + 1, second); // split on another kind: all in [1]
    EXPECT_EQ(second.stored[0] + second.dropped[0], 0u);
    EXPECT_EQ(second.stored[1], 10u);
    EXPECT_EQ(second.dropped[1], 5u);
    s.open_gate();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 20u);
    EXPECT_EQ(s.drops, 5u);
    EXPECT_EQ(t.dropped, 5u);
    for(uint64_t i = 0; i < 20; ++i)
        EXPECT_EQ(s.records[i].sequence, i); // the last five were the ones dropped
}

namespace
{
// A batch of a 6-unit record (sequence 1) then a 1-unit one (sequence 2), appended to a buffer
// of 10 units whose sink's gate is closed: both are stored and delivered without a flush
// (after the first record, another of its size would not fit), then the gate opens.
void
append_big_then_small_and_expect_delivery(sink& s, uint64_t id)
{
    constexpr size_t unit = sizeof(test_record);
    rb::record_batch batch;
    auto*            big = static_cast<std::byte*>(batch.reserve(6 * unit));
    ASSERT_NE(big, nullptr);
    std::memset(big, 0, 6 * unit);
    test_record first{};
    first.sequence = 1;
    std::memcpy(big, &first, sizeof(first));
    batch.commit(category, kind, 6 * unit);
    fill_batch(batch, 2, 1);
    rb::batch_outcome outcome;
    rb::append_batch(id, batch, kind, outcome);
    EXPECT_EQ(outcome.stored[0], 2u);
    s.wait_inside(); // delivered without a flush: the batch asked for it
    {
        std::lock_guard<std::mutex> lock{s.mutex};
        ASSERT_EQ(s.records.size(), 2u);
        EXPECT_EQ(s.records[0].sequence, 1u);
        EXPECT_EQ(s.records[1].sequence, 2u);
    }
    s.open_gate();
    EXPECT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
}
} // namespace

// A batch asks for a delivery whenever one emplace per record would have: here after its
// first record (a record that large would not fit next), though neither the watermark is
// reached nor would a record the size of the batch's last one fail to fit.
TEST(buffer, batch_asks_for_delivery_as_each_record_would)
{
    constexpr size_t unit = sizeof(test_record);
    sink             s;
    s.gate_open = false;
    auto id     = make_buffer(s, 10 * unit, 10 * unit, ROCPROFILER_BUFFER_POLICY_DISCARD);
    append_big_then_small_and_expect_delivery(s, id);
}

// The same in a LOSSLESS buffer, whose cap counts the entry headers: after the first record
// another of its size would pass the cap, though the batch fits and its payload stays under
// the watermark.
TEST(buffer, lossless_batch_asks_for_delivery_as_each_record_would)
{
    constexpr size_t unit  = sizeof(test_record);
    constexpr size_t entry = sizeof(rb::entry_header);
    setenv("ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES", std::to_string(10 * (unit + entry)).c_str(), 1);
    sink s;
    s.gate_open = false;
    auto id     = make_buffer(s, 10 * unit, 10 * unit, ROCPROFILER_BUFFER_POLICY_LOSSLESS);
    unsetenv("ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES");
    append_big_then_small_and_expect_delivery(s, id);
}

namespace
{
// What a callback received, kind by kind (the sink accepts one kind only).
struct kinds_seen
{
    std::mutex                                 mutex;
    std::vector<std::pair<uint32_t, uint64_t>> records; // kind, sequence
};

void
kinds_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t,
               rocprofiler_record_header_t** headers, size_t count, void* data, uint64_t)
{
    auto*                       seen = static_cast<kinds_seen*>(data);
    std::lock_guard<std::mutex> lock{seen->mutex};
    for(size_t i = 0; i < count; ++i)
        seen->records.emplace_back(headers[i]->kind,
                                   static_cast<const test_record*>(headers[i]->payload)->sequence);
}
} // namespace

// A batch holding records of two kinds (a raw and a paired service on one buffer) splits its
// outcome by kind, record by record, and keeps their order.
TEST(buffer, batch_of_two_kinds_splits_its_outcome_by_kind)
{
    kinds_seen seen;
    uint64_t   id = 0;
    ASSERT_EQ(rb::create(make_context(), 100 * sizeof(test_record), 100 * sizeof(test_record),
                         ROCPROFILER_BUFFER_POLICY_DISCARD, kinds_callback, &seen, &id),
              ROCPROFILER_STATUS_SUCCESS);
    rb::record_batch batch;
    for(uint64_t i = 0; i < 7; ++i)
    {
        auto* r = static_cast<test_record*>(batch.reserve(sizeof(test_record)));
        ASSERT_NE(r, nullptr);
        *r          = test_record{};
        r->sequence = i;
        batch.commit(category, i % 3 == 0 ? kind : kind + 1, sizeof(test_record)); // 0, 3, 6
    }
    rb::batch_outcome outcome;
    rb::append_batch(id, batch, kind, outcome);
    EXPECT_EQ(outcome.stored[0], 3u);
    EXPECT_EQ(outcome.stored[1], 4u);
    EXPECT_EQ(outcome.dropped[0] + outcome.dropped[1], 0u);
    // cleared, the batch is of one kind again: all on the other side of this split
    batch.clear();
    fill_batch(batch, 7, 2);
    rb::batch_outcome second;
    rb::append_batch(id, batch, kind + 1, second);
    EXPECT_EQ(second.stored[0], 0u);
    EXPECT_EQ(second.stored[1], 2u);
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{seen.mutex};
    ASSERT_EQ(seen.records.size(), 9u);
    for(uint64_t i = 0; i < 9; ++i)
    {
        EXPECT_EQ(seen.records[i].second, i);
        const bool first_kind = i >= 7 || i % 3 == 0;
        EXPECT_EQ(seen.records[i].first, first_kind ? kind : kind + 1) << "record " << i;
    }
}

TEST(buffer, batch_respects_the_lossless_cap_with_entry_headers)
{
    setenv("ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES",
           std::to_string(40 * sizeof(test_record)).c_str(), 1);
    sink s;
    s.gate_open = false;
    auto id     = make_buffer(s, 10 * sizeof(test_record), 10 * sizeof(test_record),
                              ROCPROFILER_BUFFER_POLICY_LOSSLESS);
    unsetenv("ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES");
    for(int i = 0; i < 10; ++i)
        ASSERT_TRUE(put(id, 0, i));
    s.wait_inside();
    constexpr int    fit = 40 * sizeof(test_record) / (16 + sizeof(test_record));
    rb::record_batch batch;
    fill_batch(batch, 100, 50);
    rb::batch_outcome outcome;
    rb::append_batch(id, batch, kind, outcome);
    EXPECT_EQ(outcome.stored[0], static_cast<uint64_t>(fit));
    EXPECT_EQ(outcome.dropped[0], static_cast<uint64_t>(50 - fit));
    s.open_gate();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), 10u + fit);
    EXPECT_EQ(s.drops, 50u - fit);
    for(int i = 0; i < fit; ++i)
        EXPECT_EQ(s.records[10 + i].sequence, 100u + i);
}

TEST(buffer, batch_to_a_destroyed_or_unknown_buffer_is_dropped_and_counted)
{
    sink s;
    auto id = make_buffer(s, 10 * sizeof(test_record), 10 * sizeof(test_record),
                          ROCPROFILER_BUFFER_POLICY_DISCARD);
    ASSERT_EQ(rb::destroy(id), ROCPROFILER_STATUS_SUCCESS);
    rb::record_batch batch;
    fill_batch(batch, 0, 3);
    rb::batch_outcome outcome;
    rb::append_batch(id, batch, kind, outcome);
    EXPECT_EQ(outcome.stored[0], 0u);
    EXPECT_EQ(outcome.dropped[0], 3u);
    rb::batch_outcome unknown;
    rb::append_batch(rb::max_buffers + 7, batch, kind, unknown);
    EXPECT_EQ(unknown.dropped[0], 3u);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_TRUE(s.records.empty());
}

// The reader must never grow a storage while the kernel's FIFO fills (a doubling copies
// everything into freshly faulted memory): both are reserved when the buffer is made, with
// room for the entry headers, and keep their capacity from batch to batch.
TEST(buffer, storage_is_reserved_at_creation_and_kept_across_deliveries)
{
    sink         s;
    const size_t size = 100 * sizeof(test_record);
    auto id = make_buffer(s, size, 5 * sizeof(test_record), ROCPROFILER_BUFFER_POLICY_DISCARD);
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    const size_t reserved = t.reserved_bytes;
    // 100 records of 96 bytes with their 16-byte entry headers.
    EXPECT_GE(reserved, 100 * (sizeof(test_record) + sizeof(rb::entry_header)));
    for(uint64_t batch = 0; batch < 4; ++batch)
    {
        for(uint64_t i = 0; i < 50; ++i)
            ASSERT_TRUE(put(id, 0, batch * 50 + i));
        ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
        ASSERT_TRUE(rb::get_totals(id, t));
        EXPECT_EQ(t.reserved_bytes, reserved) << "after batch " << batch;
    }
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.records.size(), 200u);
}

// A LOSSLESS burst (the callback blocked) grows the pending storage far past the size; once
// delivered, that storage is freed, and the next batch must again start in one reserved as
// at creation, not in an empty one that the reader grows while the FIFO fills.
TEST(buffer, storage_is_reserved_again_after_a_lossless_burst)
{
    sink         s;
    const size_t size = 100 * sizeof(test_record);
    s.gate_open       = false;
    auto id = make_buffer(s, size, 5 * sizeof(test_record), ROCPROFILER_BUFFER_POLICY_LOSSLESS);
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    const size_t reserved = t.reserved_bytes;
    ASSERT_GT(reserved, 0u);
    for(uint64_t i = 0; i < 5; ++i)
        ASSERT_TRUE(put(id, 0, i));
    s.wait_inside();                 // the first batch is in the callback, the gate closed
    constexpr uint64_t burst = 2000; // 2000 x 112 bytes: far past 2 x size + 4 KiB
    for(uint64_t i = 5; i < burst; ++i)
        ASSERT_TRUE(put(id, 0, i));
    ASSERT_TRUE(rb::get_totals(id, t));
    ASSERT_GT(t.pending_bytes, 2 * size + 4096);
    s.open_gate();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.delivered, burst);
    EXPECT_EQ(t.reserved_bytes, reserved); // both storages reserved again
    for(uint64_t i = burst; i < burst + 50; ++i)
        ASSERT_TRUE(put(id, 0, i));
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.reserved_bytes, reserved);
    std::lock_guard<std::mutex> lock{s.mutex};
    ASSERT_EQ(s.records.size(), burst + 50);
    EXPECT_EQ(s.drops, 0u);
}

// A huge buffer reserves a bounded amount of address space, not its size.
// A delivery with no record to hand over (a drop report alone, or a round asked for while the
// last one ran) must leave both storages as they are: it once took the pending storage and
// the spare for its duration, so the spare was empty until it ended, and a test reading the
// totals right after a flush could see it so (1 run in 100 under TSan).
TEST(buffer, a_delivery_without_records_leaves_both_storages_reserved)
{
    sink s;
    s.gate_open   = false;
    auto       id = make_buffer(s, 100 * sizeof(test_record), 5 * sizeof(test_record),
                                ROCPROFILER_BUFFER_POLICY_DISCARD);
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    const size_t reserved = t.reserved_bytes;
    ASSERT_GT(reserved, 0u);
    // Larger than the buffer: dropped, and its drop report asks for a delivery at once.
    const std::vector<std::byte> too_large(200 * sizeof(test_record));
    EXPECT_FALSE(rb::emplace(id, category, kind, too_large.data(), too_large.size()));
    s.wait_inside(); // the callback holds the drop report
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.reserved_bytes, reserved);
    s.open_gate();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.reserved_bytes, reserved);
    std::lock_guard<std::mutex> lock{s.mutex};
    EXPECT_EQ(s.drops, 1u);
    EXPECT_TRUE(s.records.empty());
}

TEST(buffer, storage_reservation_is_bounded)
{
    sink       s;
    auto       id = make_buffer(s, size_t{1} << 40, 4096, ROCPROFILER_BUFFER_POLICY_DISCARD);
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_GE(t.reserved_bytes, rb::max_reserved_storage);
    EXPECT_LE(t.reserved_bytes, rb::max_reserved_storage + rb::max_reserved_storage / 4);
}

namespace
{
// The counts, checked against the header's identity (every stored record is in exactly one
// state).
rocprofiler_kfd_buffer_stats_t
stats_of(uint64_t id)
{
    rocprofiler_kfd_buffer_stats_t s{};
    s.size = sizeof(s);
    EXPECT_EQ(rocprofiler_kfd_get_buffer_stats(rocprofiler_buffer_id_t{id}, &s),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(s.size, sizeof(s));
    EXPECT_EQ(s.records_stored, s.records_delivered + s.records_in_delivery + s.records_pending +
                                    s.records_discarded);
    return s;
}
} // namespace

// ext/kfd.h's per-buffer counts (what a tool reads to judge its own losses), through every
// state a record can be in: with the blocked callback, pending, dropped, delivered, discarded.
TEST(buffer, the_extension_counts_what_one_buffer_stored_delivered_and_dropped)
{
    sink s;
    s.gate_open = false;
    auto id     = make_buffer(s, 10 * sizeof(test_record), 10 * sizeof(test_record),
                              ROCPROFILER_BUFFER_POLICY_DISCARD);
    for(int i = 0; i < 10; ++i)
        ASSERT_TRUE(put(id, 0, i));
    s.wait_inside(); // the first 10 are with the blocked callback, not yet delivered
    auto st = stats_of(id);
    EXPECT_EQ(st.records_stored, 10u);
    EXPECT_EQ(st.records_delivered, 0u);
    EXPECT_EQ(st.records_in_delivery, 10u);
    EXPECT_EQ(st.records_pending, 0u);
    EXPECT_EQ(st.records_dropped, 0u);
    for(int i = 10; i < 25; ++i)
        put(id, 0, i); // 10 fit, 5 are dropped
    st = stats_of(id);
    EXPECT_EQ(st.records_stored, 20u);
    EXPECT_EQ(st.records_pending, 10u);
    EXPECT_EQ(st.records_dropped, 5u);
    EXPECT_EQ(st.records_discarded, 0u);
    s.open_gate();
    ASSERT_EQ(rb::flush(id), ROCPROFILER_STATUS_SUCCESS);
    st = stats_of(id);
    EXPECT_EQ(st.records_delivered, 20u);
    EXPECT_EQ(st.records_in_delivery, 0u);
    EXPECT_EQ(st.records_pending, 0u);
    for(int i = 25; i < 28; ++i)
        ASSERT_TRUE(put(id, 0, i)); // below the watermark: pending
    EXPECT_EQ(stats_of(id).records_pending, 3u);
    EXPECT_EQ(rb::close(id), 3u); // as before the tool's finalize
    st = stats_of(id);
    EXPECT_EQ(st.records_stored, 23u);
    EXPECT_EQ(st.records_delivered, 20u);
    EXPECT_EQ(st.records_pending, 0u);
    EXPECT_EQ(st.records_discarded, 3u);
    EXPECT_EQ(st.records_dropped, 8u); // 5 that did not fit and the 3 discarded
    EXPECT_EQ(st.records_stored, st.records_delivered + st.records_discarded);
    EXPECT_FALSE(put(id, 0, 28)); // after close: dropped, never stored
    st = stats_of(id);
    EXPECT_EQ(st.records_stored, 23u);
    EXPECT_EQ(st.records_dropped, 9u);
}

// In a forked child the parent's records are the parent's to deliver: the child's counts
// still add up (once, discarded ones were counted as delivered as well).
TEST(buffer, the_extension_counts_add_up_in_a_forked_child)
{
    sink s;
    auto id = make_buffer(s, 1 << 20, 1 << 20, ROCPROFILER_BUFFER_POLICY_DISCARD);
    for(int i = 0; i < 3; ++i)
        ASSERT_TRUE(put(id, 0, i));
    EXPECT_EQ(rb::close(id), 3u); // 3 stored, 3 discarded
    ASSERT_FALSE(put(id, 0, 4));  // after close: dropped
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if(child == 0)
    {
        rb::discard_after_fork(); // what the child's atfork handler does
        rocprofiler_kfd_buffer_stats_t st{};
        st.size = sizeof(st);
        rocprofiler_kfd_get_buffer_stats(rocprofiler_buffer_id_t{id}, &st);
        const bool adds_up = st.records_stored == st.records_delivered + st.records_in_delivery +
                                                      st.records_pending + st.records_discarded;
        _exit(adds_up && st.records_stored == 3 && st.records_discarded == 3 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

namespace
{
// The callback forks; the child goes on with the SDK's delivery, as a child forked from inside
// a tool's callback does (the atfork child handler has run).
pid_t forked_child        = -1;
int   forked_child_status = -1;

void
forking_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
                 size_t, void*, uint64_t)
{
    forked_child = fork();
    if(forked_child == 0)
    {
        rb::discard_after_fork();
        return;
    }
    waitpid(forked_child, &forked_child_status, 0);
}
} // namespace

// A child forked from inside a callback returns into that callback's delivery, which counts
// the batch as delivered: the child's counts must still add up, not wrap below zero.
TEST(buffer, a_child_forked_in_a_callback_counts_that_batch_once)
{
    const pid_t parent = getpid();
    uint64_t    id     = 0;
    ASSERT_EQ(rb::create(make_context(), 1 << 20, 1 << 20, ROCPROFILER_BUFFER_POLICY_DISCARD,
                         forking_callback, nullptr, &id),
              ROCPROFILER_STATUS_SUCCESS);
    // A callback thread never started: the flush delivers on this thread, which the child
    // then has (a child forked on a callback thread would have no thread running this test).
    uint64_t thread = 0;
    ASSERT_EQ(rocprofiler::callback_thread::create(&thread), ROCPROFILER_STATUS_SUCCESS);
    ASSERT_EQ(rocprofiler::callback_thread::assign(id, thread), ROCPROFILER_STATUS_SUCCESS);
    for(int i = 0; i < 3; ++i)
        ASSERT_TRUE(put(id, 0, i));
    ASSERT_EQ(rb::flush(id, std::chrono::seconds{30}), ROCPROFILER_STATUS_SUCCESS);
    if(getpid() != parent)
    {
        rb::totals t{};
        const bool found = rb::get_totals(id, t);
        const bool adds_up =
            t.emplaced == t.delivered + t.in_delivery + t.pending_count + t.discarded;
        _exit(found && adds_up && t.in_delivery == 0 && t.delivered == 3 ? 0 : 1);
    }
    ASSERT_GT(forked_child, 0);
    EXPECT_TRUE(WIFEXITED(forked_child_status) && WEXITSTATUS(forked_child_status) == 0)
        << forked_child_status;
    rb::totals t{};
    ASSERT_TRUE(rb::get_totals(id, t));
    EXPECT_EQ(t.delivered, 3u);
    EXPECT_EQ(t.in_delivery, 0u);
}

namespace
{
std::atomic<int> hook_cancel_state{-1};

void
record_hook_cancel_state()
{
    int state = -1;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
    pthread_setcancelstate(state, nullptr);
    hook_cancel_state.store(state);
}
} // namespace

// A flush on a cancellable program thread runs the callback as cancellable as its caller, but
// not the hook after it (deferred finalizations): its waits are in noexcept code, where a
// pending cancellation's unwind would abort the process.
TEST(buffer, the_hook_after_an_inline_delivery_is_not_cancellable)
{
    sink           s;
    const uint64_t id = buffer_on_its_own_thread(s, false); // no thread: the flush delivers
    rocprofiler::callback_thread::set_after_delivery_hook(record_hook_cancel_state);
    ASSERT_TRUE(put(id, 0, 1));
    EXPECT_EQ(rb::flush(id, std::chrono::seconds{30}, PTHREAD_CANCEL_ENABLE),
              ROCPROFILER_STATUS_SUCCESS);
    rocprofiler::callback_thread::set_after_delivery_hook(nullptr);
    EXPECT_EQ(s.calls, 1);
    EXPECT_EQ(hook_cancel_state.load(), PTHREAD_CANCEL_DISABLE);
}

TEST(buffer, the_extension_counts_reject_bad_arguments_and_unknown_buffers)
{
    sink s;
    auto id = make_buffer(s, 10 * sizeof(test_record), 10 * sizeof(test_record),
                          ROCPROFILER_BUFFER_POLICY_DISCARD);
    rocprofiler_kfd_buffer_stats_t st{};
    st.size = sizeof(st);
    EXPECT_EQ(rocprofiler_kfd_get_buffer_stats(rocprofiler_buffer_id_t{id}, nullptr),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    st.size = 4;
    EXPECT_EQ(rocprofiler_kfd_get_buffer_stats(rocprofiler_buffer_id_t{id}, &st),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    st.size = sizeof(st);
    EXPECT_EQ(rocprofiler_kfd_get_buffer_stats(rocprofiler_buffer_id_t{0}, &st),
              ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
    EXPECT_EQ(rocprofiler_kfd_get_buffer_stats(rocprofiler_buffer_id_t{rb::max_buffers + 1}, &st),
              ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
    // A caller built against a smaller struct gets the prefix it has room for.
    ASSERT_TRUE(put(id, 0, 0));
    struct
    {
        uint64_t size, records_stored, records_delivered;
    } prefix{sizeof(prefix), 99, 99};
    EXPECT_EQ(rocprofiler_kfd_get_buffer_stats(
                  rocprofiler_buffer_id_t{id},
                  reinterpret_cast<rocprofiler_kfd_buffer_stats_t*>(&prefix)),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(prefix.size, sizeof(prefix));
    EXPECT_EQ(prefix.records_stored, 1u);
    EXPECT_EQ(prefix.records_delivered, 0u);
    // A destroyed buffer keeps its final counts.
    ASSERT_EQ(rb::destroy(id), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(stats_of(id).records_delivered, 1u);
}
