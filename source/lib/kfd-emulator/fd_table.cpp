// MIT License - see LICENSE.
#include "fd_table.hpp"

#include "client_calls.hpp"
#include "delivery.hpp"
#include "process.hpp"

#include <sys/resource.h>
#include <sys/stat.h>

namespace kfd_emu
{
std::atomic<uint8_t> g_fd_marks[max_tracked_fd];
std::atomic<int>     g_feed_of[max_tracked_fd];  // our socket end of the SMI fd, plus 1
std::atomic<ino_t>   g_feed_ino[max_tracked_fd]; // its inode, checked before closing it

bool
is_our_socket(int fd, ino_t ino)
{
    struct stat st
    {
    };
    if(fd < 0 || ino == 0) return false;
    count_client_syscall(sc_fstat);
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == ino;
}

int
high_fd_floor()
{
    rlimit limit{};
    int    floor = own_fd_floor;
    count_client_syscall(sc_getrlimit);
    if(getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur <= static_cast<rlim_t>(floor))
        floor = static_cast<int>(limit.rlim_cur) * 3 / 4;
    return floor;
}

uint8_t
mark_of(int fd)
{
    if(fd < 0 || fd >= max_tracked_fd) return mark_none;
    return g_fd_marks[fd].load(std::memory_order_acquire);
}

uint8_t
checked_mark(int fd, bool& shared)
{
    shared       = false;
    uint8_t mark = mark_of(fd);
    if(mark == mark_none || g_emu == nullptr) return mark_none;
    if(!adopt_if_forked(true))
    {
        shared = true;
        return mark == mark_device || mark == mark_inherited_device ? mark_inherited_device
                                                                    : mark_inherited_smi;
    }
    return mark_of(fd);
}

uint8_t
checked_mark_cached(int fd, bool& shared)
{
    uint8_t mark = mark_of(fd);
    if(mark == mark_none || g_emu == nullptr || !state_is_ours_cached())
        return checked_mark(fd, shared);
    shared = false;
    return mark;
}

void
forget_fd(emulator& emu, int fd)
{
    emu.fds->erase(fd);
    g_feed_of[fd].store(0);
    g_fd_marks[fd].store(mark_none, std::memory_order_release);
}

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
    count_client_syscall(sc_fstat);
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
    if(fd < max_tracked_fd) count_client_syscall(sc_fstat);
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
        g_feed_ino[fd].store(entry.smi->feed_ino);
        g_feed_of[fd].store(entry.smi->feed_fd + 1);
    }
    g_fd_marks[fd].store(entry.kind == fd_kind::smi ? mark_smi : mark_device,
                         std::memory_order_release);
    return true;
}

} // namespace kfd_emu
