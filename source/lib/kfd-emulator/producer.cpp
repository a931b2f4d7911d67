// MIT License - see LICENSE.
#include "producer.hpp"

#include "client_calls.hpp"
#include "common/fork_reachable.hpp"
#include "delivery.hpp"
#include "fd_table.hpp"
#include "line_reader.hpp"
#include "lock_watch.hpp"
#include "pacing.hpp"
#include "real_libc.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

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

// A lossless FIFO without room: the reader was just told (the batch's wake-ups are flushed)
// and usually reads within microseconds. Waiting for it in the condition variable costs two
// futex calls and, worse, a wake-up of this thread by the reader's read: on a VM an
// inter-processor interrupt, which perf showed as most of the replay's time (both threads in
// try_to_wake_up under a spin lock). So the producer first watches session::pokes (bumped by
// every read, mask write, close and stop) without the lock for at most watch_for_poke_ns (a
// lossless replay keeps this thread busy anyway; no other pace spins). True when it moved:
// checked again under the lock, so that a poke after the watch ended and before the lock was
// taken is seen here, not missed by the sleep that follows (its notify found nobody waiting).
constexpr int64_t watch_for_poke_ns = 30'000;

bool
watch_for_poke(session& s, std::unique_lock<std::mutex>& lock)
{
    const uint64_t seen = s.pokes.load(std::memory_order_acquire);
    lock.unlock();
    const bool poked = watch_until(watch_for_poke_ns,
                                   [&] { return s.pokes.load(std::memory_order_acquire) != seen; });
    lock_watching(lock, true); // lossless pace only: the read that poked may hold it
    return poked || s.pokes.load(std::memory_order_relaxed) != seen;
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
schedule_of(const config& cfg, bool has_ns, int64_t event_ns, uint64_t produced,
            steady::time_point start, steady::time_point previous)
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
    if(cfg.pace == pace_kind::realtime && has_ns && event_ns > cfg.first_ns)
    {
        int64_t delay = event_ns - cfg.first_ns; // both in 0..INT64_MAX: no overflow
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

// A message ready to be delivered: read, routed and rewritten without the lock.
struct staged_message
{
    uint64_t line   = 0; // its line number in the log (vanish faults)
    int64_t  ns     = 0; // as the log says (realtime pace)
    uint32_t offset = 0; // of its bytes in the stage
    uint32_t size   = 0;
    uint32_t id     = 0;
    uint32_t pid    = 0; // the pid the kernel delivers by
    uint16_t gpu    = 0; // index in config::gpus (at most max_gpus)
    bool     has_ns = false;
    bool     waits  = false; // the next entry of stage::waits is for it
};

// The producer reads, parses and rewrites a stage of messages without the lock, then takes
// the lock to deliver them: readers wait for the lock only while messages are copied into
// FIFOs, not while lines are parsed, and the log is never read under it. Bounded: at most
// max_messages, and the bytes stop growing at byte_budget (one more line always fits).
//
// In lossless pace the budget is three quarters of what the GPUs' FIFOs hold together (at
// most max_bytes): a stage the FIFOs can take whole is delivered without a wait for room,
// and the reader drains it while the producer parses the next one. A larger stage fills a
// FIFO in mid-delivery, and the producer then waits for the reader with nothing to overlap.
// Measured with kfd-replay-consumer on 1M mixed events, 8 KiB FIFOs, medians of 8
// alternated runs on the 2-vCPU AMD VM, M events/s: 1 GPU, 3.8 with 32 KiB stages (512
// messages, 23 KB) against 4.75-5.0 with this budget (6 KiB); 2 and 4 GPUs, no measurable
// change (4.0-4.8 and 5.1-6.0 with either). On the Intel VM, stages of 128-256 messages
// gained for 1 and 2 GPUs alike. Never below min_bytes: with 1 KiB FIFOs the replay is
// bound by the hand-off of each KiB (0.8-1.1 M events/s with either size), and a stage larger
// than the FIFO fills it up to its headroom under the lock, as a kernel FIFO fills while its
// reader sleeps (a test checks that fill). The other paces never wait for room (a full FIFO
// drops): they keep max_bytes.
struct stage
{
    static constexpr size_t max_messages = 512;
    static constexpr size_t max_bytes    = 32 * 1024;
    static constexpr size_t min_bytes    = 4096;

    static size_t budget_for(const config& cfg)
    {
        if(cfg.pace != pace_kind::lossless) return max_bytes;
        const size_t fifos = std::max<size_t>(cfg.gpus.size(), 1) * cfg.fifo_bytes;
        return std::clamp(fifos / 4 * 3, min_bytes, max_bytes);
    }

    explicit stage(const config& cfg) : byte_budget(budget_for(cfg)) {}

    size_t                      byte_budget;
    std::vector<staged_message> messages = std::vector<staged_message>(max_messages);
    size_t                      count    = 0;
    std::vector<mask_wait>      waits; // `#@ wait-mask` of the messages that have one, in order
    std::vector<char> bytes = std::vector<char>(max_bytes + line_reader::max_line + rewrite_growth);
    size_t            used  = 0;
    uint64_t          last_line = 0; // the last line read into this stage (events or not)

    bool full() const { return count >= max_messages || used >= byte_budget; }
    void clear()
    {
        count = 0;
        waits.clear();
        used = 0;
    }
    std::string_view text(const staged_message& m) const
    {
        return std::string_view(bytes.data() + m.offset, m.size);
    }
};

// The producer's pass over the log: what turns its lines into messages.
struct line_source
{
    const config& cfg;
    line_reader   reader;
    bool          trusted; // see classify_line
    rewrite_rule  rule;
    route_state   route;
    rewrite_memo  memo;         // the timestamp's leading digits and the pid, formatted once
    mask_wait     pending_wait; // a `#@ wait-mask` that the next event must satisfy
    uint64_t      number = 0;   // of the last line read
    // The last node routed and its GPU index (most lines name one of few nodes).
    uint32_t last_node = 0;
    long     last_gpu  = -1;

    long gpu_of(uint32_t node)
    {
        if(node != last_node || last_gpu < 0)
        {
            last_node = node;
            last_gpu  = cfg.gpu_index(node);
        }
        return last_gpu;
    }
};

// The message just written at the stage's end.
void
add_message(stage& st, line_source& src, size_t size, uint32_t id, uint32_t pid, long gpu,
            bool has_ns, int64_t ns)
{
    staged_message& m = st.messages[st.count++];
    m.line            = src.number;
    m.ns              = ns;
    m.offset          = static_cast<uint32_t>(st.used);
    m.size            = static_cast<uint32_t>(size);
    m.id              = id;
    m.pid             = pid;
    m.gpu             = static_cast<uint16_t>(gpu);
    m.has_ns          = has_ns;
    m.waits           = src.pending_wait.active;
    if(m.waits)
    {
        st.waits.push_back(src.pending_wait);
        src.pending_wait = mask_wait{};
    }
    st.used += size;
}

// The common line in one pass, read in place in the reader's buffer: found, routed and
// rewritten into the stage. False for any other shape, and for a line the buffer's end cuts:
// the general path takes those.
bool
stage_common_line(line_source& src, stage& st)
{
    static_assert(line_reader::read_slack >= route_read_slack, "the in-place parse reads ahead");
    const std::string_view buffered = src.reader.buffered();
    routed_event           ev;
    size_t                 line_size = 0;
    const size_t           n =
        route_and_rewrite_in_place(buffered.data(), buffered.size(), line_reader::max_line,
                                   src.rule, src.memo, st.bytes.data() + st.used, ev, line_size);
    if(n == 0) return false;
    src.reader.skip(line_size + 1);
    st.last_line = ++src.number;
    long gpu     = src.gpu_of(ev.route_node);
    if(gpu >= 0) add_message(st, src, n, ev.id, ev.pid, gpu, true, ev.ns); // else unroutable
    return true;
}

// Fills the stage from the log; false when the log has no more lines.
bool
stage_lines(line_source& src, stage& st)
{
    std::string_view line; // into the reader's buffer: valid until its next line
    bool             too_long = false;
    while(!st.full())
    {
        if(src.trusted && stage_common_line(src, st)) continue;
        if(!src.reader.next_view(line, too_long)) return false;
        st.last_line        = ++src.number;
        char*           out = st.bytes.data() + st.used;
        classified_line c   = classify_line(line, too_long, src.cfg, src.route, src.trusted);
        if(c.wait.active) src.pending_wait = c.wait;
        if(c.kind != line_kind::event) continue;
        uint32_t text_pid = 0;
        size_t   n        = rewrite_line_to(out, line, c.event, src.rule, text_pid, &src.memo);
        add_message(st, src, n, c.event.id, delivery_pid(c.event, text_pid), c.gpu, c.event.has_ns,
                    c.event.ns);
        src.pending_wait = mask_wait{};
    }
    return true;
}

// `#@ fault vanish` in line order (the same line: in the order given), applied when the
// delivery reaches their line.
struct vanish_schedule
{
    std::vector<vanish_fault> faults;
    size_t                    next = 0;

    explicit vanish_schedule(const std::vector<vanish_fault>& given) : faults(given)
    {
        std::stable_sort(faults.begin(), faults.end(),
                         [](const vanish_fault& a, const vanish_fault& b)
                         { return a.line < b.line; });
    }
    void apply_through(const config& cfg, session& s, uint64_t line)
    {
        for(; next < faults.size() && faults[next].line <= line; ++next)
            apply_vanish_fault(cfg, s, faults[next]);
    }
};

// The delivery side of the replay, all under the emulator's lock.
struct replay
{
    emulator&                     emu;
    session&                      s;
    const config&                 cfg;
    std::unique_lock<std::mutex>& lock;
    vanish_schedule               vanish;
    uint64_t                      batch    = 0;
    uint64_t                      produced = 0;
    steady::time_point            start    = steady::now();
    steady::time_point            previous = start;
    // The watch for a poke before sleeping (watch_for_poke) is skipped after it failed twice
    // or more in a row: for 1, 3, 7 ... 63 waits. Where the reader cannot run while this thread
    // spins (both on one CPU of a busy machine) every watch fails and only costs time; where
    // it can, nearly all succeed (measured: 99% on the idle 2-CPU VM, 86-89% with a CPU hog).
    unsigned watch_failures = 0; // in a row
    unsigned watch_skips    = 0;
    // Lossless pace, a reader whose reads the emulator does not see (delivery.cpp:
    // may_read_unseen): how long the next wait for room is.
    static constexpr std::chrono::microseconds min_unseen_wait{50};
    static constexpr std::chrono::microseconds max_unseen_wait{5000};
    std::chrono::microseconds                  unseen_wait = min_unseen_wait;

    // Messages are delivered in batches under one hold of the lock; a batch ends (wake-ups
    // given, lock released) when the stage is delivered (the next one is read and parsed
    // without the lock), when a message was dropped (a FIFO is full), and after max_batch
    // messages (readers and the application get the lock). A wait for room in a lossless FIFO
    // or for the schedule releases the lock with the batch so far visible.
    static constexpr uint64_t max_batch = 512;

    // (No notify of emu.cv here: the producer is the only thread that waits on it.)
    void end_batch()
    {
        bool woke = flush_wakeups(s);
        lock.unlock();
        batch = 0;
        // A Unix socket's wake-up is a sync one: the scheduler puts the woken reader on this
        // CPU, to run when the producer sleeps, but the producer goes on to read and rewrite
        // its next stage (0.2-0.3 ms, measured with perf sched), longer than a 1 KiB FIFO
        // lasts at 100k events/s. The kernel wakes SMI readers with wake_up_all, not a sync
        // wake-up: yielding lets the reader run now, as it would there.
        if(woke) sched_yield();
    }
    bool watch_pays()
    {
        if(watch_skips > 0)
        {
            --watch_skips;
            return false;
        }
        if(watch_for_poke(s, lock))
        {
            watch_failures = 0;
            return true;
        }
        watch_failures = std::min(watch_failures + 1, 7u);
        watch_skips    = (1u << (watch_failures - 1)) - 1;
        return false;
    }
    template <typename Fn> void wait_in_batch(Fn&& do_wait)
    {
        flush_wakeups(s); // what is queued must be visible while we wait
        do_wait();
    }

    void keep_schedule(const staged_message& m)
    {
        previous = schedule_of(cfg, m.has_ns, m.ns, produced, start, previous);
        auto now = steady::now();
        if(previous != steady::time_point::max())
            if(auto slip = schedule_slip(previous, now); slip.count() > 0)
            {
                start += slip; // late: the schedule moves, no burst (pacing.hpp)
                previous += slip;
            }
        if(previous > now) wait_in_batch([&] { wait_for_schedule(emu, s, lock, previous); });
    }

    // Delivers one message; false when the replay stops.
    bool deliver_one(const stage& st, const staged_message& m, const mask_wait& wait)
    {
        vanish.apply_through(cfg, s, m.line);
        gpu_state&       gpu = s.gpus[m.gpu];
        std::string_view msg = st.text(m);
        if(cfg.pace == pace_kind::realtime || cfg.pace == pace_kind::rate) keep_schedule(m);
        // The mask wait is checked under the lock that delivers: the event sees the masks
        // the wait saw (a mask write wakes the cv; the batch so far is visible meanwhile). In
        // lossless pace the message is delivered as soon as it has room (in the same pass).
        auto wait_for_reader = [&]
        {
            wait_in_batch(
                [&]
                {
                    s.producer_waiting = true;
                    emu.cv->wait_for(lock, std::chrono::milliseconds(100));
                    s.producer_waiting = false;
                });
        };
        auto wait_for_room = [&]
        {
            wait_in_batch(
                [&]
                {
                    if(watch_pays()) return;
                    // A read that bypasses read() wakes nobody: the room it makes is looked for
                    // on a timer (has_room asks the socket), short while the reader keeps up,
                    // longer after each wait that found none (a reader that stopped reading).
                    const bool unseen  = may_read_unseen(gpu);
                    auto       timeout = unseen ? unseen_wait : std::chrono::microseconds(100000);
                    s.producer_waiting = true;
                    emu.cv->wait_for(lock, timeout);
                    s.producer_waiting = false;
                    if(unseen) unseen_wait = std::min(unseen_wait * 2, max_unseen_wait);
                });
        };
        uint64_t drops     = 0;
        bool     delivered = false;
        while(!s.stop)
        {
            if(wait.active && !mask_wait_done(s, wait))
                wait_for_reader();
            else if(cfg.pace != pace_kind::lossless || gpu.vanished)
                break;
            else if((delivered = deliver_when_room(cfg, gpu, m.id, m.pid, msg, drops)))
            {
                unseen_wait = min_unseen_wait;
                break;
            }
            else
                wait_for_room();
        }
        if(s.stop) return false;
        ++produced;
        if(gpu.vanished)
            ++gpu.n.after_vanish;
        else if(!delivered)
            drops = deliver(cfg, gpu, m.id, m.pid, msg);
        // An event dropped because nobody reads is no progress for the exit wait.
        const bool dropped = drops != 0;
        if(dropped) --s.progress;
        ++s.progress;
        // A full FIFO ends the batch: the reader gets its wake-up and the lock between two
        // messages, as it can between two kernel messages, rather than after a whole burst.
        if(++batch >= max_batch || dropped)
        {
            end_batch();
            lock_watching(lock, cfg.pace == pace_kind::lossless);
            if(s.stop) return false;
        }
        return true;
    }

    // Delivers the stage in order, then ends the batch; false when the replay stops.
    bool deliver_stage(const stage& st)
    {
        lock_watching(lock, cfg.pace == pace_kind::lossless); // a read may hold it: lock_watch.hpp
        bool   going = !s.stop;
        size_t waits = 0;
        for(size_t i = 0; going && i < st.count; ++i)
        {
            const staged_message& m = st.messages[i];
            going                   = deliver_one(st, m, m.waits ? st.waits[waits++] : mask_wait{});
        }
        if(going) vanish.apply_through(cfg, s, st.last_line); // lines after the last event
        end_batch();
        return going;
    }
};

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
    const bool  trusted = cfg.malformed == 0 && identity_of(fd) == cfg.log_file;
    line_source src{
        cfg, line_reader(fd, read_our_log), trusted,
        rewrite_rule{cfg.has_self, cfg.self_pid, static_cast<uint32_t>(s.pid), s.ns_offset}};
    std::unique_lock<std::mutex> lock(*emu.mu, std::defer_lock);
    replay                       out{emu, s, cfg, lock, vanish_schedule(cfg.vanish_faults)};
    stage                        staged(cfg);
    bool                         more = true;
    while(more)
    {
        staged.clear();
        more = stage_lines(src, staged);
        if(!out.deliver_stage(staged)) break;
    }
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
    // A `rate` or `realtime` producer sleeps until each event's time, and each sleep ends up
    // to the thread's timer slack late (Linux: 50 us unless the program set another): events
    // then come in bursts of what fell due meanwhile. A smaller slack spreads them as the pace
    // says, at the cost of a wake-up per event (docs/kfd-emulator.md).
    if(g_emu->producer_timer_slack_ns > 0)
        prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(g_emu->producer_timer_slack_ns), 0UL,
              0UL, 0UL);
    const int slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
    g_producer_thread.store(pthread_self(), std::memory_order_relaxed);

    rocprofiler::common::thread_stack_root stack_root; // see common/fork_reachable.hpp
    auto*                                  s = static_cast<session*>(arg);
    {
        std::lock_guard<std::mutex> lock(*g_emu->mu);
        s->producer_timer_slack_ns = slack > 0 ? static_cast<uint64_t>(slack) : 0;
    }
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
    g_producer_thread.store(0, std::memory_order_relaxed);
    publish_all(*s);
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
    // Created with every signal blocked, not only blocking them once it runs: until its first
    // instruction it would have the creating thread's mask, and a program that blocks a
    // signal in main and then sends it to itself (host_sigwait) could have it delivered to
    // this thread and be killed by the default action.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    count_client_syscall(sc_thread_create);
    int rc = pthread_create(&thread, &attr, producer_main, &s);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    pthread_attr_destroy(&attr);
    if(rc != 0)
    {
        s.producer_finished = true;
        s.producer_error    = std::string("cannot start the producer: ") + std::strerror(rc);
        report(s.producer_error);
    }
}

} // namespace kfd_emu
