// MIT License - see LICENSE.
//
// Repair of documents cut at any byte (a process killed inside a write, a disk that filled
// in the middle of one): after repair_* every document is valid and holds a prefix of the
// records, each of them whole.
#include "oracle.hpp"

#include <rocprof-kfd-output/repair.hpp>
#include <rocprof-kfd-output/writer.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

using namespace rocprof_kfd;
using kfd_out_test::scratch;
using kfd_out_test::slurp;
using kfd_out_test::spit;

namespace
{
record
migration(uint64_t i)
{
    record r                      = {};
    r.size                        = sizeof(r);
    r.operation                   = ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE;
    r.pid                         = 42;
    r.start_timestamp             = 1000 + i * 100;
    r.end_timestamp               = 1050 + i * 100;
    r.page_migrate.start_addr     = 0x7f0000000000 + i * 0x10000;
    r.page_migrate.end_addr       = r.page_migrate.start_addr + 0xffff;
    r.page_migrate.from_node      = i % 2 ? 0 : 7;
    r.page_migrate.to_node        = i % 2 ? 7 : 0;
    r.page_migrate.prefetch_node  = 0xffffffff;
    r.page_migrate.preferred_node = 0xffffffff;
    r.page_migrate.trigger        = ROCPROFILER_PAGE_MIGRATION_TRIGGER_PAGEFAULT_GPU;
    return r;
}

// Writes 40 records with every writer into dir (finish() when complete).
void
write_outputs(const std::string& dir, bool complete)
{
    run_info run;
    run.pid      = 42;
    run.hostname = "h";
    run.agents   = {{0, 0, "CPU", false}, {7, 1, "gfx90a", true}};
    summary_builder                             s;
    std::vector<std::unique_ptr<record_writer>> writers;
    for(const char* f : {"csv", "json", "perfetto", "chrome-trace"})
    {
        writers.push_back(make_writer(f));
        writers.back()->open(dir, "", run);
    }
    write_summary_files(dir, "", run, s, false, false);
    for(uint64_t i = 0; i < 40; ++i)
    {
        s.add(migration(i));
        for(auto& w : writers)
            w->write(migration(i));
    }
    for(auto& w : writers)
        complete ? w->finish(run, s) : w->end_batch();
}
} // namespace

TEST(repair, json_cut_at_every_byte_becomes_valid_with_whole_records)
{
    scratch dir;
    write_outputs(dir.path, true);
    std::string full = slurp(dir.file("results.json"));
    std::string err;
    auto        all = kfd_out_test::records_from_json(dir.file("results.json"), err);
    ASSERT_EQ(all.size(), 40u);
    size_t header = full.find("\"records\":[") + 12;
    for(size_t cut = header; cut < full.size(); cut += 37)
    {
        spit(dir.file("cut.json"), full.substr(0, cut));
        std::string error;
        repair_line_json(dir.file("cut.json"), "\"records\":[", error);
        ASSERT_TRUE(error.empty()) << "cut at " << cut << ": " << error;
        auto doc = nlohmann::json::parse(slurp(dir.file("cut.json")), nullptr, false);
        ASSERT_FALSE(doc.is_discarded()) << "cut at " << cut;
        std::string e2;
        auto        kept = kfd_out_test::records_from_json(dir.file("cut.json"), e2);
        for(const auto& r : kept)
            EXPECT_TRUE(std::binary_search(all.begin(), all.end(), r)) << r;
        // Every record whose line (with its '\n') lies before the cut is kept.
        std::string before = full.substr(header, cut - header);
        size_t      whole  = static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
        if(whole > 0) whole -= 1; // the newline after "records":[
        EXPECT_GE(kept.size(), std::min<size_t>(whole, 40)) << "cut at " << cut;
    }
}

TEST(repair, chrome_trace_cut_becomes_valid)
{
    scratch dir;
    write_outputs(dir.path, true);
    std::string full = slurp(dir.file("trace.chrome.json"));
    for(size_t cut = 20; cut < full.size(); cut += 101)
    {
        spit(dir.file("cut.json"), full.substr(0, cut));
        std::string error;
        repair_line_json(dir.file("cut.json"), "{\"traceEvents\":[", error);
        ASSERT_TRUE(error.empty()) << "cut at " << cut << ": " << error;
        auto check = kfd_out_test::check_chrome_trace(dir.file("cut.json"));
        EXPECT_TRUE(check.problems.empty()) << "cut at " << cut << ": " << check.problems.front();
    }
}

TEST(repair, pftrace_and_csv_cut_keep_whole_units)
{
    scratch dir;
    write_outputs(dir.path, true);
    std::string trace = slurp(dir.file("trace.pftrace"));
    for(size_t cut = 1; cut < trace.size(); cut += trace.size() / 13)
    {
        spit(dir.file("cut.pftrace"), trace.substr(0, cut));
        std::string error;
        repair_pftrace(dir.file("cut.pftrace"), error);
        ASSERT_TRUE(error.empty()) << error;
        auto check = kfd_out_test::check_pftrace(dir.file("cut.pftrace"));
        EXPECT_TRUE(check.problems.empty()) << "cut at " << cut << ": " << check.problems.front();
        EXPECT_EQ(check.slice_begins, check.slice_ends);
    }
    std::string csv = slurp(dir.file("page_migrate.csv"));
    spit(dir.file("cut.csv"), csv.substr(0, csv.size() - 10));
    std::string error;
    EXPECT_TRUE(repair_csv(dir.file("cut.csv"), error));
    std::string fixed = slurp(dir.file("cut.csv"));
    EXPECT_EQ(fixed.back(), '\n');
    EXPECT_EQ(std::count(fixed.begin(), fixed.end(), '\n'), 40); // header + 39 whole rows
}

TEST(repair, killed_run_summary_rebuilt_from_records)
{
    scratch dir;
    write_outputs(dir.path, false); // no finish(): as if killed after the last flush
    auto report = repair_directory(dir.path);
    EXPECT_TRUE(report.errors.empty()) << report.errors.front();
    auto doc = nlohmann::json::parse(slurp(dir.file("summary.json")), nullptr, false);
    ASSERT_FALSE(doc.is_discarded());
    EXPECT_EQ(doc["complete"], false);
    EXPECT_EQ(doc["loss"]["probably_lost"], true); // no loss accounting from a killed run
    uint64_t count = 0;
    for(const auto& op : doc["operations"])
        count += op["count"].get<uint64_t>();
    EXPECT_EQ(count, 40u);
    EXPECT_FALSE(slurp(dir.file("summary.txt")).empty());
    // Documents the streaming tail already closed stay as they are, marked truncated.
    auto json = nlohmann::json::parse(slurp(dir.file("results.json")), nullptr, false);
    ASSERT_FALSE(json.is_discarded());
    EXPECT_EQ(json["truncated"], true);
    EXPECT_EQ(json["records"].size(), 40u);
}
