// MIT License - see LICENSE.
//
// The kernel's message text for each event id, in each format era.
#pragma once

#include "workload.hpp"

#include <string>

namespace kfd_gen
{
// One message, ending in '\n' (and, for a 6.12/6.13 normal restore, containing a NUL byte).
std::string kernel_text(const event& ev, enum era e);

// The per-client FIFO size of the era's kernels.
unsigned fifo_bytes(enum era e);
} // namespace kfd_gen
