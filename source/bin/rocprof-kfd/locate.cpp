// MIT License - see LICENSE.
#include "locate.hpp"

#include "environment.hpp"

#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

// Set by CMake: the install layout relative to bin/, and the build tree's files.
#ifndef ROCPROF_KFD_REL_LIBDIR
#    define ROCPROF_KFD_REL_LIBDIR "../lib"
#endif
#ifndef ROCPROF_KFD_SDK_NAME
#    define ROCPROF_KFD_SDK_NAME "librocprofiler-sdk.so.0"
#endif
#ifndef ROCPROF_KFD_BUILD_SDK
#    define ROCPROF_KFD_BUILD_SDK ""
#endif
#ifndef ROCPROF_KFD_BUILD_TOOL
#    define ROCPROF_KFD_BUILD_TOOL ""
#endif
#ifndef ROCPROF_KFD_BUILD_EMULATOR
#    define ROCPROF_KFD_BUILD_EMULATOR ""
#endif

namespace rocprof_kfd
{
namespace
{
bool
is_readable_file(const std::string& path)
{
    return access(path.c_str(), R_OK) == 0;
}
} // namespace

std::string
self_directory()
{
    char    path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if(n <= 0) return "";
    std::string exe(path, static_cast<size_t>(n));
    auto        slash = exe.rfind('/');
    return slash == std::string::npos ? "" : exe.substr(0, slash);
}

std::string
find_library(const library_place& place, std::vector<std::string>& looked_in)
{
    // An override is taken as given: a wrong one is an error, not a reason to look elsewhere.
    const char* forced = std::getenv(place.override_name);
    if(forced != nullptr && *forced != '\0')
    {
        looked_in = {std::string{forced} + " (" + place.override_name + ")"};
        return is_readable_file(forced) ? forced : "";
    }
    std::string dir = self_directory();
    // /proc/self/exe has no symbolic links left, so "bin/../lib" can be folded as text.
    std::string installed =
        dir.empty()
            ? ""
            : std::filesystem::path(dir + "/" + place.installed).lexically_normal().string();
    std::vector<std::string> candidates = {installed, place.build_tree};
    looked_in.clear();
    for(const auto& c : candidates)
        if(!c.empty()) looked_in.push_back(c);
    return first_existing(candidates, is_readable_file);
}

const library_place&
sdk_place()
{
    static const library_place place{"the SDK", "ROCPROF_KFD_SDK_LIBRARY",
                                     ROCPROF_KFD_REL_LIBDIR "/" ROCPROF_KFD_SDK_NAME,
                                     ROCPROF_KFD_BUILD_SDK};
    return place;
}

const library_place&
tool_place()
{
    static const library_place place{"the bundled tool", "ROCPROF_KFD_TOOL_LIBRARY",
                                     ROCPROF_KFD_REL_LIBDIR "/librocprofiler-sdk-tool-kfd.so",
                                     ROCPROF_KFD_BUILD_TOOL};
    return place;
}

const library_place&
emulator_place()
{
    static const library_place place{"the KFD emulator", "ROCPROF_KFD_EMULATOR_LIBRARY",
                                     ROCPROF_KFD_REL_LIBDIR
                                     "/rocprofiler-sdk/librocprofiler-sdk-kfd-emulator.so",
                                     ROCPROF_KFD_BUILD_EMULATOR};
    return place;
}

std::string
loaded_sanitizer_runtime()
{
    std::string found;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int
        {
            if(info->dlpi_name == nullptr || !is_sanitizer_runtime(info->dlpi_name)) return 0;
            *static_cast<std::string*>(data) = info->dlpi_name;
            return 1;
        },
        &found);
    return found;
}

std::string
find_subcommand(const std::string& name)
{
    std::string dir = self_directory();
    if(dir.empty()) return "";
    std::string path = dir + "/rocprof-kfd-" + name;
    return access(path.c_str(), X_OK) == 0 ? path : "";
}
} // namespace rocprof_kfd
