// MIT License - see LICENSE.
#include "options.hpp"

#include <algorithm>
#include <cstddef>

namespace rocprof_kfd
{
namespace
{
const char* const usage =
    "usage: rocprof-kfd [options] [--] <program> [args...]\n"
    "       rocprof-kfd [options] --emulate LOG [--] [<program> [args...]]\n"
    "       rocprof-kfd merge [args...]     (runs rocprof-kfd-merge)\n"
    "       rocprof-kfd report [args...]    (runs rocprof-kfd-report)\n"
    "\n"
    "Runs the program with the page-migration profiler (the SDK and its bundled tool) and\n"
    "writes, per traced process, a summary and the chosen trace files. Exits with the\n"
    "program's exit status (128+N if it died of signal N).\n"
    "\n"
    "  -d, --output-directory DIR   where each process writes its files\n"
    "                               (default rocprof-kfd/%hostname%/%pid%)\n"
    "  -o, --output-file STEM       file names STEM_<name> instead of <name>\n"
    "                               DIR and STEM may use %pid% %ppid% %hostname% %rank%\n"
    "                               %env{NAME}%, expanded in each traced process\n"
    "  --output-format LIST         any of summary csv json perfetto chrome-trace sqlite\n"
    "                               html, comma or space separated\n"
    "                               (default summary,csv,perfetto)\n"
    "  --events LIST                any of page-migrate page-fault queue-suspend\n"
    "                               unmap-from-gpu (default all)\n"
    "  --raw FILE                   also write the raw KFD event text, replayable with\n"
    "                               --emulate (FILE may use the placeholders)\n"
    "  --thrashing-threshold N      migrations back and forth that make a range\n"
    "                               thrashing (default 4)\n"
    "  --no-summary                 do not print the summary on stderr\n"
    "  --system-wide                record every process's events (needs CAP_SYS_ADMIN)\n"
    "  --emulate LOG                run under the KFD emulator replaying LOG; with no\n"
    "                               program, just replay it\n"
    "  --emulator-stats FILE        with --emulate: write the emulator's statistics\n"
    "  -h, --help                   this text\n"
    "  --version                    the version\n"
    "\n"
    "Exit status: the program's; 2 for a bad command line or an output directory that\n"
    "cannot be written; 126/127 when the program cannot be run or is not found.\n";

const std::vector<std::string> known_formats = {"summary",  "csv",          "json",
                                                "perfetto", "chrome-trace", "sqlite"};
const std::vector<std::string> defaults      = {"summary", "csv", "perfetto"};
const std::vector<std::string> known_events  = {"page-migrate", "page-fault", "queue-suspend",
                                                "unmap-from-gpu"};

bool
contains(const std::vector<std::string>& list, const std::string& word)
{
    return std::find(list.begin(), list.end(), word) != list.end();
}

std::string
joined(const std::vector<std::string>& words)
{
    std::string out;
    for(const auto& w : words)
        out += (out.empty() ? "" : " ") + w;
    return out;
}

// Options that take a value, by every spelling.
enum class valued
{
    none,
    output_directory,
    output_file,
    output_format,
    events,
    raw,
    emulate,
    emulator_stats,
    thrashing_threshold,
};

struct valued_option
{
    const char* name;
    valued      which;
};

const valued_option valued_options[] = {
    {"-d", valued::output_directory},
    {"--output-directory", valued::output_directory},
    {"-o", valued::output_file},
    {"--output-file", valued::output_file},
    {"--output-format", valued::output_format},
    {"--events", valued::events},
    {"--raw", valued::raw},
    {"--emulate", valued::emulate},
    {"--emulator-stats", valued::emulator_stats},
    {"--thrashing-threshold", valued::thrashing_threshold},
};

valued
find_valued(const std::string& name)
{
    for(const auto& o : valued_options)
        if(name == o.name) return o.which;
    return valued::none;
}

// Adds the words of a list option, each checked against the known names; "" on success.
std::string
add_names(const std::string& option, const std::string& value,
          const std::vector<std::string>& known, std::vector<std::string>& out, bool* html)
{
    auto words = split_list(value);
    if(words.empty()) return option + " needs at least one name (" + joined(known) + ")";
    for(const auto& w : words)
    {
        if(html && w == "html")
        {
            *html = true;
            continue;
        }
        if(!contains(known, w))
            return option + ": unknown name '" + w + "' (choose from " + joined(known) +
                   (html ? " html" : "") + ")";
        if(!contains(out, w)) out.push_back(w);
    }
    return "";
}

std::string
set_value(options& opts, valued which, const std::string& option, const std::string& value,
          bool& formats_given)
{
    if(value.empty()) return option + " needs a non-empty value";
    switch(which)
    {
    case valued::output_directory:
        opts.output_directory = value;
        return "";
    case valued::output_file:
        // A file name prefix: a '/' would name folders that nobody creates (every file then
        // fails), or write outside the output folder.
        if(value.find('/') != std::string::npos)
            return option + " is a file name prefix and cannot hold a '/': '" + value + "'";
        opts.output_file = value;
        return "";
    case valued::raw:
        opts.raw_file = value;
        return "";
    case valued::emulate:
        opts.emulate_log = value;
        return "";
    case valued::emulator_stats:
        opts.emulator_stats = value;
        return "";
    case valued::output_format:
        if(!formats_given) opts.formats.clear(); // the first --output-format replaces the default
        formats_given = true;
        return add_names(option, value, known_formats, opts.formats, &opts.html);
    case valued::events:
        return add_names(option, value, known_events, opts.events, nullptr);
    case valued::thrashing_threshold:
        // The tool's range (config.cpp): a larger value reached it, which then used 4.
        if(value.size() > 7 || value.find_first_not_of("0123456789") != std::string::npos ||
           std::stoul(value) == 0 || std::stoul(value) > 1000000)
            return option + " needs a whole number from 1 to 1000000, not '" + value + "'";
        opts.thrashing_threshold = value;
        return "";
    case valued::none:
        break;
    }
    return "internal error: " + option;
}

parse_result
failure(std::string message)
{
    parse_result r;
    r.what  = action::error;
    r.error = std::move(message);
    return r;
}
} // namespace

const char*
usage_text()
{
    return usage;
}

const std::vector<std::string>&
tool_formats()
{
    return known_formats;
}

const std::vector<std::string>&
default_formats()
{
    return defaults;
}

const std::vector<std::string>&
event_names()
{
    return known_events;
}

std::vector<std::string>
split_list(const std::string& text)
{
    std::vector<std::string> out;
    std::string              word;
    for(char c : text + ",")
    {
        if(c == ',' || c == ' ' || c == '\t')
        {
            if(!word.empty()) out.push_back(word);
            word.clear();
        }
        else
            word.push_back(c);
    }
    return out;
}

parse_result
parse_command_line(const std::vector<std::string>& args)
{
    parse_result result;
    if(!args.empty() && (args[0] == "merge" || args[0] == "report"))
    {
        result.what       = action::subcommand;
        result.subcommand = args[0];
        result.subcommand_args.assign(args.begin() + 1, args.end());
        return result;
    }
    options& opts        = result.opts;
    opts.formats         = defaults;
    bool   formats_given = false;
    size_t i             = 0;
    for(; i < args.size(); ++i)
    {
        const std::string& word = args[i];
        if(word == "--")
        {
            ++i;
            break;
        }
        if(word.empty() || word[0] != '-' || word == "-") break; // the program starts here
        if(word == "-h" || word == "--help")
        {
            result.what = action::help;
            return result;
        }
        if(word == "--version")
        {
            result.what = action::version;
            return result;
        }
        if(word == "--system-wide")
        {
            opts.system_wide = true;
            continue;
        }
        if(word == "--no-summary")
        {
            opts.quiet_summary = true;
            continue;
        }
        // --name=value, or a valued option followed by its value.
        std::string name = word;
        std::string value;
        bool        glued = false;
        auto        eq    = word.find('=');
        if(word.rfind("--", 0) == 0 && eq != std::string::npos)
        {
            name  = word.substr(0, eq);
            value = word.substr(eq + 1);
            glued = true;
        }
        valued which = find_valued(name);
        if(which == valued::none)
            return failure("unknown option '" + word + "' (see rocprof-kfd --help)");
        if(!glued)
        {
            // "-d -- ./app" forgot the value: "--" is never taken as one.
            if(i + 1 >= args.size() || args[i + 1] == "--") return failure(name + " needs a value");
            value = args[++i];
        }
        auto error = set_value(opts, which, name, value, formats_given);
        if(!error.empty()) return failure(error);
    }
    opts.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());

    if(!opts.emulator_stats.empty() && opts.emulate_log.empty())
        return failure("--emulator-stats needs --emulate LOG");
    if(opts.program.empty() && opts.emulate_log.empty())
        return failure("no program given (usage: rocprof-kfd [options] -- <program> [args...])");
    if(opts.formats.empty() && !opts.html) return failure("--output-format: no format given");
    result.what = action::run;
    return result;
}
} // namespace rocprof_kfd
