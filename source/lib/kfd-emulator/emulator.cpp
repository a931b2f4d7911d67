// MIT License - see LICENSE.
//
// State lives in one heap object that is never freed: the SDK's reader thread may still read
// an SMI fd after our atexit handler and during the library destructors, so nothing here may
// be destroyed at exit. One mutex guards all of it; no call blocks while holding it except
// the condition-variable waits of the producer and the exit handler.
#include "emulator.hpp"
#include "common/fork_reachable.hpp"

#include "byte_fifo.hpp"
#include "common/kfd_abi.hpp"
#include "config.hpp"
#include "fork_swappable.hpp"
#include "numbers.hpp"
#include "real_libc.hpp"
#include "stats_json.hpp"
#include "topology.hpp"
#include "unique_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace kfd_emu
{
namespace abi = rocprofiler::kfd_abi;

namespace
{
using steady = std::chrono::steady_clock;

// Fds the emulator hands out are marked here so that every other fd passes through after one
// atomic load. Handed-out fds above this limit are refused (EMFILE). The marks and the token
// fds are kept outside the locked state so that a forked child can read them whatever another
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
std::atomic<uint8_t> g_fd_marks[max_tracked_fd];
std::atomic<int>     g_token_of[max_tracked_fd];  // our socket end of the SMI fd, plus 1
std::atomic<ino_t>   g_token_ino[max_tracked_fd]; // its inode, checked before closing it
// The process the state belongs to; another pid means we are a forked child.
std::atomic<pid_t> g_state_pid{0};
std::atomic<int>   g_adopting{0};
// The process whose memory this is: set at load and in a fork child. A vfork() child or a
// raw clone() shares the memory under another pid: it must change nothing here.
std::atomic<pid_t> g_process_pid{0};
// Set on the forking thread by the fork prepare handler, cleared by the parent handler: only
// a real fork child (a copy of that thread) finds it set. vfork() runs no fork handlers.
// initial-exec: a preloaded library has static TLS, and needs no __tls_get_addr (ld.so).
__thread bool t_forking __attribute__((tls_model("initial-exec"))) = false;

// Our socket ends are moved to numbers at least this high, away from the low numbers a
// program reuses after closing ours behind our back (close_range).
constexpr int token_fd_floor = 900;

// Bounds of the exit wait (ms): without progress, and in all (so that exit always ends).
constexpr long default_exit_timeout_ms = 5000;
constexpr long default_exit_max_ms     = 60000;
// The largest value of those variables (11.6 days): in ns it stays far from int64's limit.
constexpr uint64_t max_env_ms = 1000000000;

// Closed clients kept per GPU for the statistics; older closed ones are forgotten (counted).
constexpr size_t max_clients_kept = 256;

struct client
{
    client(size_t gpu_index, size_t fifo_bytes) : gpu(gpu_index), fifo(fifo_bytes) {}

    size_t       gpu;
    int          fd        = -1; // handed out: one end of a socketpair
    int          token_fd  = -1; // ours: writes a byte to fd while the FIFO is non-empty
    ino_t        fd_ino    = 0;  // the sockets' inodes: the numbers may be reused behind our
    ino_t        token_ino = 0;  // back (close_range), so each use checks them first
    pid_t        pid       = 0;  // tgid of the process that made the SMI ioctl
    uint64_t     mask      = 0;
    byte_fifo    fifo;
    bool         token      = false;
    bool         wake       = false; // messages queued since the last readiness edge
    bool         closed     = false;
    bool         vanished   = false;
    uint64_t     data_reads = 0; // reads that found data (for read fault injection)
    client_stats n;
};

struct gpu_state
{
    gpu_stats            n;
    bool                 vanished      = false;
    uint64_t             vanished_line = 0;
    std::vector<client*> clients; // open and closed
    uint64_t             clients_omitted = 0;
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
    uint64_t               progress    = 0; // bumped by every emitted event and every read
    int64_t                ns_offset   = 0;
    bool                   sleeping    = false; // producer waits for its schedule
    steady::time_point     sleep_until = {};
};

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
    bool          ready = false;
    config        cfg;
    long          exit_timeout_ms = default_exit_timeout_ms;
    long          exit_max_ms     = default_exit_max_ms;
    std::string   stats_target;         // where this process writes its stats
    pid_t         stats_target_pid = 0; // the process that chose it
    topology_tree topology;
    pid_t         topology_owner = 0; // only its creator removes it
    // Replaced by a fork child (adopt_after_fork): see fork_swappable.hpp.
    fork_swappable<std::mutex>                        mu;
    fork_swappable<std::condition_variable>           cv;
    fork_swappable<session>                           current;
    fork_swappable<std::unordered_map<int, fd_entry>> fds;
    bool                                              atexit_registered = false;
};

emulator*      g_emu       = nullptr;
pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
// The process this library image was loaded into (a forked child has another pid).
pid_t g_image_pid = 0;
// KFD_EMULATOR_LOG and KFD_EMULATOR_STATS made absolute at load time, so that a later
// chdir() changes neither.
char g_log_path[4096];
char g_stats_path[4096];

void
absolute_path(const char* variable, char (&out)[4096])
{
    const char* value = std::getenv(variable);
    if(out[0] != '\0' || value == nullptr || *value == '\0') return;
    char cwd[2048] = "";
    bool relative  = value[0] != '/' && getcwd(cwd, sizeof(cwd)) != nullptr;
    int  n         = relative ? std::snprintf(out, sizeof(out), "%s/%s", cwd, value)
                              : std::snprintf(out, sizeof(out), "%s", value);
    if(n < 0 || static_cast<size_t>(n) >= sizeof(out)) out[0] = '\0';
}

void fork_prepare();
void fork_parent();
void fork_child();

void
remember_process_start()
{
    if(g_image_pid == 0) g_image_pid = getpid();
    pid_t none = 0;
    g_process_pid.compare_exchange_strong(none, getpid());
    const char* log = std::getenv("KFD_EMULATOR_LOG");
    if(log == nullptr || *log == '\0') return; // disabled: do nothing at all
    absolute_path("KFD_EMULATOR_LOG", g_log_path);
    absolute_path("KFD_EMULATOR_STATS", g_stats_path);
    // At load, so that every fork() of the process, even before its first /dev/kfd open,
    // marks its child as one.
    static std::atomic<bool> registered{false};
    if(!registered.exchange(true)) pthread_atfork(fork_prepare, fork_parent, fork_child);
}

__attribute__((constructor)) void
at_load()
{
    int saved = errno;
    remember_process_start();
    errno = saved;
}

void
report(const std::string& message)
{
    std::string line = "kfd-emulator: " + message + "\n";
    write_all(STDERR_FILENO, line.data(), line.size());
}

int64_t
boottime_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

long
env_long(const char* name, long fallback)
{
    const char* text = std::getenv(name);
    if(text == nullptr || *text == '\0') return fallback;
    uint64_t value = 0;
    if(parse_number(text, 10, max_env_ms, value)) return static_cast<long>(value);
    report(std::string("ignoring ") + name + "=" + text + ": not a number of ms up to " +
           std::to_string(max_env_ms));
    return fallback;
}

// ---------------------------------------------------------------------------------------
// fork(): the child gets a copy of this state as it was at that instant, possibly in the
// middle of another thread's change, and shares the socket of every inherited SMI fd with the
// parent. No lock is held across fork() (other libraries' fork handlers may call close() on
// our fds, before or after ours run). Instead the child, on its first call into the
// emulator, takes a fresh lock and fd table, leaves the parent's session alone (its fds
// become inert, see device_read), and closes its copies of our private socket ends so that the
// parent's POLLHUP still works. Only the lock-free marks are read for that.

// True when fd is still the socket with inode ino.
bool
is_our_socket(int fd, ino_t ino)
{
    struct stat st
    {
    };
    return fd >= 0 && ino != 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == ino;
}

// True when this memory belongs to the calling process (or to a fork child that has not yet
// taken it over); false in a vfork() or clone() child that shares it with its parent.
bool
own_process()
{
    pid_t me    = getpid();
    pid_t owner = g_process_pid.load(std::memory_order_acquire);
    if(owner == me) return true;
    if(owner != 0 && !t_forking) return false;
    t_forking = false;
    g_process_pid.store(me, std::memory_order_release);
    return true;
}

// The parent's lock, fd table and session, left as they were at fork() (another thread may
// have been inside them): never touched again, never freed, but kept reachable so that a leak
// checker (LSan at a child's exit) sees state that is kept on purpose, not lost memory.
struct retired_state
{
    std::mutex*                        mu;
    std::condition_variable*           cv;
    std::unordered_map<int, fd_entry>* fds;
    session*                           current;
    retired_state*                     older;
};
retired_state* g_retired = nullptr;

void
adopt_after_fork()
{
    g_retired      = new retired_state{g_emu->mu, g_emu->cv, g_emu->fds, g_emu->current, g_retired};
    g_emu->mu      = new std::mutex;
    g_emu->cv      = new std::condition_variable;
    g_emu->fds     = new std::unordered_map<int, fd_entry>;
    g_emu->current = nullptr; // the parent's session stays in g_retired, never touched
    for(int fd = 0; fd < max_tracked_fd; ++fd)
    {
        uint8_t mark = g_fd_marks[fd].load(std::memory_order_acquire);
        if(mark == mark_device) g_fd_marks[fd].store(mark_inherited_device);
        if(mark == mark_smi) g_fd_marks[fd].store(mark_inherited_smi);
        int token = g_token_of[fd].exchange(0);
        if(token > 0 && is_our_socket(token - 1, g_token_ino[fd].load())) libc().close(token - 1);
    }
}

// Called first by every entry point that uses the state. Returns false in a process that
// shares this memory without being a fork child (vfork, clone): it must not use the state.
bool
adopt_if_forked()
{
    if(!own_process()) return false;
    pid_t me    = getpid();
    pid_t owner = g_state_pid.load(std::memory_order_acquire);
    if(owner == me || owner == 0 || g_emu == nullptr) return true;
    int idle = 0;
    if(g_adopting.compare_exchange_strong(idle, 1))
    {
        adopt_after_fork();
        g_state_pid.store(me, std::memory_order_release);
        g_adopting.store(0);
        return true;
    }
    while(g_state_pid.load(std::memory_order_acquire) != me)
        sched_yield(); // another thread of the child is adopting
    return true;
}

void
fork_prepare()
{
    t_forking = true;
}

void
fork_parent()
{
    t_forking = false;
}

void
fork_child()
{
    int saved = errno;
    adopt_if_forked();
    errno = saved;
}

void
initialize()
{
    try
    {
        auto* emu = new emulator;
        emu->mu   = new std::mutex;
        emu->cv   = new std::condition_variable;
        emu->fds  = new std::unordered_map<int, fd_entry>;
        remember_process_start(); // in case a constructor of another library called us first
        emu->exit_timeout_ms = env_long("KFD_EMULATOR_EXIT_TIMEOUT_MS", default_exit_timeout_ms);
        emu->exit_max_ms     = env_long("KFD_EMULATOR_EXIT_MAX_MS", default_exit_max_ms);

        const char* log = g_log_path[0] != '\0' ? g_log_path : std::getenv("KFD_EMULATOR_LOG");
        std::string error;
        file_io     io{libc().open, libc().read, libc().close};
        if(!load_config(log ? log : "", io, emu->cfg, error))
        {
            emu->cfg.load_error = error;
            report(error + " (emulating a machine without /dev/kfd)");
            g_emu = emu;
            return;
        }
        for(const auto& warning : emu->cfg.warnings)
            report("warning: " + warning);
        if(emu->cfg.warnings_omitted > 0)
            report("warning: " + std::to_string(emu->cfg.warnings_omitted) + " more warnings");
        if(emu->cfg.gpus.empty()) report("warning: the log names no GPU");
        if(!write_topology(emu->cfg, emu->topology, error)) report(error);
        emu->topology_owner = getpid();
        emu->ready          = true;
        g_state_pid.store(getpid(), std::memory_order_release);
        g_emu = emu;
    }
    catch(...)
    {
        report("initialization failed (out of memory?)");
    }
}

emulator*
ensure_initialized()
{
    // The first interposed call must not change the caller's errno.
    int saved = errno;
    pthread_once(&g_init_once, initialize);
    errno = saved;
    return g_emu;
}

// ---------------------------------------------------------------------------------------
// Clients and delivery (all with the lock held).

void
drop_token(client& c)
{
    if(!c.token || c.vanished) return;
    char byte = 0;
    recv(c.fd, &byte, 1, MSG_DONTWAIT);
    c.token = false;
}

// Called once per batch of messages queued on a client (see flush_wakeups). The kernel wakes
// the client's readers for new messages, so an edge-triggered epoll reader that has not
// emptied the FIFO is woken again: the token byte is taken back and sent anew, which is a new
// edge on the handed-out end.
void
raise_token(client& c)
{
    if(c.vanished || c.token_fd < 0) return;
    if(!is_our_socket(c.token_fd, c.token_ino))
    {
        c.token_fd = -1; // closed behind our back: never use (or close) that number again
        return;
    }
    if(c.token)
    {
        char byte = 0;
        if(!is_our_socket(c.fd, c.fd_ino) || recv(c.fd, &byte, 1, MSG_DONTWAIT) != 1) return;
    }
    c.token = send(c.token_fd, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1;
}

enum class verdict
{
    deliver,
    filtered_mask,
    filtered_pid,
};

verdict
judge(const config& cfg, const client& c, uint32_t id, uint32_t pid)
{
    if((c.mask & abi::event_mask(id)) == 0) return verdict::filtered_mask;
    if(pid != 0 && pid != static_cast<uint32_t>(c.pid))
    {
        // Other processes' events: superuser only; before 6.16 also bit 63 (ALL_PROCESS).
        bool all_bit = (c.mask & abi::event_mask(abi::event_all_process)) != 0;
        if(!cfg.superuser || (cfg.all_process_required && !all_bit)) return verdict::filtered_pid;
    }
    return verdict::deliver;
}

bool
is_live(const client& c)
{
    return !c.closed && !c.vanished;
}

// Lossless pace: true while some client that would get msg has no room for it yet. Room
// means one message (96 bytes) more than msg, so that the FIFO never fills beyond
// capacity - 96: a reader that takes a nearly full FIFO as a sign of kernel drops sees none.
bool
must_wait_for_space(const config& cfg, const gpu_state& gpu, uint32_t id, uint32_t pid, size_t size)
{
    for(const client* c : gpu.clients)
    {
        if(!is_live(*c) || judge(cfg, *c, id, pid) != verdict::deliver) continue;
        size_t capacity = c->fifo.capacity();
        size_t room     = size + abi::message_size <= capacity ? size + abi::message_size : size;
        if(room <= capacity && c->fifo.available() < room) return true;
    }
    return false;
}

// `#@ wait-mask`: whether the GPU's live clients' masks now satisfy the wait (always, for
// no wait, a GPU that is not emulated or one that vanished).
bool
mask_wait_done(const session& s, const mask_wait& wait)
{
    if(!wait.active || wait.gpu < 0 || static_cast<size_t>(wait.gpu) >= s.gpus.size()) return true;
    const gpu_state& gpu = s.gpus[static_cast<size_t>(wait.gpu)];
    if(gpu.vanished) return true;
    bool enabled = false;
    for(const client* c : gpu.clients)
        enabled = enabled || (is_live(*c) && (c->mask & abi::event_mask(wait.id)) != 0);
    return enabled == wait.with;
}

// Returns how many clients dropped msg because their FIFO was full.
uint64_t
deliver(const config& cfg, gpu_state& gpu, uint32_t id, uint32_t pid, const std::string& msg)
{
    uint64_t drops = 0;
    ++gpu.n.events_emitted;
    bool any_client = false;
    for(client* c : gpu.clients)
    {
        if(!is_live(*c)) continue;
        any_client = true;
        switch(judge(cfg, *c, id, pid))
        {
        case verdict::filtered_mask:
            ++c->n.filtered_mask;
            ++gpu.n.filtered_mask;
            continue;
        case verdict::filtered_pid:
            ++c->n.filtered_pid;
            ++gpu.n.filtered_pid;
            continue;
        case verdict::deliver:
            break;
        }
        if(!c->fifo.push_whole(msg.data(), msg.size()))
        {
            // The kernel drops a message that does not fit, silently.
            ++c->n.dropped_fifo_full;
            ++gpu.n.dropped_fifo_full;
            ++drops;
            continue;
        }
        ++c->n.queued;
        ++gpu.n.events_queued;
        c->n.bytes_queued += msg.size();
        c->n.max_fifo_fill = std::max<uint64_t>(c->n.max_fifo_fill, c->fifo.size());
        c->wake            = true; // the readiness edge comes with the batch (flush_wakeups)
    }
    if(!any_client) ++gpu.n.no_client;
    return drops;
}

// The producer queues messages in batches under one lock hold, and gives each client that
// received some one wake-up (a new readiness edge) per batch, before it releases the lock or
// waits: a reader sees the batch at once, with a system call or two per batch rather than
// per message.
void
flush_wakeups(session& s)
{
    for(auto& gpu : s.gpus)
        for(client* c : gpu.clients)
            if(c->wake)
            {
                c->wake = false;
                if(is_live(*c)) raise_token(*c);
            }
}

void
vanish_gpu(gpu_state& gpu, uint64_t line, bool pollerr)
{
    gpu.vanished      = true;
    gpu.vanished_line = line;
    for(client* c : gpu.clients)
    {
        if(!is_live(*c)) continue;
        // A byte left unread in our end when it closes makes the peer report POLLERR
        // (ECONNRESET) besides POLLHUP.
        if(pollerr && is_our_socket(c->fd, c->fd_ino))
            send(c->fd, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        if(c->fd >= 0 && c->fd < max_tracked_fd) g_token_of[c->fd].store(0);
        if(is_our_socket(c->token_fd, c->token_ino)) libc().close(c->token_fd);
        c->token_fd = -1;
        c->vanished = true;
    }
}

void
apply_vanish_faults(const config& cfg, session& s, uint64_t line)
{
    for(const auto& fault : cfg.vanish_faults)
    {
        long gpu = cfg.gpu_index(fault.gpu_id);
        if(fault.line == line && gpu >= 0 && !s.gpus[static_cast<size_t>(gpu)].vanished)
            vanish_gpu(s.gpus[static_cast<size_t>(gpu)], line, fault.pollerr);
    }
}

void
close_client(client& c)
{
    if(c.fd >= 0 && c.fd < max_tracked_fd) g_token_of[c.fd].store(0);
    c.closed               = true;
    c.n.fifo_bytes_at_exit = c.fifo.size();
    c.fifo.release();
    if(is_our_socket(c.token_fd, c.token_ino)) libc().close(c.token_fd);
    c.token_fd = -1;
}

// Keeps the per-GPU client list bounded: forgets the oldest closed client.
void
trim_clients(gpu_state& gpu)
{
    if(gpu.clients.size() < max_clients_kept) return;
    auto it = std::find_if(gpu.clients.begin(), gpu.clients.end(),
                           [](const client* c) { return c->closed; });
    if(it == gpu.clients.end()) return;
    delete *it;
    gpu.clients.erase(it);
    ++gpu.clients_omitted;
}

// ---------------------------------------------------------------------------------------
// The producer: streams the log again and delivers each event like the kernel would.

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

// Where the emulator's own long-lived fds go: a high number (token_fd_floor), or 3/4 of a
// small RLIMIT_NOFILE, so that they do not take the low numbers a program reuses.
int
high_fd_floor()
{
    rlimit limit{};
    int    floor = token_fd_floor;
    if(getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur <= static_cast<rlim_t>(floor))
        floor = static_cast<int>(limit.rlim_cur) * 3 / 4;
    return floor;
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
    line_reader        reader(fd, read_our_log);
    route_state        route;
    rewrite_rule       rule{cfg.has_self, cfg.self_pid, static_cast<uint32_t>(s.pid), s.ns_offset};
    std::string        line;
    std::string        msg;  // the message of the current line (its storage reused)
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
        if(!reader.next(line, too_long)) break;
        ++number;
        if(!lock.owns_lock()) lock.lock();
        if(s.stop) break;
        apply_vanish_faults(cfg, s, number);
        classified_line c = classify_line(line, too_long, cfg, route);
        if(c.wait.active) wait = c.wait;
        if(c.kind != line_kind::event) continue;
        uint32_t text_pid = 0;
        rewrite_line_into(msg, line, c.event, rule, text_pid);
        uint32_t   pid = delivery_pid(c.event, text_pid);
        gpu_state& gpu = s.gpus[static_cast<size_t>(c.gpu)];

        if(cfg.pace == pace_kind::realtime || cfg.pace == pace_kind::rate)
        {
            previous = schedule_of(cfg, c.event, produced, start, previous);
            if(previous > steady::now())
                wait_in_batch([&] { wait_for_schedule(emu, s, lock, previous); });
        }
        // The mask wait is checked under the lock that delivers: the event sees the masks
        // the wait saw (a mask write wakes the cv; the batch so far is visible meanwhile).
        while(!s.stop && (!mask_wait_done(s, wait) ||
                          (cfg.pace == pace_kind::lossless && !gpu.vanished &&
                           must_wait_for_space(cfg, gpu, c.event.id, pid, msg.size()))))
            wait_in_batch([&] { emu.cv->wait_for(lock, std::chrono::milliseconds(100)); });
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
    return nullptr;
}

// Starts the producer once every reachable GPU has a client with a non-zero mask.
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

// ---------------------------------------------------------------------------------------
// Exit: wait until the log is delivered and read, then write the statistics.

bool
all_drained(const session& s)
{
    for(const auto& gpu : s.gpus)
        for(const client* c : gpu.clients)
            if(is_live(*c) && !c->fifo.empty()) return false;
    return true;
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
        emu.cv->wait_for(lock, std::chrono::milliseconds(20));
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

stats_input
collect_stats(const emulator& emu, const session& s, const char* exit_wait)
{
    stats_input in;
    in.cfg               = &emu.cfg;
    in.pid               = s.pid;
    in.ns_offset         = s.ns_offset;
    in.producer_started  = s.producer_started;
    in.producer_finished = s.producer_finished;
    in.exit_wait         = exit_wait;
    in.producer_error    = s.producer_error;
    for(size_t i = 0; i < s.gpus.size(); ++i)
    {
        gpu_report gpu;
        gpu.n               = s.gpus[i].n;
        gpu.vanished        = s.gpus[i].vanished;
        gpu.vanished_line   = s.gpus[i].vanished_line;
        gpu.clients_omitted = s.gpus[i].clients_omitted;
        for(const client* c : s.gpus[i].clients)
        {
            client_report r;
            r.fd       = c->fd;
            r.pid      = c->pid;
            r.mask     = c->mask;
            r.closed   = c->closed;
            r.vanished = c->vanished;
            r.n        = c->n;
            if(!c->closed) r.n.fifo_bytes_at_exit = c->fifo.size();
            gpu.clients.push_back(r);
        }
        in.gpus.push_back(gpu);
    }
    return in;
}

void
write_stats_file(const std::string& path, const std::string& text)
{
    std::string tmp;
    int         fd = create_unique_file(path, tmp); // O_EXCL|O_NOFOLLOW, random name
    bool        ok = fd >= 0 && write_all(fd, text.data(), text.size());
    if(fd >= 0) ok = (libc().close(fd) == 0) && ok;
    if(ok && std::rename(tmp.c_str(), path.c_str()) == 0) return;
    report("cannot write the statistics to " + path + ": " + std::strerror(errno));
    if(fd >= 0) unlink(tmp.c_str());
}

// The pid written in a statistics file ("pid":N), 0 when there is none.
pid_t
pid_in_stats_file(const std::string& path)
{
    int fd = libc().open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if(fd < 0) return 0;
    struct stat st
    {
    };
    char    buf[8192];
    ssize_t n =
        fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? libc().read(fd, buf, sizeof(buf) - 1) : -1;
    libc().close(fd);
    if(n <= 0) return 0;
    buf[n]             = '\0';
    const char* at     = std::strstr(buf, ",\"pid\":"); // a '"' inside a string value is escaped
    uint64_t    pid    = 0;
    size_t      digits = 0;
    return at && parse_number_prefix(at + 7, INT32_MAX, pid, digits) ? static_cast<pid_t>(pid) : 0;
}

// Where this process writes its statistics (empty: nowhere). A forked child writes
// <path>.<pid>; so does any other process (an exec'd program, say) while the process whose
// pid is in <path> still runs. The first one claims <path> at once with its pid.
std::string
claim_stats_path()
{
    std::string path = g_stats_path;
    if(path.empty()) return path;
    pid_t       me  = getpid();
    std::string own = path + "." + std::to_string(me);
    if(me != g_image_pid) return own;
    pid_t other = pid_in_stats_file(path);
    if(other > 0 && other != me && (kill(other, 0) == 0 || errno == EPERM)) return own;
    write_stats_file(path, "{\"schema\":\"kfd-emulator-stats/1\",\"pid\":" + std::to_string(me) +
                               ",\"state\":\"running\"}\n");
    return path;
}

// Without a usable log the emulator is a machine without /dev/kfd; the statistics say why.
void
write_error_stats(emulator& emu)
{
    static std::atomic<pid_t> written{0};
    if(written.exchange(getpid()) == getpid()) return;
    std::string path = claim_stats_path();
    if(path.empty()) return;
    stats_input in;
    in.cfg       = &emu.cfg;
    in.pid       = getpid();
    in.exit_wait = "not-started";
    write_stats_file(path, stats_to_json(in));
}

void
at_process_exit()
{
    emulator* emu = g_emu;
    if(emu == nullptr || !emu->ready || !adopt_if_forked()) return;
    std::string text;
    std::string path;
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
        emu->cv->notify_all();
        if(emu->stats_target_pid != getpid() || emu->stats_target.empty()) return;
        path = emu->stats_target;
        text = stats_to_json(collect_stats(*emu, *s, waited));
    }
    catch(...)
    {
        return;
    }
    write_stats_file(path, text);
}

__attribute__((destructor)) void
remove_topology_at_unload()
{
    // Only the process that created the folder removes it (not a forked child).
    if(g_emu != nullptr && g_emu->ready && g_emu->topology_owner == getpid())
        remove_topology(g_emu->topology);
}

// ---------------------------------------------------------------------------------------
// Fds.

uint8_t
mark_of(int fd)
{
    if(fd < 0 || fd >= max_tracked_fd) return mark_none;
    return g_fd_marks[fd].load(std::memory_order_acquire);
}

// The mark of fd after a forked child adopted its state (mark_none: not ours).
// In a vfork() or clone() child (shared is set) an fd of ours is treated like one inherited
// by a fork child, and nothing shared with the parent is changed.
uint8_t
checked_mark(int fd, bool& shared)
{
    shared       = false;
    uint8_t mark = mark_of(fd);
    if(mark == mark_none || g_emu == nullptr) return mark_none;
    if(!adopt_if_forked())
    {
        shared = true;
        return mark == mark_device || mark == mark_inherited_device ? mark_inherited_device
                                                                    : mark_inherited_smi;
    }
    return mark_of(fd);
}

void
forget_fd(emulator& emu, int fd)
{
    emu.fds->erase(fd);
    g_token_of[fd].store(0);
    g_fd_marks[fd].store(mark_none, std::memory_order_release);
}

// The entry for fd, or null when fd is not (or no longer) one we handed out: an fd number
// reused behind our back (dup2 onto it, close_range) no longer has the same inode.
fd_entry*
lookup(emulator& emu, int fd)
{
    auto it = emu.fds->find(fd);
    if(it == emu.fds->end())
    {
        g_fd_marks[fd].store(mark_none, std::memory_order_release);
        return nullptr;
    }
    struct stat st
    {
    };
    if(fstat(fd, &st) == 0 && st.st_dev == it->second.dev && st.st_ino == it->second.ino)
        return &it->second;
    if(it->second.kind == fd_kind::smi) close_client(*it->second.smi);
    forget_fd(emu, fd);
    return nullptr;
}

bool
remember_fd(emulator& emu, int fd, fd_entry entry)
{
    struct stat st
    {
    };
    if(fd >= max_tracked_fd || fstat(fd, &st) != 0)
    {
        errno = EMFILE;
        return false;
    }
    entry.dev      = st.st_dev;
    entry.ino      = st.st_ino;
    (*emu.fds)[fd] = entry;
    if(entry.kind == fd_kind::smi)
    {
        entry.smi->fd_ino = st.st_ino;
        g_token_ino[fd].store(entry.smi->token_ino);
        g_token_of[fd].store(entry.smi->token_fd + 1);
    }
    g_fd_marks[fd].store(entry.kind == fd_kind::smi ? mark_smi : mark_device,
                         std::memory_order_release);
    return true;
}

session&
current_session(emulator& emu)
{
    if(emu.current == nullptr || emu.current->pid != getpid())
    {
        emu.current      = new session;
        emu.current->pid = getpid();
        emu.current->gpus.resize(emu.cfg.gpus.size());
    }
    return *emu.current;
}

int
fail(int error)
{
    errno = error;
    return -1;
}

int
smi_open(emulator& emu, session& s, abi::smi_events_args* args)
{
    long gpu = emu.cfg.gpu_index(args->gpuid);
    if(gpu < 0 || s.gpus[static_cast<size_t>(gpu)].vanished) return fail(EINVAL);
    if(int error = emu.cfg.smi_error(args->gpuid)) return fail(error);

    int sv[2];
    if(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -1;
    int high = fcntl(sv[1], F_DUPFD_CLOEXEC, high_fd_floor());
    if(high >= 0)
    {
        libc().close(sv[1]);
        sv[1] = high;
    }
    fcntl(sv[1], F_SETFD, FD_CLOEXEC);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    struct stat token_stat
    {
    };
    fstat(sv[1], &token_stat);
    fd_entry entry;
    entry.kind   = fd_kind::smi;
    entry.owner  = &s;
    auto* c      = new client(static_cast<size_t>(gpu), emu.cfg.fifo_bytes);
    c->fd        = sv[0];
    c->token_fd  = sv[1];
    c->token_ino = token_stat.st_ino;
    c->pid       = getpid();
    entry.smi    = c;
    if(!remember_fd(emu, sv[0], entry))
    {
        int error = errno;
        delete c;
        libc().close(sv[0]);
        libc().close(sv[1]);
        return fail(error);
    }
    gpu_state& state = s.gpus[static_cast<size_t>(gpu)];
    trim_clients(state);
    state.clients.push_back(c);
    args->anon_fd = static_cast<uint32_t>(sv[0]);
    return 0;
}

ssize_t
smi_read(emulator& emu, session& s, client& c, void* buf, size_t count)
{
    const read_fault& rule = emu.cfg.read_fault_rule;
    if(c.fifo.empty()) return fail(c.vanished ? ENODEV : EAGAIN);
    if(count == 0) return fail(EAGAIN); // the kernel's kfifo_out of 0 bytes
    if(emu.cfg.reads_wait_for_replay && !s.producer_finished) return fail(EAGAIN);
    if(rule.error != 0)
    {
        ++c.data_reads;
        bool fire = rule.once ? c.data_reads == 1 : c.data_reads % rule.every == 0;
        if(fire)
        {
            ++c.n.injected_read_errors;
            if(rule.error == EFAULT)
            {
                // The kernel has already taken the bytes out of the FIFO when copy_to_user
                // fails: they are lost.
                size_t lost = std::min(count, c.fifo.size());
                c.n.lines_lost_efault += c.fifo.count_newlines(lost);
                c.n.bytes_lost_efault += c.fifo.pop(nullptr, lost);
                if(c.fifo.empty()) drop_token(c);
                ++s.progress;
                emu.cv->notify_all();
            }
            return fail(rule.error);
        }
    }
    size_t taken = c.fifo.pop(static_cast<char*>(buf), count);
    c.n.bytes_read += taken;
    if(c.fifo.empty()) drop_token(c);
    ++s.progress;
    emu.cv->notify_all();
    return static_cast<ssize_t>(taken);
}
} // namespace

// -------------------------------------------------------------------------------------------
// Entry points.

bool
enabled()
{
    static std::atomic<int> state{-1};
    int                     value = state.load(std::memory_order_relaxed);
    if(value < 0)
    {
        const char* log = std::getenv("KFD_EMULATOR_LOG");
        value           = (log != nullptr && *log != '\0') ? 1 : 0;
        state.store(value, std::memory_order_relaxed);
    }
    return value == 1;
}

bool
open_device(const char* path, int flags, int& result)
{
    if(!enabled() || path == nullptr || std::strcmp(path, abi::device_path) != 0) return false;
    if(!own_process())
    {
        // A vfork() or clone() child: no device of its own, and the parent's state stays as is.
        result = fail(ENOENT);
        return true;
    }
    emulator* emu = ensure_initialized();
    if(emu != nullptr && !emu->ready)
    {
        int saved = errno;
        write_error_stats(*emu);
        errno = saved;
    }
    if(emu == nullptr || !emu->ready)
    {
        result = fail(ENOENT);
        return true;
    }
    if(emu->cfg.open_error != 0)
    {
        result = fail(emu->cfg.open_error);
        return true;
    }
    if(!adopt_if_forked())
    {
        result = fail(ENOENT);
        return true;
    }
    std::lock_guard<std::mutex> lock(*emu->mu);
    int                         saved = errno; // a successful open leaves errno alone
    try
    {
        session& s = current_session(*emu);
        if(emu->stats_target_pid != getpid())
        {
            emu->stats_target     = claim_stats_path();
            emu->stats_target_pid = getpid();
        }
        int fd = memfd_create("kfd-emulator-device", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
        if(fd < 0)
        {
            result = -1;
            return true;
        }
        if(flags & O_NONBLOCK) fcntl(fd, F_SETFL, O_NONBLOCK);
        fd_entry entry;
        entry.kind  = fd_kind::device;
        entry.owner = &s;
        if(!remember_fd(*emu, fd, entry))
        {
            libc().close(fd);
            result = fail(EMFILE);
            return true;
        }
        // Registered now, so it runs before the atexit handlers the SDK registered earlier.
        if(!emu->atexit_registered) emu->atexit_registered = std::atexit(at_process_exit) == 0;
        result = fd;
        errno  = saved;
    }
    catch(...)
    {
        result = fail(ENOMEM);
    }
    return true;
}

bool
topology_redirect(const char* path, std::string& redirected)
{
    if(!enabled() || path == nullptr) return false;
    // Cheap test first: most paths are not under /sys.
    if(std::strncmp(path, "/sys/", 5) != 0) return false;
    std::string unused;
    if(!redirect_topology_path(path, "/", unused)) return false;
    // A vfork() or clone() child may use a topology that exists but must not create one.
    emulator* emu = own_process() ? ensure_initialized() : g_emu;
    if(emu == nullptr || !emu->ready) return false;
    return redirect_topology_path(path, emu->topology.root, redirected);
}

bool
device_read(int fd, void* buf, size_t count, ssize_t& result)
{
    bool    shared = false;
    uint8_t mark   = checked_mark(fd, shared);
    if(mark == mark_none) return false;
    if(mark == mark_inherited_device || mark == mark_inherited_smi)
    {
        // /dev/kfd has no read(); the parent's client keeps its events for the parent.
        result = fail(mark == mark_inherited_device ? EINVAL : EAGAIN);
        return true;
    }
    emulator&                   emu = *g_emu;
    std::lock_guard<std::mutex> lock(*emu.mu);
    fd_entry*                   e = lookup(emu, fd);
    if(e == nullptr) return false;
    if(e->kind == fd_kind::device)
        result = fail(EINVAL);
    else
        result = smi_read(emu, *e->owner, *e->smi, buf, count);
    return true;
}

bool
device_write(int fd, const void* buf, size_t count, ssize_t& result)
{
    bool     shared = false;
    uint8_t  mark   = checked_mark(fd, shared);
    uint64_t mask   = 0;
    bool     full   = buf != nullptr && count >= sizeof(mask); // the kernel wants all 8 bytes
    if(mark == mark_none) return false;
    if(mark == mark_inherited_device || mark == mark_inherited_smi)
    {
        // A parent's client takes a mask without effect in the child.
        result = mark == mark_inherited_device ? fail(EINVAL) : full ? 8 : fail(EFAULT);
        return true;
    }
    emulator&                   emu = *g_emu;
    std::lock_guard<std::mutex> lock(*emu.mu);
    fd_entry*                   e = lookup(emu, fd);
    if(e == nullptr) return false;
    if(e->kind == fd_kind::device)
        result = fail(EINVAL); // /dev/kfd has no write()
    else if(!full)
        result = fail(EFAULT);
    else
    {
        std::memcpy(&mask, buf, sizeof(mask));
        e->smi->mask = mask;
        maybe_start_producer(emu, *e->owner);
        emu.cv->notify_all();
        result = sizeof(mask);
    }
    return true;
}

bool
device_ioctl(int fd, unsigned long request, void* arg, int& result)
{
    bool    shared = false;
    uint8_t mark   = checked_mark(fd, shared);
    if(mark == mark_none) return false;
    if(mark == mark_inherited_device || mark == mark_inherited_smi)
    {
        // amdkfd refuses a /dev/kfd fd used by a child process; SMI fds have no ioctl.
        result = fail(mark == mark_inherited_device ? EBADF : ENOTTY);
        return true;
    }
    emulator&                   emu = *g_emu;
    std::lock_guard<std::mutex> lock(*emu.mu);
    fd_entry*                   e = lookup(emu, fd);
    if(e == nullptr) return false;
    try
    {
        if(e->kind == fd_kind::smi)
            result = fail(ENOTTY);
        else if(arg == nullptr)
            result = fail(EFAULT);
        else if(request == abi::ioc_get_version && emu.cfg.version_error != 0)
            result = fail(emu.cfg.version_error);
        else if(request == abi::ioc_get_version)
        {
            auto* args          = static_cast<abi::get_version_args*>(arg);
            args->major_version = emu.cfg.version_major;
            args->minor_version = emu.cfg.version_minor;
            result              = 0;
        }
        else if(request == abi::ioc_smi_events)
            result = smi_open(emu, *e->owner, static_cast<abi::smi_events_args*>(arg));
        else
            result = fail(EINVAL); // not emulated
    }
    catch(...)
    {
        result = fail(ENOMEM);
    }
    return true;
}

bool
device_close(int fd, int& result)
{
    bool    shared = false;
    uint8_t mark   = checked_mark(fd, shared);
    if(mark == mark_none) return false;
    if(mark == mark_inherited_device || mark == mark_inherited_smi)
    {
        // A vfork() child closes its own copy of the fd; the parent's mark stays.
        if(!shared) g_fd_marks[fd].store(mark_none, std::memory_order_release);
        result = libc().close(fd);
        return true;
    }
    emulator& emu = *g_emu;
    {
        std::lock_guard<std::mutex> lock(*emu.mu);
        fd_entry*                   e = lookup(emu, fd);
        if(e == nullptr) return false;
        if(e->kind == fd_kind::smi)
        {
            close_client(*e->smi);
            emu.cv->notify_all();
        }
        forget_fd(emu, fd);
    }
    result = libc().close(fd);
    return true;
}
} // namespace kfd_emu
