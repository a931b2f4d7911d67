// MIT License - see LICENSE.
#include "producer.hpp"

#include "common/fork_reachable.hpp"
#include "delivery.hpp"
#include "fd_table.hpp"
#include "line_reader.hpp"
#include "pacing.hpp"
#include "real_libc.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include <cstring>

namespace kfd_emu
{
namespace
{
int64_t
boottime_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void
wait_for_schedule(emulator& emu, session& s, std::unique_lock<std::mutex>& lock,
                  steady::time_point target)
{
    if(target <= steady::now()) return;
    s.sleeping    = true;
    s.sleep_until = target;
    emu.cv->wait_until(lock, target, [&] { return s.stop; });
    s.sleeping = false;
}

steady::time_point
schedule_of(const config& cfg, const parsed_event& ev, uint64_t produced, steady::time_point start,
            steady::time_point previous)
{
    // A delay past 1e18 ns (31 years) means "never": time_point::max(), so that a long time
    // span in the log or a slow rate cannot overflow the steady clock's int64 ns.
    constexpr double max_delay_ns = 1e18;
    if(cfg.pace == pace_kind::rate)
    {
        double ns = static_cast<double>(produced) / cfg.rate * 1e9;
        return ns < max_delay_ns ? start + std::chrono::nanoseconds(static_cast<int64_t>(ns))
                                 : steady::time_point::max();
    }
    if(cfg.pace == pace_kind::realtime && ev.has_ns && ev.ns > cfg.first_ns)
    {
        int64_t delay = ev.ns - cfg.first_ns; // both in 0..INT64_MAX: no overflow
        if(static_cast<double>(delay) >= max_delay_ns) return steady::time_point::max();
        return std::max(previous, start + std::chrono::nanoseconds(delay));
    }
    return previous;
}

// The log fd of the producer thread and the file it must be: the program may close it behind
// our back (close_range, closefrom) and reuse the number, and then it is not ours to read
// or close.
struct log_identity
{
    dev_t dev = 0;
    ino_t ino = 0;
};
__attribute__((tls_model("initial-exec"))) thread_local log_identity producer_log;

bool
still_our_log(int fd)
{
    struct stat st
    {
    };
    return fstat(fd, &st) == 0 && st.st_dev == producer_log.dev && st.st_ino == producer_log.ino;
}

// read() of the log that stops (end of file) if the fd no longer is the log.
ssize_t
read_our_log(int fd, void* buffer, size_t size)
{
    if(!still_our_log(fd)) return 0;
    return libc().read(fd, buffer, size);
}

void
produce(emulator& emu, session& s)
{
    const config& cfg = emu.cfg;
    int           fd  = libc().open(cfg.log_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if(fd < 0)
    {
        std::lock_guard<std::mutex> lock(*emu.mu);
        s.producer_error = std::string("cannot reopen the log: ") + std::strerror(errno);
        return;
    }
    // Keep the low fd numbers for the program (it may close and reuse them while we read).
    if(int high = fcntl(fd, F_DUPFD_CLOEXEC, high_fd_floor()); high >= 0)
    {
        libc().close(fd);
        fd = high;
    }
    struct stat st
    {
    };
    if(fstat(fd, &st) == 0) producer_log = log_identity{st.st_dev, st.st_ino};
    // The scan checked every line of this file: when it found them all well formed and the
    // file is unchanged, each line is parsed only for what routes and rewrites it.
    const bool       trusted = cfg.malformed == 0 && identity_of(fd) == cfg.log_file;
    line_reader      reader(fd, read_our_log);
    route_state      route;
    rewrite_rule     rule{cfg.has_self, cfg.self_pid, static_cast<uint32_t>(s.pid), s.ns_offset};
    std::string_view line; // into the reader's buffer: valid until its next line
    // The message of the current line, written once (rewritten timestamp and pid, '\n') and
    // copied from here into each client's FIFO.
    std::vector<char>  msg_buffer(line_reader::max_line + rewrite_growth);
    std::string_view   msg;
    rewrite_memo       memo; // the timestamp's leading digits and the pid, formatted once
    mask_wait          wait; // a `#@ wait-mask` that the next event must satisfy
    bool               too_long = false;
    uint64_t           number   = 0;
    uint64_t           produced = 0;
    steady::time_point start    = steady::now();
    steady::time_point previous = start;

    // Lines are produced in batches under one hold of the lock; a batch ends (wake-ups
    // given, lock released) when the producer must wait (room in a lossless FIFO, the
    // schedule), when a message was dropped (a FIFO is full), before the log is read from the
    // file (no system call that may block under the lock), and after max_batch messages
    // (readers and the application get the lock).
    constexpr uint64_t           max_batch = 512;
    uint64_t                     batch     = 0;
    std::unique_lock<std::mutex> lock(*emu.mu, std::defer_lock);
    auto                         end_batch = [&]
    {
        flush_wakeups(s);
        emu.cv->notify_all();
        lock.unlock();
        batch = 0;
    };
    auto wait_in_batch = [&](auto&& do_wait)
    {
        flush_wakeups(s); // what is queued must be visible while we wait
        emu.cv->notify_all();
        do_wait();
    };

    while(true)
    {
        if(lock.owns_lock() && !reader.has_line()) end_batch();
        if(!reader.next_view(line, too_long)) break;
        ++number;
        if(!lock.owns_lock()) lock.lock();
        if(s.stop) break;
        apply_vanish_faults(cfg, s, number);
        classified_line c = classify_line(line, too_long, cfg, route, trusted);
        if(c.wait.active) wait = c.wait;
        if(c.kind != line_kind::event) continue;
        uint32_t text_pid = 0;
        msg = std::string_view(msg_buffer.data(), rewrite_line_to(msg_buffer.data(), line, c.event,
                                                                  rule, text_pid, &memo));
        uint32_t   pid = delivery_pid(c.event, text_pid);
        gpu_state& gpu = s.gpus[static_cast<size_t>(c.gpu)];

        if(cfg.pace == pace_kind::realtime || cfg.pace == pace_kind::rate)
        {
            previous = schedule_of(cfg, c.event, produced, start, previous);
            auto now = steady::now();
            if(previous != steady::time_point::max())
                if(auto slip = schedule_slip(previous, now); slip.count() > 0)
                {
                    start += slip; // late: the schedule moves, no burst (pacing.hpp)
                    previous += slip;
                }
            if(previous > now) wait_in_batch([&] { wait_for_schedule(emu, s, lock, previous); });
        }
        // The mask wait is checked under the lock that delivers: the event sees the masks
        // the wait saw (a mask write wakes the cv; the batch so far is visible meanwhile).
        while(!s.stop && (!mask_wait_done(s, wait) ||
                          (cfg.pace == pace_kind::lossless && !gpu.vanished &&
                           must_wait_for_space(cfg, gpu, c.event.id, pid, msg.size()))))
            wait_in_batch(
                [&]
                {
                    s.producer_waiting = true;
                    emu.cv->wait_for(lock, std::chrono::milliseconds(100));
                    s.producer_waiting = false;
                });
        wait = mask_wait{};
        if(s.stop) break;
        ++produced;
        // An event dropped because nobody reads is no progress for the exit wait.
        bool dropped = false;
        if(gpu.vanished)
            ++gpu.n.after_vanish;
        else if(deliver(cfg, gpu, c.event.id, pid, msg) != 0)
        {
            --s.progress;
            dropped = true;
        }
        ++s.progress;
        // A full FIFO ends the batch: the reader gets its wake-up and the lock between two
        // messages, as it can between two kernel messages, rather than after a whole burst.
        if(++batch >= max_batch || dropped) end_batch();
    }
    if(!lock.owns_lock()) lock.lock();
    end_batch();
    if(still_our_log(fd)) libc().close(fd);
}

void*
producer_main(void* arg)
{
    // Signals are for the application's threads.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    // Named, so that profilers and benchmarks tell its CPU time from the program's.
    pthread_setname_np(pthread_self(), "kfd-emu-prod");

    rocprofiler::common::thread_stack_root stack_root; // see common/fork_reachable.hpp
    auto*                                  s = static_cast<session*>(arg);
    try
    {
        produce(*g_emu, *s);
    }
    catch(...)
    {
        std::lock_guard<std::mutex> lock(*g_emu->mu);
        s->producer_error = "the producer stopped (out of memory?)";
    }
    std::lock_guard<std::mutex> lock(*g_emu->mu);
    s->producer_finished = true;
    g_emu->cv->notify_all();
    g_emu->exit_cv->notify_all();
    return nullptr;
}

} // namespace

void
maybe_start_producer(emulator& emu, session& s)
{
    if(s.producer_started) return;
    bool any_gpu = false;
    for(size_t i = 0; i < s.gpus.size(); ++i)
    {
        if(s.gpus[i].vanished || emu.cfg.smi_error(emu.cfg.gpus[i].gpu_id) != 0) continue;
        any_gpu      = true;
        bool enabled = false;
        for(const client* c : s.gpus[i].clients)
            enabled = enabled || (is_live(*c) && c->mask != 0);
        if(!enabled) return;
    }
    if(!any_gpu) return;
    s.producer_started = true;
    if(emu.cfg.rebase && emu.cfg.has_first_ns) s.ns_offset = boottime_ns() - emu.cfg.first_ns;

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int       rc = pthread_create(&thread, &attr, producer_main, &s);
    pthread_attr_destroy(&attr);
    if(rc != 0)
    {
        s.producer_finished = true;
        s.producer_error    = std::string("cannot start the producer: ") + std::strerror(rc);
        report(s.producer_error);
    }
}

} // namespace kfd_emu
