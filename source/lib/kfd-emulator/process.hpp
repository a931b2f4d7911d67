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
bool adopt_if_forked();
} // namespace kfd_emu
