// MIT License - see LICENSE.
//
// The process the emulator lives in: loading, the one-time initialization (the scan of the
// log), and the ownership of the state across fork(), vfork() and clone(): a fork child takes
// a fresh state on its first call, a process sharing the memory without being one changes
// nothing.
#pragma once

#include "state.hpp"

namespace kfd_emu
{
// The state, initialized once (pthread_once); null when initialization failed.
emulator* ensure_initialized();

// True when this memory belongs to the calling process (or to a fork child that has not yet
// taken it over); false in a vfork() or clone() child that shares it with its parent.
bool own_process();

// Called first by every entry point that uses the state. Returns false in a process that
// shares this memory without being a fork child (vfork, clone): it must not use the state.
// counted: the getpid() is the program's intercepted call's (client_calls.hpp); false in the
// exit handler and the fork handler.
bool adopt_if_forked(bool counted = true);

// True when the state was adopted by the process whose memory this is, as known without a
// system call: the pids that load, initialization and the fork child handler wrote. Wrong only
// in a child that shares the memory (vfork, clone with CLONE_VM: it then acts as the parent,
// on the parent's very state and sockets, as the kernel's read of a shared file does) or in
// a child made by a raw clone() without fork handlers (see docs/kfd-emulator.md).
bool state_is_ours_cached();
} // namespace kfd_emu
