// MIT License - see LICENSE.
#include "rocprofiler-sdk/kfd/service.hpp"
#include "common/deadline.hpp"
#include "common/fork_reachable.hpp"
#include "common/never_destroyed.hpp"
#include "rocprofiler-sdk/agent.hpp"
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/context.hpp"
#include "rocprofiler-sdk/env.hpp"
#include "rocprofiler-sdk/internal_threading.hpp"
#include "rocprofiler-sdk/kfd/delivery.hpp"
#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/kfd/reader.hpp"
#include "rocprofiler-sdk/kfd/reader_slice.hpp"
#include "rocprofiler-sdk/logging.hpp"
#include "rocprofiler-sdk/sized_copy.hpp"

#include "common/kfd_abi.hpp"

#include <linux/capability.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rocprofiler::kfd::service
{
namespace
{
// How long starting a context waits for a new reader thread to run (see
// start_reader_if_needed).
constexpr std::chrono::milliseconds reader_start_bound{100};

// The least time a starting thread that finishes a shutdown waits for the reader to stop.
constexpr std::chrono::milliseconds minimum_reader_stop{100};
// How long a context start waits for the reader another thread is starting.
constexpr std::chrono::milliseconds other_start_bound{1000};

using common::remaining;

// KFD event ids each page-migration operation needs (id 14 always: drop reports and the
// proposed rescheduled-restore record).
constexpr uint64_t operation_event_masks[ROCPROFILER_PAGE_MIGRATION_LAST] = {
    0,
    kfd_abi::event_mask(kfd_abi::event_migrate_start) |
        kfd_abi::event_mask(kfd_abi::event_migrate_end),
    kfd_abi::event_mask(kfd_abi::event_page_fault_start) |
        kfd_abi::event_mask(kfd_abi::event_page_fault_end),
    kfd_abi::event_mask(kfd_abi::event_queue_eviction) |
        kfd_abi::event_mask(kfd_abi::event_queue_restore),
    kfd_abi::event_mask(kfd_abi::event_unmap_from_gpu),
};

// Operation a paired record belongs to is in the record; raw events use their id.
struct state
{
    std::mutex                   control; // device, reader start/stop, mask
    bool                         checked   = false;
    rocprofiler_status_t         available = ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE;
    int                          kfd_fd    = -1;
    device::fd_identity          kfd_identity;
    int                          wake_fd = -1;
    std::vector<gpu_stream*>     streams; // never freed: stats stay readable until exit
    std::unique_ptr<std::thread> reader;
    std::atomic<bool>            stop{false};
    bool                         shut_down       = false;
    bool                         reader_prepared = false;
    bool                         reader_starting = false; // being created, no lock held
    std::thread::id              starter;                 // the thread creating it
    std::condition_variable      reader_started;          // reader_starting became false
    bool                         shutdown_finished = false;
    // The exit deadline shutdown() was given: a starting thread that finishes the shutdown
    // stops the reader within it (see start_reader_if_needed).
    common::deadline_t    shutdown_deadline{};
    uint64_t              mask          = 0;
    uint32_t              paired        = 0; // pair kinds active services trace (update_mask)
    uint32_t              self_pid      = 0;
    bool                  all_processes = false;
    bool                  privileged    = false; // CAP_SYS_ADMIN: may get others' events
    reader_config         config;
    std::atomic<uint64_t> abandoned_records{0}; // see count_abandoned_records
};

state&
get_state()
{
    static common::never_destroyed<state> s;
    return s.get();
}

// FIFO bytes per client: ROCPROFILER_KFD_FIFO_BYTES, else 1024 before Linux 6.13, 8192 since.
size_t
fifo_capacity()
{
    if(auto bytes = env::number("ROCPROFILER_KFD_FIFO_BYTES", 256, uint64_t{1} << 30, 0))
        return static_cast<size_t>(bytes);
    utsname info{};
    if(uname(&info) == 0)
    {
        unsigned major = 0, minor = 0;
        if(std::sscanf(info.release, "%u.%u", &major, &minor) == 2 &&
           (major < 6 || (major == 6 && minor < 13)))
            return kfd_abi::fifo_size_before_6_13;
    }
    return kfd_abi::fifo_size;
}

// Whether this process has CAP_SYS_ADMIN: since Linux 6.16 the kernel then sends it every
// process's events. Without it the kernel sends only ours, so there is nothing to filter
// (which also keeps working in a pid namespace, where the kernel's pids are not getpid()).
bool
has_cap_sys_admin()
{
    __user_cap_header_struct header{};
    __user_cap_data_struct   data[_LINUX_CAPABILITY_U32S_3] = {};
    header.version                                          = _LINUX_CAPABILITY_VERSION_3;
    header.pid                                              = 0;
    if(::syscall(SYS_capget, &header, data) != 0) return true; // unknown: filter to be safe
    return (data[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))) != 0;
}

std::string
why_no_device(int err)
{
    switch(err)
    {
    case ENOENT:
    case ENODEV:
    case ENXIO:
        return "/dev/kfd does not exist: no AMD GPU driver (amdgpu) is loaded here, or the "
               "container was started without --device=/dev/kfd";
    case EACCES:
    case EPERM:
        return "permission denied opening /dev/kfd: add the user to the 'render' group "
               "(and 'video' on older distributions), then log in again";
    default:
        return std::string{"cannot open /dev/kfd: "} + std::strerror(err);
    }
}

// Opens the device and one SMI fd per GPU; called once, under `control`.
rocprofiler_status_t
open_device(state& s)
{
    s.kfd_fd = device::open_kfd();
    if(s.kfd_fd < 0)
    {
        ROCP_WARNING << "page-migration tracing unavailable: " << why_no_device(errno);
        return ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE;
    }
    s.kfd_identity = device::identify(s.kfd_fd);
    device::version v{};
    if(!device::get_version(s.kfd_fd, v))
    {
        ROCP_WARNING << "page-migration tracing unavailable: cannot read the KFD version ("
                     << std::strerror(errno) << ")";
        return ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE;
    }
    if(v.major != kfd_abi::min_major_version || v.minor < kfd_abi::min_minor_version)
    {
        ROCP_WARNING << "page-migration tracing unavailable: KFD ioctl version " << v.major << "."
                     << v.minor << " is older than 1.10 (Linux 6.0), which added SMI "
                     << "page-migration events; upgrade the kernel or the amdgpu driver";
        return ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_KERNEL;
    }
    auto gpu_ids = agent::get_gpu_ids();
    for(auto gpu_id : gpu_ids)
    {
        int fd = device::open_smi_events(s.kfd_fd, static_cast<uint32_t>(gpu_id));
        if(fd < 0)
        {
            ROCP_WARNING << "GPU " << gpu_id << ": cannot open its SMI event stream ("
                         << std::strerror(errno) << "); this GPU is not traced";
            continue;
        }
        auto* stream     = new gpu_stream{};
        stream->gpu_id   = static_cast<uint32_t>(gpu_id);
        stream->fd       = fd;
        stream->identity = device::identify(fd);
        s.streams.push_back(stream);
    }
    if(s.streams.empty())
    {
        ROCP_WARNING << "page-migration tracing unavailable: "
                     << (gpu_ids.empty() ? "no GPU in the KFD topology"
                                         : "no GPU's SMI event stream could be opened");
        return ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE;
    }
    s.self_pid      = static_cast<uint32_t>(getpid());
    s.privileged    = has_cap_sys_admin() && env::in_initial_user_namespace();
    s.all_processes = env::flag("ROCPROFILER_KFD_ALL_PROCESSES");
    ROCP_INFO << "KFD " << v.major << "." << v.minor << ": tracing " << s.streams.size()
              << " GPU(s)" << (s.all_processes ? " for every process" : "");
    return ROCPROFILER_STATUS_SUCCESS;
}

uint64_t
mask_for(const context::context& ctx)
{
    uint64_t mask = 0;
    if(ctx.page_migration.configured)
        for(int op = 1; op < ROCPROFILER_PAGE_MIGRATION_LAST; ++op)
            if(ctx.page_migration.operations & (uint64_t{1} << op))
                mask |= operation_event_masks[op];
    if(ctx.kfd_events.configured)
        for(uint32_t op = 1; op < ROCPROFILER_KFD_EVENT_LAST; ++op)
            if(ctx.kfd_events.operations & (uint64_t{1} << op))
                mask |=
                    kfd_abi::event_mask(op <= kfd_abi::max_event_id ? op : kfd_abi::event_id_14);
    if(mask != 0) mask |= kfd_abi::event_mask(kfd_abi::event_id_14);
    return mask;
}

// Pair kinds the context's page-migration service traces (a kfd_events service pairs
// nothing: its events of a pair kind are raw records only).
uint32_t
paired_kinds_for(const context::context& ctx)
{
    if(!ctx.page_migration.configured) return 0;
    auto     traces = [&ctx](int op) { return (ctx.page_migration.operations >> op) & 1u; };
    uint32_t kinds  = 0;
    if(traces(ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE)) kinds |= pair_kind_page_migrate;
    if(traces(ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT)) kinds |= pair_kind_page_fault;
    if(traces(ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND)) kinds |= pair_kind_queue_suspend;
    return kinds;
}

bool wake_reader(state& s);

// Events of `kinds` no longer reach the streams (their mask bits were just cleared): the
// reader drains what was queued before the write, then drops the starts of those kinds
// still outstanding, so that none pairs with an end after the gap (a later start of the
// context). Waits for that drain (bounded; if the reader does not answer in time, it applies
// the gap at its next requested drain). Under `control`, which keeps a restart from writing
// the mask back before the drain.
void
open_gap_on_streams(state& s, uint32_t kinds)
{
    if(kinds == 0 || !s.reader || s.shut_down) return;
    for(auto* stream : s.streams)
        stream->pending_gap.fetch_or(kinds);
    auto ticket = s.config.drain_requests.fetch_add(1) + 1;
    if(!wake_reader(s)) return; // fds taken away: nothing more is read, so no gap to apply
    std::unique_lock<std::mutex> wait{s.config.drain_mutex};
    // A reader that finished (out of memory at its start) serves no more drains.
    s.config.drain_cv.wait_for(
        wait, std::chrono::seconds{2},
        [&] { return s.config.drains_done.load() >= ticket || s.config.finished; });
}

// Writes `mask` to every SMI fd still ours. Under `control`.
void
write_mask_to_streams(state& s, uint64_t mask)
{
    for(auto* stream : s.streams)
    {
        if(!stream->watching || s.config.fds_lost) continue;
        if(!device::is_ours(stream->fd, stream->identity))
            lose_fds(s.config, "an SMI event fd"); // never write 8 bytes into a program's file
        else if(!device::write_mask(stream->fd, mask))
            ROCP_WARNING << "GPU " << stream->gpu_id << ": cannot set the event mask ("
                         << std::strerror(errno) << ")";
    }
}

// Enables in the kernel exactly what active contexts need, and pairs the kinds their
// page-migration services trace. Under `control`.
void
update_mask(state& s)
{
    uint64_t mask   = 0;
    uint32_t paired = 0;
    for(size_t i = 0; i < context::count(); ++i)
    {
        auto* ctx = context::at(i);
        if(ctx == nullptr || !ctx->active.load()) continue;
        mask |= mask_for(*ctx);
        paired |= paired_kinds_for(*ctx);
    }
    if(mask != 0 && s.all_processes) mask |= kfd_abi::event_mask(kfd_abi::event_all_process);
    paired &= pair_kinds_of_mask(mask); // (always: a service enables both ids of its kinds)
    if(mask == s.mask && paired == s.paired) return;
    // A kind no longer paired: its gap opens after the drain of what was queued before the
    // write (open_gap_on_streams). A kind paired again after some of its events were read
    // unpaired: its gap opens before the reader pairs any event under the new kinds.
    const uint32_t gap       = pair_kinds_to_invalidate(s.paired, paired, s.mask);
    const uint32_t no_longer = gap & s.paired & ~paired;
    // Before the write: the events of a kind paired again are paired from its first one.
    for(auto* stream : s.streams)
    {
        stream->paired_again.fetch_or(gap & ~no_longer, std::memory_order_release);
        stream->paired_kinds.store(paired, std::memory_order_release);
    }
    // The mask may be the same: a kfd_events service had enabled both ids of the kind.
    if(mask != s.mask) write_mask_to_streams(s, mask);
    s.mask   = mask;
    s.paired = paired;
    open_gap_on_streams(s, no_longer);
}

// ---- delivery (reader thread) ----

void
sync_pairing_counters(gpu_stream& stream)
{
    publish_pairing_counters(stream);
}

// The reader's on_chunk: the lines of one read, delivered with one append per buffer.
void
handle_chunk(gpu_stream& stream, const char* data, size_t size, uint64_t now)
{
    static auto*             destinations = new delivery::chunk_delivery{}; // reader thread only
    auto&                    s            = get_state();
    delivery::process_filter filter{s.privileged && !s.all_processes, s.self_pid};
    delivery::deliver_chunk(*destinations, filter, stream, data, size, now);
}

// Prepares the reader's configuration (under `control`); the thread itself is started by
// start_reader_if_needed() with no lock held.
rocprofiler_status_t
prepare_reader(state& s)
{
    if(s.reader_prepared || s.shut_down) return ROCPROFILER_STATUS_SUCCESS;
    s.wake_fd = device::make_wake_fd();
    if(s.wake_fd < 0)
    {
        ROCP_ERROR << "page-migration reader: cannot create its wake-up fd";
        return ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    s.config.streams        = s.streams;
    s.config.wake_fd        = s.wake_fd;
    s.config.wake_identity  = device::identify(s.wake_fd);
    s.config.stop           = &s.stop;
    s.config.fifo_capacity  = fifo_capacity();
    s.config.coalesce_reads = env::number("ROCPROFILER_KFD_READ_COALESCING", 0, 1, 1) == 1;
    s.config.use_io_uring   = env::number("ROCPROFILER_KFD_IO_URING", 0, 1, 0) == 1;
    s.config.slice_ns =
        1000 * env::number("ROCPROFILER_KFD_READER_SLICE_US", 0, reader_slice::max_slice_us,
                           reader_slice::default_slice_us);
    s.config.on_chunk = handle_chunk;
    s.reader_prepared = true;
    return ROCPROFILER_STATUS_SUCCESS;
}

// Writes to the wake-up fd only while it is ours. False when the reader cannot be woken.
bool
wake_reader(state& s)
{
    if(s.config.fds_lost || !device::is_ours(s.wake_fd, s.config.wake_identity))
    {
        lose_fds(s.config, "the reader's wake-up fd");
        return false;
    }
    device::wake(s.wake_fd);
    return true;
}

// Under `control`: stops the reader (it drains every fd once more first) and joins it, but
// waits at most `bound`, and not at all for a reader that cannot be woken: such a reader
// is abandoned (detached), never left joinable, so exit cannot hang on it. True if joined.
bool
stop_reader(state& s, std::chrono::milliseconds bound)
{
    if(!s.reader) return true;
    s.stop.store(true);
    bool woken = wake_reader(s);
    // A reader that was woken, or is already leaving its loop on its own (it saw the loss),
    // finishes soon: wait for it, within the bound. One that cannot be woken is not waited for.
    bool finishing = woken || s.config.leaving.load();
    bool done      = false;
    {
        std::unique_lock<std::mutex> lock{s.config.drain_mutex};
        done = s.config.drain_cv.wait_for(lock, finishing ? bound : std::chrono::milliseconds{0},
                                          [&] { return s.config.finished; });
    }
    if(done)
        s.reader->join();
    else
    {
        // After lost fds the one warning was already given; this is detail.
        if(s.config.fds_lost)
            ROCP_INFO << "page-migration reader cannot be woken; abandoning it";
        else
            ROCP_WARNING << "page-migration reader did not stop in time; abandoning it";
        s.reader->detach();
    }
    s.reader.reset();
    return done;
}

rocprofiler_status_t sum_loss_stats(state& s, uint64_t gpu_id,
                                    rocprofiler_kfd_loss_stats_t* stats) noexcept;

void
log_losses(state& s)
{
    rocprofiler_kfd_loss_stats_t t{};
    t.size = sizeof(t);
    if(sum_loss_stats(s, ROCPROFILER_KFD_ALL_GPUS, &t) != ROCPROFILER_STATUS_SUCCESS) return;
    uint64_t lost = t.lines_malformed + t.ends_without_start + t.starts_aged_out +
                    t.starts_never_ended + t.records_dropped + t.kernel_reported_drops +
                    t.raw_events_dropped + t.starts_lost_in_gap + t.starts_timed_out +
                    t.migrate_trigger_mismatches + t.fields_out_of_range + t.lines_overlong;
    if(t.events_other_process > 0 && t.records_emitted == 0)
        ROCP_WARNING << "every one of " << t.events_other_process
                     << " page-migration events was of another process and filtered out; in a "
                        "pid namespace the kernel's pids differ from getpid(): set "
                        "ROCPROFILER_KFD_ALL_PROCESSES=1 to record them";
    if(lost == 0 && t.fifo_saturations == 0) return;
    ROCP_WARNING << "page-migration events lost: " << t.kernel_reported_drops
                 << " dropped by the kernel, " << t.fifo_saturations
                 << " reads of a nearly full kernel FIFO (events probably dropped), "
                 << t.records_dropped << " records dropped by full buffers, "
                 << t.raw_events_dropped << " raw event records dropped by full buffers, "
                 << t.ends_without_start << " ends without a start, " << t.starts_aged_out
                 << " starts aged out, " << t.starts_never_ended << " starts never ended, "
                 << t.starts_lost_in_gap << " starts dropped at a gap in the stream, "
                 << t.starts_timed_out << " starts timed out, " << t.migrate_trigger_mismatches
                 << " migrations whose end trigger differed, " << t.fields_out_of_range
                 << " records with an out-of-range trigger, " << t.lines_malformed
                 << " malformed lines, " << t.lines_overlong << " overlong lines (of "
                 << t.events_received << " events, " << s.streams.size() << " GPU(s))";
}
// Under `control`, once shut_down is set and no reader is being started: stops the reader,
// closes the fds it no longer needs and reports the losses. Once.
void
finish_shutdown(state& s, std::chrono::milliseconds bound)
{
    if(s.shutdown_finished) return;
    s.shutdown_finished = true;
    bool joined         = stop_reader(s, bound);
    for(auto* stream : s.streams)
    {
        stream->watching.store(false);
        // An abandoned reader may still use its pairing state and fds: leave them.
        if(!joined) continue;
        stream->pairing.finish();
        sync_pairing_counters(*stream);
        device::close_owned(stream->fd, stream->identity);
        stream->fd = -1;
    }
    if(joined) device::close_owned(s.wake_fd, s.config.wake_identity);
    device::close_owned(s.kfd_fd, s.kfd_identity);
    s.wake_fd = s.kfd_fd = -1;
    log_losses(s);
}
} // namespace

rocprofiler_status_t
check_available() noexcept
{
    try
    {
        auto&                       s = get_state();
        std::lock_guard<std::mutex> lock{s.control};
        if(!s.checked)
        {
            s.checked   = true;
            s.available = open_device(s);
        }
        return s.available;
    }
    catch(...)
    {
        return ROCPROFILER_STATUS_ERROR;
    }
}

rocprofiler_status_t
context_started(const context::context&) noexcept
{
    try
    {
        auto&                       s = get_state();
        std::lock_guard<std::mutex> lock{s.control};
        if(s.available != ROCPROFILER_STATUS_SUCCESS) return s.available;
        if(s.shut_down) return ROCPROFILER_STATUS_ERROR_FINALIZED;
        auto status = prepare_reader(s);
        if(status != ROCPROFILER_STATUS_SUCCESS) return status;
        // Before the reader runs, the kernel's events would fill the FIFO with nobody to read
        // it (the thread's creation and the tools' notifications take milliseconds, a 1 KiB
        // FIFO lasts 0.2 ms at 100k events/s): start_reader_if_needed() enables them once
        // the reader exists.
        if(s.reader) update_mask(s);
        return ROCPROFILER_STATUS_SUCCESS;
    }
    catch(...)
    {
        return ROCPROFILER_STATUS_ERROR;
    }
}

rocprofiler_status_t
start_reader_if_needed() noexcept
{
    try
    {
        auto& s = get_state();
        {
            std::unique_lock<std::mutex> lock{s.control};
            // Another thread is starting the reader: its outcome decides this start's too, so
            // wait for it (bounded: that thread runs the tools' thread notifications, which
            // may wait for this one). If it failed, this thread tries in its turn below,
            // rather than return SUCCESS for a context that nothing reads. Not on the starting
            // thread itself (a start from its own notification).
            if(s.reader_starting && s.starter != std::this_thread::get_id())
                s.reader_started.wait_for(lock, other_start_bound,
                                          [&] { return !s.reader_starting; });
            if(!s.reader_prepared || s.reader || s.reader_starting || s.shut_down)
                return ROCPROFILER_STATUS_SUCCESS;
            s.reader_starting = true;
            s.starter         = std::this_thread::get_id();
        }
        // No lock held: the tools' thread notifications may call any API (loss stats,
        // start/stop), and a start from inside them finds reader_starting set.
        auto thread =
            internal_threading::start_thread("rocprof-kfd", [&s] { run_reader(s.config); });
        // Events are enabled once the reader runs, not once it exists: on a node whose every
        // CPU runs the job, a new thread can wait milliseconds for one, longer than a FIFO
        // lasts (measured here with two CPUs busy: 3.3 ms, 200-300 events lost at the
        // start). This thread sleeping meanwhile frees its CPU. Bounded: a reader that cannot
        // run for 100 ms gets its events anyway.
        if(thread) wait_until_polling(s.config, reader_start_bound);
        std::lock_guard<std::mutex> lock{s.control};
        s.reader_starting = false;
        s.reader_started.notify_all();
        s.reader = std::move(thread);
        // Finalization began meanwhile and left the reader to this thread (see shutdown): stop
        // it within the exit's deadline, but give it a moment even when that is spent (it was
        // told to stop already, so it needs only that moment).
        if(s.shut_down)
            finish_shutdown(s, std::max(remaining(s.shutdown_deadline), minimum_reader_stop));
        else if(s.reader)
            update_mask(s); // the events of every context active now (see context_started)
        return s.reader || s.shut_down ? ROCPROFILER_STATUS_SUCCESS
                                       : ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    catch(...)
    {
        return ROCPROFILER_STATUS_ERROR;
    }
}

void
context_stopped(const context::context&) noexcept
{
    try
    {
        auto&                       s = get_state();
        std::lock_guard<std::mutex> lock{s.control};
        // Without a reader the kernel's mask was never written (start_reader_if_needed writes
        // it once the reader runs) and must not be now: the other contexts' events would fill
        // the FIFO with nobody to read it, as after a reader whose start failed.
        if(!s.reader) return;
        update_mask(s);
        // The caller cleared ctx.active (seq_cst) before calling. If the reader is inside a
        // batch now, that batch may have read the context as active: wait for it to end.
        // A batch starting later reads active == false. A batch is one read (at most 64 KiB
        // of lines, well under a millisecond), so this waits briefly, never for a tool.
        auto seq = s.config.batch_sequence.load(std::memory_order_seq_cst);
        if(seq & 1)
            while(s.config.batch_sequence.load(std::memory_order_seq_cst) == seq && s.reader)
                std::this_thread::sleep_for(std::chrono::microseconds{20});
    }
    catch(...)
    {
    }
}

void
drain_now() noexcept
{
    try
    {
        auto&                       s = get_state();
        std::lock_guard<std::mutex> lock{s.control};
        if(!s.reader || s.shut_down) return;
        auto ticket = s.config.drain_requests.fetch_add(1) + 1;
        if(!wake_reader(s)) return;
        std::unique_lock<std::mutex> wait{s.config.drain_mutex};
        s.config.drain_cv.wait_for(
            wait, std::chrono::seconds{2},
            [&] { return s.config.drains_done.load() >= ticket || s.config.finished; });
    }
    catch(...)
    {
    }
}

void
shutdown(std::chrono::milliseconds bound) noexcept
{
    try
    {
        auto&                        s        = get_state();
        auto                         deadline = std::chrono::steady_clock::now() + bound;
        std::unique_lock<std::mutex> lock{s.control};
        if(s.shut_down) return;
        s.shut_down         = true;
        s.shutdown_deadline = deadline; // for a starting thread that finishes this shutdown
        // A reader being started by another thread (start_reader_if_needed holds no lock
        // meanwhile) may run already: wait for it to be handed over, within the bound. Not
        // on the starting thread itself (exit from a tool's thread notification).
        if(s.reader_starting && s.starter != std::this_thread::get_id())
            s.reader_started.wait_until(lock, deadline, [&] { return !s.reader_starting; });
        if(s.reader_starting)
        {
            // Still starting: the reader, if it runs already, leaves its loop by itself, and
            // the starting thread (if it ever comes back: exit may have been called from
            // its notification) joins it and finishes this shutdown.
            s.stop.store(true);
            if(s.wake_fd >= 0) wake_reader(s);
            return;
        }
        // A woken reader needs only a moment to drain and leave, even when the deadline is
        // spent (ROCPROFILER_FINALIZE_TIMEOUT_MS=0, or a long wait for a tool before): as at
        // its start, it gets that moment rather than being abandoned with its last drain and
        // the count of starts never ended undone.
        finish_shutdown(s, std::max(remaining(deadline), minimum_reader_stop));
    }
    catch(...)
    {
    }
}

void
count_abandoned_records(uint64_t count) noexcept
{
    get_state().abandoned_records.fetch_add(count);
}

void
lock_for_fork() noexcept
{
    auto& s = get_state();
    s.control.lock();
    s.config.drain_mutex.lock();
}

void
unlock_after_fork() noexcept
{
    auto& s = get_state();
    s.config.drain_mutex.unlock();
    s.control.unlock();
}

void
forget_after_fork() noexcept
{
    auto& s = get_state();
    // The reader thread does not exist in the child, and the parent keeps reading the same
    // kernel clients. The child never reads, writes or closes them (no system call here: the
    // fds are CLOEXEC, and a close could reach an interposer whose locks are not yet reset).
    common::keep_reachable(s.reader.release()); // see common/fork_reachable.hpp
    for(auto* stream : s.streams)
        stream->watching.store(false);
    s.shut_down         = true;
    s.shutdown_finished = true; // nothing here is the child's to stop or close
    if(s.available == ROCPROFILER_STATUS_SUCCESS)
        s.available = ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE;
}

rocprofiler_status_t
get_loss_stats(uint64_t gpu_id, rocprofiler_kfd_loss_stats_t* stats) noexcept
{
    try
    {
        auto&                       s = get_state();
        std::lock_guard<std::mutex> lock{s.control}; // streams are added under it
        return sum_loss_stats(s, gpu_id, stats);
    }
    catch(...)
    {
        return ROCPROFILER_STATUS_ERROR;
    }
}

namespace
{
rocprofiler_status_t
sum_loss_stats(state& s, uint64_t gpu_id, rocprofiler_kfd_loss_stats_t* stats) noexcept
{
    if(stats == nullptr || stats->size < sizeof(uint64_t) * 2)
        return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;

    rocprofiler_kfd_loss_stats_t out{};
    bool                         found = (gpu_id == ROCPROFILER_KFD_ALL_GPUS);
    for(auto* stream : s.streams)
    {
        if(gpu_id != ROCPROFILER_KFD_ALL_GPUS && stream->gpu_id != gpu_id) continue;
        found         = true;
        const auto& c = stream->counters;
        out.events_received += c.events_received.load();
        out.lines_malformed += c.lines_malformed.load();
        out.events_other_process += c.events_other_process.load();
        out.records_emitted += c.records_emitted.load();
        out.ends_without_start += c.ends_without_start.load();
        out.starts_aged_out += c.starts_aged_out.load();
        out.starts_never_ended += c.starts_never_ended.load();
        out.records_dropped += c.records_dropped.load();
        out.kernel_reported_drops += c.kernel_reported_drops.load();
        out.fifo_saturations += c.fifo_saturations.load();
        out.raw_events_dropped += c.raw_events_dropped.load();
        out.starts_lost_in_gap += c.starts_lost_in_gap.load();
        out.starts_timed_out += c.starts_timed_out.load();
        out.migrate_trigger_mismatches += c.migrate_trigger_mismatches.load();
        out.lines_overlong += c.lines_overlong.load();
        out.fields_out_of_range += c.fields_out_of_range.load();
    }
    if(!found) return ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND;
    if(gpu_id == ROCPROFILER_KFD_ALL_GPUS) out.records_dropped += s.abandoned_records.load();
    out.size   = sizeof(out);
    out.gpu_id = gpu_id;
    copy_sized(out, stats);
    return ROCPROFILER_STATUS_SUCCESS;
}
} // namespace
} // namespace rocprofiler::kfd::service
