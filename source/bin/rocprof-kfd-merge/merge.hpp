// MIT License - see LICENSE.
//
// The merge: every input directory's records (kfd.db, results.json or CSV) go into one
// Perfetto trace, one process group per input (named "rank R @ host: cmd (pid P)"), and
// into one summary whose metadata lists the inputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace rocprof_kfd
{
struct merge_options
{
    std::string              output;
    std::vector<std::string> inputs; // directories (searched for output directories)
    uint64_t                 thrashing_threshold = 4;
    bool                     progress            = false;
};

// Returns the exit status (0 ok, 1 an input or output failed); messages on stderr.
int merge_outputs(const merge_options& options);
} // namespace rocprof_kfd
