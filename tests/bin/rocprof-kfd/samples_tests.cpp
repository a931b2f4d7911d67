// MIT License - see LICENSE.
//
// The samples run through rocprof-kfd: the loss-accounting tool accounts for every record of
// the bundled workload (delivered + dropped = the generator's oracle), and the HSA program
// says in one line that there is no GPU and exits 77 on a machine without one.
#include "cli_support.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cinttypes>
#include <cstdio>

using namespace cli_test;

namespace
{
const std::string command  = ROCPROF_KFD;
const std::string stand_in = STAND_IN_TOOL;
const std::string logs_dir = KFD_LOGS_DIR;

uint64_t
number_after(const std::string& text, const std::string& key)
{
    auto at = text.find(key);
    return at == std::string::npos ? UINT64_MAX : std::stoull(text.substr(at + key.size()));
}

size_t
oracle_records(const std::string& name)
{
    auto rows = lines_of(read_file(logs_dir + "/" + name + ".expect.csv"));
    return rows.empty() ? 0 : rows.size() - 1; // one process: every row is its own
}
} // namespace

#ifdef LOSS_SAMPLE_TOOL
TEST(Samples, LossAccountingToolAccountsForEveryRecord)
{
    scratch dir;
    auto r = run({command, "--emulate", logs_dir + "/managed-2gpu-6.13.log", "-d", dir.file("o")},
                 {"PATH=/usr/bin:/bin", "ROCPROF_KFD_TOOL_LIBRARY=" + stand_in,
                  "ROCP_TOOL_LIBRARIES=" LOSS_SAMPLE_TOOL, "ROCPROFILER_LOG_LEVEL=none"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::string total;
    for(const auto& line : lines_of(r.out))
        if(line.rfind("all gpus", 0) == 0) total = line;
    ASSERT_FALSE(total.empty()) << r.out;
    EXPECT_EQ(number_after(total, " received="), 4000u);
    auto records = number_after(total, " records=");
    auto dropped = number_after(total, " buffer_dropped=");
    EXPECT_EQ(records + dropped, oracle_records("managed-2gpu-6.13")) << total;
    EXPECT_EQ(number_after(r.out, "delivered="), records);
    EXPECT_EQ(number_after(r.out, "buffer_drops_reported="), dropped);
    EXPECT_NE(r.out.find(dropped > 0 ? "verdict: LOST " : "verdict: complete"), std::string::npos)
        << r.out;
}
#endif

#ifdef HSA_SAMPLE
TEST(Samples, HsaProgramWithoutGpuSaysSoAndExits77)
{
    if(access("/dev/kfd", F_OK) == 0)
        GTEST_SKIP() << "/dev/kfd exists: run the sample by hand on the AMD GPU";
    scratch dir;
    auto    r = run({command, "-d", dir.file("o"), "--", HSA_SAMPLE},
                    {"PATH=/usr/bin:/bin", "ROCPROF_KFD_TOOL_LIBRARY=" + stand_in,
                     "ROCPROFILER_LOG_LEVEL=none"});
    EXPECT_EQ(r.status, 77) << r.out << r.err;
    auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 1u) << r.out;
    EXPECT_EQ(lines[0].rfind("hsa-svm-migrate: no AMD GPU here", 0), 0u) << lines[0];
}
#endif
