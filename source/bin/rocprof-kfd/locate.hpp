// MIT License - see LICENSE.
//
// Where the SDK, the bundled tool, the emulator and the subcommands are: an override
// variable first (tests, unusual installs), then next to the installed command (bin/ ->
// lib/), then the build tree the command was built in.
#pragma once

#include <string>
#include <vector>

namespace rocprof_kfd
{
struct library_place
{
    const char* what;          // "the SDK", for messages
    const char* override_name; // environment variable naming the file
    std::string installed;     // relative to the command's folder
    std::string build_tree;    // absolute, from configure time
};

// The folder of the running executable (/proc/self/exe), or "" if unknown.
std::string self_directory();

// The library's path, or "" with `looked_in` listing where it was searched.
std::string find_library(const library_place& place, std::vector<std::string>& looked_in);

const library_place& sdk_place();
const library_place& tool_place();
const library_place& emulator_place();

// The shared ASan/TSan runtime loaded in this process (a sanitizer build of the command),
// or "" (a normal build, or a runtime linked statically, as clang does by default).
std::string loaded_sanitizer_runtime();

// rocprof-kfd-<name> next to the running command, or "" if there is none.
std::string find_subcommand(const std::string& name);
} // namespace rocprof_kfd
