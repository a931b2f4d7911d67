// MIT License - see LICENSE.
//
// rocprof-kfd-gen, run as a program. Its output is checked with this file's own patterns of
// each kernel era and its own pairing of the log into records: nothing here shares code with
// the generator's formatting or model, nor with the SDK's parser.
#include "mini_json.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace kfd_test
{
namespace
{
const std::vector<std::string> scenarios = {"streaming", "thrashing", "prefetch",
                                            "eviction",  "unmap",     "mixed", "managed"};
const std::vector<std::string> eras      = {"6.0", "6.12", "6.13", "2026", "proposed"};

struct generated
{
    std::string log;
    std::string expect;
    int         exit_code = -1;
    std::string err;
};

generated
generate(std::vector<std::string> args)
{
    scratch_dir dir;
    args.insert(args.end(), {"--output", dir.file("out.log"), "--expect", dir.file("out.csv")});
    auto      run = run_child(KFD_GEN_PROGRAM, args, {});
    generated g;
    g.exit_code = run.exit_code;
    g.err       = run.err;
    g.log       = read_file(dir.file("out.log"));
    g.expect    = read_file(dir.file("out.csv"));
    return g;
}

bool
is_event_line(const std::string& line)
{
    return !line.empty() && line[0] != '#';
}

std::vector<std::string>
event_lines(const std::string& log)
{
    std::vector<std::string> out;
    for(const auto& line : split_lines(log))
        if(is_event_line(line)) out.push_back(line);
    return out;
}

// --- the kernel's text of each era, as patterns ---------------------------------------------

const std::string H   = "[0-9a-f]+";
const std::string D   = "[0-9]+";
const std::string NUL = "<NUL>"; // stands for the 0 byte in the patterns below

std::vector<std::regex>
era_patterns(const std::string& era)
{
    std::string              pfx = " " + D + " -" + D + " ";
    std::string              mig = "@" + H + "\\(" + H + "\\) " + H + "->" + H;
    std::vector<std::string> p   = {
          "5" + pfx + mig + " " + H + ":" + H + " [0-3]",
          "7" + pfx + "@" + H + "\\(" + H + "\\) [RW]",
          "8" + pfx + "@" + H + "\\(" + H + "\\) [MU]",
          "9" + pfx + H + " [0-5]",
          "b" + pfx + "@" + H + "\\(" + H + "\\) " + H + " [0-2]",
    };
    bool error_code = era == "6.13" || era == "2026" || era == "proposed";
    p.push_back("6" + pfx + mig + " [0-3]" + (error_code ? " -?" + D : ""));
    if(era == "6.0") p.push_back("a" + pfx + H + "( R)?");
    if(era == "6.12" || era == "6.13") p.push_back("a" + pfx + H + " (R|" + NUL + ")");
    if(era == "2026")
    {
        p.push_back("a" + pfx + H + " [R0]");
        p.push_back("[cd] " + H + " [a-z-]+"); // PROCESS_START/END (6.16+)
    }
    if(era == "proposed")
    {
        p.push_back("a" + pfx + H + " 0");
        p.push_back("e" + pfx + H); // the rescheduled restore, an id of its own
        p.push_back("[cd] " + H + " [a-z-]+");
    }
    std::vector<std::regex> out;
    for(const auto& text : p)
        out.emplace_back("^" + text + "$");
    return out;
}

std::string
visible_nul(std::string line)
{
    size_t at = line.find('\0');
    if(at != std::string::npos) line.replace(at, 1, NUL);
    return line;
}

// Checks every line of a log against its era; returns the first offending line.
std::string
first_invalid_line(const std::string& log, const std::string& era)
{
    auto patterns = era_patterns(era);
    for(const auto& line : event_lines(log))
    {
        std::string shown = visible_nul(line);
        bool        valid = std::any_of(patterns.begin(), patterns.end(),
                                        [&](const std::regex& re) { return std::regex_match(shown, re); });
        if(!valid) return shown;
    }
    return "";
}

// --- an independent pairing of the log into the documented records --------------------------

uint64_t
hex(const std::string& text)
{
    return std::stoull(text, nullptr, 16);
}

// The queues of one process on one GPU as the kernel keeps them: evictions nest
// (qpd->evicted counts kfd_process_evict_queues() calls), only the restore that brings the
// count to zero runs the queues again, and an 'R' restore (a failed, rescheduled attempt)
// changes nothing but says the suspension was retried.
struct queue_state
{
    unsigned                 evicted = 0;
    std::vector<std::string> first; // the eviction that stopped the queues
    bool                     retried = false;
};

struct pairing
{
    std::vector<std::string>                                    records;
    std::map<std::string, queue_state>                          queues;
    std::map<std::string, std::deque<std::vector<std::string>>> open;
    std::map<std::string, size_t>                               starts; // per operation
    size_t                                                      unpaired_ends = 0;
};

std::string
join(const std::vector<std::string>& fields)
{
    std::string out;
    for(size_t i = 0; i < fields.size(); ++i)
        out += (i ? "," : "") + fields[i];
    return out;
}

void
pair_line(pairing& p, const std::string& line)
{
    static const std::regex migrate("^([56]) (\\d+) -(\\d+) @(" + H + ")\\((" + H + ")\\) (" + H +
                                    ")->(" + H + ")(?: (" + H + "):(" + H + "))? (\\d)(?: .*)?$");
    static const std::regex fault("^([78]) (\\d+) -(\\d+) @(" + H + ")\\((" + H + ")\\) ([RWMU])$");
    static const std::regex queue("^(9|a|e) (\\d+) -(\\d+) (" + H + ")(?: (\\S+))?$");
    static const std::regex unmap("^b (\\d+) -(\\d+) @(" + H + ")\\((" + H + ")\\) (" + H +
                                  ") (\\d)$");
    std::smatch             m;
    std::string             shown = visible_nul(line);
    auto                    close = [&](const std::string& key, const std::string& op,
                     const std::function<std::string(const std::vector<std::string>&)>& make)
    {
        auto& q = p.open[key];
        if(q.empty())
        {
            ++p.unpaired_ends;
            return;
        }
        p.records.push_back(make(q.front()));
        q.pop_front();
        (void)op;
    };
    if(std::regex_match(shown, m, migrate))
    {
        std::string key = "M" + std::string(m[3]) + "/" + std::string(m[4]) + "/" +
                          std::string(m[5]) + "/" + std::string(m[6]) + "/" + std::string(m[7]);
        std::vector<std::string> f(m.begin(), m.end());
        if(m[1] == "5")
        {
            p.open[key].push_back(f);
            ++p.starts["PAGE_MIGRATE"];
            return;
        }
        close(key, "PAGE_MIGRATE",
              [&](const std::vector<std::string>& s)
              {
                  uint64_t page = hex(s[4]), n = hex(s[5]);
                  return join({"PAGE_MIGRATE", s[3], s[2], std::string(m[2]),
                               std::to_string(hex(s[6])), std::to_string(hex(s[7])),
                               std::to_string(hex(s[8])), std::to_string(hex(s[9])), s[10],
                               std::to_string(page << 12), std::to_string(((page + n) << 12) - 1),
                               "", "", ""});
              });
    }
    else if(std::regex_match(shown, m, fault))
    {
        std::string key =
            "F" + std::string(m[3]) + "/" + std::string(m[4]) + "/" + std::string(m[5]);
        std::vector<std::string> f(m.begin(), m.end());
        if(m[1] == "7")
        {
            p.open[key].push_back(f);
            ++p.starts["PAGE_FAULT"];
            return;
        }
        close(key, "PAGE_FAULT",
              [&](const std::vector<std::string>& s)
              {
                  return join({"PAGE_FAULT", s[3], s[2], std::string(m[2]),
                               std::to_string(hex(s[5])), "", "", "", "",
                               std::to_string(hex(s[4]) << 12), "", s[6] == "R" ? "1" : "0",
                               m[6] == "M" ? "1" : "0", ""});
              });
    }
    else if(std::regex_match(shown, m, queue))
    {
        std::string  key = "Q" + std::string(m[3]) + "/" + std::string(m[4]);
        queue_state& q   = p.queues[key];
        if(m[1] == "9")
        {
            if(q.evicted++ == 0)
            {
                q.first   = std::vector<std::string>(m.begin(), m.end());
                q.retried = false;
                ++p.starts["QUEUE_SUSPEND"];
            }
            return;
        }
        if(q.evicted == 0)
        {
            ++p.unpaired_ends; // a restore (or retry) of queues that were not evicted
            return;
        }
        if(m[5] == "R" || m[1] == "e") // id 14 here is always the rescheduled restore
        {
            q.retried = true;
            return;
        }
        if(--q.evicted > 0) return;
        const auto& s = q.first;
        p.records.push_back(
            join({"QUEUE_SUSPEND", s[3], s[2], std::string(m[2]), std::to_string(hex(s[4])), "", "",
                  "", s[5], "", "", "", "", q.retried ? "1" : "0"}));
    }
    else if(std::regex_match(shown, m, unmap))
    {
        ++p.starts["UNMAP_FROM_GPU"];
        uint64_t page = hex(m[3]), n = hex(m[4]);
        p.records.push_back(
            join({"UNMAP_FROM_GPU", m[2], m[1], m[1], std::to_string(hex(m[5])), "", "", "", m[6],
                  std::to_string(page << 12), std::to_string((page + n) << 12), "", "", ""}));
    }
}

pairing
pair_log(const std::string& log)
{
    pairing p;
    for(const auto& line : event_lines(log))
        pair_line(p, line);
    return p;
}

std::vector<std::string>
sorted(std::vector<std::string> v)
{
    std::sort(v.begin(), v.end());
    return v;
}

// --- tests ------------------------------------------------------------------------------

TEST(Generator, SameSeedSameBytes)
{
    std::vector<std::string> args{"--scenario", "mixed", "--gpus",       "3", "--events", "500",
                                  "--seed",     "42",    "--other-pids", "2"};
    auto                     first  = generate(args);
    auto                     second = generate(args);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_FALSE(first.log.empty());
    EXPECT_EQ(first.log, second.log);
    EXPECT_EQ(first.expect, second.expect);
}

TEST(Generator, DifferentSeedDifferentLog)
{
    auto a = generate({"--scenario", "streaming", "--events", "100", "--seed", "1"});
    auto b = generate({"--scenario", "streaming", "--events", "100", "--seed", "2"});
    EXPECT_NE(a.log, b.log);
    EXPECT_NE(a.expect, b.expect);
}

TEST(Generator, EventCountIsExact)
{
    for(const auto& scenario : scenarios)
        for(const char* events : {"1", "2", "3", "7", "250"})
        {
            auto g = generate({"--scenario", scenario, "--gpus", "2", "--events", events});
            ASSERT_EQ(g.exit_code, 0) << g.err;
            EXPECT_EQ(event_lines(g.log).size(), std::stoul(events)) << scenario << " " << events;
        }
}

TEST(Generator, EveryScenarioAndEraWritesOnlyThatErasText)
{
    for(const auto& scenario : scenarios)
        for(const auto& era : eras)
        {
            std::vector<std::string> args{"--scenario",   scenario, "--era",    era,
                                          "--gpus",       "3",      "--events", "400",
                                          "--other-pids", "1"};
            if(era == "2026") args.push_back("--process-events");
            auto g = generate(args);
            ASSERT_EQ(g.exit_code, 0) << g.err;
            EXPECT_EQ(first_invalid_line(g.log, era), "") << scenario << " era " << era;
        }
}

TEST(Generator, ErasDifferWhereTheKernelsDo)
{
    // Eviction storms have both normal and rescheduled restores, and migrations.
    std::map<std::string, std::string> logs;
    for(const auto& era : eras)
        logs[era] = generate({"--scenario", "eviction", "--era", era, "--gpus", "2", "--events",
                              "600", "--seed", "5"})
                        .log;
    auto has = [&](const std::string& era, const std::string& pattern)
    {
        std::regex re(pattern);
        for(const auto& line : event_lines(logs[era]))
            if(std::regex_search(visible_nul(line), re)) return true;
        return false;
    };
    EXPECT_TRUE(has("6.0", "^a \\d+ -\\d+ [0-9a-f]+$"));
    EXPECT_TRUE(has("6.12", "^a .* " + NUL + "$"));
    EXPECT_TRUE(has("6.13", "^a .* " + NUL + "$"));
    EXPECT_TRUE(has("2026", "^a .* 0$"));
    for(const auto& era : eras)
    {
        if(era == "proposed") continue; // its rescheduled restores are id 14
        EXPECT_TRUE(has(era, "^a .* R$")) << era;
    }
    EXPECT_FALSE(has("proposed", "^a .* R$"));
    EXPECT_TRUE(has("proposed", "^e \\d+ -\\d+ [0-9a-f]+$"));
    EXPECT_TRUE(has("proposed", "^a .* 0$"));
    EXPECT_TRUE(has("6.12", "^6 \\d+ -\\d+ \\S+ \\S+ [0-3]$"));
    EXPECT_TRUE(has("6.13", "^6 \\d+ -\\d+ \\S+ \\S+ [0-3] -?\\d+$"));
    EXPECT_NE(logs["6.0"].find("#@ fifo 1024"), std::string::npos);
    EXPECT_NE(logs["6.13"].find("#@ fifo 8192"), std::string::npos);
}

TEST(Generator, HeaderNamesTheGpusAndTheTracedProcess)
{
    auto g = generate({"--scenario", "mixed", "--gpus", "4", "--events", "300", "--pid", "4321",
                       "--gfx", "gfx942", "--pace", "rate=500", "--timestamps", "keep"});
    std::set<uint64_t> declared;
    for(const auto& line : split_lines(g.log))
        if(line.compare(0, 7, "#@ gpu ") == 0)
        {
            EXPECT_EQ(line.substr(line.rfind(' ') + 1), "gfx942");
            declared.insert(hex(line.substr(7, line.rfind(' ') - 7)));
        }
    EXPECT_EQ(declared.size(), 4u);
    EXPECT_NE(g.log.find("#@ self 4321\n"), std::string::npos);
    EXPECT_NE(g.log.find("#@ pace rate 500\n"), std::string::npos);
    EXPECT_NE(g.log.find("#@ timestamps keep\n"), std::string::npos);
    // Every node an event names is a declared GPU, RAM (0) or undefined.
    std::regex node_field("\\(([0-9a-f]+)\\) [RWMU]$|-\\d+ ([0-9a-f]+) \\d$");
    for(const auto& line : event_lines(g.log))
    {
        std::smatch m;
        if(!std::regex_search(line, m, node_field)) continue;
        uint64_t node = hex(m[1].matched ? m[1].str() : m[2].str());
        EXPECT_TRUE(declared.count(node)) << line;
    }
    auto raw = generate({"--scenario", "mixed", "--events", "20", "--raw"});
    EXPECT_EQ(raw.log.find('#'), std::string::npos);
}

TEST(Generator, TimestampsNeverGoBackwards)
{
    auto    g    = generate({"--scenario", "mixed", "--gpus", "3", "--events", "1000"});
    int64_t last = 0;
    for(const auto& line : event_lines(g.log))
    {
        int64_t ns = std::stoll(line.substr(2, line.find(' ', 2) - 2));
        EXPECT_GE(ns, last) << line;
        last = ns;
    }
}

TEST(Generator, ExpectedRecordsEqualAnIndependentPairing)
{
    for(const auto& scenario : scenarios)
        for(const auto& era :
            {std::string("6.0"), std::string("6.13"), std::string("2026"), std::string("proposed")})
        {
            auto g      = generate({"--scenario", scenario, "--era", era, "--gpus", "3", "--events",
                                    "800", "--other-pids", "2", "--seed", "9"});
            auto expect = split_lines(g.expect);
            ASSERT_FALSE(expect.empty());
            EXPECT_EQ(expect[0],
                      "operation,pid,start_ns,end_ns,node_or_from,to,prefetch,preferred,trigger,"
                      "addr_start,addr_end,read_fault,migrated,rescheduled");
            expect.erase(expect.begin());

            pairing p = pair_log(g.log);
            EXPECT_EQ(p.unpaired_ends, 0u) << scenario;
            for(const auto& [key, q] : p.open)
                EXPECT_TRUE(q.empty()) << scenario << ": start without end " << key;
            for(const auto& [key, q] : p.queues)
                EXPECT_EQ(q.evicted, 0u) << scenario << ": queues left evicted " << key;
            EXPECT_EQ(sorted(expect), sorted(p.records)) << scenario << " era " << era;

            // One record per start event (per unmap for UNMAP_FROM_GPU), per operation.
            std::map<std::string, size_t> per_op;
            for(const auto& line : expect)
                ++per_op[line.substr(0, line.find(','))];
            EXPECT_EQ(per_op, p.starts) << scenario;
        }
}

TEST(Generator, QueueEvictionsNestAndRetriesLeaveTheQueuesEvicted)
{
    // The kernel's shapes: an eviction of another trigger while the queues are already
    // evicted, and a rescheduled restore ('R') followed later by the real restore, in every
    // era; the expected records span from the first eviction to the last restore.
    for(const auto& era : eras)
    {
        auto g = generate({"--scenario", "eviction", "--era", era, "--gpus", "2", "--events", "600",
                           "--seed", "5"});
        std::regex                 queue("^(9|a|e) (\\d+) -(\\d+) ([0-9a-f]+)(?: (\\S+))?$");
        std::map<std::string, int> depth;
        std::map<std::string, std::string> first_trigger;
        std::map<std::string, bool>        retried;
        bool                               nested_other_trigger = false, retry_then_restore = false;
        for(const auto& line : event_lines(g.log))
        {
            std::smatch m;
            std::string shown = visible_nul(line);
            if(!std::regex_match(shown, m, queue)) continue;
            std::string key = std::string(m[3]) + "/" + std::string(m[4]);
            if(m[1] == "9")
            {
                if(depth[key]++ == 0)
                    first_trigger[key] = m[5];
                else if(m[5] != first_trigger[key])
                    nested_other_trigger = true;
                continue;
            }
            ASSERT_GT(depth[key], 0) << era << ": restore of queues not evicted: " << shown;
            if(m[5] == "R" || m[1] == "e")
                retried[key] = true;
            else if(--depth[key] == 0 && retried[key])
                retry_then_restore = true;
            if(depth[key] == 0) retried[key] = false;
        }
        EXPECT_TRUE(nested_other_trigger) << era;
        EXPECT_TRUE(retry_then_restore) << era;
        EXPECT_NE(g.expect.find(",1\n"), std::string::npos) << era; // a rescheduled record
    }
}

TEST(Generator, ScenariosHaveTheirCharacter)
{
    auto ops = [](const std::string& scenario)
    {
        auto g =
            generate({"--scenario", scenario, "--gpus", "2", "--events", "400", "--seed", "3"});
        std::map<std::string, size_t> per_op;
        for(const auto& line : split_lines(g.expect))
            ++per_op[line.substr(0, line.find(','))];
        return std::make_pair(per_op, g.log);
    };
    auto [streaming, streaming_log] = ops("streaming");
    EXPECT_GT(streaming["PAGE_FAULT"], 20u);
    EXPECT_GT(streaming["PAGE_MIGRATE"], 20u);
    auto [prefetch, prefetch_log] = ops("prefetch");
    EXPECT_EQ(prefetch["PAGE_FAULT"], 0u);
    EXPECT_NE(prefetch_log.find(":ffffffff 0\n"), std::string::npos); // preferred undefined
    auto [eviction, eviction_log] = ops("eviction");
    EXPECT_GT(eviction["QUEUE_SUSPEND"], 5u);
    EXPECT_NE(eviction_log.find(" 3\n"), std::string::npos);
    auto [unmap, unmap_log] = ops("unmap");
    EXPECT_GT(unmap["UNMAP_FROM_GPU"], 50u);
    auto [thrashing, thrashing_log] = ops("thrashing");
    EXPECT_GT(thrashing["PAGE_FAULT"], 20u);
    // Two GPUs fault the same page at once: a page with two outstanding faults.
    std::map<std::string, int> outstanding;
    bool                       overlap = false;
    std::regex                 fault("^([78]) \\d+ -\\d+ @([0-9a-f]+)\\(");
    for(const auto& line : event_lines(thrashing_log))
    {
        std::smatch m;
        if(!std::regex_search(line, m, fault)) continue;
        int& n = outstanding[m[2]];
        n += m[1] == "7" ? 1 : -1;
        overlap = overlap || n > 1;
    }
    EXPECT_TRUE(overlap);
}

TEST(Generator, RejectsBadArguments)
{
    EXPECT_EQ(generate({"--scenario", "nope"}).exit_code, 2);
    EXPECT_EQ(generate({"--era", "5.19"}).exit_code, 2);
    EXPECT_EQ(generate({"--gpus", "0"}).exit_code, 2);
    EXPECT_EQ(generate({"--events", "ten"}).exit_code, 2);
    EXPECT_EQ(generate({"--frobnicate"}).exit_code, 2);
    // The gfx name lands in directives and the topology: one plain word only.
    for(const char* gfx : {"gfx 90a", "gfx90a\n#@ fifo 96", "", "gfx/90a", "gfx90a;"})
    {
        auto g = generate({"--gfx", gfx});
        EXPECT_EQ(g.exit_code, 2) << gfx;
        EXPECT_NE(g.err.find("--gfx"), std::string::npos) << g.err;
    }
    EXPECT_EQ(generate({"--gfx", "gfx_9-4a", "--events", "5"}).exit_code, 0);
}

TEST(Generator, HeaderHoldsTheWholeCommandLine)
{
    std::vector<std::string> args{"--scenario",
                                  "eviction",
                                  "--era",
                                  "2026",
                                  "--gpus",
                                  "2",
                                  "--events",
                                  "40",
                                  "--seed",
                                  "9",
                                  "--pid",
                                  "777",
                                  "--other-pids",
                                  "2",
                                  "--start-ns",
                                  "5000",
                                  "--gfx",
                                  "gfx942",
                                  "--process-events",
                                  "--pace",
                                  "rate=500",
                                  "--timestamps",
                                  "keep",
                                  "--fifo",
                                  "4096"};
    auto                     g = generate(args);
    ASSERT_EQ(g.exit_code, 0) << g.err;
    std::string first = split_lines(g.log).at(0);
    ASSERT_EQ(first.compare(0, 18, "# rocprof-kfd-gen "), 0) << first;
    // The arguments of the comment write the very same log.
    std::vector<std::string> again;
    std::string              rest = first.substr(18);
    for(size_t pos = 0; pos < rest.size();)
    {
        size_t end = rest.find(' ', pos);
        if(end == std::string::npos) end = rest.size();
        again.push_back(rest.substr(pos, end - pos));
        pos = end + 1;
    }
    EXPECT_EQ(generate(again).log, g.log) << first;
    for(const auto& arg : args)
        EXPECT_NE(first.find(" " + arg), std::string::npos) << arg << " missing in " << first;
}

// --- the bundled logs -----------------------------------------------------------------------

struct manifest_entry
{
    std::string              name;
    std::vector<std::string> args;
};

std::vector<manifest_entry>
manifest()
{
    std::vector<manifest_entry> entries;
    for(const auto& line : split_lines(read_file(std::string(KFD_LOGS_DIR) + "/MANIFEST")))
    {
        if(line.empty() || line[0] == '#') continue;
        std::vector<std::string> words;
        size_t                   pos = 0;
        while(pos < line.size())
        {
            size_t end = line.find(' ', pos);
            if(end == std::string::npos) end = line.size();
            if(end > pos) words.push_back(line.substr(pos, end - pos));
            pos = end + 1;
        }
        entries.push_back({words[0], std::vector<std::string>(words.begin() + 1, words.end())});
    }
    return entries;
}

TEST(BundledLogs, EqualTheGeneratorsOutput)
{
    auto entries = manifest();
    ASSERT_GE(entries.size(), 3u);
    for(const auto& entry : entries)
    {
        auto        g    = generate(entry.args);
        std::string base = std::string(KFD_LOGS_DIR) + "/" + entry.name;
        EXPECT_EQ(read_file(base + ".log"), g.log)
            << entry.name << ": run `cmake --build <build> --target kfd-logs` to regenerate";
        EXPECT_EQ(read_file(base + ".expect.csv"), g.expect) << entry.name;
    }
}

// --- generated logs through the emulator -------------------------------------------------------

TEST(Replay, EmulatorDeliversEveryLineOfAGeneratedLog)
{
    for(const auto& era : eras)
    {
        scratch_dir dir;
        auto g = generate({"--scenario", "mixed", "--era", era, "--gpus", "2", "--events", "1500",
                           "--seed", "11", "--timestamps", "keep"});
        std::string              log = dir.write("replay.log", g.log);
        std::vector<std::string> commands{"pid", "open"};
        std::vector<std::string> gpus;
        for(const auto& line : split_lines(g.log))
            if(line.compare(0, 7, "#@ gpu ") == 0)
                gpus.push_back(line.substr(7, line.rfind(' ') - 7));
        for(const auto& gpu : gpus)
            commands.push_back("smi:" + gpu);
        for(size_t k = 0; k < gpus.size(); ++k)
            commands.push_back("mask:" + std::to_string(k) + ":7fff");
        commands.push_back("drainall:65536:1000");
        auto result =
            run_probe(log, commands,
                      {{"KFD_EMULATOR_STATS", dir.file("stats.json")}, {"TMPDIR", dir.path()}});
        ASSERT_EQ(result.exit_code, 0) << result.err;

        // Everything arrives, byte for byte but for the traced process's pid.
        std::string self               = g.log.substr(g.log.find("#@ self ") + 8);
        self                           = self.substr(0, self.find('\n'));
        std::string                pid = line_with(result, "pid ");
        std::multiset<std::string> sent;
        for(auto line : event_lines(g.log))
        {
            size_t at = line.find(" -" + self + " ");
            if(at != std::string::npos) line.replace(at + 2, self.size(), pid);
            sent.insert(line);
        }
        std::multiset<std::string> received;
        for(size_t k = 0; k < gpus.size(); ++k)
            for(const auto& line : split_lines(drained(result, k)))
                received.insert(line);
        EXPECT_EQ(received.size(), 1500u) << era;
        EXPECT_EQ(received, sent) << era;

        json stats;
        ASSERT_TRUE(json::parse(read_file(dir.file("stats.json")), stats));
        EXPECT_EQ(stats["total"]["dropped_fifo_full"].u64(), 0u);
        EXPECT_EQ(stats["total"]["not_emitted_at_exit"].u64(), 0u);
        EXPECT_EQ(stats["total"]["malformed"].u64(), 0u);
        EXPECT_EQ(stats["total"]["events_queued"].u64(), 1500u);
    }
}
} // namespace
} // namespace kfd_test
