// MIT License - see LICENSE.
// The command's file-system side: finding the summary.json files named on the command line,
// reading them, and writing the report without ever following a planted symlink.
#pragma once

#include "tables.hpp"

#include <string>
#include <vector>

namespace rocprof_kfd_report
{
// Expands each argument: a directory gives every summary.json under it (recursively, in
// path order), a file gives itself. On failure returns false and sets `error` to one line
// naming the path.
bool find_summaries(const std::vector<std::string>& args, std::vector<std::string>& paths,
                    std::string& error);

// Drops the inputs that an earlier run left in a folder a later run wrote into (the rule of
// rocprof-kfd-output/earlier_run.hpp, as rocprof-kfd-merge applies it), with a line each in
// `notes`, which also names the inputs kept that may be such leftovers (their run did not
// finish).
void skip_earlier_runs(std::vector<Input>& inputs, std::vector<std::string>& notes);

// Reads a whole file (at most 256 MiB). On failure returns false and sets `error`.
bool read_file(const std::string& path, std::string& text, std::string& error);

// Writes `text` to `path` through a temporary file in the same folder, renamed into place
// (a reader never sees a partial report; a symlink at `path` is replaced, not followed).
bool write_file_atomically(const std::string& path, const std::string& text, std::string& error);
} // namespace rocprof_kfd_report
