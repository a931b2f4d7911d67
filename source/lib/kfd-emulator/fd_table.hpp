// MIT License - see LICENSE.
//
// The fds the emulator hands out (the device and SMI fds): lock-free marks so that every
// other fd passes through after one atomic load, and the table that checks, on each use, that
// a number still is the socket or memfd we handed out (a program may reuse the number behind
// our back: dup2 onto it, close_range).
#pragma once

#include "state.hpp"

namespace kfd_emu
{
// Our socket ends are moved to numbers at least this high, away from the low numbers a
// program reuses after closing ours behind our back (close_range).
constexpr int own_fd_floor = 900;

// True when fd is still the socket with inode ino.
bool is_our_socket(int fd, ino_t ino);

// Where the emulator's own long-lived fds go: a high number (own_fd_floor), or 3/4 of a
// small RLIMIT_NOFILE, so that they do not take the low numbers a program reuses.
int high_fd_floor();

uint8_t mark_of(int fd);
// The mark of fd after a forked child adopted its state (mark_none: not ours).
// In a vfork() or clone() child (shared is set) an fd of ours is treated like one inherited
// by a fork child, and nothing shared with the parent is changed.
uint8_t checked_mark(int fd, bool& shared);
// The same for the hot read path: no getpid() when state_is_ours_cached().
uint8_t checked_mark_cached(int fd, bool& shared);

void forget_fd(emulator& emu, int fd);
// The entry for fd, or null when fd is not (or no longer) one we handed out: an fd number
// reused behind our back (dup2 onto it, close_range) no longer has the same inode.
fd_entry* lookup(emulator& emu, int fd);
bool      remember_fd(emulator& emu, int fd, fd_entry entry);
} // namespace kfd_emu
