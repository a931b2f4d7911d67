// MIT License - see LICENSE.
//
// rocprof-kfd-gen: writes a KFD SMI event log in the kernel's text for a named scenario,
// deterministic for a seed, and optionally the page-migration records it must produce.
// Usage: rocprof-kfd-gen --help (and docs/kfd-emulator.md).
#include "expect_csv.hpp"
#include "kernel_text.hpp"
#include "workload.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace
{
using namespace kfd_gen;

const char* const usage_text =
    "usage: rocprof-kfd-gen [options]\n"
    "Writes a KFD SMI event log (the amdkfd kernel's text, one message per line) for the\n"
    "KFD emulator, deterministic for a given seed.\n"
    "\n"
    "  --scenario NAME    streaming | thrashing | prefetch | eviction | unmap | mixed |\n"
    "                     managed (streaming with thrashing ranges) (default mixed)\n"
    "  --era ERA          kernel format: 6.0 (6.0-6.11) | 6.12 | 6.13 (6.13+) | 2026 |\n"
    "                     proposed (rescheduled restores as id 14) (default 6.13)\n"
    "  --gpus N           emulated GPUs, 1-16 (default 1)\n"
    "  --events N         exact number of event lines, up to 10000000 (default 200)\n"
    "  --seed S           seed (default 1)\n"
    "  --pid P            pid of the traced process in the log (default: from the seed)\n"
    "  --other-pids K     other processes whose events are mixed in (default 0)\n"
    "  --start-ns NS      time of the first operation, CLOCK_BOOTTIME ns\n"
    "  --gfx NAME         gfx target written in the '#@ gpu' directives (default gfx90a)\n"
    "  --process-events   PROCESS_START/END (ids c, d) first and last (6.16+ kernels)\n"
    "  --pace MODE        add '#@ pace MODE': lossless | realtime | max | rate=N\n"
    "  --timestamps MODE  add '#@ timestamps MODE': keep | rebase\n"
    "  --fifo BYTES       '#@ fifo BYTES' instead of the era's size (1024 or 8192)\n"
    "  --raw              kernel text only: no comment, no directive\n"
    "  -o, --output FILE  the log (default: standard output)\n"
    "  --expect FILE      also write the expected page-migration records as CSV\n"
    "  -h, --help         this text\n";

struct cli
{
    options     opts;
    std::string output = "-";
    std::string expect;
    std::string pace;     // the directive's words
    std::string pace_arg; // as given to --pace
    std::string timestamps;
    unsigned    fifo = 0;
    bool        raw  = false;
};

[[noreturn]] void
fail(const std::string& message)
{
    std::fprintf(stderr, "rocprof-kfd-gen: %s\n", message.c_str());
    std::exit(2);
}

uint64_t
number(const std::string& option, const char* text, uint64_t lo, uint64_t hi)
{
    char* end            = nullptr;
    errno                = 0;
    unsigned long long v = std::strtoull(text, &end, 0);
    if(errno != 0 || end == text || *end != '\0' || text[0] == '-' || v < lo || v > hi)
        fail(option + ": expected a number from " + std::to_string(lo) + " to " +
             std::to_string(hi) + ", got '" + text + "'");
    return v;
}

std::string
pace_directive(const std::string& mode)
{
    if(mode == "lossless" || mode == "realtime" || mode == "max") return mode;
    if(mode.compare(0, 5, "rate=") == 0)
    {
        number("--pace", mode.c_str() + 5, 1, 1000000000);
        return "rate " + mode.substr(5);
    }
    fail("--pace: expected lossless, realtime, max or rate=N");
}

cli
parse(int argc, char** argv)
{
    cli c;
    for(int i = 1; i < argc; ++i)
    {
        std::string arg   = argv[i];
        auto        value = [&]() -> const char*
        {
            if(i + 1 >= argc) fail(arg + " needs a value");
            return argv[++i];
        };
        if(arg == "-h" || arg == "--help")
        {
            std::fputs(usage_text, stdout);
            std::exit(0);
        }
        else if(arg == "--scenario")
        {
            if(!parse_scenario(value(), c.opts.scenario)) fail("unknown scenario");
        }
        else if(arg == "--era")
        {
            if(!parse_era(value(), c.opts.era)) fail("unknown era");
        }
        else if(arg == "--gpus")
            c.opts.gpus = static_cast<unsigned>(number(arg, value(), 1, 16));
        else if(arg == "--events")
            c.opts.events = number(arg, value(), 0, 10000000); // the model is kept in memory
        else if(arg == "--seed")
            c.opts.seed = number(arg, value(), 0, UINT64_MAX);
        else if(arg == "--pid")
            c.opts.pid = static_cast<uint32_t>(number(arg, value(), 1, 4194304));
        else if(arg == "--other-pids")
            c.opts.other_pids = static_cast<unsigned>(number(arg, value(), 0, 64));
        else if(arg == "--start-ns")
            c.opts.start_ns = number(arg, value(), 0, 1ull << 62);
        else if(arg == "--gfx")
        {
            // Written into '#@ gpu' lines and the emulated topology: one plain word.
            c.opts.gfx = value();
            if(c.opts.gfx.empty() ||
               c.opts.gfx.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "abcdefghijklmnopqrstuvwxyz"
                                            "0123456789_-") != std::string::npos)
                fail("--gfx: expected letters, digits, '_' or '-' (like gfx90a), got '" +
                     c.opts.gfx + "'");
        }
        else if(arg == "--process-events")
            c.opts.process_events = true;
        else if(arg == "--pace")
        {
            c.pace_arg = value();
            c.pace     = pace_directive(c.pace_arg);
        }
        else if(arg == "--timestamps")
        {
            c.timestamps = value();
            if(c.timestamps != "keep" && c.timestamps != "rebase")
                fail("--timestamps: expected keep or rebase");
        }
        else if(arg == "--fifo")
            c.fifo = static_cast<unsigned>(number(arg, value(), 96, 1u << 20));
        else if(arg == "--raw")
            c.raw = true;
        else if(arg == "-o" || arg == "--output")
            c.output = value();
        else if(arg == "--expect")
            c.expect = value();
        else
            fail("unknown option " + arg + " (see --help)");
    }
    return c;
}

// Comment and directives: how the log was made, and what the emulator needs to replay it.
std::string
header(const cli& c, const workload& w)
{
    const options& o = c.opts;
    char           hex[16];
    // Every option that shapes the log, defaults included, so that the same command line
    // writes the same log again (--output and --expect name files, not content).
    std::string text = "# rocprof-kfd-gen --scenario " + std::string(scenario_name(o.scenario)) +
                       " --era " + era_name(o.era) + " --gpus " + std::to_string(o.gpus) +
                       " --events " + std::to_string(o.events) + " --seed " +
                       std::to_string(o.seed);
    if(o.pid != 0) text += " --pid " + std::to_string(o.pid);
    text += " --other-pids " + std::to_string(o.other_pids) + " --start-ns " +
            std::to_string(o.start_ns) + " --gfx " + o.gfx;
    if(o.process_events) text += " --process-events";
    if(!c.pace_arg.empty()) text += " --pace " + c.pace_arg;
    if(!c.timestamps.empty()) text += " --timestamps " + c.timestamps;
    if(c.fifo != 0) text += " --fifo " + std::to_string(c.fifo);
    text += "\n";
    for(uint32_t id : w.gpu_ids)
    {
        std::snprintf(hex, sizeof(hex), "%x", id);
        text += "#@ gpu " + std::string(hex) + " " + o.gfx + "\n";
    }
    text += "#@ fifo " + std::to_string(c.fifo != 0 ? c.fifo : fifo_bytes(o.era)) + "\n";
    text += "#@ self " + std::to_string(w.self_pid) + "\n";
    if(!c.pace.empty()) text += "#@ pace " + c.pace + "\n";
    if(!c.timestamps.empty()) text += "#@ timestamps " + c.timestamps + "\n";
    return text;
}

void
write_file(const std::string& path, const std::string& text)
{
    FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
    if(f == nullptr) fail("cannot write " + path + ": " + std::strerror(errno));
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok      = (f == stdout ? std::fflush(f) == 0 : std::fclose(f) == 0) && ok;
    if(!ok) fail("cannot write " + path + ": " + std::strerror(errno));
}
} // namespace

int
main(int argc, char** argv)
{
    cli      c = parse(argc, argv);
    workload w = generate(c.opts);

    std::string log   = c.raw ? std::string() : header(c, w);
    uint32_t    route = w.gpu_ids.empty() ? 0 : w.gpu_ids.front(); // the emulator's default
    for(const auto& ev : w.events)
    {
        // An id-14 rescheduled restore has no node field the emulator routes by: route it to
        // the GPU whose fd the kernel queues it on (the node it names).
        bool id14 = c.opts.era == era::proposed && ev.id == 10 && ev.flag == 'R';
        if(id14 && !c.raw && ev.node != route)
        {
            char hex[16];
            std::snprintf(hex, sizeof(hex), "%x", ev.node);
            log += "#@ route " + std::string(hex) + "\n";
            route = ev.node;
        }
        log += kernel_text(ev, c.opts.era);
    }
    write_file(c.output, log);
    if(!c.expect.empty()) write_file(c.expect, expect_csv(w));
    return 0;
}
