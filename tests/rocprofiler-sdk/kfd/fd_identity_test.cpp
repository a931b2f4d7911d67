// MIT License - see LICENSE.
//
// fds owned by identity (device.hpp): a number the program closed and reopened is not the
// SDK's any more, even when the new file has the same inode (every eventfd and SMI fd shares
// one anonymous inode; a second open of a device has the device's inode), and close_owned()
// then leaves it open. Checked with kcmp, and in a child process whose seccomp filter refuses
// kcmp with EPERM, as Docker's default profile does.
#include "rocprofiler-sdk/kfd/device.hpp"
#include "seccomp_refusal.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace
{
using rocprofiler::kfd::device::close_owned;
using rocprofiler::kfd::device::fd_identity;
using rocprofiler::kfd::device::identify;
using rocprofiler::kfd::device::is_ours;

bool
is_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

// The checks, returning the number of failures (they also run in a child, where gtest's
// assertions cannot report). Each prints what failed.
int
ownership_failures()
{
    int  failures = 0;
    auto check    = [&](bool ok, const char* what)
    {
        if(!ok)
        {
            std::fprintf(stderr, "failed: %s\n", what);
            ++failures;
        }
    };

    // Ours while untouched; the same file at that number again is still ours.
    int         ours = eventfd(0, EFD_CLOEXEC);
    fd_identity id   = identify(ours);
    check(id.known, "an eventfd is identified");
    check(is_ours(ours, id), "an untouched eventfd is ours");

    // The program closes it and its next eventfd gets the number: same (anonymous) inode.
    int saved = fcntl(ours, F_DUPFD_CLOEXEC, 100); // to put ours back below
    close(ours);
    int program = eventfd(0, EFD_CLOEXEC);
    check(program == ours, "the program's eventfd took the number");
    check(!is_ours(program, id), "the program's eventfd at our number is not ours");
    fd_identity kept = id; // close_owned forgets an identity whose number was taken
    close_owned(program, id);
    check(!id.known, "close_owned forgets the identity of a number that was taken");
    check(is_open(program), "close_owned leaves the program's eventfd open");
    close(program);

    // The program opens a device twice (as the HIP runtime opens /dev/kfd): same inode.
    int         device    = open("/dev/null", O_RDWR | O_CLOEXEC);
    fd_identity device_id = identify(device);
    close(device);
    int reopened = open("/dev/null", O_RDWR | O_CLOEXEC);
    check(reopened == device, "the reopened device took the number");
    check(!is_ours(reopened, device_id), "the program's own open of the device is not ours");
    close_owned(reopened, device_id);
    check(is_open(reopened), "close_owned leaves the program's open of the device open");
    close(reopened);

    // Our file back at our number (a dup of the same open file) is ours, and close_owned
    // closes it and the private duplicate.
    check(dup3(saved, ours, O_CLOEXEC) == ours, "dup3 puts our eventfd back");
    close(saved);
    check(is_ours(ours, kept), "the same open file at our number is ours");
    int reference = kept.reference;
    close_owned(ours, kept);
    check(!is_open(ours), "close_owned closes our fd");
    check(reference < 0 || !is_open(reference), "close_owned closes the private duplicate");

    // The program also took the number of the private duplicate (dup2 onto it): that file is
    // the program's and stays open, whatever close_owned does with our number.
    int         again    = eventfd(0, EFD_CLOEXEC);
    fd_identity again_id = identify(again);
    check(again_id.reference >= 0, "a private duplicate exists");
    int program_file = eventfd(0, EFD_CLOEXEC);
    check(dup3(program_file, again_id.reference, O_CLOEXEC) == again_id.reference,
          "the program's file takes the duplicate's number");
    int taken = again_id.reference;
    close_owned(again, again_id);
    check(is_open(taken), "close_owned leaves the program's file at the duplicate's number open");
    close(taken);
    close(program_file);
    if(is_open(again)) close(again);
    return failures;
}

// Makes kcmp fail with EPERM in this process (a seccomp filter, as in a Docker container).
bool
refuse_kcmp()
{
    if(!rocprofiler::test::refuse_in_this_thread(SYS_kcmp)) return false;
    pid_t self = getpid();
    return syscall(SYS_kcmp, self, self, KCMP_FILE, 0, 0) == -1 && errno == EPERM;
}
} // namespace

TEST(fd_identity, with_kcmp)
{
    pid_t self = getpid();
    if(syscall(SYS_kcmp, self, self, KCMP_FILE, 1, 1) != 0)
        GTEST_SKIP() << "kcmp is not allowed here; the case without it is the next test";
    EXPECT_EQ(ownership_failures(), 0);
}

TEST(fd_identity, without_kcmp_under_a_seccomp_filter)
{
    if(rocprofiler::test::seccomp_arch == 0)
        GTEST_SKIP() << "no seccomp filter written for this architecture";
    pid_t child = fork();
    ASSERT_NE(child, -1);
    if(child == 0)
    {
        if(!refuse_kcmp())
        {
            std::fprintf(stderr, "cannot install the seccomp filter\n");
            _exit(2);
        }
        _exit(ownership_failures() == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a check failed (see stderr); 2: no seccomp filter";
}
