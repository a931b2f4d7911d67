// MIT License - see LICENSE.
//
// The tool's configuration from the environment the rocprof-kfd command sets
// (docs/rocprof-kfd-design.md), and the placeholder expansion of paths. Pure functions of
// their inputs, so the tests drive them directly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rocprof_kfd
{
struct tool_config
{
    std::string              directory = "rocprof-kfd/%hostname%/%pid%"; // template
    std::string              stem;                                       // template
    std::vector<std::string> formats = {"summary", "csv", "perfetto"};
    std::vector<int>         operations; // page-migration operations to trace (1..4)
    std::string              raw_file;   // template; empty: none
    uint64_t                 thrashing_threshold = 4;
    bool                     summary_stderr      = true;
    std::string              command_line;
    std::vector<std::string> warnings; // one line each: values that were ignored
};

using env_lookup = std::function<const char*(const char*)>;

// Reads the ROCPROF_KFD_* variables through lookup (secure_getenv in the tool).
tool_config read_config(const env_lookup& lookup);

struct placeholder_values
{
    uint32_t    pid  = 0;
    uint32_t    ppid = 0;
    std::string hostname;
    std::string rank; // empty when none
};

// The rank of an MPI/Slurm process: first set of OMPI_COMM_WORLD_RANK, PMI_RANK,
// SLURM_PROCID, PMIX_RANK ("" when none).
std::string rank_from(const env_lookup& lookup);

// Expands %pid% %ppid% %hostname% %rank% %env{NAME}% in a path template. A value's '/'
// becomes '_'; a path component that the expansion made empty, "." or ".." becomes "_".
// Unknown %...% sequences stay as written.
std::string expand_placeholders(const std::string& text, const placeholder_values& values,
                                const env_lookup& lookup);
} // namespace rocprof_kfd
