// MIT License - see LICENSE.
//
// Benchmark inputs: KFD SMI logs written by rocprof-kfd-gen at benchmark start (nothing large
// is committed), cut into the reads a kernel would return: whole messages, at most 8 KiB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bench_workloads
{
struct workload
{
    std::string                   name;   // scenario name, or "mix"
    std::string                   text;   // the kernel's text, '\n'-terminated lines
    std::vector<std::string_view> chunks; // views into text, each <= chunk_bytes, whole lines
    uint64_t                      lines = 0;
};

inline constexpr size_t chunk_bytes = 8192; // one full kernel FIFO (Linux 6.13+)

// The traced process of every log (`--pid`; 5 digits, as the generator's own choice). Each
// log also has one other process's events (a fifth of them), as a privileged reader sees.
inline constexpr uint32_t traced_pid = 54321;

// The generator's scenarios, then "mix": a random-order interleaving of all of them (each in
// another kernel-format era), so that no stage can learn the order of event kinds.
const std::vector<std::string>& names();

// The workload of that name with `events` lines (generated once, then cached).
const workload& get(const std::string& name, uint64_t events);

// Cuts text into whole-line chunks of at most `limit` bytes.
std::vector<std::string_view> cut_into_reads(std::string_view text, size_t limit);
} // namespace bench_workloads
