// MIT License - see LICENSE.
//
// rocprof-kfd: runs a program with the page-migration profiler (the SDK and the bundled
// tool preloaded) and exits with the program's status; `rocprof-kfd merge|report ...` run
// the rocprof-kfd-merge / rocprof-kfd-report programs installed next to it.
// Usage: rocprof-kfd --help; how the pieces fit: docs/rocprof-kfd-design.md.
#include "environment.hpp"
#include "launcher.hpp"
#include "locate.hpp"
#include "options.hpp"
#include "outputs.hpp"

#include <rocprofiler-sdk/version.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern char** environ;

namespace
{
using namespace rocprof_kfd;

constexpr int usage_status = 2;

int
fail(const std::string& message, int status = usage_status)
{
    fprintf(stderr, "rocprof-kfd: %s\n", message.c_str());
    return status;
}

int
run_subcommand(const parse_result& parsed)
{
    std::string path = find_subcommand(parsed.subcommand);
    if(path.empty())
        return fail("'" + parsed.subcommand + "' needs rocprof-kfd-" + parsed.subcommand +
                    ", which is not installed next to rocprof-kfd");
    std::vector<char*> args{const_cast<char*>(path.c_str())};
    for(const auto& a : parsed.subcommand_args)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(path.c_str(), args.data());
    return fail("cannot run " + path + ": " + strerror(errno));
}

env_list
current_environment()
{
    env_list env;
    for(char** e = environ; e && *e; ++e)
        env.emplace_back(*e);
    return env;
}

std::string
read_text(const char* path)
{
    std::ifstream in{path};
    return std::string{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

// Every check that can refuse the run, before anything starts; "" when all pass.
std::string
refusal(const options& opts)
{
    if(!opts.emulate_log.empty())
    {
        struct stat st;
        if(stat(opts.emulate_log.c_str(), &st) != 0 || access(opts.emulate_log.c_str(), R_OK) != 0)
            return "cannot read the log '" + opts.emulate_log + "': " + strerror(errno);
        if(!S_ISREG(st.st_mode))
            return "the log '" + opts.emulate_log + "' is not a regular file (it is read " +
                   "several times)";
    }
    if(opts.system_wide && !has_cap_sys_admin(read_text("/proc/self/status")))
        return "--system-wide needs CAP_SYS_ADMIN (run as root, or give the capability); "
               "without it the kernel sends each process only its own events";
    return "";
}

// The libraries, or a one-line message naming where they were looked for.
bool
find_libraries(const options& opts, libraries& libs, std::string& message)
{
    struct wanted
    {
        const library_place& place;
        std::string&         path;
        bool                 needed;
    };
    const wanted all[] = {{sdk_place(), libs.sdk, true},
                          {tool_place(), libs.tool, true},
                          {emulator_place(), libs.emulator, !opts.emulate_log.empty()}};
    for(const auto& w : all)
    {
        if(!w.needed) continue;
        std::vector<std::string> looked_in;
        w.path = find_library(w.place, looked_in);
        if(!w.path.empty()) continue;
        message = std::string{"cannot find "} + w.place.what + " (looked for";
        for(const auto& l : looked_in)
            message += " " + l;
        message += std::string{"; set "} + w.place.override_name + ")";
        return false;
    }
    // ld.so splits LD_PRELOAD at spaces and colons, the SDK splits ROCP_TOOL_LIBRARIES at
    // spaces, colons and commas: such a path would run the program untraced, silently.
    for(const auto& w : all)
        if(w.needed && w.path.find_first_of(" :,\t\n") != std::string::npos)
        {
            message = std::string{"cannot preload "} + w.place.what + " '" + w.path +
                      "': its path holds a space, ':' or ','; install it elsewhere or set " +
                      w.place.override_name + " to a path without them";
            return false;
        }
    libs.sanitizer_runtime = loaded_sanitizer_runtime();
    return true;
}

// With --emulate and no program, the log is replayed into a program that does nothing.
std::vector<std::string>
program_of(const options& opts)
{
    if(!opts.program.empty()) return opts.program;
    return {access("/bin/true", X_OK) == 0 ? "/bin/true" : "true"};
}

int
run(const options& opts)
{
    std::string why = refusal(opts);
    if(!why.empty()) return fail(why);
    libraries libs;
    if(!find_libraries(opts, libs, why)) return fail(why);
    why = prepare_output_directory(opts.output_directory.empty() ? default_output_directory()
                                                                 : opts.output_directory);
    if(!why.empty()) return fail(why);
    // The raw file's folder too: found unwritable only by the tool, it was one line at run
    // time and status 0.
    if(!opts.raw_file.empty())
    {
        const size_t slash = opts.raw_file.rfind('/');
        why                = prepare_output_directory(slash == std::string::npos ? "."
                                                      : slash == 0               ? "/"
                                                                   : opts.raw_file.substr(0, slash));
        if(!why.empty()) return fail(why);
    }

    auto     program = program_of(opts);
    env_list env     = program_environment(opts, current_environment(), libs);
    // Each process's tool lists its outputs there: the folders to repair and report.
    const std::string run_list = create_run_list();
    if(!run_list.empty()) env_set(env, "ROCPROF_KFD_RUN_LIST", run_list);
    auto       result  = run_program(program, env);
    const auto outputs = read_run_list(run_list); // removes it, whatever happened
    if(!result.started) // as a shell: 127 not found, 126 found but not runnable
        return fail(result.message, result.exec_errno == 0        ? usage_status
                                    : result.exec_errno == ENOENT ? 127
                                                                  : 126);

    int  status    = shell_status(result.wait_status);
    bool by_signal = WIFSIGNALED(result.wait_status);
    if(by_signal)
    {
        // No exit handler ran: the tool's flusher (flusher.hpp) wrote what its buffers held
        // up to a second before; the rest was lost.
        if(!outputs.empty())
            fprintf(stderr,
                    "rocprof-kfd: the program was killed by signal %d; closing its outputs from "
                    "what was written (records of its last second, still in the SDK's buffers, "
                    "were lost)\n",
                    WTERMSIG(result.wait_status));
        repair_outputs(outputs);
    }
    else
    {
        // Exited without its exit handlers (_exit, a shell's `exit`): its tool never
        // finalized. Only the program's own folders: a child it left running still writes.
        auto unfinished = unfinished_by(outputs, result.pid);
        for(const auto& o : unfinished)
            fprintf(stderr,
                    "rocprof-kfd: %s: the program exited without running its exit handlers "
                    "(_exit or quick_exit); closing its outputs from what was written (records "
                    "still in the SDK's buffers were lost)\n",
                    o.directory.c_str());
        repair_outputs(unfinished);
    }
    if(opts.html) write_html_reports(outputs);
    return status; // the program's, whatever happened around it
}
} // namespace

int
main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    auto                     parsed = parse_command_line(args);
    switch(parsed.what)
    {
    case action::help:
        fputs(usage_text(), stdout);
        return 0;
    case action::version:
        printf("rocprof-kfd %s (rocprofiler-sdk page-migration profiler)\n",
               ROCPROFILER_VERSION_STRING);
        return 0;
    case action::subcommand:
        return run_subcommand(parsed);
    case action::error:
        return fail(parsed.error);
    case action::run:
        return run(parsed.opts);
    }
    return usage_status;
}
