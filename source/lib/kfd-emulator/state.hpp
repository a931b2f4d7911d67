// MIT License - see LICENSE.
//
// The emulated driver's state, shared by its parts (process, fd table, SMI clients, delivery,
// producer, exit wait, statistics file). It lives in one heap object that is never freed: the
// SDK's reader thread may still read an SMI fd after our atexit handler and during the library
// destructors, so nothing here may be destroyed at exit. One mutex guards all of it; no call
// blocks while holding it except the condition-variable waits of the producer and the exit
// handler. Everything here has hidden visibility (the library exports only the interposers).
#pragma once

#include "byte_fifo.hpp"
#include "common/kfd_abi.hpp"
#include "config.hpp"
#include "fork_swappable.hpp"
#include "stats_json.hpp"
#include "topology.hpp"

#include <sys/types.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace kfd_emu
{
namespace abi = rocprofiler::kfd_abi;
using steady  = std::chrono::steady_clock;

// Fds the emulator hands out are marked here so that every other fd passes through after one
// atomic load. Handed-out fds above this limit are refused (EMFILE). The marks and our socket
// ends are kept outside the locked state so that a forked child can read them whatever another
// thread of the parent was doing at the moment of fork().
constexpr int max_tracked_fd = 65536;
enum fd_mark : uint8_t
{
    mark_none             = 0,
    mark_device           = 1,
    mark_smi              = 2,
    mark_inherited_device = 3, // a parent's fd in a forked child
    mark_inherited_smi    = 4,
};
extern std::atomic<uint8_t> g_fd_marks[max_tracked_fd];
extern std::atomic<int>     g_feed_of[max_tracked_fd];  // our socket end of the SMI fd, plus 1
extern std::atomic<ino_t>   g_feed_ino[max_tracked_fd]; // its inode, checked before closing it

// Bounds of the exit wait (ms): without progress, and in all (so that exit always ends).
constexpr long default_exit_timeout_ms = 5000;
constexpr long default_exit_max_ms     = 60000;
// The largest value of those variables (11.6 days): in ns it stays far from int64's limit.
constexpr uint64_t max_env_ms = 1000000000;

struct client
{
    client(size_t gpu_index, size_t fifo_bytes) : gpu(gpu_index), fifo(fifo_bytes) {}

    size_t   gpu;
    int      fd       = -1; // handed out: one end of a socketpair
    int      feed_fd  = -1; // ours, the other end: the FIFO's bytes are sent through it
    ino_t    fd_ino   = 0;  // the sockets' inodes: the numbers may be reused behind our
    ino_t    feed_ino = 0;  // back (close_range), so each use checks them first
    pid_t    pid      = 0;  // tgid of the process that made the SMI ioctl
    uint64_t mask     = 0;
    // The kernel's kfifo, as the emulator accounts for it: its oldest `published` bytes are
    // in the socket (readable by any means: read, readv, recv, io_uring), the rest are queued
    // since the last batch ended and are sent with its wake-up (publish).
    byte_fifo fifo;
    size_t    published = 0;
    bool      wake      = false; // messages queued since the last batch ended
    // Bytes were read since the last publish: only then may a reader be asleep waiting for
    // the next one (flush_wakeups then yields the CPU to it).
    bool read_since_publish = false;
    // Bytes left the socket without an intercepted read() (recv, readv, io_uring): the FIFO
    // is then known only by asking the socket (sync_fill), and a producer waiting for room
    // asks it on a short timer instead of waiting to be woken by a read.
    bool         bypassing_reader = false;
    bool         closed           = false;
    bool         vanished         = false;
    uint64_t     data_reads       = 0; // reads that found data (for read fault injection)
    client_stats n;
};

// When a message was dropped for a full FIFO: the GPU's event count then (its index in the
// GPU's events) and CLOCK_MONOTONIC. Tells a reader's start-up and warm-up from its steady
// state (benchmarks: drops by phase of the run).
struct drop_mark
{
    uint64_t event   = 0;
    uint64_t time_ns = 0;
};
inline constexpr size_t max_drop_marks = 65536; // per GPU; later drops are only counted

struct gpu_state
{
    gpu_stats              n;
    std::vector<drop_mark> drop_marks;
    bool                   vanished      = false;
    uint64_t               vanished_line = 0;
    std::vector<client*>   clients; // open and closed
    uint64_t               clients_omitted = 0;
};

// What one process sees: created at its first /dev/kfd open.
struct session
{
    pid_t                  pid = 0;
    std::vector<gpu_state> gpus;
    bool                   producer_started  = false;
    bool                   producer_finished = false;
    bool                   stop              = false;
    std::string            producer_error;
    uint64_t               producer_timer_slack_ns = 0; // what the producer thread runs with
    uint64_t               progress  = 0; // bumped by every emitted event and every read
    int64_t                ns_offset = 0;
    bool                   sleeping  = false; // producer waits for its schedule
    // The producer waits for room in a FIFO or for a mask: a read or a mask write wakes it
    // (only then, so that a read costs no futex call while the producer is busy).
    bool               producer_waiting = false;
    steady::time_point sleep_until      = {};
    // Bumped under the lock by everything that would wake the producer from its wait on the
    // cv (a read that took bytes, a mask write, a close, the exit's stop): a lossless producer
    // waiting for room watches it for a few microseconds without the lock, off the cv, before
    // it sleeps there (producer.cpp: spin_for_read). Use poke_producer().
    std::atomic<uint64_t> pokes{0};
};

// Called under the lock with each notify of the producer's cv.
inline void
poke_producer(session& s)
{
    s.pokes.fetch_add(1, std::memory_order_release);
}

enum class fd_kind
{
    device,
    smi,
};

struct fd_entry
{
    fd_kind  kind  = fd_kind::device;
    session* owner = nullptr;
    client*  smi   = nullptr;
    dev_t    dev   = 0;
    ino_t    ino   = 0;
};

struct emulator
{
    bool   ready = false;
    config cfg;
    long   exit_timeout_ms = default_exit_timeout_ms;
    long   exit_max_ms     = default_exit_max_ms;
    // KFD_EMULATOR_TIMER_SLACK_NS: the producer thread's timer slack (0: the one it inherits).
    long          producer_timer_slack_ns = 0;
    std::string   stats_target;         // where this process writes its stats
    pid_t         stats_target_pid = 0; // the process that chose it
    topology_tree topology;
    pid_t         topology_owner = 0; // only its creator removes it
    // mu, cv, exit_cv, current and fds are replaced by a fork child (adopt_after_fork): see
    // fork_swappable.hpp.
    fork_swappable<std::mutex>              mu;
    fork_swappable<std::condition_variable> cv;
    // The exit wait's own: notified only where the replay may have become complete (the
    // producer finished, a FIFO emptied after that, a client closed), not on every read or
    // batch, which would wake the exiting thread (and take the lock) thousands of times.
    fork_swappable<std::condition_variable>           exit_cv;
    fork_swappable<session>                           current;
    fork_swappable<std::unordered_map<int, fd_entry>> fds;
    bool                                              atexit_registered = false;
};

extern emulator* g_emu;
// The process this library image was loaded into (a forked child has another pid).
extern pid_t g_image_pid;
// KFD_EMULATOR_STATS made absolute at load time, so that a later chdir() does not change it.
extern char g_stats_path[4096];

// One line "kfd-emulator: <message>" on stderr.
void report(const std::string& message);

// errno = error; returns -1 (the shape of a failed system call).
inline int
fail(int error)
{
    errno = error;
    return -1;
}
} // namespace kfd_emu
