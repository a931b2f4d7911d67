// MIT License - see LICENSE.
//
// The imperative shell: runs a program as a child with an environment, forwards signals to
// it, waits for it. Nothing else.
#pragma once

#include "environment.hpp"

#include <string>
#include <vector>

namespace rocprof_kfd
{
struct launch_result
{
    bool        started     = false; // exec succeeded
    int         wait_status = 0;     // waitpid() status, when started
    int         pid         = 0;     // the program's process id, when started
    int         exec_errno  = 0;     // why exec failed, when not started
    std::string message;             // one line, when not started
};

// Runs argv[0] (searched in the PATH of env) with env. While it runs, SIGHUP SIGINT SIGQUIT
// SIGTERM SIGUSR1 SIGUSR2 SIGALRM SIGWINCH sent to this process are forwarded to it, except
// those the terminal sent to the whole foreground process group (the child got them too).
launch_result run_program(const std::vector<std::string>& argv, const env_list& env);

// Runs a helper program to its end (no forwarding); returns its shell status, or -1 if it
// could not be started.
int run_helper(const std::vector<std::string>& argv);

// The signals run_program forwards.
const std::vector<int>& forwarded_signals();
} // namespace rocprof_kfd
