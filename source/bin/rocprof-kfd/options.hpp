// MIT License - see LICENSE.
//
// rocprof-kfd's command line, parsed by a pure function: words in, a description of what to
// do out (run a program, print help or the version, dispatch a subcommand, or fail with one
// line). Nothing here touches the file system or the environment.
#pragma once

#include <string>
#include <vector>

namespace rocprof_kfd
{
enum class action
{
    run,        // trace `program` (or, with --emulate and no program, replay the log)
    help,       // print usage_text() on stdout, exit 0
    version,    // print the version on stdout, exit 0
    subcommand, // exec rocprof-kfd-<subcommand> with subcommand_args
    error,      // print "rocprof-kfd: <error>" on stderr, exit 2
};

struct options
{
    std::string              output_directory; // template; empty: the default
    std::string              output_file;      // template; empty: no stem
    std::vector<std::string> formats;          // canonical names, without duplicates
    bool                     html = false;     // "html" was among the formats
    std::vector<std::string> events;           // canonical names; empty: all
    std::string              raw_file;         // template; empty: none
    bool                     system_wide = false;
    std::string              emulate_log;         // empty: no emulation
    std::string              emulator_stats;      // only with emulate_log
    std::string              thrashing_threshold; // digits; empty: the tool's default
    bool                     quiet_summary = false;
    std::vector<std::string> program; // program and its arguments; may be empty with emulate
};

struct parse_result
{
    enum action              what = action::error;
    options                  opts;
    std::string              error;           // for action::error: one line, no prefix
    std::string              subcommand;      // "merge" or "report"
    std::vector<std::string> subcommand_args; // words after the subcommand
};

// args: the words after argv[0].
parse_result parse_command_line(const std::vector<std::string>& args);

// The text printed by --help.
const char* usage_text();

// The output formats the tool knows, and those the command adds (html).
const std::vector<std::string>& tool_formats();
const std::vector<std::string>& default_formats();
const std::vector<std::string>& event_names();

// Splits "a,b c" at commas and spaces into words, dropping empty ones.
std::vector<std::string> split_list(const std::string& text);
} // namespace rocprof_kfd
