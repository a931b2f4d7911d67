// MIT License - see LICENSE.
//
// Runs a program in a child process with extra environment variables and returns its exit
// status and everything it wrote to stdout (stderr is passed through for diagnosis).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace test_support
{
struct process_result
{
    int         exit_code = -1; // -1: did not exit normally (signal)
    int         signal    = 0;
    std::string output;
};

process_result run_process(const std::vector<std::string>&                         argv,
                           const std::vector<std::pair<std::string, std::string>>& env,
                           int timeout_seconds = 60, bool merge_stderr = false);

// Lines of `text`, without the '\n'.
std::vector<std::string> lines_of(const std::string& text);

// Whole file as bytes ("" when it cannot be read); write `text` to a file.
std::string read_file(const std::string& path);
void        write_file(const std::string& path, const std::string& text);

// A temporary folder, removed with everything in it when the object goes away.
struct scratch_dir
{
    scratch_dir();
    ~scratch_dir();
    scratch_dir(const scratch_dir&)            = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    std::string  file(const std::string& name) const { return path + "/" + name; }
    std::string  path;
};

// Lines that start with `prefix`.
std::vector<std::string> lines_starting_with(const std::string& text, const std::string& prefix);
} // namespace test_support
