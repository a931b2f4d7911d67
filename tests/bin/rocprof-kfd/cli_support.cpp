// MIT License - see LICENSE.
#include "cli_support.hpp"
#include "sanitizer.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace cli_test
{
namespace
{
std::vector<char*>
c_strings(const std::vector<std::string>& words)
{
    std::vector<char*> out;
    for(const auto& w : words)
        out.push_back(const_cast<char*>(w.c_str()));
    out.push_back(nullptr);
    return out;
}
// The environment given, plus this process's sanitizer options (a sanitizer build's children
// report as ctest asked this test to).
env_list
with_sanitizer_options(env_list env)
{
    for(const auto& [name, value] : test_sanitizer::option_variables())
        env.push_back(name + "=" + value);
    return env;
}
} // namespace

scratch::scratch()
{
    const char* tmp  = getenv("TMPDIR");
    std::string base = std::string{tmp && *tmp ? tmp : "/tmp"} + "/rocprof-kfd-cli.XXXXXX";
    if(mkdtemp(base.data()) != nullptr) path_ = base;
}

scratch::~scratch()
{
    if(path_.empty()) return;
    std::string command = "rm -rf '" + path_ + "'";
    int         ignored = system(command.c_str());
    (void)ignored;
}

namespace
{
running
start_with(const std::vector<std::string>& argv, const env_list& env, const scratch& dir,
           const char* tty)
{
    static int serial = 0;
    running    r;
    r.out_path               = dir.file("run" + std::to_string(++serial) + ".out");
    r.err_path               = dir.file("run" + std::to_string(serial) + ".err");
    const env_list child_env = with_sanitizer_options(env);
    int            gate[2];
    if(pipe(gate) != 0) return r;
    r.pid = fork();
    if(r.pid == 0)
    {
        if(tty != nullptr)
        {
            setsid();
            int slave = open(tty, O_RDWR); // the first terminal a session leader opens
            ioctl(slave, TIOCSCTTY, 0);    // becomes its controlling terminal
            dup2(slave, 0);
        }
        int out = open(r.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(r.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(out, 1);
        dup2(err, 2);
        dup2(gate[1], 3);
        for(int fd : {out, err, gate[0], gate[1]})
            if(fd > 3) close(fd);
        auto args = c_strings(argv);
        auto envp = c_strings(child_env);
        execve(args[0], args.data(), envp.data());
        _exit(126);
    }
    close(gate[1]);
    r.gate_fd = gate[0];
    return r;
}
} // namespace

running
start(const std::vector<std::string>& argv, const env_list& env, const scratch& dir)
{
    return start_with(argv, env, dir, nullptr);
}

running_on_tty
start_on_tty(const std::vector<std::string>& argv, const env_list& env, const scratch& dir)
{
    running_on_tty r;
    int            master = posix_openpt(O_RDWR | O_NOCTTY);
    if(master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return r;
    const char* name = ptsname(master);
    if(name == nullptr) return r;
    static_cast<running&>(r) = start_with(argv, env, dir, name);
    r.terminal               = master;
    return r;
}

std::string
read_gate_line(const running& r)
{
    std::string line;
    char        c;
    for(;;)
    {
        ssize_t n = read(r.gate_fd, &c, 1);
        if(n < 0 && errno == EINTR) continue;
        if(n <= 0 || c == '\n') return line;
        line.push_back(c);
    }
}

result
finish(running& r)
{
    result out;
    int    status = 0;
    while(waitpid(r.pid, &status, 0) < 0 && errno == EINTR)
    {
    }
    if(r.gate_fd >= 0) close(r.gate_fd);
    r.gate_fd     = -1;
    out.status    = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    out.out       = read_file(r.out_path);
    out.err       = read_file(r.err_path);
    out.err_lines = lines_of(out.err);
    return out;
}

result
run(const std::vector<std::string>& argv, const env_list& env)
{
    scratch dir;
    auto    r = start(argv, env, dir);
    return finish(r);
}

std::vector<std::string>
lines_of(const std::string& text)
{
    std::vector<std::string> out;
    std::stringstream        s{text};
    std::string              line;
    while(std::getline(s, line))
        out.push_back(line);
    return out;
}

std::string
read_file(const std::string& path)
{
    std::ifstream in{path};
    return std::string{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

void
write_file(const std::string& path, const std::string& text)
{
    std::ofstream{path} << text;
}

bool
exists(const std::string& path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}
} // namespace cli_test
