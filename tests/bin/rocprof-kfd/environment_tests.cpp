// MIT License - see LICENSE.
//
// The traced program's environment: the user's LD_PRELOAD and ROCP_TOOL_LIBRARIES are kept
// and appended to, every ROCPROF_KFD_* variable of docs/rocprof-kfd-design.md is set from
// the options; and the small pure helpers (templates, capabilities, exit statuses).
#include "environment.hpp"
#include "options.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <signal.h>

using namespace rocprof_kfd;

namespace
{
const libraries libs{"/l/libsdk.so.0", "/l/libtool.so", "/l/emu.so"};

env_list
env_for(const std::vector<std::string>& args, const env_list& current = {"PATH=/bin", "X=1"})
{
    auto parsed = parse_command_line(args);
    EXPECT_EQ(parsed.what, action::run) << parsed.error;
    return program_environment(parsed.opts, current, libs);
}
} // namespace

TEST(Environment, DefaultsOnEmptyEnvironment)
{
    auto env = env_for({"p"});
    EXPECT_EQ(env_get(env, "LD_PRELOAD"), "/l/libsdk.so.0");
    EXPECT_EQ(env_get(env, "ROCP_TOOL_LIBRARIES"), "/l/libtool.so");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_OUTPUT_DIRECTORY"), "rocprof-kfd/%hostname%/%pid%");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_OUTPUT_FORMAT"), "summary,csv,perfetto");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_EVENTS"),
              "page-migrate,page-fault,queue-suspend,unmap-from-gpu");
    EXPECT_EQ(env_get(env, "PATH"), "/bin");
    EXPECT_EQ(env_get(env, "X"), "1");
    for(const char* unset :
        {"ROCPROF_KFD_OUTPUT_FILE", "ROCPROF_KFD_RAW_FILE", "ROCPROF_KFD_THRASHING_THRESHOLD",
         "ROCPROF_KFD_SUMMARY_STDERR", "ROCPROFILER_KFD_ALL_PROCESSES", "KFD_EMULATOR_LOG",
         "KFD_EMULATOR_STATS"})
        EXPECT_FALSE(env_has(env, unset)) << unset;
}

TEST(Environment, UserPreloadsAndToolsAreKeptAndAppended)
{
    env_list user = {"LD_PRELOAD=/u/a.so /u/b.so",
                     "ROCP_TOOL_LIBRARIES=/u/t1.so,/u/t2.so:", "OTHER=keep"};
    auto     env  = env_for({"p"}, user);
    EXPECT_EQ(env_get(env, "LD_PRELOAD"), "/u/a.so /u/b.so:/l/libsdk.so.0");
    EXPECT_EQ(env_get(env, "ROCP_TOOL_LIBRARIES"), "/u/t1.so,/u/t2.so:/l/libtool.so");
    EXPECT_EQ(env_get(env, "OTHER"), "keep");
    // Each variable once.
    int preload_entries = 0;
    for(const auto& e : env)
        preload_entries += e.rfind("LD_PRELOAD=", 0) == 0;
    EXPECT_EQ(preload_entries, 1);
}

TEST(Environment, EmulatorPreloadedFirst)
{
    auto env =
        env_for({"--emulate", "w.log", "--emulator-stats", "s.json"}, {"LD_PRELOAD=/u/a.so"});
    EXPECT_EQ(env_get(env, "LD_PRELOAD"), "/l/emu.so:/u/a.so:/l/libsdk.so.0");
    // Absolute: the program and its children may change their working directory.
    char cwd[4096];
    ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
    EXPECT_EQ(env_get(env, "KFD_EMULATOR_LOG"), std::string{cwd} + "/w.log");
    EXPECT_EQ(env_get(env, "KFD_EMULATOR_STATS"), std::string{cwd} + "/s.json");
    EXPECT_EQ(env_get(env_for({"--emulate", "/abs/w.log"}), "KFD_EMULATOR_LOG"), "/abs/w.log");
    EXPECT_EQ(env_get(env_for({"--emulate", "w.log"}), "LD_PRELOAD"), "/l/emu.so:/l/libsdk.so.0");
}

// ASan and TSan refuse to start (gcc's shared runtime: "ASan runtime does not come first in
// initial library list") unless their runtime is the first library of the process.
TEST(Environment, SanitizerRuntimeOfTheUserStaysFirst)
{
    // A user tracing their own ASan program preloads the runtime, as ASan asks; the emulator
    // must not be put before it.
    auto env = env_for({"--emulate", "w.log", "p"},
                       {"LD_PRELOAD=/usr/lib/gcc/x86_64-linux-gnu/12/libasan.so /u/a.so"});
    EXPECT_EQ(env_get(env, "LD_PRELOAD"),
              "/usr/lib/gcc/x86_64-linux-gnu/12/libasan.so:/l/emu.so:/u/a.so:/l/libsdk.so.0");
    // Wherever it was in the list; clang's runtime and TSan's too; the others keep their order.
    env = env_for({"--emulate", "w.log", "p"},
                  {"LD_PRELOAD=/u/a.so:/r/libclang_rt.asan-x86_64.so /u/b.so"});
    EXPECT_EQ(env_get(env, "LD_PRELOAD"),
              "/r/libclang_rt.asan-x86_64.so:/l/emu.so:/u/a.so:/u/b.so:/l/libsdk.so.0");
    env = env_for({"p"}, {"LD_PRELOAD=libtsan.so.2"});
    EXPECT_EQ(env_get(env, "LD_PRELOAD"), "libtsan.so.2:/l/libsdk.so.0");
    // Not a runtime: a library whose name only contains one.
    env = env_for({"p"}, {"LD_PRELOAD=/u/mylibasan.so"});
    EXPECT_EQ(env_get(env, "LD_PRELOAD"), "/u/mylibasan.so:/l/libsdk.so.0");
}

TEST(Environment, SanitizedCommandPutsItsRuntimeFirst)
{
    // A sanitizer build of the command finds a sanitizer build of the SDK, tool and emulator,
    // which need the runtime it runs with in front of them.
    libraries sanitized         = libs;
    sanitized.sanitizer_runtime = "/r/libasan.so.8";
    auto parsed                 = parse_command_line({"--emulate", "w.log", "p"});
    auto env = program_environment(parsed.opts, {"LD_PRELOAD=/u/a.so /u/b.so"}, sanitized);
    EXPECT_EQ(env_get(env, "LD_PRELOAD"),
              "/r/libasan.so.8:/l/emu.so:/u/a.so /u/b.so:/l/libsdk.so.0");
    env = program_environment(parse_command_line({"p"}).opts, {}, sanitized);
    EXPECT_EQ(env_get(env, "LD_PRELOAD"), "/r/libasan.so.8:/l/libsdk.so.0");
    // The user's runtime wins: one runtime only.
    env = program_environment(parsed.opts, {"LD_PRELOAD=/u/libasan.so"}, sanitized);
    EXPECT_EQ(env_get(env, "LD_PRELOAD"), "/u/libasan.so:/l/emu.so:/l/libsdk.so.0");
}

TEST(Environment, EveryOptionReachesTheTool)
{
    auto env = env_for({"-d", "out/%hostname%-%rank%", "-o", "run_%pid%", "--output-format",
                        "json sqlite,html", "--events", "page-fault,queue-suspend", "--raw",
                        "raw_%pid%.log", "--thrashing-threshold", "9", "--no-summary",
                        "--system-wide", "p"});
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_OUTPUT_DIRECTORY"), "out/%hostname%-%rank%");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_OUTPUT_FILE"), "run_%pid%");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_OUTPUT_FORMAT"), "json,sqlite");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_EVENTS"), "page-fault,queue-suspend");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_RAW_FILE"), "raw_%pid%.log");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_THRASHING_THRESHOLD"), "9");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_SUMMARY_STDERR"), "0");
    EXPECT_EQ(env_get(env, "ROCPROFILER_KFD_ALL_PROCESSES"), "1");
    // html alone: the tool still writes the summary the report reads.
    EXPECT_EQ(env_get(env_for({"--output-format", "html", "p"}), "ROCPROF_KFD_OUTPUT_FORMAT"),
              "summary");
}

TEST(Environment, OptionsOverrideTheUsersVariablesOthersStay)
{
    env_list user = {"ROCPROF_KFD_OUTPUT_DIRECTORY=old", "ROCPROF_KFD_THRASHING_THRESHOLD=3"};
    auto     env  = env_for({"-d", "new", "p"}, user);
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_OUTPUT_DIRECTORY"), "new");
    EXPECT_EQ(env_get(env, "ROCPROF_KFD_THRASHING_THRESHOLD"), "3");
}

TEST(Environment, Appended)
{
    EXPECT_EQ(appended("", "/x.so"), "/x.so");
    EXPECT_EQ(appended("/a.so", "/x.so"), "/a.so:/x.so");
    EXPECT_EQ(appended("/a.so: ", "/x.so"), "/a.so:/x.so");
    EXPECT_EQ(appended("/a.so", ""), "/a.so");
}

TEST(Environment, CommandLineOnlyForAReplayWithoutProgram)
{
    // A program (and each of its children) is named by its own /proc/self/cmdline: an
    // inherited value would name the wrong process.
    auto program = env_for({"p"}, {"ROCPROF_KFD_COMMAND_LINE=stale"});
    EXPECT_FALSE(env_has(program, "ROCPROF_KFD_COMMAND_LINE"));
    auto replay = env_for({"--emulate", "w.log"});
    EXPECT_EQ(env_get(replay, "ROCPROF_KFD_COMMAND_LINE"), "rocprof-kfd\n--emulate\nw.log");
}

TEST(Templates, FixedPrefix)
{
    EXPECT_EQ(fixed_prefix("rocprof-kfd/%hostname%/%pid%"), "rocprof-kfd");
    EXPECT_EQ(fixed_prefix("out"), "out");
    EXPECT_EQ(fixed_prefix("a/b/c"), "a/b/c");
    EXPECT_EQ(fixed_prefix("%pid%"), ".");
    EXPECT_EQ(fixed_prefix("/abs/x%rank%/y"), "/abs");
    EXPECT_EQ(fixed_prefix("/%pid%"), "/");
    EXPECT_EQ(fixed_prefix("a//b/"), "a/b");
}

TEST(Capabilities, CapSysAdminFromProcStatus)
{
    const std::string root  = "Name:\tx\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\n"
                              "CapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n";
    const std::string user  = "Name:\tx\nCapEff:\t0000000000000000\n";
    const std::string only  = "CapEff:\t0000000000200000\n"; // bit 21
    const std::string not21 = "CapEff:\t00000000001fffff\n";
    EXPECT_TRUE(has_cap_sys_admin(root));
    EXPECT_FALSE(has_cap_sys_admin(user));
    EXPECT_TRUE(has_cap_sys_admin(only));
    EXPECT_FALSE(has_cap_sys_admin(not21));
    EXPECT_FALSE(has_cap_sys_admin(""));
    EXPECT_FALSE(has_cap_sys_admin("CapEff:\tzz\n"));
}

TEST(ExitStatus, ShellStatus)
{
    EXPECT_EQ(shell_status(0), 0);
    EXPECT_EQ(shell_status(3 << 8), 3);
    EXPECT_EQ(shell_status(255 << 8), 255);
    EXPECT_EQ(shell_status(SIGTERM), 143); // WIFSIGNALED: the low bits hold the signal
    EXPECT_EQ(shell_status(SIGKILL), 137);
    EXPECT_EQ(shell_status(SIGSEGV | 0x80), 139); // with a core dump
}

TEST(Locate, FirstExisting)
{
    auto exists = [](const std::string& p) { return p == "/b" || p == "/c"; };
    EXPECT_EQ(first_existing({"/a", "/b", "/c"}, exists), "/b");
    EXPECT_EQ(first_existing({"", "/a"}, exists), "");
    EXPECT_EQ(first_existing({}, exists), "");
}
