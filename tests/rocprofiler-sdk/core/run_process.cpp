// MIT License - see LICENSE.
#include "run_process.hpp"

#include "sanitizer.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace test_support
{
process_result
run_process(const std::vector<std::string>&                         argv,
            const std::vector<std::pair<std::string, std::string>>& env, int timeout_seconds,
            bool merge_stderr)
{
    process_result result;
    // In a sanitizer build the runtime comes first (sanitizer.hpp): computed before fork().
    std::vector<std::pair<std::string, std::string>> child_env = env;
    for(auto& [key, value] : child_env)
        if(key == "LD_PRELOAD" && !value.empty()) value = test_sanitizer::preload(value);
    int pipe_fds[2];
    if(pipe(pipe_fds) != 0) return result;
    pid_t pid = fork();
    if(pid == 0)
    {
        dup2(pipe_fds[1], 1);
        if(merge_stderr) dup2(pipe_fds[1], 2);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        for(const auto& [key, value] : child_env)
        {
            if(value.empty())
                unsetenv(key.c_str());
            else
                setenv(key.c_str(), value.c_str(), 1);
        }
        std::vector<char*> args;
        for(const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    close(pipe_fds[1]);
    // Kill the child if it runs past the timeout, so a hang fails the test instead of CI.
    bool        finished = false;
    std::thread watchdog(
        [&]
        {
            for(int i = 0;
                i < timeout_seconds * 10 && !__atomic_load_n(&finished, __ATOMIC_SEQ_CST); ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds{100});
            if(!__atomic_load_n(&finished, __ATOMIC_SEQ_CST)) kill(pid, SIGKILL);
        });
    char buf[4096];
    for(;;)
    {
        auto n = read(pipe_fds[0], buf, sizeof(buf));
        if(n > 0)
            result.output.append(buf, static_cast<size_t>(n));
        else if(n == 0 || errno != EINTR)
            break;
    }
    close(pipe_fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    __atomic_store_n(&finished, true, __ATOMIC_SEQ_CST);
    watchdog.join();
    if(WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if(WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    return result;
}

std::string
read_file(const std::string& path)
{
    std::ifstream      in{path, std::ios::binary};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void
write_file(const std::string& path, const std::string& text)
{
    std::ofstream out{path, std::ios::binary};
    out << text;
}

scratch_dir::scratch_dir()
{
    char        tmpl[] = "/tmp/rocp-test-XXXXXX";
    const char* made   = mkdtemp(tmpl);
    path               = made ? made : "/tmp";
}

scratch_dir::~scratch_dir()
{
    if(path != "/tmp") std::system(("rm -rf '" + path + "'").c_str());
}

std::vector<std::string>
lines_of(const std::string& text)
{
    std::vector<std::string> out;
    size_t                   start = 0;
    while(start < text.size())
    {
        auto end = text.find('\n', start);
        if(end == std::string::npos) end = text.size();
        out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::vector<std::string>
lines_starting_with(const std::string& text, const std::string& prefix)
{
    std::vector<std::string> out;
    for(auto& line : lines_of(text))
        if(line.rfind(prefix, 0) == 0) out.push_back(line);
    return out;
}
} // namespace test_support
