// MIT License - see LICENSE.
//
// The KFD emulator redirects /sys/class/kfd/kfd/topology by interposing open(). This test
// does the same with its own open(), so it fails if the topology reader ever reads a file
// some other way (stdio, streams, openat, stat...).
#include "rocprofiler-sdk/agent.hpp"
#include "rocprofiler-sdk/topology.hpp"

#include "fixture_expectations.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstring>
#include <string>

namespace
{
constexpr char sysfs_prefix[] = "/sys/class/kfd/kfd/topology";

std::atomic<int> redirected_opens{0};
} // namespace

extern "C" int
open(const char* path, int flags, ...)
{
    mode_t mode = 0;
    if((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE)
    {
        va_list args;
        va_start(args, flags);
        mode = static_cast<mode_t>(va_arg(args, int));
        va_end(args);
    }
    auto target = std::string{path};
    if(target.rfind(sysfs_prefix, 0) == 0)
    {
        target = std::string{ROCP_AGENT_FIXTURES_DIR} + "/one_cpu_two_gpus" +
                 target.substr(sizeof(sysfs_prefix) - 1);
        ++redirected_opens;
    }
    return static_cast<int>(::syscall(SYS_openat, AT_FDCWD, target.c_str(), flags, mode));
}

namespace
{
TEST(OpenInterpose, TopologyReaderGoesThroughOpen)
{
    auto topo = rocprofiler::topology::read(sysfs_prefix);
    rocprofiler::test::expect_one_cpu_two_gpus(topo.agent_pointers());
    EXPECT_GT(redirected_opens.load(), 0);
}

TEST(OpenInterpose, DefaultRootGoesThroughOpen)
{
    // Run with ROCPROFILER_KFD_TOPOLOGY_ROOT empty: the default sysfs path, redirected here.
    EXPECT_EQ(rocprofiler::agent::topology_root(), sysfs_prefix);
    rocprofiler::test::expect_one_cpu_two_gpus(rocprofiler::agent::get_agents());
}
} // namespace
