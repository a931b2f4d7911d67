// MIT License - see LICENSE.
//
// Output files under errors: a full device (/dev/full), a full filesystem (a tiny tmpfs,
// when this test may mount one), a planted symlink, an impossible directory. What was
// written stays a valid document.
#include "oracle.hpp"

#include <rocprof-kfd-output/output_file.hpp>
#include <rocprof-kfd-output/writer.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace rocprof_kfd;
using kfd_out_test::scratch;
using kfd_out_test::slurp;

namespace
{
record
fault(uint64_t i)
{
    record r                = {};
    r.size                  = sizeof(r);
    r.operation             = ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT;
    r.pid                   = 42;
    r.start_timestamp       = 1000 + i * 10;
    r.end_timestamp         = 1005 + i * 10;
    r.page_fault.node_id    = 7;
    r.page_fault.address    = 0x7f0000000000 + i * 4096;
    r.page_fault.read_fault = i % 2;
    return r;
}

run_info
some_run()
{
    run_info run;
    run.pid      = 42;
    run.hostname = "h";
    run.agents   = {{0, 0, "CPU", false}, {7, 1, "gfx90a", true}};
    return run;
}
} // namespace

TEST(output_file, full_device_fails_once_and_stays_quiet)
{
    output_file f;
    ASSERT_TRUE(f.open("/dev/full"));
    f.append("hello\n");
    EXPECT_FALSE(f.flush());
    EXPECT_TRUE(f.failed());
    f.append("more\n"); // no-op after the failure
    EXPECT_FALSE(f.close());
}

TEST(output_file, never_follows_a_planted_symlink)
{
    scratch dir;
    kfd_out_test::spit(dir.file("victim"), "keep me");
    ASSERT_EQ(symlink(dir.file("victim").c_str(), dir.file("page_fault.csv").c_str()), 0);
    output_file f;
    EXPECT_FALSE(f.open(dir.file("page_fault.csv")));
    EXPECT_EQ(slurp(dir.file("victim")), "keep me");
}

TEST(output_file, a_planted_fifo_neither_blocks_nor_is_written)
{
    scratch dir;
    ASSERT_EQ(mkfifo(dir.file("trace.pftrace").c_str(), 0644), 0);
    output_file f;
    EXPECT_FALSE(f.open(dir.file("trace.pftrace"))); // returns at once (no reader)
    EXPECT_TRUE(f.failed());
}

TEST(output_file, creates_files_with_mode_0644)
{
    scratch     dir;
    mode_t      old = umask(0);
    output_file f;
    ASSERT_TRUE(f.open(dir.file("x")));
    umask(old);
    struct stat st;
    ASSERT_EQ(stat(dir.file("x").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(output_file, json_document_valid_after_every_flush)
{
    scratch dir;
    auto    w = make_writer("json");
    ASSERT_TRUE(w->open(dir.path, "", some_run()));
    for(uint64_t i = 0; i < 50; ++i)
    {
        w->write(fault(i));
        if(i % 7 == 0)
        {
            w->end_batch();
            auto doc = nlohmann::json::parse(slurp(dir.file("results.json")), nullptr, false);
            ASSERT_FALSE(doc.is_discarded()) << "after record " << i;
            EXPECT_EQ(doc["truncated"], true);
            EXPECT_EQ(doc["records"].size(), i + 1);
        }
    }
}

TEST(output_file, make_directories_refuses_a_path_through_a_file)
{
    scratch dir;
    kfd_out_test::spit(dir.file("plain"), "x");
    EXPECT_FALSE(make_directories(dir.file("plain") + "/sub/dir"));
    EXPECT_TRUE(make_directories(dir.file("a/b/c")));
}

// A filesystem that fills up: every writer keeps a valid document of whole records.
TEST(output_file, full_filesystem_keeps_valid_documents)
{
    scratch     dir;
    std::string mnt = dir.file("tiny");
    ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
    if(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0)
        GTEST_SKIP() << "cannot mount a tmpfs here (needs CAP_SYS_ADMIN): " << strerror(errno);
    struct unmount_at_end
    {
        std::string path;
        ~unmount_at_end() { umount2(path.c_str(), MNT_DETACH); }
    } guard{mnt};

    std::vector<std::unique_ptr<record_writer>> writers;
    for(const char* f : {"csv", "json", "perfetto", "chrome-trace"})
    {
        writers.push_back(make_writer(f));
        ASSERT_TRUE(writers.back()->open(mnt, "", some_run())) << f;
    }
    summary_builder s;
    for(uint64_t i = 0; i < 20000; ++i)
    {
        for(auto& w : writers)
            w->write(fault(i));
        if(i % 100 == 0)
            for(auto& w : writers)
                w->end_batch();
    }
    for(auto& w : writers)
        w->finish(some_run(), s);
    // The disk filled: some writer failed; every document is still whole.
    auto json = nlohmann::json::parse(slurp(mnt + "/results.json"), nullptr, false);
    ASSERT_FALSE(json.is_discarded());
    EXPECT_GT(json["records"].size(), 0u);
    auto chrome = nlohmann::json::parse(slurp(mnt + "/trace.chrome.json"), nullptr, false);
    ASSERT_FALSE(chrome.is_discarded());
    std::string csv = slurp(mnt + "/page_fault.csv");
    ASSERT_FALSE(csv.empty());
    EXPECT_EQ(csv.back(), '\n');
    // (protoc's output would not fit on the full disk: decode a copy elsewhere)
    kfd_out_test::spit(dir.file("copy.pftrace"), slurp(mnt + "/trace.pftrace"));
    auto copy = kfd_out_test::check_pftrace(dir.file("copy.pftrace"));
    EXPECT_TRUE(copy.problems.empty()) << copy.problems.front();
    EXPECT_GT(copy.packets, 1u);
    std::string err;
    auto        rows = kfd_out_test::records_from_json(mnt + "/results.json", err);
    EXPECT_TRUE(err.empty()) << err;
    EXPECT_LT(rows.size(), 20000u); // it did fill up
}
