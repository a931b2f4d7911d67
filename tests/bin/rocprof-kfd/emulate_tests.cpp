// MIT License - see LICENSE.
//
// rocprof-kfd --emulate: a log made by rocprof-kfd-gen is replayed (with no program, and
// with one), and a user's own tool in ROCP_TOOL_LIBRARIES receives every record of it,
// exactly the generator's --expect oracle (computed from its model, not by parsing).
#include "cli_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace cli_test;

namespace
{
const std::string command   = ROCPROF_KFD;
const std::string program   = TEST_PROGRAM;
const std::string stand_in  = STAND_IN_TOOL;
const std::string user_tool = USER_TOOL;
const std::string generator = KFD_GEN;

struct generated
{
    std::string              log;
    std::vector<std::string> expected; // sorted, this process's pid written "SELF"
};

// The oracle's rows of the log's traced process ("#@ self"), its pid written "SELF", sorted.
std::vector<std::string>
expected_rows(const std::string& log, const std::string& expect_csv)
{
    std::string self;
    for(const auto& line : lines_of(log))
        if(line.rfind("#@ self ", 0) == 0) self = line.substr(8);
    EXPECT_FALSE(self.empty());
    std::vector<std::string> out;
    auto                     rows = lines_of(expect_csv);
    for(size_t i = 1; i < rows.size(); ++i)
    {
        auto first  = rows[i].find(',');
        auto second = rows[i].find(',', first + 1);
        if(rows[i].substr(first + 1, second - first - 1) != self) continue;
        out.push_back(rows[i].substr(0, first + 1) + "SELF" + rows[i].substr(second));
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The records of a bundled log and its .expect.csv, for the log's own times.
generated
bundled(const scratch& dir, const std::string& name)
{
    generated g;
    g.log    = dir.file(name + ".log");
    auto log = read_file(std::string{KFD_LOGS_DIR} + "/" + name + ".log");
    write_file(g.log, "#@ timestamps keep\n" + log);
    g.expected =
        expected_rows(log, read_file(std::string{KFD_LOGS_DIR} + "/" + name + ".expect.csv"));
    return g;
}

generated
generate(const scratch& dir, const std::vector<std::string>& args)
{
    generated g;
    g.log       = dir.file("workload.log");
    auto expect = dir.file("workload.expect.csv");
    auto argv   = args;
    argv.insert(argv.begin(), generator);
    for(const char* a : {"--timestamps", "keep", "-o"})
        argv.emplace_back(a);
    argv.push_back(g.log);
    argv.emplace_back("--expect");
    argv.push_back(expect);
    auto r = run(argv, {"PATH=/usr/bin:/bin"});
    EXPECT_EQ(r.status, 0) << r.err;
    g.expected = expected_rows(read_file(g.log), read_file(expect));
    return g;
}

std::vector<std::string>
received(const std::string& path)
{
    std::vector<std::string> out;
    for(const auto& line : lines_of(read_file(path)))
        if(line.rfind("CONFIGURED,", 0) != 0 && line != "FINALIZED") out.push_back(line);
    std::sort(out.begin(), out.end());
    return out;
}

env_list
env_with_user_tool(const scratch& dir)
{
    return {"PATH=/usr/bin:/bin", "TMPDIR=" + dir.path(), "ROCPROF_KFD_TOOL_LIBRARY=" + stand_in,
            "ROCP_TOOL_LIBRARIES=" + user_tool, "CLI_TEST_USER_OUT=" + dir.file("user.txt")};
}
} // namespace

TEST(CliEmulate, ReplayWithoutProgramDeliversEveryRecordToAUserTool)
{
    scratch dir;
    auto g = generate(dir, {"--scenario", "thrashing", "--gpus", "2", "--events", "600", "--seed",
                            "11", "--era", "6.13"});
    ASSERT_GT(g.expected.size(), 100u);
    auto stats = dir.file("stats.json");
    auto r     = run({command, "--emulate", g.log, "--emulator-stats", stats, "-d", dir.file("o")},
                     env_with_user_tool(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(read_file(dir.file("user.txt")).find("CONFIGURED,0"), std::string::npos)
        << read_file(dir.file("user.txt"));
    EXPECT_EQ(received(dir.file("user.txt")), g.expected);
    EXPECT_NE(read_file(stats).find("kfd-emulator-stats"), std::string::npos);
}

TEST(CliEmulate, ReplayUnderAProgramKeepsItsStatus)
{
    scratch dir;
    auto g = generate(dir, {"--scenario", "mixed", "--gpus", "2", "--events", "400", "--seed", "12",
                            "--era", "6.12"});
    auto r = run({command, "--emulate", g.log, "-d", dir.file("o"), "--", program, "exit", "9"},
                 env_with_user_tool(dir));
    EXPECT_EQ(r.status, 9) << r.err;
    EXPECT_EQ(received(dir.file("user.txt")), g.expected);
}

// A user tracing their own ASan program preloads the runtime, as ASan asks of anything run
// with LD_PRELOAD (gcc's shared runtime refuses to start when another library comes first);
// the emulator must not be put before it.
TEST(CliEmulate, ReplayIntoAUsersSanitizedProgram)
{
#if defined(ASAN_TEST_PROGRAM) && defined(ASAN_RUNTIME)
    scratch dir;
    auto g = generate(dir, {"--scenario", "mixed", "--gpus", "2", "--events", "300", "--seed", "14",
                            "--era", "6.13"});
    auto env = env_with_user_tool(dir);
    env.push_back(std::string{"LD_PRELOAD="} + ASAN_RUNTIME);
    auto r = run(
        {command, "--emulate", g.log, "-d", dir.file("o"), "--", ASAN_TEST_PROGRAM, "exit", "9"},
        env);
    EXPECT_EQ(r.status, 9) << r.err;
    EXPECT_EQ(received(dir.file("user.txt")), g.expected);
#else
    GTEST_SKIP() << "needs gcc's shared ASan runtime (libasan.so), which this compiler lacks";
#endif
}

TEST(CliEmulate, BundledDemoWorkloadDeliversEveryRecord)
{
    scratch dir;
    auto    g = bundled(dir, "managed-2gpu-6.13");
    ASSERT_GT(g.expected.size(), 2000u);
    auto r = run({command, "--emulate", g.log, "-d", dir.file("o")}, env_with_user_tool(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(received(dir.file("user.txt")), g.expected);
}
