// MIT License - see LICENSE.
//
// The fixture of the tests that run the probe under the emulator: a scratch folder for the
// log and the statistics, the kernel's message text written by the tests' own formatting
// (independent of the emulator and of the generator), and the statistics parsed.
#pragma once

#include "mini_json.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace kfd_test
{
// One kernel message line (without '\n') per helper, in the 6.13+ text.
inline std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

inline std::string
format(const char* fmt, ...)
{
    char    buf[256];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);
    return buf;
}

inline std::string
fault_start(uint64_t ns, uint32_t pid, uint64_t page, uint32_t node, char rw = 'R')
{
    return format("7 %llu -%u @%llx(%x) %c", (unsigned long long)ns, pid, (unsigned long long)page,
                  node, rw);
}

inline std::string
fault_end(uint64_t ns, uint32_t pid, uint64_t page, uint32_t node, char mu = 'M')
{
    return format("8 %llu -%u @%llx(%x) %c", (unsigned long long)ns, pid, (unsigned long long)page,
                  node, mu);
}

inline std::string
migrate_start(uint64_t ns, uint32_t pid, uint64_t page, uint64_t npages, uint32_t from, uint32_t to,
              uint32_t trigger = 1)
{
    return format("5 %llu -%u @%llx(%llx) %x->%x ffffffff:ffffffff %u", (unsigned long long)ns, pid,
                  (unsigned long long)page, (unsigned long long)npages, from, to, trigger);
}

inline std::string
migrate_end(uint64_t ns, uint32_t pid, uint64_t page, uint64_t npages, uint32_t from, uint32_t to,
            uint32_t trigger = 1)
{
    return format("6 %llu -%u @%llx(%llx) %x->%x %u 0", (unsigned long long)ns, pid,
                  (unsigned long long)page, (unsigned long long)npages, from, to, trigger);
}

inline std::string
queue_evict(uint64_t ns, uint32_t pid, uint32_t node, uint32_t trigger = 2)
{
    return format("9 %llu -%u %x %u", (unsigned long long)ns, pid, node, trigger);
}

inline std::string
queue_restore(uint64_t ns, uint32_t pid, uint32_t node)
{
    return format("a %llu -%u %x 0", (unsigned long long)ns, pid, node);
}

inline std::string
unmap(uint64_t ns, uint32_t pid, uint64_t page, uint64_t npages, uint32_t node,
      uint32_t trigger = 2)
{
    return format("b %llu -%u @%llx(%llx) %x %u", (unsigned long long)ns, pid,
                  (unsigned long long)page, (unsigned long long)npages, node, trigger);
}

inline std::string
vmfault(uint32_t pid, const char* task)
{
    return format("1 %x:%s", pid, task);
}

// The mask enabling the given event ids.
inline std::string
mask_of(std::initializer_list<unsigned> ids)
{
    uint64_t mask = 0;
    for(unsigned id : ids)
        mask |= uint64_t{1} << (id - 1);
    return format("%llx", (unsigned long long)mask);
}

inline const std::string all_events = "7fff"; // ids 1-15

class EmulatorTest : public ::testing::Test
{
protected:
    // Writes the log (lines joined with '\n') and returns its path.
    std::string log(const std::vector<std::string>& lines)
    {
        std::string text;
        for(const auto& line : lines)
            text += line + "\n";
        return dir.write("kfd.log", text);
    }

    std::string stats_path() const { return dir.file("stats.json"); }

    // timeout_s: tests of what used to hang use a short one, so that they fail quickly.
    child_result probe(const std::string& log_path, const std::vector<std::string>& commands,
                       env_map extra = {}, int timeout_s = 60)
    {
        extra.emplace("KFD_EMULATOR_STATS", stats_path());
        extra.emplace("TMPDIR", dir.path());
        return run_probe(log_path, commands, extra, true, timeout_s);
    }

    json stats()
    {
        json        parsed;
        std::string text = read_file(stats_path());
        EXPECT_TRUE(json::parse(text, parsed)) << "statistics are not JSON: " << text;
        return parsed;
    }

    // The pid the probe printed ("pid N").
    static uint32_t probe_pid(const child_result& result)
    {
        return static_cast<uint32_t>(std::stoul("0" + line_with(result, "pid ")));
    }

    scratch_dir dir;
};
} // namespace kfd_test
