// MIT License - see LICENSE.
//
// The producer: a thread per session that streams the log again once every reachable GPU has
// a client with a mask, and delivers each event like the kernel would, at the log's pace.
#pragma once

#include "state.hpp"

namespace kfd_emu
{
// Starts the producer once every reachable GPU has a client with a non-zero mask.
void maybe_start_producer(emulator& emu, session& s);
} // namespace kfd_emu
