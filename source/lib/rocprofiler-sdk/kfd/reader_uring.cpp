// MIT License - see LICENSE.
//
// The reader's io_uring loop (uring.hpp says why: one system call per wake-up instead of
// three, and no fd numbers). A READ is kept queued on the wake-up eventfd and on every
// stream that is watched and not in a pause (nap_until_ns: after a READ that returned
// EAGAIN); each io_uring_enter() submits the READs to queue again and waits for the next
// completion (until the earliest pause ends, if one does). A completion is handled as the
// poll loop handles a read's result (reader.cpp: drain_stream), with the same loss
// accounting.
//
// Interrupt mitigation: after a READ that emptied a busy stream's FIFO, the next READ is
// linked after a timeout, so that it returns what arrived meanwhile in one wake-up instead
// of completing at the next event's first byte; the kernel issues the READ when the timeout
// ends, with no system call of the reader's. The timeout is the poll loop's nap
// (read_coalescing.hpp), bounded by what the FIFO lasts. Longer ones, that the FIFO's burst
// and rate bounds alone allow (about 100 us at 200k events/s with 8 KiB, 45 us at 500k/s),
// cut the system calls at 200k/s from 0.18 to 0.04 per event but, on the project's VM, cost
// more CPU (a wake-up by a timer about 23 us, by data about 6 us) and dropped events at
// 500k/s (BENCHMARKS.md, "Interrupt mitigation in the io_uring reader").
//
// Synchronous drains (a tool finalizing, a context's mask changed) and the stop read through
// the ring too: a second reader of the same file would race with the READ in flight, and the
// two halves of one line could go to different reads out of order. The ring is flushed: a
// linked wait is cancelled (its READ with it) and the READ queued again at once, so is the
// READ of a paused stream, and io_uring_enter() runs the kernel's pending retries (a READ
// whose file became readable completes there), until a pass reads nothing.
#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/kfd/reader_internal.hpp"
#include "rocprofiler-sdk/kfd/uring.hpp"
#include "rocprofiler-sdk/logging.hpp"

#include <time.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace rocprofiler::kfd::reader_detail
{
struct uring_state
{
    static constexpr size_t buffer_size = reader_read_size;

    reader_config&                config;
    uring::ring                   ring;
    std::unique_ptr<char[]>       buffers; // stream i: [i * buffer_size, +buffer_size)
    std::vector<bool>             queued;  // a READ of the stream is in flight
    std::vector<bool>             waiting; // ... linked after a timeout still in flight
    std::vector<uring::wait_time> waits;   // the timeouts' lengths, read when submitted
    std::vector<uint32_t>         gaps;    // serve_drain_requests' (sized at start)
    alignas(8) char wake_buffer[8] = {};
    bool wake_queued               = false;
    bool stopping                  = false;
    bool cancelling                = false; // the stop cancels every request: none queued
    bool linked_waits              = true;  // off if the kernel refuses a timeout

    explicit uring_state(reader_config& c) : config{c} {}
    char* buffer_of(size_t i) { return buffers.get() + i * buffer_size; }
};

namespace
{
constexpr uint64_t wake_user_data = 0; // streams are 1..n: index + 1
// A stream's linked timeout: this bit, or'ed with the stream's user_data.
constexpr uint64_t timeout_tag = uint64_t{1} << 62;
// Bytes each stream's READ asks for: larger than any kernel FIFO, so that a READ returning
// less emptied it (as the poll loop's read).
constexpr size_t stream_buffer_size = uring_state::buffer_size;
// A flush's passes, at most: each reads what came since the last (a busy stream keeps it
// going), as the poll loop's drain reads until a short read.
constexpr int max_flush_passes = 64;
// A READ that completes with EAGAIN (a kernel that does not wait for the file's readiness) is
// queued again this much later.
constexpr uint64_t eagain_retry_ns = 1'000'000;

// Queues the stream's next READ, linked after a timeout of wait_ns when that is not 0.
void
queue_stream(uring_state& u, size_t i, uint64_t wait_ns = 0)
{
    gpu_stream& s = *u.config.streams[i];
    if(u.queued[i] || !s.watching || u.config.fds_lost || u.cancelling) return;
    const auto index = static_cast<unsigned>(i + 1);
    const auto size  = static_cast<unsigned>(stream_buffer_size);
    if(wait_ns != 0 && u.linked_waits)
    {
        u.waits[i].tv_sec  = static_cast<int64_t>(wait_ns / 1'000'000'000);
        u.waits[i].tv_nsec = static_cast<int64_t>(wait_ns % 1'000'000'000);
        u.waiting[i]       = u.ring.queue_read_after(u.waits[i], timeout_tag | (i + 1), index,
                                                     u.buffer_of(i), size, i + 1);
        u.queued[i]        = u.waiting[i];
        if(u.queued[i])
        {
            s.reads_delayed.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
    // The queue has room for every stream's READ and timeout, a cancel of each, the
    // wake-up's READ and a cancel of all.
    u.queued[i] = u.ring.queue_read(index, u.buffer_of(i), size, i + 1);
}

// A stream's linked timeout ended: -ETIME (it expired; the READ is issued), -ECANCELED (a
// drain or the stop cancelled it, and its READ), or an error: the kernel refused it, and its
// READ is cancelled (then queued again without a wait, as all READs from then on).
void
on_timeout(uring_state& u, size_t i, int result)
{
    u.waiting[i] = false;
    if(result == -ETIME || result == -ECANCELED || !u.linked_waits) return;
    u.linked_waits = false;
    ROCP_INFO << "page-migration reader: io_uring timeout refused (" << std::strerror(-result)
              << "); reading without waits";
}

void
queue_wake(uring_state& u)
{
    if(u.wake_queued) return;
    u.wake_queued = u.ring.queue_read(0, u.wake_buffer, sizeof(u.wake_buffer), wake_user_data);
}

// A READ's result for stream i, as drain_stream handles a read's. `flushing`: a drain or the
// stop, which reads again at once rather than after a coalescing wait.
void
on_stream_read(uring_state& u, size_t i, int result, bool flushing)
{
    gpu_stream& s = *u.config.streams[i];
    u.queued[i]   = false;
    if(!s.watching || u.config.fds_lost) return;
    if(result == -ECANCELED)
    {
        // Its wait was cancelled (a drain: read at once) or refused; no bytes were taken.
        queue_stream(u, i);
        return;
    }
    if(result > 0)
    {
        s.consecutive_errors = 0;
        const auto size      = static_cast<size_t>(result);
        const auto now       = boottime_ns();
        bool       saturated = true;
        try
        {
            saturated = handle_chunk(u.config, s, u.buffer_of(i), size, now);
        }
        catch(...) // out of memory: the read's events are lost
        {
            open_gap(s, pair_kind_all);
            ROCP_ERROR << "GPU " << s.gpu_id << ": internal error handling events";
        }
        // Less than asked for: the FIFO was emptied (see drain_stream); the next READ may
        // wait for more.
        uint64_t wait = 0;
        if(size < stream_buffer_size && !flushing)
            wait = coalescing_wait_ns(u.config, s, size, saturated, now);
        s.previous_read_ns = now;
        queue_stream(u, i, wait);
        return;
    }
    if(result == 0)
    {
        // The file ended: the GPU is gone (what the poll loop sees as POLLHUP).
        stop_watching(s, "was hung up (end of file)");
        return;
    }
    const int error = -result;
    if(error == EAGAIN)
    {
        // The kernel retries a READ of an empty O_NONBLOCK file when it becomes readable; one
        // that returned EAGAIN instead is read again after a pause, never in a busy loop.
        s.nap_until_ns = boottime_ns() + eagain_retry_ns;
        return;
    }
    if(error != EINTR && ++s.consecutive_errors >= max_consecutive_errors)
    {
        stop_watching(s, "keeps failing to read");
        return;
    }
    // EFAULT: the kernel had already taken the bytes out of its FIFO: events were lost.
    if(error != EINTR)
    {
        open_gap(s, pair_kind_all);
        ROCP_INFO << "GPU " << s.gpu_id << ": read failed: " << std::strerror(error);
    }
    queue_stream(u, i);
}

// Takes every completion there is; returns how many READs of streams returned bytes or were
// cancelled (and so queued again): a flush goes on while there are.
size_t
take_completions(uring_state& u, bool flushing, bool& woken)
{
    size_t            progress = 0;
    uring::completion done{};
    while(u.ring.next_completion(done))
    {
        if(done.user_data == uring::ring::cancel_user_data) continue;
        if(done.user_data == wake_user_data)
        {
            u.wake_queued = false;
            woken         = true;
            continue;
        }
        const bool   is_timeout = (done.user_data & timeout_tag) != 0;
        const size_t i          = static_cast<size_t>((done.user_data & ~timeout_tag) - 1);
        if(i >= u.config.streams.size()) continue;
        if(is_timeout)
        {
            on_timeout(u, i, done.result);
            continue;
        }
        if(done.result > 0 || done.result == -ECANCELED) ++progress;
        on_stream_read(u, i, done.result, flushing);
    }
    return progress;
}

bool
any_waiting(const uring_state& u)
{
    for(bool w : u.waiting)
        if(w) return true;
    return false;
}

// Reads everything queued on every stream now (see the top of this file).
void
flush(uring_state& u, bool& woken)
{
    for(size_t i = 0; i < u.config.streams.size(); ++i)
    {
        // A READ linked after a timeout would read late: the timeout (and so the READ) is
        // cancelled, and the READ queued again at once (on_stream_read).
        if(u.waiting[i]) u.ring.queue_cancel(timeout_tag | (i + 1));
        u.config.streams[i]->nap_until_ns = 0;
        queue_stream(u, i);
    }
    for(int pass = 0; pass < max_flush_passes; ++pass)
    {
        int rc = u.ring.submit_and_wait(0, nullptr);
        if(rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) return;
        if(take_completions(u, true, woken) == 0 && rc == 0 && !any_waiting(u)) return;
    }
}

void
serve_drain_requests(uring_state& u, bool& woken)
{
    reader_config& config    = u.config;
    auto           requested = config.drain_requests.load();
    if(requested <= config.drains_done.load()) return;
    // Gaps requested before this drain: it reads everything queued before their mask.
    for(size_t i = 0; i < config.streams.size(); ++i)
        u.gaps[i] = config.streams[i]->pending_gap.exchange(0);
    flush(u, woken);
    for(size_t i = 0; i < config.streams.size(); ++i)
        open_gap(*config.streams[i], u.gaps[i]);
    {
        std::lock_guard<std::mutex> lock{config.drain_mutex};
        config.drains_done.store(requested);
    }
    config.drain_cv.notify_all();
}

// Reads what is left, then cancels every READ in flight and takes their completions, so
// that nothing writes into the buffers after this returns. False if some did not complete
// (the buffers and the ring's mappings are then kept: see the caller).
bool
finish(uring_state& u)
{
    bool woken = false;
    flush(u, woken);
    if(u.ring.in_flight() == 0) return true;
    u.cancelling = true;
    u.ring.queue_cancel_all();
    for(int pass = 0; pass < 100 && u.ring.in_flight() > 0; ++pass)
    {
        const uint64_t bound = 10'000'000; // 10 ms
        u.ring.submit_and_wait(1, &bound);
        take_completions(u, true, woken);
    }
    return u.ring.in_flight() == 0;
}

// The files to register: the wake-up eventfd, then each stream's SMI fd (-1 for a stream no
// longer watched), each checked to be the SDK's own before the ring takes it by reference.
bool
files_to_register(reader_config& config, std::vector<int>& files)
{
    if(config.wake_fd < 0 ||
       !device::is_ours(config.wake_fd, config.wake_identity, config.self_pid))
        return false;
    files.push_back(config.wake_fd);
    for(auto* s : config.streams)
    {
        if(s->watching && !device::is_ours(s->fd, s->identity, config.self_pid)) return false;
        files.push_back(s->watching ? s->fd : -1);
    }
    return true;
}

void
run_loop(uring_state& u)
{
    reader_config& config            = u.config;
    bool           logged_wait_retry = false;
    queue_wake(u);
    for(size_t i = 0; i < config.streams.size(); ++i)
        queue_stream(u, i);
    while(!u.stopping && !config.fds_lost)
    {
        // No timeout unless a coalescing wait is due (zero CPU while idle).
        const uint64_t nap_end = earliest_nap_end(config);
        uint64_t       bound   = 0;
        if(nap_end != 0)
        {
            const uint64_t now = boottime_ns();
            bound              = nap_end > now ? nap_end - now : 0;
        }
        int rc = u.ring.submit_and_wait(nap_end != 0 && bound == 0 ? 0 : 1,
                                        nap_end != 0 ? &bound : nullptr);
        if(rc < 0 && rc != -EINTR && rc != -ETIME)
        {
            // Transient (the kernel short of memory, the completion queue full): tried again
            // after a pause, as the poll loop does.
            if(rc == -ENOMEM || rc == -EAGAIN || rc == -EBUSY)
            {
                if(!logged_wait_retry)
                    ROCP_WARNING << "page-migration reader: io_uring wait failed ("
                                 << std::strerror(-rc) << "); retrying (logged once)";
                logged_wait_retry = true;
                const timespec pause{0, 10'000'000};
                ::nanosleep(&pause, nullptr);
                u.stopping = config.stop->load();
                continue;
            }
            ROCP_ERROR << "page-migration reader: io_uring wait failed (" << std::strerror(-rc)
                       << "); stopping";
            break;
        }
        bool woken = false;
        take_completions(u, false, woken);
        if(woken)
        {
            serve_drain_requests(u, woken);
            u.stopping = config.stop->load();
            queue_wake(u);
        }
        // Streams whose coalescing wait is over are read again.
        const uint64_t now = boottime_ns();
        for(size_t i = 0; i < config.streams.size(); ++i)
        {
            gpu_stream& s = *config.streams[i];
            if(s.nap_until_ns != 0 && s.nap_until_ns <= now)
            {
                s.nap_until_ns = 0;
                queue_stream(u, i);
            }
        }
    }
}
} // namespace

uring_state*
open_uring_reader(reader_config& config) noexcept
{
    try
    {
        std::vector<int> files;
        if(!files_to_register(config, files)) return nullptr;
        auto u = std::make_unique<uring_state>(config);
        u->buffers.reset(new(std::nothrow) char[stream_buffer_size * config.streams.size() + 1]);
        if(!u->buffers) return nullptr;
        u->queued.assign(config.streams.size(), false);
        u->waiting.assign(config.streams.size(), false);
        u->waits.assign(config.streams.size(), uring::wait_time{});
        u->gaps.assign(config.streams.size(), 0);
        // Every stream's READ and timeout and a cancel of each, the wake-up's READ and a
        // cancel of all; the kernel rounds up.
        const auto entries = static_cast<unsigned>(3 * config.streams.size() + 2);
        if(!u->ring.open(entries, files.data(), static_cast<unsigned>(files.size())))
        {
            ROCP_INFO << "page-migration reader: io_uring unavailable (" << std::strerror(errno)
                      << "); reading with poll() and read()";
            return nullptr;
        }
        return u.release();
    }
    catch(...) // out of memory
    {
        return nullptr;
    }
}

void
run_uring_reader(uring_state* state) noexcept
{
    std::unique_ptr<uring_state> u{state};
    // Nothing here allocates: no exception can end the loop with READs in flight.
    run_loop(*u);
    u->config.leaving.store(true);
    if(!finish(*u))
    {
        // READs still in flight may write into the buffers: they and the ring are kept
        // (leaked, once), never freed under the kernel.
        ROCP_WARNING << "page-migration reader: io_uring reads did not end; their buffers are "
                        "kept";
        (void)u.release();
    }
}
} // namespace rocprofiler::kfd::reader_detail
