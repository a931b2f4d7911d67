// MIT License - see LICENSE.
//
// Runs rocprof-kfd (or any program) as a child with exactly the environment given, its
// stdout and stderr captured; optionally with a pipe at fd 3 for gates, so that a test can
// wait for the traced program to be ready before signalling.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cli_test
{
using env_list = std::vector<std::string>;

struct result
{
    int                      status = -1; // shell status (128+N for a signal)
    std::string              out;
    std::string              err;
    std::vector<std::string> err_lines;
};

struct running
{
    pid_t       pid     = -1;
    int         gate_fd = -1; // read end of the pipe at the child's fd 3
    std::string out_path;
    std::string err_path;
};

// A scratch folder removed with its contents.
class scratch
{
public:
    scratch();
    ~scratch();
    scratch(const scratch&)                      = delete;
    scratch&           operator=(const scratch&) = delete;
    const std::string& path() const { return path_; }
    std::string        file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

struct running_on_tty : running
{
    int terminal = -1; // master side of the child's controlling terminal
};

running start(const std::vector<std::string>& argv, const env_list& env, const scratch& dir);
// The same, as the session leader of a new pseudo-terminal (its foreground process group),
// so that writing ^C to `terminal` makes the terminal signal the whole group.
running_on_tty start_on_tty(const std::vector<std::string>& argv, const env_list& env,
                            const scratch& dir);
// Reads one line from the gate ("" at end of file).
std::string read_gate_line(const running& r);
result      finish(running& r);
result      run(const std::vector<std::string>& argv, const env_list& env);

std::vector<std::string> lines_of(const std::string& text);
std::string              read_file(const std::string& path);
void                     write_file(const std::string& path, const std::string& text);
bool                     exists(const std::string& path);
} // namespace cli_test
