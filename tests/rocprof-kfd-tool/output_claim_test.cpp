// MIT License - see LICENSE.
//
// Claims of an output folder (output_claim.hpp): a process of the same run, or a live one,
// keeps its files; a later claimant names its own with its pid; an earlier run's claim whose
// process is gone is taken over.
#include "output_claim.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
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

// Whether process `pid` has `path` open (a link in /proc/<pid>/fd).
bool
has_open(pid_t pid, const std::string& path)
{
    const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
    DIR*              dir = opendir(fds.c_str());
    if(dir == nullptr) return false;
    bool found = false;
    while(const dirent* entry = readdir(dir))
    {
        char       target[4096];
        const auto link   = fds + "/" + entry->d_name;
        const auto length = readlink(link.c_str(), target, sizeof target - 1);
        if(length > 0 && std::string(target, static_cast<size_t>(length)) == path) found = true;
    }
    closedir(dir);
    return found;
}
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

TEST(output_claim, the_claim_is_readable_by_all_and_leaves_no_temporary_file)
{
    // Written through a temporary file (0600 from mkostemp) linked into place: other users'
    // processes sharing the folder must read the claim, and the temporary file must go.
    folder d;
    ASSERT_FALSE(claim_output(d.path, "", 1234, "run-a").renamed);
    struct stat st
    {
    };
    ASSERT_EQ(stat((d.path + "/.rocprof-kfd-owner").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    EXPECT_EQ(st.st_nlink, 1u);
    std::ifstream in(d.path + "/.rocprof-kfd-owner");
    std::string   text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "1234 run-a\n");
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

TEST(output_claim, a_claimant_waits_for_a_takeover_in_progress_and_reads_its_claim)
{
    // Two processes of one run that found an earlier run's claim at once both took it over
    // (read, then rewrote the file), and wrote the same files. A takeover now holds the owner
    // file's lock. Here the test is the first taker: the file locked and emptied, as in the
    // middle of its rewrite. The claimant must wait for it and read its claim (before, it read
    // the empty file and wrote the plain names too).
    folder            d;
    const std::string owner = d.path + "/.rocprof-kfd-owner";
    d.owner("", std::to_string(gone_pid()) + " run-old\n");
    int fd = open(owner.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    struct flock whole = {};
    whole.l_type       = F_WRLCK;
    whole.l_whence     = SEEK_SET; // l_start 0, l_len 0: the whole file
    ASSERT_EQ(fcntl(fd, F_SETLKW, &whole), 0);
    ASSERT_EQ(ftruncate(fd, 0), 0);

    pid_t child = fork();
    if(child == 0)
    {
        // A wait far longer than the test's gate can take (the default is a second).
        auto c = claim_output(d.path, "", static_cast<uint32_t>(getpid()), "run-new", 600000);
        _exit(c.renamed ? 1 : 0);
    }
    // A gate, not a sleep: until the child has the owner file open (it then tries the lock
    // until we release it), or the child ended without waiting, as it did before the fix.
    bool       waited  = false;
    int        status  = 0;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while(!waited && std::chrono::steady_clock::now() < give_up)
    {
        if(waitpid(child, &status, WNOHANG) == child) break;
        waited = has_open(child, owner);
        if(!waited) sched_yield();
    }
    const std::string ours = std::to_string(getpid()) + " run-new\n";
    ASSERT_EQ(pwrite(fd, ours.data(), ours.size(), 0), static_cast<ssize_t>(ours.size()));
    close(fd); // the takeover is done: the lock goes with the descriptor
    if(waited || waitpid(child, &status, WNOHANG) == 0) waitpid(child, &status, 0);
    EXPECT_TRUE(waited);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1); // it named its files with its pid
}

TEST(output_claim, a_lock_held_past_the_wait_leaves_the_claim_as_it_is)
{
    // A holder that keeps the owner file's lock (stopped in a debugger mid-takeover, or
    // another user's process holding it on purpose) must not hang the claimant: past its
    // wait it names its files with its pid and leaves the claim alone, even an earlier run's.
    folder            d;
    const std::string owner = d.path + "/.rocprof-kfd-owner";
    const std::string old   = std::to_string(gone_pid()) + " run-old\n";
    d.owner("", old);
    int fd = open(owner.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    struct flock whole = {};
    whole.l_type       = F_WRLCK;
    whole.l_whence     = SEEK_SET;
    ASSERT_EQ(fcntl(fd, F_SETLKW, &whole), 0);

    pid_t child = fork();
    if(child == 0)
    {
        auto c = claim_output(d.path, "", static_cast<uint32_t>(getpid()), "run-new", 20);
        _exit(c.renamed ? 1 : 0);
    }
    // It must end on its own while the lock is still ours (before the bound it waited until
    // the lock was released). Given 30 s, checked every millisecond.
    int        status  = 0;
    bool       ended   = false;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while(!(ended = waitpid(child, &status, WNOHANG) == child) &&
          std::chrono::steady_clock::now() < give_up)
        usleep(1000);
    if(!ended)
    {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    close(fd);
    ASSERT_TRUE(ended) << "the claimant still waited for the lock after 30 s";
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1); // named with its pid
    std::ifstream in(owner);
    std::string   text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, old); // not taken over
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
