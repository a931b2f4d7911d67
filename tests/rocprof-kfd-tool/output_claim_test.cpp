// MIT License - see LICENSE.
//
// Claims of an output folder (output_claim.hpp): a process of the same run, or a live one,
// keeps its files; a later claimant names its own with its pid; an earlier run's claim whose
// process is gone is taken over.
#include "output_claim.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

using namespace rocprof_kfd;

namespace
{
struct folder
{
    std::string path;
    folder()
    {
        char name[] = "/tmp/rocprof-kfd-claim.XXXXXX";
        path        = mkdtemp(name) ? name : "";
    }
    ~folder() { std::system(("rm -rf '" + path + "'").c_str()); }
    void owner(const std::string& stem, const std::string& text) const
    {
        std::ofstream(path + "/." + (stem.empty() ? "" : stem + "_") + "rocprof-kfd-owner") << text;
    }
};

// A process id that no process has now: a child, reaped.
uint32_t
gone_pid()
{
    pid_t child = fork();
    if(child == 0) _exit(0);
    waitpid(child, nullptr, 0);
    return static_cast<uint32_t>(child);
}

const uint32_t self = static_cast<uint32_t>(getpid());
} // namespace

TEST(output_claim, the_first_process_keeps_its_names)
{
    folder d;
    auto   c = claim_output(d.path, "", 1234, "run-a");
    EXPECT_FALSE(c.renamed);
    EXPECT_EQ(c.stem, "");
    // ... and claiming again as the same process changes nothing
    EXPECT_FALSE(claim_output(d.path, "", 1234, "run-a").renamed);
}

TEST(output_claim, another_process_of_the_same_run_names_its_files_with_its_pid)
{
    folder d;
    claim_output(d.path, "", gone_pid(), "run-a"); // gone, but of this run: its files stay
    auto c = claim_output(d.path, "", 1234, "run-a");
    EXPECT_TRUE(c.renamed);
    EXPECT_EQ(c.stem, "1234");
    auto stemmed = claim_output(d.path, "run1", 99, "run-a");
    EXPECT_FALSE(stemmed.renamed); // another stem, another claim
    auto second = claim_output(d.path, "run1", 98, "run-a");
    EXPECT_EQ(second.stem, "run1_98");
    EXPECT_EQ(second.other_pid, 99u);
}

TEST(output_claim, a_live_owner_keeps_its_files_whatever_the_run)
{
    folder d;
    d.owner("", std::to_string(self) + " run-old\n"); // this test process: alive
    auto c = claim_output(d.path, "", self + 1, "");
    EXPECT_TRUE(c.renamed);
    EXPECT_EQ(c.other_pid, self);
}

TEST(output_claim, an_earlier_runs_claim_whose_process_is_gone_is_taken_over)
{
    folder d;
    d.owner("", std::to_string(gone_pid()) + " run-old\n");
    auto c = claim_output(d.path, "", 1234, "run-new");
    EXPECT_FALSE(c.renamed);
    EXPECT_EQ(c.stem, "");
    // the claim is now this run's
    EXPECT_TRUE(claim_output(d.path, "", 1235, "run-new").renamed);
}

TEST(output_claim, a_folder_that_cannot_be_claimed_keeps_the_names)
{
    auto c = claim_output("/nonexistent-folder-of-rocprof-kfd", "s", 1234, "run-a");
    EXPECT_FALSE(c.renamed);
    EXPECT_EQ(c.stem, "s");
}

TEST(output_claim, a_raw_file_is_claimed_as_the_folders_are)
{
    folder            d;
    const std::string raw = d.path + "/raw.log";
    auto              a   = claim_file(raw, 1234, "run-a");
    EXPECT_FALSE(a.renamed);
    EXPECT_EQ(a.path, raw);
    // Another process of the run: its own file beside it.
    auto b = claim_file(raw, 5678, "run-a");
    EXPECT_TRUE(b.renamed);
    EXPECT_EQ(b.other_pid, 1234u);
    EXPECT_EQ(b.path, d.path + "/5678_raw.log");
    // An earlier run's claim whose process is gone: taken over, the path kept.
    folder            e;
    const std::string old = e.path + "/raw.log";
    std::ofstream(e.path + "/.raw.log.rocprof-kfd-owner") << gone_pid() << " run-old\n";
    auto c = claim_file(old, self, "run-new");
    EXPECT_FALSE(c.renamed);
    EXPECT_EQ(c.path, old);
}
