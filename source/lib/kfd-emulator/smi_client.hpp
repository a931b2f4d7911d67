// MIT License - see LICENSE.
//
// A process's session (what it sees of the driver) and its SMI clients: the SMI ioctl that
// makes one (a socketpair whose handed-out end is the fd) and its read(), with the kernel's
// kfifo_out semantics and the read fault injection.
#pragma once

#include "state.hpp"

namespace kfd_emu
{
// The calling process's session, made at its first /dev/kfd open.
session& current_session(emulator& emu);
int      smi_open(emulator& emu, session& s, abi::smi_events_args* args);
// Whom a read must wake, woken by the caller once it has released the lock: a producer woken
// while the reader still holds it would only block again, on the lock.
struct read_wakeups
{
    bool producer  = false; // it waits for room in a FIFO
    bool exit_wait = false; // the replay may be complete
};
ssize_t smi_read(emulator& emu, session& s, client& c, void* buf, size_t count, read_wakeups& wake);
} // namespace kfd_emu
