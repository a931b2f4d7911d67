// MIT License - see LICENSE.
//
// Helpers of the emulator's tests: a scratch folder, running a program as a child process
// with a chosen environment (the emulator preloaded), and the probe's output decoded.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kfd_test
{
// A fresh folder under TMPDIR, removed with its files when the object goes away.
class scratch_dir
{
public:
    scratch_dir();
    ~scratch_dir();
    scratch_dir(const scratch_dir&)            = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;

    const std::string& path() const { return path_; }
    std::string        file(const std::string& name) const { return path_ + "/" + name; }
    // Writes content to a file of the folder and returns its path.
    std::string write(const std::string& name, const std::string& content) const;

private:
    std::string path_;
};

struct child_result
{
    int                      exit_code = -1; // -1: killed or did not exit normally
    std::string              out;
    std::string              err;
    std::vector<std::string> lines; // out split at '\n'
    double                   seconds = 0;
};

using env_map = std::map<std::string, std::string>;

// Runs program with args and exactly env (plus PATH and TMPDIR), killing it after timeout_s.
child_result run_child(const std::string& program, const std::vector<std::string>& args,
                       const env_map& env, int timeout_s = 60);

// Runs the probe with the emulator preloaded and KFD_EMULATOR_LOG=log (when not empty).
child_result run_probe(const std::string& log, const std::vector<std::string>& commands,
                       env_map extra = {}, bool preload = true, int timeout_s = 60);

// Lines of a probe run starting with prefix ("drain 0 "), with the prefix removed.
std::vector<std::string> lines_with(const child_result& result, const std::string& prefix);
// The one line starting with prefix (empty if none).
std::string line_with(const child_result& result, const std::string& prefix);
// The bytes of "drain <k> <size> <escaped>" for client k, unescaped.
std::string drained(const child_result& result, size_t client);
std::string unescape(const std::string& text);
// Splits text into lines at '\n' (each without it).
std::vector<std::string> split_lines(const std::string& text);

std::string read_file(const std::string& path);
bool        file_exists(const std::string& path);

// Paths of the built programs (set by CMake).
const char* emulator_library();
const char* probe_program();
} // namespace kfd_test
