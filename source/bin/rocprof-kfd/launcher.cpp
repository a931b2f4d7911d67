// MIT License - see LICENSE.
#include "launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rocprof_kfd
{
namespace
{
// Job-control stops (SIGTSTP...) are not here: the command stops with its program, as the
// terminal sends them to both.
const std::vector<int> forwarded = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,
                                    SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH};

std::vector<char*>
c_strings(const std::vector<std::string>& words)
{
    std::vector<char*> out;
    for(const auto& w : words)
        out.push_back(const_cast<char*>(w.c_str()));
    out.push_back(nullptr);
    return out;
}

// In the child: the caller's signal mask back, then exec; on failure the errno goes to the
// parent through the close-on-exec pipe.
[[noreturn]] void
exec_child(const std::vector<std::string>& argv, const env_list& env, const sigset_t& old_mask,
           int error_fd)
{
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    auto args = c_strings(argv);
    auto envp = c_strings(env);
    execvpe(args[0], args.data(), envp.data());
    int     error   = errno;
    ssize_t ignored = write(error_fd, &error, sizeof(error));
    (void)ignored;
    _exit(127);
}

// Waits for the exec to succeed (the pipe closes) or fail (an errno arrives).
int
exec_error_of(int read_fd)
{
    int     error = 0;
    ssize_t n;
    do
        n = read(read_fd, &error, sizeof(error));
    while(n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(sizeof(error)) ? error : 0;
}

int
wait_for(pid_t child)
{
    int status = 0;
    while(waitpid(child, &status, 0) < 0 && errno == EINTR)
    {
    }
    return status;
}

// Forwards signals until the child ends; returns its wait status.
int
forward_until_exit(pid_t child, const sigset_t& waited)
{
    for(;;)
    {
        siginfo_t info;
        int       sig = sigwaitinfo(&waited, &info);
        if(sig < 0) continue; // EINTR
        if(sig == SIGCHLD)
        {
            int   status = 0;
            pid_t done   = waitpid(child, &status, WNOHANG);
            if(done == child) return status;
            continue;
        }
        // The terminal signals the whole foreground group, the program included: sending
        // it again would deliver it twice.
        if(info.si_code == SI_KERNEL) continue;
        kill(child, sig);
    }
}
} // namespace

const std::vector<int>&
forwarded_signals()
{
    return forwarded;
}

launch_result
run_program(const std::vector<std::string>& argv, const env_list& env)
{
    launch_result result;
    // SIGCHLD must be delivered (a parent may have left it ignored, which reaps children
    // automatically); the forwarded signals keep their disposition (an ignored SIGHUP under
    // nohup stays ignored, and the program inherits that).
    signal(SIGCHLD, SIG_DFL);
    sigset_t waited, old_mask;
    sigemptyset(&waited);
    sigaddset(&waited, SIGCHLD);
    for(int s : forwarded)
        sigaddset(&waited, s);
    sigprocmask(SIG_BLOCK, &waited, &old_mask);

    int fds[2];
    if(pipe2(fds, O_CLOEXEC) != 0)
    {
        result.message = std::string{"cannot create a pipe: "} + strerror(errno);
        sigprocmask(SIG_SETMASK, &old_mask, nullptr);
        return result;
    }
    pid_t child = fork();
    if(child == 0) exec_child(argv, env, old_mask, fds[1]);
    close(fds[1]);
    if(child < 0)
    {
        result.message = std::string{"cannot start a process: "} + strerror(errno);
        close(fds[0]);
        sigprocmask(SIG_SETMASK, &old_mask, nullptr);
        return result;
    }
    int error = exec_error_of(fds[0]);
    close(fds[0]);
    if(error != 0)
    {
        wait_for(child);
        result.exec_errno = error;
        result.message    = "cannot run '" + argv[0] + "': " + strerror(error);
        sigprocmask(SIG_SETMASK, &old_mask, nullptr);
        return result;
    }
    result.started     = true;
    result.pid         = child;
    result.wait_status = forward_until_exit(child, waited);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return result;
}

int
run_helper(const std::vector<std::string>& argv)
{
    pid_t child = fork();
    if(child < 0) return -1;
    if(child == 0)
    {
        auto args = c_strings(argv);
        execv(args[0], args.data());
        _exit(127);
    }
    int status = wait_for(child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
} // namespace rocprof_kfd
