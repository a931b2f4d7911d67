// MIT License - see LICENSE.
//
// The exit has one deadline (ROCPROFILER_FINALIZE_TIMEOUT_MS); each step waits for what is
// left of it.
#pragma once

#include <chrono>

namespace rocprofiler::common
{
using deadline_t = std::chrono::steady_clock::time_point;

// Milliseconds left until `deadline`, 0 once it has passed.
inline std::chrono::milliseconds
remaining(deadline_t deadline)
{
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return left.count() > 0 ? left : std::chrono::milliseconds{0};
}
} // namespace rocprofiler::common
