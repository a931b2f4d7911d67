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
ssize_t  smi_read(emulator& emu, session& s, client& c, void* buf, size_t count);
} // namespace kfd_emu
