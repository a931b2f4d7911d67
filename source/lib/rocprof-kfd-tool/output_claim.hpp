// MIT License - see LICENSE.
//
// Several processes of one run (a program's children, the commands of a script) may be given
// one output folder: a -d without %pid%. Writing the same files, they would overwrite each
// other's results, or interleave into invalid JSON. So each process claims its (folder, stem)
// with an owner file, `.STEM_rocprof-kfd-owner` ("<pid> <run id>"), created exclusively. A
// process that finds the claim held by another process of the same run (rocprof-kfd sets
// ROCPROF_KFD_RUN_ID for the whole run), or by one still alive, names its files
// `<pid>_<name>` (or `STEM_<pid>_<name>`) instead. A claim left by an earlier run whose
// process is gone is taken over: rerunning into a folder replaces its results, as before.
#pragma once

#include <cstdint>
#include <string>

namespace rocprof_kfd
{
struct output_claim
{
    std::string stem;          // the stem to write with
    uint32_t    other_pid = 0; // the process that holds the stem asked for (renamed only)
    bool        renamed   = false;
};

// How long a claimant waits for the lock of an owner file that another process is reading or
// taking over (held for microseconds). Past it, the claim is read as it is and not taken
// over: the claimant names its files with its pid.
inline constexpr uint64_t claim_lock_wait_ms = 1000;

// Claims `stem` in `directory` (which exists) for process `pid` of run `run_id` (may be
// empty: only a live owner then counts). When the claim cannot be made at all (the folder
// is read-only to it, say), the stem is kept: writing fails or succeeds as it would have.
output_claim claim_output(const std::string& directory, const std::string& stem, uint32_t pid,
                          const std::string& run_id, uint64_t lock_wait_ms = claim_lock_wait_ms);

// The same for one file (the raw-event file, `--raw FILE`): its owner file is
// `.NAME.rocprof-kfd-owner` beside it, and a process that finds it held writes
// `<pid>_NAME` in the same folder instead.
struct file_claim
{
    std::string path;          // the path to write
    uint32_t    other_pid = 0; // the process that holds the path asked for (renamed only)
    bool        renamed   = false;
};
file_claim claim_file(const std::string& path, uint32_t pid, const std::string& run_id,
                      uint64_t lock_wait_ms = claim_lock_wait_ms);
} // namespace rocprof_kfd
