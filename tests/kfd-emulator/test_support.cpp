// MIT License - see LICENSE.
#include "test_support.hpp"

#include "sanitizer.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kfd_test
{
namespace
{
void
remove_tree(const std::string& path)
{
    if(DIR* dir = opendir(path.c_str()))
    {
        while(dirent* entry = readdir(dir))
        {
            std::string name = entry->d_name;
            if(name == "." || name == "..") continue;
            std::string child = path + "/" + name;
            struct stat st
            {
            };
            if(lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
                remove_tree(child);
            else
                unlink(child.c_str());
        }
        closedir(dir);
    }
    rmdir(path.c_str());
}

std::string
temp_base()
{
    const char* tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}
} // namespace

scratch_dir::scratch_dir()
{
    std::string templ = temp_base() + "/kfd-emulator-test-XXXXXX";
    if(mkdtemp(templ.data()) != nullptr) path_ = templ;
}

scratch_dir::~scratch_dir()
{
    if(!path_.empty()) remove_tree(path_);
}

std::string
scratch_dir::write(const std::string& name, const std::string& content) const
{
    std::string   path = file(name);
    std::ofstream out(path, std::ios::binary);
    out << content;
    return path;
}

child_result
run_child(const std::string& program, const std::vector<std::string>& args, const env_map& env,
          int timeout_s)
{
    child_result result;
    int          out_pipe[2];
    int          err_pipe[2];
    if(pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return result;

    std::vector<std::string> argv_text{program};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    env_map full = env;
    full.emplace("PATH", "/usr/bin:/bin");
    full.emplace("TMPDIR", temp_base());
    // In a sanitizer build the runtime comes first and its options pass on (sanitizer.hpp).
    if(auto preload = full.find("LD_PRELOAD"); preload != full.end())
        preload->second = test_sanitizer::preload(preload->second);
    for(const auto& [key, value] : test_sanitizer::option_variables())
        full.emplace(key, value);
    std::vector<std::string> env_text;
    for(const auto& [key, value] : full)
        env_text.push_back(key + "=" + value);
    std::vector<char*> argv;
    std::vector<char*> envp;
    for(auto& a : argv_text)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    for(auto& e : env_text)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    auto  start = std::chrono::steady_clock::now();
    pid_t child = fork();
    if(child == 0)
    {
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        execve(program.c_str(), argv.data(), envp.data());
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);

    // Read both pipes until they close (the child and any children it forked exited).
    std::string* sinks[2]   = {&result.out, &result.err};
    pollfd       fds[2]     = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int          open_count = 2;
    bool         killed     = false;
    while(open_count > 0)
    {
        auto elapsed = std::chrono::steady_clock::now() - start;
        if(!killed && elapsed > std::chrono::seconds(timeout_s))
        {
            kill(child, SIGKILL);
            killed = true;
        }
        if(poll(fds, 2, 200) <= 0) continue;
        for(int i = 0; i < 2; ++i)
        {
            if(fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
            char    buf[65536];
            ssize_t n = read(fds[i].fd, buf, sizeof(buf));
            if(n > 0)
                sinks[i]->append(buf, static_cast<size_t>(n));
            else
            {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_count;
            }
        }
    }
    int status = 0;
    waitpid(child, &status, 0);
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.lines     = split_lines(result.out);
    return result;
}

child_result
run_probe(const std::string& log, const std::vector<std::string>& commands, env_map extra,
          bool preload, int timeout_s)
{
    if(preload) extra["LD_PRELOAD"] = emulator_library();
    if(!log.empty()) extra["KFD_EMULATOR_LOG"] = log;
    return run_child(probe_program(), commands, extra, timeout_s);
}

std::vector<std::string>
lines_with(const child_result& result, const std::string& prefix)
{
    std::vector<std::string> found;
    for(const auto& line : result.lines)
        if(line.compare(0, prefix.size(), prefix) == 0) found.push_back(line.substr(prefix.size()));
    return found;
}

std::string
line_with(const child_result& result, const std::string& prefix)
{
    auto found = lines_with(result, prefix);
    return found.empty() ? std::string() : found.front();
}

std::string
drained(const child_result& result, size_t client)
{
    std::string rest = line_with(result, "drain " + std::to_string(client) + " ");
    size_t      sp   = rest.find(' ');
    return sp == std::string::npos ? std::string() : unescape(rest.substr(sp + 1));
}

std::string
unescape(const std::string& text)
{
    std::string out;
    for(size_t i = 0; i < text.size(); ++i)
    {
        if(text[i] != '\\' || i + 1 >= text.size())
        {
            out += text[i];
            continue;
        }
        char c = text[++i];
        if(c == 'n')
            out += '\n';
        else if(c == 'x' && i + 2 < text.size() + 1)
        {
            out += static_cast<char>(std::strtoul(text.substr(i + 1, 2).c_str(), nullptr, 16));
            i += 2;
        }
        else
            out += c;
    }
    return out;
}

std::vector<std::string>
split_lines(const std::string& text)
{
    std::vector<std::string> lines;
    size_t                   start = 0;
    while(start < text.size())
    {
        size_t nl = text.find('\n', start);
        if(nl == std::string::npos) nl = text.size();
        lines.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    return lines;
}

std::string
read_file(const std::string& path)
{
    std::ifstream      in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

bool
file_exists(const std::string& path)
{
    return access(path.c_str(), F_OK) == 0;
}

const char*
emulator_library()
{
    return KFD_EMULATOR_LIBRARY;
}

const char*
probe_program()
{
    return KFD_PROBE_PROGRAM;
}
} // namespace kfd_test
