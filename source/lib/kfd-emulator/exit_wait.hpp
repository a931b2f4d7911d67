// MIT License - see LICENSE.
//
// Exit: the atexit handler waits (bounded) until the log is delivered and read, so that a
// short program still sees its whole replay, then writes the statistics; the library
// destructor removes the emulated topology.
#pragma once

#include "state.hpp"

namespace kfd_emu
{
// The atexit handler (registered at the first /dev/kfd open, so that it runs before the
// SDK's own atexit handlers).
void at_process_exit();
} // namespace kfd_emu
