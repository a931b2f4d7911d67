// MIT License - see LICENSE.
//
// rocprof-kfd run as users run it: usage errors, `--`, exit statuses and signals, the
// environment the program and the tools get, pre-launch refusals, subcommands, and a
// replayed log whose records a user's own tool must all receive (checked against
// rocprof-kfd-gen's --expect oracle). The bundled tool is replaced by a stand-in
// (ROCPROF_KFD_TOOL_LIBRARY) that records the variables it sees.
#include "cli_support.hpp"
#include "sanitizer.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

using namespace cli_test;

namespace
{
const std::string command   = ROCPROF_KFD;
const std::string program   = TEST_PROGRAM;
const std::string stand_in  = STAND_IN_TOOL;
const std::string user_tool = USER_TOOL;
const std::string preload   = USER_PRELOAD;
const std::string generator = KFD_GEN;

env_list
base_env(const scratch& dir)
{
    return {"PATH=/usr/bin:/bin", "TMPDIR=" + dir.path(), "ROCPROF_KFD_TOOL_LIBRARY=" + stand_in,
            "ROCPROFILER_LOG_LEVEL=error", "CLI_TEST_TOOL_OUT=" + dir.file("tool.txt")};
}

std::vector<std::string>
with(std::vector<std::string> head, const std::vector<std::string>& tail)
{
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
}

std::string
value_in(const std::vector<std::string>& env_lines, const std::string& name)
{
    for(const auto& l : env_lines)
        if(l.rfind(name + "=", 0) == 0) return l.substr(name.size() + 1);
    return "<unset>";
}

void
expect_one_line_error(const result& r, int status, const std::string& fragment)
{
    EXPECT_EQ(r.status, status) << r.err;
    ASSERT_EQ(r.err_lines.size(), 1u) << r.err;
    EXPECT_EQ(r.err_lines[0].rfind("rocprof-kfd: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

// A copy of the command in its own folder, with fake rocprof-kfd-merge/-report next to it
// that write their arguments (one a line) to <name>.args and exit with 7.
std::string
command_copy_with_fakes(const scratch& dir, const std::vector<std::string>& fakes)
{
    std::string bin = dir.file("bin");
    mkdir(bin.c_str(), 0755);
    std::string copy = bin + "/rocprof-kfd";
    std::string cp   = "cp '" + command + "' '" + copy + "'";
    EXPECT_EQ(system(cp.c_str()), 0);
    for(const auto& name : fakes)
    {
        std::string path = bin + "/rocprof-kfd-" + name;
        write_file(path, "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > '" +
                             dir.file(name + ".args") + "'\nexit 7\n");
        chmod(path.c_str(), 0755);
    }
    return copy;
}
} // namespace

TEST(CliUsage, HelpAndVersion)
{
    scratch dir;
    auto    help = run({command, "--help"}, base_env(dir));
    EXPECT_EQ(help.status, 0);
    for(const char* option :
        {"--output-directory", "--output-file", "--output-format", "--events", "--raw",
         "--system-wide", "--emulate", "--emulator-stats", "%hostname%", "%rank%", "html",
         "chrome-trace", "sqlite", "merge", "report"})
        EXPECT_NE(help.out.find(option), std::string::npos) << option;
    auto version = run({command, "--version"}, base_env(dir));
    EXPECT_EQ(version.status, 0);
    EXPECT_EQ(version.out.rfind("rocprof-kfd " ROCPROFILER_VERSION_TEXT, 0), 0u) << version.out;
}

TEST(CliUsage, BadCommandLinesAreOneLineStatus2AndNothingRuns)
{
    scratch                                     dir;
    const auto                                  marker = dir.file("ran");
    const std::vector<std::vector<std::string>> bad    = {
           {"--bogus"},
           {"-d"},
           {"--output-format", "xml"},
           {"--output-format="},
           {"--events", "faults"},
           {"--thrashing-threshold", "-3"},
           {"--emulator-stats", "s.json"},
           {"--system-wide=yes"},
    };
    for(const auto& args : bad)
    {
        auto r = run(with(with({command}, args), {"--", program, "args", marker}), base_env(dir));
        expect_one_line_error(r, 2, "");
        EXPECT_FALSE(exists(marker)) << args[0];
    }
    expect_one_line_error(run({command}, base_env(dir)), 2, "no program");
    expect_one_line_error(run({command, "-d", "x", "--"}, base_env(dir)), 2, "no program");
}

TEST(CliRun, ProgramArgumentsAfterDoubleDashAreUntouched)
{
    scratch dir;
    auto    out = dir.file("args.txt");
    auto    r =
        run({command, "-d", dir.file("o"), "--", program, "args", out, "--help", "-d", "--", "a b"},
            base_env(dir));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(lines_of(read_file(out)), (std::vector<std::string>{"--help", "-d", "--", "a b"}));
    // Without `--`, the program starts at the first word that is not an option.
    auto r2 = run({command, "-d", dir.file("o"), program, "args", out, "-o", "x"}, base_env(dir));
    EXPECT_EQ(r2.status, 0) << r2.err;
    EXPECT_EQ(lines_of(read_file(out)), (std::vector<std::string>{"-o", "x"}));
}

TEST(CliRun, ExitStatusIsTheProgramsOwn)
{
    scratch dir;
    for(int code : {0, 1, 3, 42, 255})
    {
        auto r = run({command, "-d", dir.file("o"), "--", program, "exit", std::to_string(code)},
                     base_env(dir));
        EXPECT_EQ(r.status, code) << r.err;
    }
}

TEST(CliRun, DeathBySignalIs128PlusN)
{
    scratch dir;
    for(int sig : {SIGTERM, SIGKILL, SIGINT, SIGUSR1})
    {
        auto r = run({command, "-d", dir.file("o"), "--", program, "raise", std::to_string(sig)},
                     base_env(dir));
        EXPECT_EQ(r.status, 128 + sig) << r.err;
    }
}

TEST(CliRun, MissingOrNotExecutableProgram)
{
    scratch dir;
    auto    missing =
        run({command, "-d", dir.file("o"), "--", dir.file("no-such-program")}, base_env(dir));
    expect_one_line_error(missing, 127, "no-such-program");
    auto in_path =
        run({command, "-d", dir.file("o"), "--", "no-such-program-in-path"}, base_env(dir));
    expect_one_line_error(in_path, 127, "no-such-program-in-path");
    write_file(dir.file("plain.txt"), "not a program\n");
    chmod(dir.file("plain.txt").c_str(), 0644);
    auto not_exec = run({command, "-d", dir.file("o"), "--", dir.file("plain.txt")}, base_env(dir));
    EXPECT_EQ(not_exec.status, 126) << not_exec.err;
}

TEST(CliSignals, ForwardedToTheProgram)
{
    for(int sig : {SIGUSR1, SIGUSR2, SIGHUP})
    {
        scratch dir;
        auto    r =
            start({command, "-d", dir.file("o"), "--", program, "wait", "3"}, base_env(dir), dir);
        ASSERT_EQ(read_gate_line(r), "ready");
        ASSERT_EQ(kill(r.pid, sig), 0);
        EXPECT_EQ(read_gate_line(r), "got " + std::to_string(sig));
        auto done = finish(r);
        EXPECT_EQ(done.status, 0) << "signal " << sig << ": " << done.err;
    }
}

TEST(CliSignals, TerminalSignalsReachTheProgramOnce)
{
    // ^C on the terminal signals the whole foreground group: the program gets it from the
    // terminal, and rocprof-kfd must not send it a second time.
    scratch dir;
    auto    r = start_on_tty({command, "-d", dir.file("o"), "--", program, "count", "3"},
                             base_env(dir), dir);
    if(r.terminal < 0) GTEST_SKIP() << "no pseudo-terminal available here";
    ASSERT_EQ(read_gate_line(r), "ready");
    ASSERT_EQ(write(r.terminal, "\x03", 1), 1);
    ASSERT_EQ(read_gate_line(r), "got " + std::to_string(SIGINT));
    // A SIGINT forwarded in error would be sent before this SIGUSR1 and delivered first.
    ASSERT_EQ(kill(r.pid, SIGUSR1), 0);
    EXPECT_EQ(read_gate_line(r), "got " + std::to_string(SIGUSR1));
    auto done = finish(r);
    close(r.terminal);
    EXPECT_EQ(done.status, 0) << done.err;
}

TEST(CliSignals, TerminationOfTheProgramIsItsStatus)
{
    for(int sig : {SIGTERM, SIGINT, SIGQUIT})
    {
        scratch dir;
        auto    r =
            start({command, "-d", dir.file("o"), "--", program, "wait", "3"}, base_env(dir), dir);
        ASSERT_EQ(read_gate_line(r), "ready");
        ASSERT_EQ(kill(r.pid, sig), 0);
        auto done = finish(r);
        EXPECT_EQ(done.status, 128 + sig) << done.err;
    }
}

TEST(CliEnvironment, UsersPreloadsAndToolsStillWork)
{
    scratch dir;
    auto    env = base_env(dir);
    // (In a sanitizer build, after the runtime: the sanitized preload needs it first.)
    env.push_back("LD_PRELOAD=" + test_sanitizer::preload(preload));
    env.push_back("ROCP_TOOL_LIBRARIES=" + user_tool);
    env.push_back("CLI_TEST_PRELOAD_OUT=" + dir.file("preload.txt"));
    env.push_back("CLI_TEST_USER_OUT=" + dir.file("user.txt"));
    env.push_back("MY_SETTING=kept as is");
    auto out = dir.file("env.txt");
    auto r   = run({command, "-d", dir.file("o") + "/%pid%", "--", program, "env", out}, env);
    ASSERT_EQ(r.status, 0) << r.err;
    auto seen = lines_of(read_file(out));
    // Appended, never replaced.
    auto preload_value = value_in(seen, "LD_PRELOAD");
    EXPECT_EQ(preload_value.rfind(test_sanitizer::preload(preload) + ":", 0), 0u) << preload_value;
    EXPECT_NE(preload_value.find("librocprofiler-sdk.so"), std::string::npos) << preload_value;
    EXPECT_EQ(value_in(seen, "ROCP_TOOL_LIBRARIES"), user_tool + ":" + stand_in);
    EXPECT_EQ(value_in(seen, "MY_SETTING"), "kept as is");
    EXPECT_EQ(value_in(seen, "ROCPROF_KFD_OUTPUT_DIRECTORY"), dir.file("o") + "/%pid%");
    // The user's preload ran in the program, the user's tool and the stand-in were configured.
    EXPECT_NE(read_file(dir.file("preload.txt")).find("preload "), std::string::npos);
    EXPECT_NE(read_file(dir.file("user.txt")).find("CONFIGURED,"), std::string::npos);
    EXPECT_NE(read_file(dir.file("user.txt")).find("FINALIZED"), std::string::npos);
    EXPECT_NE(read_file(dir.file("tool.txt")).find(" configured"), std::string::npos);
}

TEST(CliEnvironment, ChildProcessesAreTracedToo)
{
    scratch dir;
    auto    out = dir.file("env.txt");
    auto    r =
        run({command, "-d", dir.file("o") + "/%pid%", "--", program, "child", out}, base_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    // The child inherited the preload: the tool was configured in two processes.
    std::vector<std::string> pids;
    for(const auto& line : lines_of(read_file(dir.file("tool.txt"))))
        if(line.size() > 11 && line.compare(line.size() - 11, 11, " configured") == 0)
            pids.push_back(line.substr(5, line.size() - 16));
    ASSERT_EQ(pids.size(), 2u) << read_file(dir.file("tool.txt"));
    EXPECT_NE(pids[0], pids[1]);
    EXPECT_NE(value_in(lines_of(read_file(out)), "LD_PRELOAD").find("librocprofiler-sdk.so"),
              std::string::npos);
}

TEST(CliEnvironment, EveryOptionReachesTheTool)
{
    scratch dir;
    auto    r =
        run({command, "-d", dir.file("o") + "/%hostname%", "-o", "run_%pid%", "--output-format",
             "json sqlite", "--events", "page-fault", "--raw", "raw_%pid%.log",
             "--thrashing-threshold", "6", "--no-summary", "--", program, "exit", "0"},
            base_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    auto text = read_file(dir.file("tool.txt"));
    for(const char* expected :
        {"ROCPROF_KFD_OUTPUT_FILE=run_%pid%", "ROCPROF_KFD_OUTPUT_FORMAT=json,sqlite",
         "ROCPROF_KFD_EVENTS=page-fault", "ROCPROF_KFD_RAW_FILE=raw_%pid%.log",
         "ROCPROF_KFD_THRASHING_THRESHOLD=6", "ROCPROF_KFD_SUMMARY_STDERR=0"})
        EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
    EXPECT_EQ(text.find("ROCPROF_KFD_COMMAND_LINE="), std::string::npos) << text;
    EXPECT_NE(text.find("ROCPROF_KFD_OUTPUT_DIRECTORY=" + dir.file("o") + "/%hostname%"),
              std::string::npos)
        << text;
    // The fixed part of the directory is created before the program starts.
    EXPECT_TRUE(exists(dir.file("o")));
}

static bool
has_cap_sys_admin()
{
    std::string status = read_file("/proc/self/status");
    auto        cap    = status.find("CapEff:");
    return cap != std::string::npos &&
           ((std::stoull(status.substr(cap + 7), nullptr, 16) >> 21) & 1u) != 0;
}

TEST(CliEnvironment, SystemWideSetsAllProcessesWithCapSysAdmin)
{
    if(!has_cap_sys_admin()) GTEST_SKIP() << "needs CAP_SYS_ADMIN (run as root)";
    scratch dir;
    auto    out = dir.file("env.txt");
    auto    r   = run({command, "--system-wide", "-d", dir.file("o"), "--", program, "env", out},
                      base_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(value_in(lines_of(read_file(out)), "ROCPROFILER_KFD_ALL_PROCESSES"), "1");
}

TEST(CliEnvironment, SystemWideRefusedWithoutCapSysAdmin)
{
    scratch                  dir;
    auto                     marker = dir.file("ran");
    std::vector<std::string> argv   = {command, "--system-wide", "-d",   dir.file("o"),
                                       "--",    program,         "args", marker};
    if(has_cap_sys_admin())
    {
        // Drop CAP_SYS_ADMIN from the bounding set, so that rocprof-kfd starts without it
        // even as root.
        std::vector<std::string> drop  = {"/usr/bin/setpriv", "--bounding-set", "-sys_admin",
                                          "--inh-caps", "-sys_admin"};
        auto                     probe = run(with(drop, {"/bin/true"}), base_env(dir));
        if(probe.status != 0)
            GTEST_SKIP() << "setpriv cannot drop CAP_SYS_ADMIN here: " << probe.err;
        argv = with(drop, argv);
    }
    auto r = run(argv, base_env(dir));
    expect_one_line_error(r, 2, "CAP_SYS_ADMIN");
    EXPECT_FALSE(exists(marker));
}

TEST(CliOutputs, UnwritableDirectoryIsReportedBeforeLaunch)
{
    scratch dir;
    auto    marker = dir.file("ran");
    write_file(dir.file("a-file"), "x");
    auto r = run({command, "-d", dir.file("a-file") + "/sub/%pid%", "--", program, "args", marker},
                 base_env(dir));
    expect_one_line_error(r, 2, dir.file("a-file") + "/sub");
    EXPECT_FALSE(exists(marker));
    // The --raw file's folder as well (once found only by the tool, at run time, status 0).
    auto raw = run({command, "-d", dir.file("out"), "--raw", dir.file("a-file") + "/raw.log", "--",
                    program, "args", marker},
                   base_env(dir));
    expect_one_line_error(raw, 2, dir.file("a-file"));
    EXPECT_FALSE(exists(marker));
}

TEST(CliEmulate, MissingOrUnusableLog)
{
    scratch dir;
    expect_one_line_error(run({command, "--emulate", dir.file("none.log")}, base_env(dir)), 2,
                          dir.file("none.log"));
    expect_one_line_error(run({command, "--emulate", dir.path()}, base_env(dir)), 2,
                          "not a regular file");
}

TEST(Subcommands, MergeAndReportRunNextToTheCommand)
{
    scratch dir;
    auto    copy = command_copy_with_fakes(dir, {"merge", "report"});
    auto    m    = run({copy, "merge", "-o", "out", "r0", "r 1"}, base_env(dir));
    EXPECT_EQ(m.status, 7) << m.err;
    EXPECT_EQ(lines_of(read_file(dir.file("merge.args"))),
              (std::vector<std::string>{"-o", "out", "r0", "r 1"}));
    auto rep = run({copy, "report", "--help"}, base_env(dir));
    EXPECT_EQ(rep.status, 7) << rep.err;
    EXPECT_EQ(lines_of(read_file(dir.file("report.args"))), (std::vector<std::string>{"--help"}));
}

// ld.so splits LD_PRELOAD at spaces and colons: a tool or SDK whose path holds one was
// "ignored" by ld.so and the program ran untraced with status 0. Refused before launching.
TEST(CliUsage, LibraryPathsThatPreloadingWouldSplitAreRefused)
{
    scratch           dir;
    const std::string folder = dir.file("with space");
    ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
    const std::string tool = folder + "/tool.so";
    ASSERT_EQ(system(("cp '" + stand_in + "' '" + tool + "'").c_str()), 0);
    auto env = base_env(dir);
    for(auto& e : env)
        if(e.rfind("ROCPROF_KFD_TOOL_LIBRARY=", 0) == 0) e = "ROCPROF_KFD_TOOL_LIBRARY=" + tool;
    auto r = run({command, "-d", dir.file("out"), "--", program, "exit", "0"}, env);
    expect_one_line_error(r, 2, "its path holds a space");
    EXPECT_FALSE(exists(dir.file("tool.txt"))); // nothing was launched
}

TEST(Subcommands, MissingSubcommandIsOneLineStatus2)
{
    scratch dir;
    auto    copy = command_copy_with_fakes(dir, {});
    expect_one_line_error(run({copy, "merge", "x"}, base_env(dir)), 2, "rocprof-kfd-merge");
    expect_one_line_error(run({copy, "report", "x"}, base_env(dir)), 2, "rocprof-kfd-report");
}

TEST(Subcommands, HtmlFormatRunsTheReportPerOutputDirectory)
{
    scratch dir;
    auto    copy = command_copy_with_fakes(dir, {"report"});
    auto    out  = dir.file("out");
    auto    r    = run({copy, "-d", out, "--output-format", "html,csv", "--", program, "exit", "4"},
                       base_env(dir));
    EXPECT_EQ(r.status, 4) << r.err; // the program's status, though the report failed
    EXPECT_EQ(lines_of(read_file(dir.file("report.args"))),
              (std::vector<std::string>{"-o", out + "/report.html", out + "/summary.json"}));
    EXPECT_NE(r.err.find("rocprof-kfd-report failed"), std::string::npos) << r.err;
}

TEST(Subcommands, RepairAfterDeathBySignal)
{
    scratch dir;
    auto    copy = command_copy_with_fakes(dir, {"merge"});
    auto    out  = dir.file("out");
    auto    r    = run({copy, "-d", out, "--", program, "raise", "15"}, base_env(dir));
    EXPECT_EQ(r.status, 143) << r.err;
    EXPECT_EQ(lines_of(read_file(dir.file("merge.args"))),
              (std::vector<std::string>{"--repair", out}));
    // A normal exit needs no repair.
    unlink(dir.file("merge.args").c_str());
    auto ok = run({copy, "-d", out, "--", program, "exit", "0"}, base_env(dir));
    EXPECT_EQ(ok.status, 0);
    EXPECT_FALSE(exists(dir.file("merge.args")));
}
