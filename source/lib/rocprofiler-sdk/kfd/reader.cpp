// MIT License - see LICENSE.
#include "rocprofiler-sdk/kfd/reader.hpp"
#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/kfd/read_coalescing.hpp"
#include "rocprofiler-sdk/kfd/reader_internal.hpp"
#include "rocprofiler-sdk/kfd/reader_slice.hpp"
#include "rocprofiler-sdk/logging.hpp"

#include "common/kfd_abi.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace rocprofiler::kfd
{
namespace
{
// Larger than any kernel FIFO (8 KiB): one read empties it.
constexpr size_t read_buffer_size = reader_read_size;
// Without memory for the read buffer, the stream is read again this much later, not at its
// next readiness: its data stays queued, so poll() would report it at once, again and again.
constexpr uint64_t no_buffer_retry_ns = 10'000'000;

} // namespace

namespace reader_detail
{
uint64_t
boottime_ns() noexcept
{
    timespec now{};
    clock_gettime(CLOCK_BOOTTIME, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

void
stop_watching(gpu_stream& stream, const char* why) noexcept
{
    if(!stream.watching) return;
    stream.watching     = false;
    stream.nap_until_ns = 0;
    stream.splitter.reset();
    open_gap(stream, pair_kind_all); // their ends can no longer arrive
    ROCP_WARNING << "GPU " << stream.gpu_id << ": page-migration event stream " << why
                 << "; no more events from this GPU";
}

// batch_sequence is odd from construction to destruction (context_stopped waits for an odd
// value to change): even again when the lines' handling throws (out of memory).
struct batch_scope
{
    explicit batch_scope(std::atomic<uint64_t>& s) : sequence{s}
    {
        sequence.fetch_add(1, std::memory_order_seq_cst);
    }
    ~batch_scope() { sequence.fetch_add(1, std::memory_order_seq_cst); }
    batch_scope(const batch_scope&)                      = delete;
    batch_scope&           operator=(const batch_scope&) = delete;
    std::atomic<uint64_t>& sequence;
};

bool
handle_chunk(reader_config& config, gpu_stream& stream, const char* data, size_t size, uint64_t now)
{
    // A read larger than the FIFO size assumed from the kernel version proves a larger FIFO
    // (a backported 8 KiB FIFO, an emulator): adopt it, so that no read is taken for a full
    // FIFO (which drops outstanding starts) only because the size was guessed too small.
    if(size > config.fifo_capacity)
    {
        if(config.wait_fifo_capacity == 0) config.wait_fifo_capacity = config.fifo_capacity;
        size_t bigger = kfd_abi::fifo_size;
        while(bigger < size)
            bigger *= 2;
        config.fifo_capacity = bigger;
    }
    const bool saturated = size + kfd_abi::message_size > config.fifo_capacity;
    if(saturated) stream.counters.fifo_saturations.fetch_add(1, std::memory_order_relaxed);
    {
        batch_scope batch{config.batch_sequence};
        if(config.on_chunk) config.on_chunk(stream, data, size, now);
        // A (nearly) full FIFO probably dropped what came after these lines: no start seen so
        // far may pair with an end read later.
        if(saturated) open_gap(stream, pair_kind_all);
    }
    // Lines longer than the kernel ever writes are skipped by the splitter: report them.
    stream.counters.lines_overlong.store(stream.splitter.overlong_lines(),
                                         std::memory_order_relaxed);
    return saturated;
}

uint64_t
coalescing_wait_ns(const reader_config& config, const gpu_stream& stream, size_t size,
                   bool saturated, uint64_t now) noexcept
{
    if(!config.coalesce_reads || stream.previous_read_ns == 0) return 0;
    read_coalescing::last_read read{};
    read.fifo_capacity =
        config.wait_fifo_capacity != 0 ? config.wait_fifo_capacity : config.fifo_capacity;
    read.bytes              = size;
    read.ns_since_previous  = now > stream.previous_read_ns ? now - stream.previous_read_ns : 0;
    read.fifo_was_saturated = saturated;
    return read_coalescing::nap_ns(read);
}

uint64_t
earliest_nap_end(const reader_config& config) noexcept
{
    uint64_t earliest = 0;
    for(auto* s : config.streams)
        if(s->watching && s->nap_until_ns != 0 && (earliest == 0 || s->nap_until_ns < earliest))
            earliest = s->nap_until_ns;
    return earliest;
}
} // namespace reader_detail

using namespace reader_detail;

static void
serve_drain_requests(reader_config& config) noexcept
{
    auto requested = config.drain_requests.load();
    if(requested <= config.drains_done.load()) return;
    for(auto* s : config.streams)
    {
        // Gaps requested before this drain: it reads everything queued before their mask.
        auto gap = s->pending_gap.exchange(0);
        drain_stream(config, *s);
        open_gap(*s, gap);
    }
    {
        std::lock_guard<std::mutex> lock{config.drain_mutex};
        config.drains_done.store(requested);
    }
    config.drain_cv.notify_all();
}

void
lose_fds(reader_config& config, const char* which) noexcept
{
    if(config.fds_lost.exchange(true)) return;
    for(auto* s : config.streams)
        s->watching = false; // only the flag: the reader thread alone touches its splitter
    ROCP_WARNING << "page-migration tracing stopped: " << which
                 << " was closed or replaced by the program (e.g. close_range at start); the "
                    "SDK no longer uses those fd numbers";
}

void
drain_stream(reader_config& config, gpu_stream& stream) noexcept
{
    if(!stream.watching) return;
    // Never read a number that is no longer ours: it may be the program's pipe now.
    stream.nap_until_ns = 0;
    if(!device::is_ours(stream.fd, stream.identity, config.self_pid))
    {
        lose_fds(config, "an SMI event fd");
        return;
    }
    if(!config.read_buffer) config.read_buffer.reset(new(std::nothrow) char[read_buffer_size]);
    char* buffer = config.read_buffer.get();
    if(buffer == nullptr) // out of memory: retried after a wait, as after a coalescing one
    {
        stream.nap_until_ns = boottime_ns() + no_buffer_retry_ns;
        return;
    }
    while(stream.watching)
    {
        auto n = device::read_some(stream.fd, buffer, read_buffer_size);
        if(n > 0)
        {
            stream.consecutive_errors = 0;
            auto size                 = static_cast<size_t>(n);
            auto now                  = boottime_ns();
            bool saturated            = true;
            try
            {
                saturated = handle_chunk(config, stream, buffer, size, now);
            }
            catch(...) // out of memory: the read's events are lost
            {
                open_gap(stream, pair_kind_all);
                ROCP_ERROR << "GPU " << stream.gpu_id << ": internal error handling events";
            }
            // The kernel's read takes min(count, queued) bytes: a read that returned less than
            // it asked for emptied the FIFO, so the read that would say EAGAIN is skipped
            // (a third of the system calls); what arrives later makes poll() report the fd,
            // or, on a busy stream, the reader reads again after a bounded wait.
            if(size < read_buffer_size)
            {
                const auto nap          = coalescing_wait_ns(config, stream, size, saturated, now);
                stream.nap_until_ns     = nap == 0 ? 0 : now + nap;
                stream.previous_read_ns = now;
                return;
            }
            stream.previous_read_ns = now;
            continue;
        }
        if(n == 0)
        {
            stop_watching(stream, "reached end of file");
            return;
        }
        if(errno == EAGAIN || errno == EWOULDBLOCK) return; // drained
        if(++stream.consecutive_errors >= max_consecutive_errors)
        {
            stop_watching(stream, "keeps failing to read");
            return;
        }
        // EFAULT: the kernel had already taken the bytes out of its FIFO: events were lost.
        if(errno != EINTR) open_gap(stream, pair_kind_all);
        ROCP_INFO << "GPU " << stream.gpu_id << ": read failed: " << std::strerror(errno);
        return; // poll() again; a persistent error ends in stop_watching above
    }
}

// Reads every stream whose coalescing wait is over, as if poll() had reported it.
static void
read_streams_after_nap(reader_config& config)
{
    auto now = boottime_ns();
    for(auto* s : config.streams)
    {
        if(config.fds_lost) return;
        if(s->watching && s->nap_until_ns != 0 && s->nap_until_ns <= now) drain_stream(config, *s);
    }
}

bool
wait_until_polling(reader_config& config, std::chrono::milliseconds bound) noexcept
{
    try
    {
        std::unique_lock<std::mutex> lock{config.drain_mutex};
        config.drain_cv.wait_for(lock, bound, [&] { return config.polling || config.finished; });
        return config.polling;
    }
    catch(...)
    {
        return false;
    }
}

void
run_reader(reader_config& config) noexcept
{
    config.self_pid = ::getpid();
    // Coalescing waits end when asked (the default slack, 50 us, is half a wait): this
    // thread's own setting, nothing of the program's.
    if(config.coalesce_reads) ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    // A woken reader runs soon, not after another thread's whole slice (reader_slice.hpp).
    int slice_error = 0;
    if(reader_slice::request_for_this_thread(config.slice_ns, slice_error) ==
       reader_slice::outcome::refused)
        ROCP_INFO << "page-migration reader: the scheduler refused a short time slice ("
                  << std::strerror(slice_error) << "); reads may start later after a wake-up";
    // Not at the first read, while the FIFO fills (its pages are still touched then).
    if(!config.read_buffer) config.read_buffer.reset(new(std::nothrow) char[read_buffer_size]);
    // The ring takes the fds by reference before the service may enable events.
    uring_state* ring = config.use_io_uring ? open_uring_reader(config) : nullptr;
    {
        std::lock_guard<std::mutex> lock{config.drain_mutex};
        config.polling = true;
    }
    config.drain_cv.notify_all();
    // The io_uring loop (it frees the ring); or else the poll loop below.
    const bool read_by_ring = ring != nullptr;
    bool       stopping     = read_by_ring;
    if(read_by_ring) run_uring_reader(ring);
    // Sized once here: the loop's push_backs then never allocate (this function is noexcept,
    // a bad_alloc inside it would end the program). Without the memory, no events are read
    // and the streams' one last drain below still runs.
    std::vector<pollfd>      fds;
    std::vector<gpu_stream*> polled;
    bool                     logged_poll_retry = false;
    const timespec           poll_retry_pause{0, 10'000'000}; // 10 ms
    try
    {
        if(!stopping) fds.reserve(config.streams.size() + 1);
        if(!stopping) polled.reserve(config.streams.size());
    }
    catch(...)
    {
        ROCP_ERROR << "page-migration reader: out of memory at start; no events are read";
        stopping = true;
    }
    while(!stopping)
    {
        fds.clear();
        polled.clear();
        fds.push_back(pollfd{config.wake_fd, POLLIN, 0});
        for(auto* s : config.streams)
        {
            // A stream in a coalescing wait is read when it ends, not polled before.
            if(!s->watching || s->nap_until_ns != 0) continue;
            fds.push_back(pollfd{s->fd, POLLIN, 0});
            polled.push_back(s);
        }
        // No timeout unless a coalescing wait is due (zero CPU while idle). Without a usable
        // wake-up fd, a bound so that a stop is still noticed.
        timespec        timeout{};
        const timespec* bound    = nullptr;
        auto            nap_end  = earliest_nap_end(config);
        uint64_t        bound_ns = config.wake_fd >= 0 ? 0 : 100'000'000;
        if(nap_end != 0)
        {
            auto now = boottime_ns();
            auto nap = nap_end > now ? nap_end - now : 0;
            bound_ns = bound_ns == 0 || nap < bound_ns ? nap : bound_ns;
        }
        if(nap_end != 0 || config.wake_fd < 0)
        {
            timeout.tv_sec  = static_cast<time_t>(bound_ns / 1'000'000'000);
            timeout.tv_nsec = static_cast<long>(bound_ns % 1'000'000'000);
            bound           = &timeout;
        }
        int rc = ::ppoll(fds.data(), fds.size(), bound, nullptr);
        if(rc < 0)
        {
            if(errno == EINTR) continue;
            // The kernel short of memory for the poll table: transient, and ending here would
            // leave the kernel's events enabled with nobody reading them (dropped unseen).
            // Tried again after a pause (no busy loop), still noticing a stop.
            if(errno == ENOMEM || errno == EAGAIN)
            {
                if(!logged_poll_retry)
                    ROCP_WARNING << "page-migration reader: poll failed (" << std::strerror(errno)
                                 << "); retrying (logged once)";
                logged_poll_retry = true;
                ::nanosleep(&poll_retry_pause, nullptr);
                stopping = config.stop->load();
                continue;
            }
            ROCP_ERROR << "page-migration reader: poll failed (" << std::strerror(errno)
                       << "); stopping";
            break;
        }
        if(fds[0].revents != 0)
        {
            if((fds[0].revents & POLLNVAL) ||
               !device::is_ours(config.wake_fd, config.wake_identity, config.self_pid))
            {
                lose_fds(config, "the reader's wake-up fd");
                break;
            }
            device::clear_wake(config.wake_fd);
        }
        serve_drain_requests(config);
        stopping = config.stop->load();
        for(size_t i = 1; i < fds.size() && !config.fds_lost; ++i)
        {
            auto& s  = *polled[i - 1];
            auto  ev = fds[i].revents;
            if(ev == 0) continue;
            if(ev & POLLNVAL)
                lose_fds(config, "an SMI event fd");
            else if(ev & (POLLERR | POLLHUP))
            {
                drain_stream(config, s); // whatever is still queued (checks the fd is ours)
                if(!config.fds_lost)
                    stop_watching(s, (ev & POLLHUP) ? "was hung up" : "reported an error");
            }
            else if(ev & POLLIN)
                drain_stream(config, s);
        }
        if(!config.fds_lost && nap_end != 0) read_streams_after_nap(config);
        if(config.fds_lost) break;
    }
    config.leaving.store(true);
    // Last drain: events queued before the stop are delivered, then the gaps requested
    // meanwhile are applied (their starts are lost in a gap, not merely never ended). The
    // io_uring loop read them itself as it ended (through the ring: no fd number is checked
    // or read there).
    for(auto* s : config.streams)
    {
        auto gap = s->pending_gap.exchange(0);
        if(!read_by_ring) drain_stream(config, *s);
        open_gap(*s, gap);
    }
    {
        std::lock_guard<std::mutex> lock{config.drain_mutex};
        config.drains_done.store(config.drain_requests.load());
        config.finished = true;
    }
    config.drain_cv.notify_all();
}
} // namespace rocprofiler::kfd
