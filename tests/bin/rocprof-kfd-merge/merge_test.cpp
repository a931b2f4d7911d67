// MIT License - see LICENSE.
//
// rocprof-kfd-merge: three ranks (three replays, OMPI_COMM_WORLD_RANK 0..2) whose outputs
// are made to look like they came from two hosts, merged; the merged trace and summary are
// checked against the union of the three oracles.
#include "oracle.hpp"
#include "summary_check.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

using namespace kfd_out_test;
using json = nlohmann::json;

namespace
{
const char* const logs[3]  = {"thrashing-2gpu-6.12", "streaming-1gpu-6.13", "prefetch-1gpu-6.13"};
const char* const hosts[3] = {"hostA", "hostA", "hostB"};

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
    std::vector<oracle_record> oracle; // all three, pids of their processes
    std::vector<std::string>   outs;
    std::vector<uint64_t>      pids;
};

// Runs the three ranks with formats; rewrites each one's hostname to its fake host.
void
run_ranks(ranks& r, const std::string& formats)
{
    for(int rank = 0; rank < 3; ++rank)
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
                spit(out + "/" + f,
                     replace_all(text, "\"hostname\":" + json(real).dump(),
                                 "\"hostname\":\"" + std::string(hosts[rank]) + "\""));
        }
        if(formats.find("sqlite") != std::string::npos)
        {
            auto sql = run_program({"/usr/bin/sqlite3", out + "/kfd.db",
                                    "UPDATE metadata SET value='" + std::string(hosts[rank]) +
                                        "' WHERE key='hostname'"},
                                   {});
            ASSERT_EQ(sql.exit_code, 0) << sql.out;
        }
        auto part = read_expect(std::string(logs_dir()) + "/" + name + ".expect.csv",
                                self_pid_of_log(log), pid);
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
    ASSERT_EQ(s["inputs"].size(), 3u) << label;
    for(int rank = 0; rank < 3; ++rank)
    {
        const auto& in = s["inputs"][rank];
        EXPECT_EQ(in["rank"], std::to_string(rank)) << label;
        EXPECT_EQ(in["hostname"], hosts[rank]) << label;
        EXPECT_EQ(in["pid"], r.pids[rank]) << label;
        EXPECT_EQ(in["complete"], true) << label;
    }
    EXPECT_EQ(s["metadata"]["hostname"], "hostA,hostB") << label;
    // The merged summary is the summary of all three oracles together.
    check_summary(s, r.oracle, 4, label);
    EXPECT_FALSE(slurp(merged + "/summary.txt").empty());

    trace_check pf = check_pftrace(merged + "/trace.pftrace");
    EXPECT_TRUE(pf.problems.empty()) << label << ": " << pf.problems.front();
    EXPECT_EQ(pf.records, canonical_sorted(r.oracle)) << label;
    ASSERT_EQ(pf.process_tracks, 3u) << label;
    std::set<uint64_t> pids(pf.process_pids.begin(), pf.process_pids.end());
    EXPECT_EQ(pids.size(), 3u) << label; // one process group each
    for(int rank = 0; rank < 3; ++rank)
    {
        std::string prefix = "rank " + std::to_string(rank) + " @ " + hosts[rank] + ":";
        bool        found  = false;
        for(const auto& n : pf.process_names)
            found = found || n.rfind(prefix, 0) == 0;
        EXPECT_TRUE(found) << label << ": no process named '" << prefix << "...'";
    }
}
} // namespace

TEST(merge, three_ranks_two_hosts_from_results_json)
{
    ranks r;
    run_ranks(r, "summary,json");
    check_merge(r, "json inputs");
}

TEST(merge, three_ranks_two_hosts_from_sqlite)
{
    ranks r;
    run_ranks(r, "summary,sqlite");
    check_merge(r, "sqlite inputs");
}

TEST(merge, three_ranks_two_hosts_from_csv)
{
    ranks r;
    run_ranks(r, "summary,csv");
    check_merge(r, "csv inputs");
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
