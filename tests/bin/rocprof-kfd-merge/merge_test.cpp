// MIT License - see LICENSE.
//
// rocprof-kfd-merge: four ranks (four replays, OMPI_COMM_WORLD_RANK 0..3) whose outputs
// are made to look like they came from two hosts, merged; the merged trace and summary are
// checked against the union of the four oracles.
#include "oracle.hpp"
#include "summary_check.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <dirent.h>

#include <cstdio>
#include <optional>
#include <regex>
#include <set>

using namespace kfd_out_test;
using json = nlohmann::json;

namespace
{
// Each log is replayed on both hosts: two hosts built alike, whose GPUs have equal gpu_ids (the
// kernel derives them from the PCI location and the device's properties). Each host's GPUs
// are its own in the merged summary.
constexpr int     rank_count        = 4;
const char* const logs[rank_count]  = {"thrashing-2gpu-6.12", "mixed-4gpu-6.0", "mixed-4gpu-6.0",
                                       "thrashing-2gpu-6.12"};
const char* const hosts[rank_count] = {"hostA", "hostA", "hostB", "hostB"};
// Each rank's boot_time_unix_ns, written into its outputs: hostB booted 5 s after hostA, so
// on hostA's clock its timestamps are 5 s later. Rank 1 (hostA too) reads its host's clock
// 7 ns apart from rank 0: a host's processes share one boot clock, and the merge must keep
// their timestamps as they are.
constexpr uint64_t hostA_boot               = 1'700'000'000'000'000'000ull;
constexpr uint64_t hostB_later              = 5'000'000'000ull;
const uint64_t     boot_unix_ns[rank_count] = {hostA_boot, hostA_boot + 7, hostA_boot + hostB_later,
                                               hostA_boot + hostB_later};
const uint64_t     shift_on_merge[rank_count] = {0, 0, hostB_later, hostB_later};

// The text with its "boot_time_unix_ns" values replaced (null: an output without one).
std::string
with_boot_time(const std::string& text, std::optional<uint64_t> boot)
{
    static const std::regex field{"\"boot_time_unix_ns\":(null|[0-9]+)"};
    return std::regex_replace(text, field,
                              "\"boot_time_unix_ns\":" + (boot ? std::to_string(*boot) : "null"));
}

std::string
replace_all(std::string text, const std::string& from, const std::string& to)
{
    for(size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
        text.replace(p, from.size(), to);
    return text;
}

struct ranks
{
    scratch                    dir;
    std::vector<oracle_record> oracle; // all four, pids of their processes
    std::vector<std::string>   outs;
    std::vector<uint64_t>      pids;
};

// Runs the four ranks with formats; rewrites each one's hostname to its fake host.
void
run_ranks(ranks& r, const std::string& formats)
{
    for(int rank = 0; rank < rank_count; ++rank)
    {
        std::string name = logs[rank];
        std::string log  = std::string(logs_dir()) + "/" + name + ".log";
        std::string out  = r.dir.file("job/rank" + std::to_string(rank));
        scratch     tmp;
        auto        run = replay_with_tool(keep_times_copy(log, tmp.path),
                                           {{"ROCPROF_KFD_OUTPUT_DIRECTORY", out},
                                            {"ROCPROF_KFD_OUTPUT_FORMAT", formats},
                                            {"ROCPROF_KFD_SUMMARY_STDERR", "0"},
                                            {"OMPI_COMM_WORLD_RANK", std::to_string(rank)}});
        ASSERT_EQ(run.exit_code, 0) << run.out;
        json s = json::parse(slurp(out + "/summary.json"), nullptr, false);
        ASSERT_FALSE(s.is_discarded());
        uint64_t    pid  = s["metadata"]["pid"];
        std::string real = s["metadata"]["hostname"];
        for(const char* f : {"summary.json", "results.json"})
        {
            std::string text = slurp(out + "/" + f);
            if(!text.empty())
                spit(
                    out + "/" + f,
                    with_boot_time(replace_all(text, "\"hostname\":" + json(real).dump(),
                                               "\"hostname\":\"" + std::string(hosts[rank]) + "\""),
                                   boot_unix_ns[rank]));
        }
        if(formats.find("sqlite") != std::string::npos)
        {
            auto sql = run_program({"/usr/bin/sqlite3", out + "/kfd.db",
                                    "UPDATE metadata SET value='" + std::string(hosts[rank]) +
                                        "' WHERE key='hostname'; UPDATE metadata SET value='" +
                                        std::to_string(boot_unix_ns[rank]) +
                                        "' WHERE key='boot_time_unix_ns'"},
                                   {});
            ASSERT_EQ(sql.exit_code, 0) << sql.out;
        }
        auto part = read_expect(std::string(logs_dir()) + "/" + name + ".expect.csv",
                                self_pid_of_log(log), pid);
        for(auto& rec : part)
        {
            rec.start += shift_on_merge[rank], rec.end += shift_on_merge[rank];
            rec.host = hosts[rank];
        }
        r.oracle.insert(r.oracle.end(), part.begin(), part.end());
        r.outs.push_back(out);
        r.pids.push_back(pid);
    }
}

void
check_merge(ranks& r, const std::string& label)
{
    std::string merged = r.dir.file("merged");
    auto        run    = run_program({merge_program(), "-o", merged, r.dir.file("job")}, {});
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("rocprof-kfd-merge: wrote " + merged + "/trace.pftrace"),
              std::string::npos)
        << run.out;
    // Not a terminal: no progress lines.
    EXPECT_EQ(run.out.find("\r"), std::string::npos) << run.out;

    json s = json::parse(slurp(merged + "/summary.json"), nullptr, false);
    ASSERT_FALSE(s.is_discarded()) << label;
    ASSERT_EQ(s["inputs"].size(), size_t{rank_count}) << label;
    for(int rank = 0; rank < rank_count; ++rank)
    {
        const auto& in = s["inputs"][rank];
        EXPECT_EQ(in["rank"], std::to_string(rank)) << label;
        EXPECT_EQ(in["hostname"], hosts[rank]) << label;
        EXPECT_EQ(in["pid"], r.pids[rank]) << label;
        EXPECT_EQ(in["complete"], true) << label;
    }
    EXPECT_EQ(s["metadata"]["hostname"], "hostA,hostB") << label;
    // The merged time axis is hostA's boot clock (the host that booted first).
    EXPECT_EQ(s["metadata"]["boot_time_unix_ns"], hostA_boot) << label;
    EXPECT_EQ(run.out.find("not aligned"), std::string::npos) << run.out;
    // The merged summary is the summary of all four oracles together, each host's GPUs its
    // own (check_summary keys them by host and gpu_id).
    check_summary(s, r.oracle, 4, label);
    std::set<std::pair<std::string, uint64_t>> gpus;
    std::set<uint64_t>                         gpu_ids;
    for(const auto& row : s["queue_suspend_by_gpu"])
        gpus.insert({row["host"].get<std::string>(), row["gpu_id"].get<uint64_t>()}),
            gpu_ids.insert(row["gpu_id"].get<uint64_t>());
    EXPECT_EQ(gpus.size(), 2 * gpu_ids.size()) << label << ": " << s["queue_suspend_by_gpu"];
    size_t hostB_agents = 0;
    for(const auto& a : s["agents"])
        hostB_agents += a["host"] == "hostB";
    EXPECT_EQ(hostB_agents, 7u) << label << ": " << s["agents"]; // the CPU and 4 + 2 GPUs
    const std::string text = slurp(merged + "/summary.txt");
    EXPECT_NE(text.find(") @ hostB"), std::string::npos) << text;
    // hostB's thrashing rows name hostB's nodes (hostA's log there thrashes the same ranges).
    const std::string thrashing = text.substr(text.find("Thrashing"));
    EXPECT_NE(thrashing.find("CPU(0) @ hostB <-> gfx90a("), std::string::npos) << thrashing;
    EXPECT_NE(thrashing.find("CPU(0) @ hostA <-> gfx90a("), std::string::npos) << thrashing;
    // The report of the merged summary names the hosts too.
    auto report = run_program({MERGE_TEST_REPORT, merged, "-o", merged + "/report.html"}, {});
    ASSERT_EQ(report.exit_code, 0) << report.out;
    const std::string html = slurp(merged + "/report.html");
    EXPECT_NE(html.find(" @ hostB"), std::string::npos) << label;
    EXPECT_NE(html.find("data-host=\"hostB\""), std::string::npos) << label;
    EXPECT_NE(html.find("<td>CPU @ hostB ⇄ gfx90a node"), std::string::npos) << label;

    trace_check pf = check_pftrace(merged + "/trace.pftrace");
    EXPECT_TRUE(pf.problems.empty()) << label << ": " << pf.problems.front();
    EXPECT_EQ(pf.records, canonical_sorted(r.oracle)) << label;
    ASSERT_EQ(pf.process_tracks, size_t{rank_count}) << label;
    std::set<uint64_t> pids(pf.process_pids.begin(), pf.process_pids.end());
    EXPECT_EQ(pids.size(), size_t{rank_count}) << label; // one process group each
    for(int rank = 0; rank < rank_count; ++rank)
    {
        std::string prefix = "rank " + std::to_string(rank) + " @ " + hosts[rank] + ":";
        bool        found  = false;
        for(const auto& n : pf.process_names)
            found = found || n.rfind(prefix, 0) == 0;
        EXPECT_TRUE(found) << label << ": no process named '" << prefix << "...'";
    }
}
} // namespace

TEST(merge, four_ranks_two_hosts_from_results_json)
{
    ranks r;
    run_ranks(r, "summary,json");
    check_merge(r, "json inputs");
}

TEST(merge, four_ranks_two_hosts_from_sqlite)
{
    ranks r;
    run_ranks(r, "summary,sqlite");
    check_merge(r, "sqlite inputs");
}

TEST(merge, four_ranks_two_hosts_from_csv)
{
    ranks r;
    run_ranks(r, "summary,csv");
    check_merge(r, "csv inputs");
}

TEST(merge, a_host_without_a_boot_time_leaves_every_clock_as_it_was)
{
    // hostB's outputs as an older rocprof-kfd wrote them: there is no common time axis, so no
    // input is moved, and the merge says so in one line.
    ranks r;
    run_ranks(r, "summary,json");
    for(int rank : {2, 3})
        for(const char* f : {"/summary.json", "/results.json"})
            spit(r.outs[rank] + f, with_boot_time(slurp(r.outs[rank] + f), std::nullopt));
    std::vector<oracle_record> unshifted = r.oracle;
    for(auto& rec : unshifted)
        if(rec.pid == r.pids[2] || rec.pid == r.pids[3])
            rec.start -= hostB_later, rec.end -= hostB_later;

    std::string merged = r.dir.file("merged");
    auto        run    = run_program({merge_program(), "-o", merged, r.dir.file("job")}, {});
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("rocprof-kfd-merge: the outputs of hostB have no boot_time_unix_ns"),
              std::string::npos)
        << run.out;
    json s = json::parse(slurp(merged + "/summary.json"), nullptr, false);
    ASSERT_FALSE(s.is_discarded());
    EXPECT_TRUE(s["metadata"]["boot_time_unix_ns"].is_null());
    check_summary(s, unshifted, 4, "hostB without a boot time");
    EXPECT_EQ(check_pftrace(merged + "/trace.pftrace").records, canonical_sorted(unshifted));
}

TEST(merge, clocks_are_aligned_from_the_record_files_when_summaries_are_missing)
{
    // summary.json is rewritten in place at finalization: a kill then, or a copy of only the
    // record files, leaves none. The metadata of results.json (or kfd.db) has the boot time
    // and the host too; once, such inputs were all taken for one unnamed host, unaligned.
    for(const char* formats : {"summary,json", "summary,sqlite"})
    {
        ranks r;
        run_ranks(r, formats);
        for(const auto& out : r.outs)
            ASSERT_EQ(std::remove((out + "/summary.json").c_str()), 0);
        std::string merged = r.dir.file("merged");
        auto        run    = run_program({merge_program(), "-o", merged, r.dir.file("job")}, {});
        ASSERT_EQ(run.exit_code, 0) << run.out;
        EXPECT_EQ(run.out.find("no boot_time_unix_ns"), std::string::npos) << run.out;
        json s = json::parse(slurp(merged + "/summary.json"), nullptr, false);
        ASSERT_FALSE(s.is_discarded());
        EXPECT_EQ(s["metadata"]["boot_time_unix_ns"], hostA_boot) << formats;
        EXPECT_EQ(check_pftrace(merged + "/trace.pftrace").records, canonical_sorted(r.oracle))
            << formats;
    }
}

TEST(merge, one_host_name_with_two_boot_times_is_named)
{
    // Rank 1 says hostA booted an hour later than rank 0 says: two machines with one name
    // (containers called "localhost"), or a reboot between runs. Aligned as one host, by
    // the first input's boot time, and the merge says so.
    ranks r;
    run_ranks(r, "summary,json");
    for(const char* f : {"/summary.json", "/results.json"})
        spit(r.outs[1] + f, with_boot_time(slurp(r.outs[1] + f), hostA_boot + 3600'000'000'000ull));
    auto run = run_program({merge_program(), "-o", r.dir.file("merged"), r.dir.file("job")}, {});
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("rocprof-kfd-merge: the outputs of host hostA have boot times more "
                           "than a second apart"),
              std::string::npos)
        << run.out;
    EXPECT_EQ(check_pftrace(r.dir.file("merged/trace.pftrace")).records,
              canonical_sorted(r.oracle));
}

TEST(merge, usage_errors)
{
    scratch dir;
    auto    none = run_program({merge_program(), "-o", dir.file("m")}, {});
    EXPECT_EQ(none.exit_code, 2) << none.out;
    auto unknown = run_program({merge_program(), "--bogus", dir.path}, {});
    EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
    EXPECT_NE(unknown.out.find("unknown option '--bogus'"), std::string::npos) << unknown.out;
    auto empty = run_program({merge_program(), "-o", dir.file("m"), dir.path}, {});
    EXPECT_EQ(empty.exit_code, 1) << empty.out;
    EXPECT_NE(empty.out.find(dir.path + ": no rocprof-kfd output found"), std::string::npos)
        << empty.out;
    auto help = run_program({merge_program(), "--help"}, {});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("usage: rocprof-kfd-merge"), std::string::npos);
}

namespace
{
std::vector<std::string>
list_dir(const std::string& path)
{
    std::vector<std::string> names;
    if(DIR* d = opendir(path.c_str()))
    {
        while(dirent* e = readdir(d))
            names.emplace_back(e->d_name);
        closedir(d);
    }
    return names;
}

// Two processes of one run (ROCPROF_KFD_RUN_ID) writing into one folder: the second names
// its files <pid>_<name>. Returns the union of their oracles and each one's pid.
void
two_processes_in_one_folder(const std::string& out, const std::string& formats,
                            std::vector<oracle_record>& oracle, std::vector<uint64_t>& pids)
{
    for(int i = 0; i < 2; ++i)
    {
        std::string log = std::string(logs_dir()) + "/" + logs[i] + ".log";
        scratch     tmp;
        auto        run = replay_with_tool(keep_times_copy(log, tmp.path),
                                           {{"ROCPROF_KFD_OUTPUT_DIRECTORY", out},
                                            {"ROCPROF_KFD_OUTPUT_FORMAT", formats},
                                            {"ROCPROF_KFD_SUMMARY_STDERR", "0"},
                                            {"ROCPROF_KFD_RUN_ID", "one-run"}});
        ASSERT_EQ(run.exit_code, 0) << run.out;
        std::string summary = i == 0 ? out + "/summary.json" : "";
        if(i == 1)
            for(const auto& name : list_dir(out))
                if(name.size() > 13 && name.compare(name.size() - 13, 13, "_summary.json") == 0)
                    summary = out + "/" + name;
        json s = json::parse(slurp(summary), nullptr, false);
        ASSERT_FALSE(s.is_discarded()) << summary;
        uint64_t pid  = s["metadata"]["pid"];
        auto     part = read_expect(std::string(logs_dir()) + "/" + logs[i] + ".expect.csv",
                                    self_pid_of_log(log), pid);
        oracle.insert(oracle.end(), part.begin(), part.end());
        pids.push_back(pid);
    }
}
} // namespace

TEST(merge, processes_that_shared_a_folder_are_one_input_each)
{
    // Once, only the process whose files had plain names was merged, the other's ignored.
    scratch                    dir;
    std::vector<oracle_record> oracle;
    std::vector<uint64_t>      pids;
    two_processes_in_one_folder(dir.file("job"), "summary,json", oracle, pids);
    ASSERT_EQ(pids.size(), 2u);
    auto run = run_program({merge_program(), "-o", dir.file("merged"), dir.file("job")}, {});
    ASSERT_EQ(run.exit_code, 0) << run.out;
    json s = json::parse(slurp(dir.file("merged/summary.json")), nullptr, false);
    ASSERT_FALSE(s.is_discarded());
    ASSERT_EQ(s["inputs"].size(), 2u);
    EXPECT_EQ(s["inputs"][0]["stem"], "");
    EXPECT_EQ(s["inputs"][0]["pid"], pids[0]);
    EXPECT_EQ(s["inputs"][1]["stem"], std::to_string(pids[1]));
    EXPECT_EQ(s["inputs"][1]["pid"], pids[1]);
    check_summary(s, oracle, 4, "shared folder");
    trace_check pf = check_pftrace(dir.file("merged/trace.pftrace"));
    EXPECT_EQ(pf.records, canonical_sorted(oracle));
}

TEST(merge, repair_repairs_every_process_of_a_shared_folder)
{
    // Both processes' summaries lost (as if both were killed before finalization): each is
    // rebuilt from its own records.
    scratch                    dir;
    std::vector<oracle_record> oracle;
    std::vector<uint64_t>      pids;
    const std::string          out = dir.file("job");
    two_processes_in_one_folder(out, "summary,json", oracle, pids);
    ASSERT_EQ(pids.size(), 2u);
    const std::string second = out + "/" + std::to_string(pids[1]) + "_summary.json";
    ASSERT_EQ(std::remove((out + "/summary.json").c_str()), 0);
    ASSERT_EQ(std::remove(second.c_str()), 0);
    auto run = run_program({merge_program(), "--repair", out}, {});
    ASSERT_EQ(run.exit_code, 0) << run.out;
    for(const auto& path : {out + "/summary.json", second})
    {
        json s = json::parse(slurp(path), nullptr, false);
        ASSERT_FALSE(s.is_discarded()) << path << "\n" << run.out;
        EXPECT_EQ(s["complete"], false) << path; // rebuilt, marked so
        EXPECT_GT(s["operations"].size(), 0u) << path;
    }
}
