// MIT License - see LICENSE.
#include "exit_wait.hpp"

#include "delivery.hpp"
#include "process.hpp"
#include "stats_file.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace kfd_emu
{
namespace
{
// A reader that does not go through read() (recv, io_uring) is seen here, by asking the
// socket, on the wait's 20 ms ticks: what it took is progress.
bool
all_drained(session& s)
{
    publish_all(s);
    bool drained = true;
    for(auto& gpu : s.gpus)
        for(client* c : gpu.clients)
        {
            if(!is_live(*c) || c->fifo.empty()) continue;
            if(sync_fill(*c) != 0) ++s.progress;
            drained = drained && c->fifo.empty();
        }
    return drained;
}

// Waits until the log is delivered and read: "complete", "timeout" (no progress for
// exit_timeout_ms), "limit" (exit_max_ms reached, counted from limit_start), "skipped"
// (exit_timeout_ms is 0) or "not-started".
const char*
wait_at_exit(emulator& emu, session& s, std::unique_lock<std::mutex>& lock,
             steady::time_point limit_start)
{
    if(!s.producer_started) return "not-started";
    if(emu.exit_timeout_ms == 0) return "skipped";
    auto               timeout  = std::chrono::milliseconds(emu.exit_timeout_ms);
    steady::time_point limit    = limit_start + std::chrono::milliseconds(emu.exit_max_ms);
    uint64_t           last     = s.progress;
    steady::time_point deadline = steady::now() + timeout;
    while(!(s.producer_finished && all_drained(s)))
    {
        emu.exit_cv->wait_for(lock, std::chrono::milliseconds(20));
        steady::time_point now = steady::now();
        if(s.progress != last)
        {
            last     = s.progress;
            deadline = now + timeout;
        }
        // A producer sleeping for its schedule (realtime, rate) makes progress only while
        // the reader keeps up: an unread event left in a FIFO means nobody reads.
        if(s.sleeping && all_drained(s)) deadline = std::max(deadline, s.sleep_until + timeout);
        if(now >= limit) return "limit";
        if(now >= deadline) return "timeout";
    }
    return "complete";
}

// "<gpu index> <event index> <CLOCK_MONOTONIC ns>" per dropped message, in order per GPU
// (<stats file>.drops; written only when a message was dropped).
std::string
drop_marks_text(const session& s)
{
    std::string text;
    for(size_t gpu = 0; gpu < s.gpus.size(); ++gpu)
        for(const drop_mark& d : s.gpus[gpu].drop_marks)
            text += std::to_string(gpu) + ' ' + std::to_string(d.event) + ' ' +
                    std::to_string(d.time_ns) + '\n';
    return text;
}
} // namespace

void
at_process_exit()
{
    emulator* emu = g_emu;
    if(emu == nullptr || !emu->ready || !adopt_if_forked(false)) return;
    std::string text;
    std::string path;
    std::string drops;
    try
    {
        // exit() may come from a signal handler that interrupted this very thread while it
        // held the lock: never block on it; after a while give up the wait and the stats.
        steady::time_point start = steady::now();
        long lock_ms             = std::min(emu->exit_max_ms, std::max(emu->exit_timeout_ms, 100L));
        std::unique_lock<std::mutex> lock(*emu->mu, std::defer_lock);
        while(!lock.try_lock())
        {
            if(steady::now() >= start + std::chrono::milliseconds(lock_ms))
            {
                report("exit: the emulator stays busy (exit called from a signal handler?): no "
                       "exit wait, no statistics");
                return;
            }
            timespec pause{0, 1000000};
            nanosleep(&pause, nullptr);
        }
        session* s = emu->current;
        if(s == nullptr || s->pid != getpid()) return;
        const char* waited = wait_at_exit(*emu, *s, lock, start);
        if(std::strcmp(waited, "timeout") == 0)
            report("exit: gave up waiting for the replay after " +
                   std::to_string(emu->exit_timeout_ms) + " ms without progress");
        if(std::strcmp(waited, "limit") == 0)
            report("exit: gave up waiting for the replay after " +
                   std::to_string(emu->exit_max_ms) + " ms in all (KFD_EMULATOR_EXIT_MAX_MS)");
        s->stop = true; // from here on the counters are final
        poke_producer(*s);
        emu->cv->notify_all();
        if(emu->stats_target_pid != getpid() || emu->stats_target.empty()) return;
        path  = emu->stats_target;
        text  = stats_to_json(collect_stats(*emu, *s, waited));
        drops = drop_marks_text(*s);
    }
    catch(...)
    {
        return;
    }
    write_stats_file(path, text);
    if(!drops.empty()) write_stats_file(path + ".drops", drops);
}

namespace
{
__attribute__((destructor)) void
remove_topology_at_unload()
{
    // Only the process that created the folder removes it (not a forked child).
    if(g_emu != nullptr && g_emu->ready && g_emu->topology_owner == getpid())
        remove_topology(g_emu->topology);
}

} // namespace
} // namespace kfd_emu
