// MIT License - see LICENSE.
#include "process.hpp"

#include "client_calls.hpp"
#include "fd_table.hpp"
#include "numbers.hpp"
#include "real_libc.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace kfd_emu
{
namespace
{
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
} // namespace

emulator* g_emu       = nullptr;
pid_t     g_image_pid = 0;
char      g_stats_path[4096];

namespace
{
pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
// KFD_EMULATOR_LOG made absolute at load time, so that a later chdir() does not change it.
char g_log_path[4096];

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

long
env_long(const char* name, long fallback, const char* unit = "ms")
{
    const char* text = std::getenv(name);
    if(text == nullptr || *text == '\0') return fallback;
    uint64_t value = 0;
    if(parse_number(text, 10, max_env_ms, value)) return static_cast<long>(value);
    report(std::string("ignoring ") + name + "=" + text + ": not a number of " + unit + " up to " +
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

} // namespace

void
report(const std::string& message)
{
    std::string line = "kfd-emulator: " + message + "\n";
    write_all(STDERR_FILENO, line.data(), line.size());
}

namespace
{
// own_process() for a caller that also needs the pid (one getpid() per intercepted call).
bool
own_process_as(pid_t me)
{
    pid_t owner = g_process_pid.load(std::memory_order_acquire);
    if(owner == me) return true;
    if(owner != 0 && !t_forking) return false;
    t_forking = false;
    g_process_pid.store(me, std::memory_order_release);
    return true;
}
} // namespace

bool
own_process()
{
    count_client_syscall(sc_getpid);
    return own_process_as(getpid());
}

bool
state_is_ours_cached()
{
    pid_t state = g_state_pid.load(std::memory_order_acquire);
    return state != 0 && state == g_process_pid.load(std::memory_order_acquire);
}

namespace
{
// The parent's lock, fd table and session, left as they were at fork() (another thread may
// have been inside them): never touched again, never freed, but kept reachable so that a leak
// checker (LSan at a child's exit) sees state that is kept on purpose, not lost memory.
struct retired_state
{
    std::mutex*                        mu;
    std::condition_variable*           cv;
    std::condition_variable*           exit_cv;
    std::unordered_map<int, fd_entry>* fds;
    session*                           current;
    retired_state*                     older;
};
retired_state* g_retired = nullptr;

void
adopt_after_fork()
{
    g_retired      = new retired_state{g_emu->mu,  g_emu->cv,      g_emu->exit_cv,
                                  g_emu->fds, g_emu->current, g_retired};
    g_emu->mu      = new std::mutex;
    g_emu->cv      = new std::condition_variable;
    g_emu->exit_cv = new std::condition_variable;
    g_emu->fds     = new std::unordered_map<int, fd_entry>;
    g_emu->current = nullptr; // the parent's session stays in g_retired, never touched
    for(int fd = 0; fd < max_tracked_fd; ++fd)
    {
        uint8_t mark = g_fd_marks[fd].load(std::memory_order_acquire);
        if(mark == mark_device) g_fd_marks[fd].store(mark_inherited_device);
        if(mark == mark_smi) g_fd_marks[fd].store(mark_inherited_smi);
        int feed = g_feed_of[fd].exchange(0);
        if(feed > 0 && is_our_socket(feed - 1, g_feed_ino[fd].load())) libc().close(feed - 1);
    }
    reset_client_calls(); // the child's statistics count the child's calls
}

} // namespace

bool
adopt_if_forked(bool counted)
{
    if(counted) count_client_syscall(sc_getpid);
    pid_t me = getpid();
    if(!own_process_as(me)) return false;
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

namespace
{
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
    adopt_if_forked(false);
    errno = saved;
}

void
initialize()
{
    try
    {
        auto* emu    = new emulator;
        emu->mu      = new std::mutex;
        emu->cv      = new std::condition_variable;
        emu->exit_cv = new std::condition_variable;
        emu->fds     = new std::unordered_map<int, fd_entry>;
        remember_process_start(); // in case a constructor of another library called us first
        emu->exit_timeout_ms = env_long("KFD_EMULATOR_EXIT_TIMEOUT_MS", default_exit_timeout_ms);
        emu->exit_max_ms     = env_long("KFD_EMULATOR_EXIT_MAX_MS", default_exit_max_ms);
        emu->producer_timer_slack_ns = env_long("KFD_EMULATOR_TIMER_SLACK_NS", 0, "ns");

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

} // namespace

emulator*
ensure_initialized()
{
    // The first interposed call must not change the caller's errno.
    int saved = errno;
    pthread_once(&g_init_once, initialize);
    errno = saved;
    return g_emu;
}
} // namespace kfd_emu
