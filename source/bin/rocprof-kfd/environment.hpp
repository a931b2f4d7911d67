// MIT License - see LICENSE.
//
// The traced program's environment, computed by pure functions from the options, the
// command's own environment and the libraries found: the user's LD_PRELOAD and
// ROCP_TOOL_LIBRARIES are kept and appended to, never replaced (docs/rocprof-kfd-design.md
// lists every variable set here).
#pragma once

#include "options.hpp"

#include <functional>
#include <string>
#include <vector>

namespace rocprof_kfd
{
// "NAME=VALUE" entries, as in environ.
using env_list = std::vector<std::string>;

struct libraries
{
    std::string sdk;      // librocprofiler-sdk.so
    std::string tool;     // the bundled tool, librocprofiler-sdk-tool-kfd.so
    std::string emulator; // the KFD emulator; used only with --emulate
    // The ASan/TSan runtime this command runs with ("" in a normal build): a sanitizer
    // build's SDK, tool and emulator need it as the first library of the program.
    std::string sanitizer_runtime;
};

// Whether path names a shared ASan or TSan runtime (gcc's libasan.so/libtsan.so, clang's
// libclang_rt.asan/tsan), which refuses to start unless it is the first library loaded.
bool is_sanitizer_runtime(const std::string& path);

// The program's LD_PRELOAD: sanitizer runtimes first (the user's own, else the command's),
// then the emulator (with emulate), then the rest of the user's value as it was, the SDK last.
std::string program_preload(const std::string& user_preload, const libraries& libs, bool emulate);

// The tool's default output directory (the same as the tool's own default).
const char* default_output_directory();

// The value of NAME in env, and whether it is set.
bool        env_has(const env_list& env, const std::string& name);
std::string env_get(const env_list& env, const std::string& name);
// env with NAME set to value (replacing any previous value).
void env_set(env_list& env, const std::string& name, const std::string& value);

// env without NAME.
void env_unset(env_list& env, const std::string& name);

// The program's environment.
env_list program_environment(const options& opts, const env_list& current, const libraries& libs);

// Appends entry to a list variable's value (separator ':'), keeping what was there.
std::string appended(const std::string& list, const std::string& entry);

// The leading part of a directory template that has no placeholder, the folder the command
// can create and check before launching ("out/%hostname%/x" -> "out"; "%pid%" -> ".").
std::string fixed_prefix(const std::string& directory_template);

// Whether the CapEff line of /proc/self/status text includes CAP_SYS_ADMIN (bit 21).
bool has_cap_sys_admin(const std::string& proc_status_text);

// The exit status a shell reports for a waitpid() status: the exit code, or 128+N for a
// death by signal N.
int shell_status(int wait_status);

// The first candidate for which exists() is true, or "".
std::string first_existing(const std::vector<std::string>&                candidates,
                           const std::function<bool(const std::string&)>& exists);
} // namespace rocprof_kfd
