// MIT License - see LICENSE.
//
// Tests that run programs with LD_PRELOAD in a sanitizer build. ASan and TSan need their
// runtime to be the first library of a process; a preloaded instrumented library (the
// emulator, a tool, the SDK) would otherwise come before it and the child would refuse to
// start. A user does the same: LD_PRELOAD="$(gcc -print-file-name=libasan.so) tool.so" app.
// So a child's LD_PRELOAD starts with the runtime this test process itself runs with, and the
// sanitizers' option variables are passed on. Without a sanitizer everything here is a no-op.
#pragma once

#include <link.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#    define ROCP_TEST_SANITIZED 1
#elif defined(__has_feature)
#    if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#        define ROCP_TEST_SANITIZED 1
#    endif
#endif
#ifndef ROCP_TEST_SANITIZED
#    define ROCP_TEST_SANITIZED 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#    define ROCP_TEST_ASAN 1
#elif defined(__has_feature)
#    if __has_feature(address_sanitizer)
#        define ROCP_TEST_ASAN 1
#    endif
#endif
#ifndef ROCP_TEST_ASAN
#    define ROCP_TEST_ASAN 0
#endif
#if defined(__SANITIZE_THREAD__)
#    define ROCP_TEST_TSAN 1
#elif defined(__has_feature)
#    if __has_feature(thread_sanitizer)
#        define ROCP_TEST_TSAN 1
#    endif
#endif
#ifndef ROCP_TEST_TSAN
#    define ROCP_TEST_TSAN 0
#endif

namespace test_sanitizer
{
// True when this test program was built with ASan or TSan.
constexpr bool active = ROCP_TEST_SANITIZED != 0;
// True under ThreadSanitizer, which cannot run a fork() child of a multithreaded process that
// starts threads of its own (it stops it: "starting new threads after multi-threaded fork is
// not supported").
constexpr bool thread_sanitizer = ROCP_TEST_TSAN != 0;

// True under AddressSanitizer. Its allocator (gcc 12's runtime, LLVM 14) is not locked across
// fork(): a child forked while another thread of the parent is inside malloc inherits a locked
// allocator mutex and hangs at its next allocation or in LeakSanitizer's exit check (seen:
// __lsan::LockAllocator waiting forever in a probe child). Tests that fork while their threads
// allocate cannot run under it; they skip with this reason and run in the normal and TSan
// suites.
constexpr bool               address_sanitizer = ROCP_TEST_ASAN != 0;
inline constexpr const char* asan_fork_reason =
    "AddressSanitizer's allocator is not fork-safe in this runtime (a fork() while another "
    "thread allocates can hang the child); this test runs in the normal and TSan suites";

// The path of the shared ASan/TSan runtime loaded in this process ("" if none, or linked
// statically as clang does by default).
inline std::string
runtime_library()
{
    std::string found;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int
        {
            const char* name = info->dlpi_name;
            const char* base = name ? std::strrchr(name, '/') : nullptr;
            base             = base ? base + 1 : name;
            if(base == nullptr) return 0;
            if(std::strncmp(base, "libasan.so", 10) == 0 ||
               std::strncmp(base, "libtsan.so", 10) == 0 ||
               std::strncmp(base, "libclang_rt.asan", 16) == 0 ||
               std::strncmp(base, "libclang_rt.tsan", 16) == 0)
            {
                *static_cast<std::string*>(data) = name;
                return 1;
            }
            return 0;
        },
        &found);
    return found;
}

// The LD_PRELOAD value that runs `preload` (':'-separated) under this process's runtime.
inline std::string
preload(const std::string& libraries)
{
    std::string runtime = runtime_library();
    if(runtime.empty()) return libraries;
    if(libraries.empty()) return runtime;
    return runtime + ":" + libraries;
}

// The sanitizers' variables of this process, for children started with an environment of
// their own.
inline std::vector<std::pair<std::string, std::string>>
option_variables()
{
    std::vector<std::pair<std::string, std::string>> out;
    for(const char* name :
        {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS", "ASAN_SYMBOLIZER_PATH"})
        if(const char* value = std::getenv(name)) out.emplace_back(name, value);
    return out;
}
} // namespace test_sanitizer
