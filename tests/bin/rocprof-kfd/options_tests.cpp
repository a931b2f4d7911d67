// MIT License - see LICENSE.
//
// rocprof-kfd's option parser: every option in both spellings, bad values, `--` and where
// the program starts, subcommands.
#include "options.hpp"

#include <gtest/gtest.h>

using rocprof_kfd::action;
using rocprof_kfd::parse_command_line;
using words = std::vector<std::string>;

namespace
{
rocprof_kfd::options
parsed_ok(const words& args)
{
    auto r = parse_command_line(args);
    EXPECT_EQ(r.what, action::run) << r.error;
    return r.opts;
}

std::string
error_of(const words& args)
{
    auto r = parse_command_line(args);
    EXPECT_EQ(r.what, action::error);
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line: " << r.error;
    return r.error;
}
} // namespace

TEST(Options, DefaultsAndProgram)
{
    auto o = parsed_ok({"--", "./app", "-x", "--y"});
    EXPECT_EQ(o.program, (words{"./app", "-x", "--y"}));
    EXPECT_EQ(o.formats, (words{"summary", "csv", "perfetto"}));
    EXPECT_TRUE(o.output_directory.empty());
    EXPECT_TRUE(o.events.empty());
    EXPECT_FALSE(o.system_wide);
    EXPECT_FALSE(o.html);
}

TEST(Options, ProgramStartsAtFirstNonOption)
{
    // The program's own options are never taken as rocprof-kfd's.
    auto o = parsed_ok({"-d", "out", "./app", "-d", "theirs", "--", "x"});
    EXPECT_EQ(o.output_directory, "out");
    EXPECT_EQ(o.program, (words{"./app", "-d", "theirs", "--", "x"}));
    // After `--`, even an option-looking word is the program.
    EXPECT_EQ(parsed_ok({"--", "--help"}).program, (words{"--help"}));
    EXPECT_EQ(parsed_ok({"--", "merge"}).program, (words{"merge"}));
}

TEST(Options, EveryValuedOptionInEverySpelling)
{
    auto o = parsed_ok({"-d", "D1", "-o", "S1", "--raw", "R", "--emulate", "L", "--emulator-stats",
                        "ST", "--thrashing-threshold", "7", "--", "p"});
    EXPECT_EQ(o.output_directory, "D1");
    EXPECT_EQ(o.output_file, "S1");
    EXPECT_EQ(o.raw_file, "R");
    EXPECT_EQ(o.emulate_log, "L");
    EXPECT_EQ(o.emulator_stats, "ST");
    EXPECT_EQ(o.thrashing_threshold, "7");
    auto g = parsed_ok({"--output-directory=out/%hostname%-%rank%", "--output-file", "run_%pid%",
                        "--raw=raw.log", "--emulate=x.log", "p"});
    EXPECT_EQ(g.output_directory, "out/%hostname%-%rank%");
    EXPECT_EQ(g.output_file, "run_%pid%");
    EXPECT_EQ(g.raw_file, "raw.log");
    EXPECT_EQ(g.emulate_log, "x.log");
    // A later repetition wins.
    EXPECT_EQ(parsed_ok({"-d", "a", "-d", "b", "p"}).output_directory, "b");
}

TEST(Options, Flags)
{
    auto o = parsed_ok({"--system-wide", "--no-summary", "p"});
    EXPECT_TRUE(o.system_wide);
    EXPECT_TRUE(o.quiet_summary);
}

TEST(Options, FormatsCommaOrSpaceSeparated)
{
    EXPECT_EQ(parsed_ok({"--output-format", "json,sqlite", "p"}).formats,
              (words{"json", "sqlite"}));
    EXPECT_EQ(parsed_ok({"--output-format", "csv json  perfetto", "p"}).formats,
              (words{"csv", "json", "perfetto"}));
    // Repeated options add up; duplicates count once.
    EXPECT_EQ(
        parsed_ok({"--output-format=csv", "--output-format", "chrome-trace,csv", "p"}).formats,
        (words{"csv", "chrome-trace"}));
    auto h = parsed_ok({"--output-format", "html,summary", "p"});
    EXPECT_TRUE(h.html);
    EXPECT_EQ(h.formats, (words{"summary"})); // html is the command's, not the tool's
    auto only_html = parsed_ok({"--output-format", "html", "p"});
    EXPECT_TRUE(only_html.html);
    EXPECT_TRUE(only_html.formats.empty());
}

TEST(Options, Events)
{
    EXPECT_EQ(parsed_ok({"--events", "page-fault,unmap-from-gpu", "p"}).events,
              (words{"page-fault", "unmap-from-gpu"}));
    EXPECT_EQ(parsed_ok({"--events=page-migrate queue-suspend", "p"}).events,
              (words{"page-migrate", "queue-suspend"}));
}

TEST(Options, EmulateWithoutProgram)
{
    auto o = parsed_ok({"--emulate", "x.log", "-d", "out"});
    EXPECT_TRUE(o.program.empty());
    EXPECT_EQ(o.emulate_log, "x.log");
}

TEST(Options, HelpVersionSubcommands)
{
    EXPECT_EQ(parse_command_line({"--help"}).what, action::help);
    EXPECT_EQ(parse_command_line({"-h"}).what, action::help);
    EXPECT_EQ(parse_command_line({"-d", "x", "--help", "--bogus"}).what, action::help);
    EXPECT_EQ(parse_command_line({"--version"}).what, action::version);
    auto m = parse_command_line({"merge", "-o", "out", "a", "b"});
    EXPECT_EQ(m.what, action::subcommand);
    EXPECT_EQ(m.subcommand, "merge");
    EXPECT_EQ(m.subcommand_args, (words{"-o", "out", "a", "b"}));
    auto r = parse_command_line({"report", "--help"});
    EXPECT_EQ(r.what, action::subcommand);
    EXPECT_EQ(r.subcommand, "report");
    EXPECT_EQ(r.subcommand_args, (words{"--help"}));
}

TEST(Options, BadCommandLines)
{
    EXPECT_NE(error_of({"--bogus", "p"}).find("unknown option '--bogus'"), std::string::npos);
    EXPECT_NE(error_of({"-x", "p"}).find("unknown option '-x'"), std::string::npos);
    EXPECT_NE(error_of({"--system-wide=1", "p"}).find("unknown option"), std::string::npos);
    EXPECT_NE(error_of({"-d"}).find("-d needs a value"), std::string::npos);
    EXPECT_NE(error_of({"-d", "--", "p"}).find("-d needs a value"), std::string::npos);
    EXPECT_NE(error_of({"-d", "", "p"}).find("non-empty"), std::string::npos);
    EXPECT_NE(error_of({"--output-format", "xml", "p"}).find("unknown name 'xml'"),
              std::string::npos);
    EXPECT_NE(error_of({"--output-format", ",", "p"}).find("at least one"), std::string::npos);
    EXPECT_NE(error_of({"--events", "page-faults", "p"}).find("unknown name 'page-faults'"),
              std::string::npos);
    for(const char* bad : {"0", "-1", "x", "1e3", "9999999999", "1000001", "5000000"})
        EXPECT_NE(error_of({"--thrashing-threshold", bad, "p"}).find("whole number"),
                  std::string::npos)
            << bad;
    EXPECT_NE(error_of({"-o", "sub/x", "p"}).find("cannot hold a '/'"), std::string::npos);
    EXPECT_NE(error_of({"-o", "../esc", "p"}).find("cannot hold a '/'"), std::string::npos);
    EXPECT_NE(error_of({"--emulator-stats", "s.json", "p"}).find("needs --emulate"),
              std::string::npos);
    EXPECT_NE(error_of({}).find("no program"), std::string::npos);
    EXPECT_NE(error_of({"-d", "out", "--"}).find("no program"), std::string::npos);
}
