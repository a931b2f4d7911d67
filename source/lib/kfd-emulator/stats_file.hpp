// MIT License - see LICENSE.
//
// The statistics file (KFD_EMULATOR_STATS): which process writes where (a forked or exec'd
// process beside the first one writes <path>.<pid>), what it says, and an atomic write
// (a unique temporary file renamed into place).
#pragma once

#include "state.hpp"

namespace kfd_emu
{
stats_input collect_stats(const emulator& emu, const session& s, const char* exit_wait);
void        write_stats_file(const std::string& path, const std::string& text);
// Where this process writes its statistics (empty: nowhere).
std::string claim_stats_path();
// Without a usable log the emulator is a machine without /dev/kfd; the statistics say why.
void write_error_stats(emulator& emu);
} // namespace kfd_emu
