// MIT License - see LICENSE.
#include "rocprofiler-sdk/kfd/reader.hpp"
#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/logging.hpp"

#include "common/kfd_abi.hpp"

#include <poll.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace rocprofiler::kfd
{
namespace
{
// Larger than any kernel FIFO (8 KiB): one read empties it.
constexpr size_t read_buffer_size = reader_read_size;
// Consecutive failed reads after which a GPU's fd is given up (never spin on an error).
constexpr int max_consecutive_errors = 16;

uint64_t
boottime_ns()
{
    timespec now{};
    clock_gettime(CLOCK_BOOTTIME, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

void
stop_watching(gpu_stream& stream, const char* why)
{
    if(!stream.watching) return;
    stream.watching = false;
    stream.splitter.reset();
    open_gap(stream, pair_kind_all); // their ends can no longer arrive
    ROCP_WARNING << "GPU " << stream.gpu_id << ": page-migration event stream " << why
                 << "; no more events from this GPU";
}

void
handle_chunk(reader_config& config, gpu_stream& stream, const char* data, size_t size)
{
    // A read larger than the FIFO size assumed from the kernel version proves a larger FIFO
    // (a backported 8 KiB FIFO, an emulator): adopt it, so that no read is taken for a full
    // FIFO (which drops outstanding starts) only because the size was guessed too small.
    if(size > config.fifo_capacity)
    {
        size_t bigger = kfd_abi::fifo_size;
        while(bigger < size)
            bigger *= 2;
        config.fifo_capacity = bigger;
    }
    const bool saturated = size + kfd_abi::message_size > config.fifo_capacity;
    if(saturated) stream.counters.fifo_saturations.fetch_add(1, std::memory_order_relaxed);
    auto now = boottime_ns();
    config.batch_sequence.fetch_add(1, std::memory_order_seq_cst); // odd: in a batch
    if(config.on_chunk) config.on_chunk(stream, data, size, now);
    // A (nearly) full FIFO probably dropped what came after these lines: no start seen so
    // far may pair with an end read later.
    if(saturated) open_gap(stream, pair_kind_all);
    config.batch_sequence.fetch_add(1, std::memory_order_seq_cst); // even: done
    // Lines longer than the kernel ever writes are skipped by the splitter: report them.
    stream.counters.lines_overlong.store(stream.splitter.overlong_lines(),
                                         std::memory_order_relaxed);
}
} // namespace

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
    if(!device::is_ours(stream.fd, stream.identity))
    {
        lose_fds(config, "an SMI event fd");
        return;
    }
    if(!config.read_buffer) config.read_buffer.reset(new(std::nothrow) char[read_buffer_size]);
    char* buffer = config.read_buffer.get();
    if(buffer == nullptr) return; // out of memory: retried at the next readiness
    while(stream.watching)
    {
        auto n = device::read_some(stream.fd, buffer, read_buffer_size);
        if(n > 0)
        {
            stream.consecutive_errors = 0;
            try
            {
                handle_chunk(config, stream, buffer, static_cast<size_t>(n));
            }
            catch(...)
            {
                ROCP_ERROR << "GPU " << stream.gpu_id << ": internal error handling events";
            }
            // The kernel's read takes min(count, queued) bytes: a read that returned less than
            // it asked for emptied the FIFO, so the read that would say EAGAIN is skipped
            // (a third of the system calls); what arrives later makes poll() report the fd.
            if(static_cast<size_t>(n) < read_buffer_size) return;
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

void
run_reader(reader_config& config) noexcept
{
    std::vector<pollfd>      fds;
    std::vector<gpu_stream*> polled;
    bool                     stopping = false;
    while(!stopping)
    {
        fds.clear();
        polled.clear();
        fds.push_back(pollfd{config.wake_fd, POLLIN, 0});
        for(auto* s : config.streams)
        {
            if(!s->watching) continue;
            fds.push_back(pollfd{s->fd, POLLIN, 0});
            polled.push_back(s);
        }
        // Without a usable wake-up fd, poll with a bound so that a stop is still noticed.
        int rc = ::poll(fds.data(), fds.size(), config.wake_fd >= 0 ? -1 : 100);
        if(rc < 0)
        {
            if(errno == EINTR) continue;
            ROCP_ERROR << "page-migration reader: poll failed (" << std::strerror(errno)
                       << "); stopping";
            break;
        }
        if(fds[0].revents != 0)
        {
            if((fds[0].revents & POLLNVAL) ||
               !device::is_ours(config.wake_fd, config.wake_identity))
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
        if(config.fds_lost) break;
    }
    config.leaving.store(true);
    // Last drain: events queued before the stop are delivered.
    for(auto* s : config.streams)
        drain_stream(config, *s);
    {
        std::lock_guard<std::mutex> lock{config.drain_mutex};
        config.drains_done.store(config.drain_requests.load());
        config.finished = true;
    }
    config.drain_cv.notify_all();
}
} // namespace rocprofiler::kfd
