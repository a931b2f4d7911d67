// MIT License - see LICENSE.
#pragma once

#include <chrono>

namespace kfd_emu
{
// How long a `rate` or `realtime` producer may fall behind its schedule before the schedule
// moves instead: a producer that woke up late (timer slack, a busy CPU) would otherwise emit
// its backlog back to back, under one hold of the lock, at the speed of `max` (millions of
// events per second for a moment), which no kernel producing at the logged pace or at the
// rate asked for does: readers would be measured against bursts the pace does not offer.
// 100 us is 20 events at 200k events/s, 100 at 1M/s.
inline constexpr std::chrono::nanoseconds max_schedule_lag{100'000};

// How far to move a schedule whose next event was due at `due`, at `now`: the part of the
// lag past `max_lag`, or zero.
inline std::chrono::nanoseconds
schedule_slip(std::chrono::steady_clock::time_point due, std::chrono::steady_clock::time_point now,
              std::chrono::nanoseconds max_lag = max_schedule_lag)
{
    auto lag = std::chrono::duration_cast<std::chrono::nanoseconds>(now - due);
    return lag > max_lag ? lag - max_lag : std::chrono::nanoseconds{0};
}
} // namespace kfd_emu
