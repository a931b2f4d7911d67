// MIT License - see LICENSE.
//
// The entry points behind the interposers: each one checks the fd's mark (one atomic load for
// fds that are not ours), takes the lock, and hands the call to the part that emulates it.
#include "emulator.hpp"

#include "client_calls.hpp"
#include "delivery.hpp"
#include "exit_wait.hpp"
#include "fd_table.hpp"
#include "lock_watch.hpp"
#include "process.hpp"
#include "producer.hpp"
#include "real_libc.hpp"
#include "smi_client.hpp"
#include "stats_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace kfd_emu
{
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
        count_client_syscall(sc_getpid);
        if(emu->stats_target_pid != getpid())
        {
            count_client_syscall(sc_getpid);
            emu->stats_target     = claim_stats_path();
            emu->stats_target_pid = getpid();
        }
        count_client_syscall(sc_memfd_create);
        int fd = memfd_create("kfd-emulator-device", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
        if(fd < 0)
        {
            result = -1;
            return true;
        }
        if(flags & O_NONBLOCK)
        {
            count_client_syscall(sc_fcntl);
            fcntl(fd, F_SETFL, O_NONBLOCK);
        }
        fd_entry entry;
        entry.kind  = fd_kind::device;
        entry.owner = &s;
        if(!remember_fd(*emu, fd, entry))
        {
            count_client_syscall(sc_close);
            libc().close(fd);
            result = fail(EMFILE);
            return true;
        }
        // Registered now, so it runs before the atexit handlers the SDK registered earlier.
        // (Not at_quick_exit, as the SDK's: a quick_exit() is an _exit to both.)
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
    // No getpid() here when the state is known to be this process's (state_is_ours_cached):
    // the SDK's reader calls this once per wake-up.
    bool    shared = false;
    uint8_t mark   = checked_mark_cached(fd, shared);
    if(mark == mark_none) return false;
    count_intercepted_read();
    if(mark == mark_inherited_device || mark == mark_inherited_smi)
    {
        // /dev/kfd has no read(); the parent's client keeps its events for the parent.
        result = fail(mark == mark_inherited_device ? EINVAL : EAGAIN);
        return true;
    }
    emulator&    emu = *g_emu;
    read_wakeups wake;
    {
        std::unique_lock<std::mutex> lock(*emu.mu, std::try_to_lock);
        // A watch only in lossless pace (lock_watch.hpp): in e2e.sh's paced runs, where the
        // producer is mostly asleep, it burnt the reader's CPU (the emulator's code on the SDK
        // threads: 0.39 against 0.06 s per M events at 200k/s, 8 KiB) without a gain.
        if(!lock.owns_lock() && !(emu.cfg.pace == pace_kind::lossless && lock_within_watch(lock)))
        {
            // Before blocking, the pid is checked after all: a child of a raw clone() (no fork
            // handlers) looks like this process to the cached check, and its copy of the lock
            // may be held by a thread it does not have. There the fd is inert, as in a child.
            if(!adopt_if_forked(true))
            {
                result = fail(mark == mark_device ? EINVAL : EAGAIN);
                return true;
            }
            count_client_syscall(sc_futex_lock_wait);
            lock.lock();
        }
        fd_entry* e = lookup(emu, fd);
        if(e == nullptr)
        {
            unlock_counted(lock); // its wake is the SDK's system call too
            return false;
        }
        if(e->kind == fd_kind::device)
            result = fail(EINVAL);
        else
            result = smi_read(emu, *e->owner, *e->smi, buf, count, wake);
        unlock_counted(lock); // leaves errno as the read set it
    }
    // After the lock is released (see read_wakeups); errno stays what the read set.
    const int saved = errno;
    if(wake.producer)
    {
        count_client_syscall(sc_futex_wake);
        emu.cv->notify_all();
    }
    if(wake.exit_wait) emu.exit_cv->notify_all(); // a futex call only while exit() waits
    errno = saved;
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
        bool waiting = e->owner->producer_waiting || e->owner->sleeping;
        maybe_start_producer(emu, *e->owner);
        if(waiting) count_client_syscall(sc_futex_wake);
        poke_producer(*e->owner);
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
            if(e->owner->producer_waiting || e->owner->sleeping)
                count_client_syscall(sc_futex_wake);
            poke_producer(*e->owner);
            emu.cv->notify_all();
            emu.exit_cv->notify_all(); // a closed client no longer has to be drained
        }
        forget_fd(emu, fd);
    }
    result = libc().close(fd);
    return true;
}
} // namespace kfd_emu
