// MIT License - see LICENSE.
#include "environment.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <ctime>
#include <string>

namespace rocprof_kfd
{
namespace
{
// `path` from this process's working directory: the program and its children may change
// theirs before the emulator opens the file.
std::string
absolute(const std::string& path)
{
    if(path.empty() || path[0] == '/') return path;
    char cwd[4096];
    if(getcwd(cwd, sizeof(cwd)) == nullptr) return path;
    return std::string{cwd} + "/" + path;
}

std::string
joined_with_commas(const std::vector<std::string>& words)
{
    std::string out;
    for(const auto& w : words)
        out += (out.empty() ? "" : ",") + w;
    return out;
}

// The formats the tool writes: html is the command's own (it runs the report afterwards);
// the report reads summary.json, which the tool writes whatever the formats.
std::string
tool_format_list(const options& opts)
{
    if(opts.formats.empty()) return "summary";
    return joined_with_commas(opts.formats);
}

} // namespace

const char*
default_output_directory()
{
    return "rocprof-kfd/%hostname%/%pid%";
}

bool
env_has(const env_list& env, const std::string& name)
{
    for(const auto& e : env)
        if(e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
            return true;
    return false;
}

std::string
env_get(const env_list& env, const std::string& name)
{
    for(const auto& e : env)
        if(e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
            return e.substr(name.size() + 1);
    return "";
}

void
env_set(env_list& env, const std::string& name, const std::string& value)
{
    for(auto& e : env)
        if(e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
        {
            e = name + "=" + value;
            return;
        }
    env.push_back(name + "=" + value);
}

std::string
appended(const std::string& list, const std::string& entry)
{
    if(entry.empty()) return list;
    // Trailing separators of the user's value would otherwise leave an empty entry.
    std::string kept = list;
    while(!kept.empty() && (kept.back() == ':' || kept.back() == ' '))
        kept.pop_back();
    return kept.empty() ? entry : kept + ":" + entry;
}

bool
is_sanitizer_runtime(const std::string& path)
{
    auto        slash = path.rfind('/');
    std::string base  = slash == std::string::npos ? path : path.substr(slash + 1);
    for(const char* prefix : {"libasan.so", "libtsan.so", "libclang_rt.asan", "libclang_rt.tsan"})
        if(base.rfind(prefix, 0) == 0) return true;
    return false;
}

std::string
program_preload(const std::string& user_preload, const libraries& libs, bool emulate)
{
    // ld.so separates LD_PRELOAD entries by ':' or ' '. A runtime the user preloads is moved
    // to the front, where it has to be (an emulator put before it would make ASan refuse to
    // start their sanitized program); the other entries keep their order.
    std::string runtimes, rest, word;
    for(size_t i = 0; i <= user_preload.size(); ++i)
    {
        char c = i < user_preload.size() ? user_preload[i] : ':';
        if(c != ':' && c != ' ')
        {
            word.push_back(c);
            continue;
        }
        std::string& list = is_sanitizer_runtime(word) ? runtimes : rest;
        list              = appended(list, word);
        word.clear();
    }
    if(runtimes.empty())
    {
        runtimes = libs.sanitizer_runtime;
        rest     = user_preload; // untouched, separators included
    }
    std::string preload = runtimes;
    if(emulate) preload = appended(preload, libs.emulator);
    preload = appended(preload, rest);
    return appended(preload, libs.sdk);
}

void
env_unset(env_list& env, const std::string& name)
{
    for(size_t i = 0; i < env.size();)
    {
        const auto& e = env[i];
        if(e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
            env.erase(env.begin() + static_cast<std::ptrdiff_t>(i));
        else
            ++i;
    }
}

env_list
program_environment(const options& opts, const env_list& current, const libraries& libs)
{
    env_list env = current;

    // The emulator before the user's preloads, so that its open/ioctl/read interpose
    // everything after it; only a sanitizer runtime comes before it.
    env_set(env, "LD_PRELOAD",
            program_preload(env_get(env, "LD_PRELOAD"), libs, !opts.emulate_log.empty()));
    env_set(env, "ROCP_TOOL_LIBRARIES", appended(env_get(env, "ROCP_TOOL_LIBRARIES"), libs.tool));

    // One id for every process of this run: their tools tell this run's folders from an
    // earlier run's (output_claim.hpp).
    env_set(env, "ROCPROF_KFD_RUN_ID",
            std::to_string(getpid()) + "-" + std::to_string(static_cast<long long>(time(nullptr))));
    env_set(env, "ROCPROF_KFD_OUTPUT_DIRECTORY",
            opts.output_directory.empty() ? default_output_directory() : opts.output_directory);
    env_set(env, "ROCPROF_KFD_OUTPUT_FORMAT", tool_format_list(opts));
    env_set(env, "ROCPROF_KFD_EVENTS",
            joined_with_commas(opts.events.empty() ? event_names() : opts.events));
    // Each process's own /proc/self/cmdline names it (children too); only a replay without
    // a program would be named after the no-op that hosts it.
    if(opts.program.empty())
        // One word a line: a log path may hold spaces.
        env_set(env, "ROCPROF_KFD_COMMAND_LINE", "rocprof-kfd\n--emulate\n" + opts.emulate_log);
    else
        env_unset(env, "ROCPROF_KFD_COMMAND_LINE");
    // Settings the user may also give as variables: the option wins when given.
    if(!opts.output_file.empty()) env_set(env, "ROCPROF_KFD_OUTPUT_FILE", opts.output_file);
    if(!opts.raw_file.empty()) env_set(env, "ROCPROF_KFD_RAW_FILE", opts.raw_file);
    if(!opts.thrashing_threshold.empty())
        env_set(env, "ROCPROF_KFD_THRASHING_THRESHOLD", opts.thrashing_threshold);
    if(opts.quiet_summary) env_set(env, "ROCPROF_KFD_SUMMARY_STDERR", "0");
    if(opts.system_wide) env_set(env, "ROCPROFILER_KFD_ALL_PROCESSES", "1");
    if(!opts.emulate_log.empty())
    {
        env_set(env, "KFD_EMULATOR_LOG", absolute(opts.emulate_log));
        if(!opts.emulator_stats.empty())
            env_set(env, "KFD_EMULATOR_STATS", absolute(opts.emulator_stats));
    }
    return env;
}

std::string
fixed_prefix(const std::string& directory_template)
{
    std::string prefix;
    size_t      start = 0;
    while(start <= directory_template.size())
    {
        size_t      slash = directory_template.find('/', start);
        std::string part  = directory_template.substr(
             start, slash == std::string::npos ? std::string::npos : slash - start);
        if(part.find('%') != std::string::npos) break;
        if(start == 0 && part.empty())
            prefix = "/"; // absolute
        else if(!part.empty())
            prefix += (prefix.empty() || prefix == "/" ? "" : "/") + part;
        if(slash == std::string::npos) break;
        start = slash + 1;
    }
    return prefix.empty() ? "." : prefix;
}

bool
has_cap_sys_admin(const std::string& proc_status_text)
{
    const std::string key  = "\nCapEff:";
    std::string       text = "\n" + proc_status_text;
    size_t            at   = text.find(key);
    if(at == std::string::npos) return false;
    const char*        start = text.c_str() + at + key.size();
    char*              end   = nullptr;
    unsigned long long bits  = std::strtoull(start, &end, 16);
    if(end == start) return false;
    return (bits >> 21) & 1u;
}

int
shell_status(int wait_status)
{
    if(WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if(WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return 1;
}

std::string
first_existing(const std::vector<std::string>&                candidates,
               const std::function<bool(const std::string&)>& exists)
{
    for(const auto& c : candidates)
        if(!c.empty() && exists(c)) return c;
    return "";
}
} // namespace rocprof_kfd
