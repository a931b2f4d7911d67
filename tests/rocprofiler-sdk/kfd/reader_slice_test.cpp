// MIT License - see LICENSE.
//
// reader_slice: the reader asks for a short time slice for itself only, under SCHED_OTHER
// only, keeping its nice value and reset-on-fork. The expected attributes come from
// sched_setattr(2)'s rules: since Linux 6.12 the kernel keeps sched_runtime of a SCHED_OTHER
// thread as its slice (clamped to 0.1-100 ms) and sched_getattr reports it; before, it
// ignores it. Each case runs in a thread of its own, so the test process keeps its own
// scheduling.
#include "rocprofiler-sdk/kfd/reader_slice.hpp"

#include "common/sched_attr.hpp"
#include "seccomp_refusal.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <thread>

namespace
{
namespace slice = rocprofiler::kfd::reader_slice;

using attr_v0 = rocprofiler::linux_abi::sched_attr_v0;

attr_v0
attributes_of_this_thread()
{
    attr_v0 a{};
    EXPECT_EQ(syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0), 0);
    return a;
}

// Linux 6.12 or later: sched_runtime is a SCHED_OTHER thread's slice.
bool
kernel_keeps_the_slice()
{
    utsname u{};
    if(uname(&u) != 0) return false;
    int major = 0, minor = 0;
    if(std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
    return major > 6 || (major == 6 && minor >= 12);
}

void
in_own_thread(const std::function<void()>& body)
{
    std::thread t{body};
    t.join();
}

slice::attributes
other_with_nice(int32_t nice, uint64_t flags = 0)
{
    slice::attributes a{};
    a.policy  = SCHED_OTHER;
    a.nice    = nice;
    a.flags   = flags;
    a.runtime = 2'800'000;
    return a;
}

TEST(reader_slice, sched_other_gets_the_slice_and_keeps_its_nice_and_reset_on_fork)
{
    slice::attributes wanted{};
    ASSERT_TRUE(slice::with_slice(other_with_nice(7, 0x01), 100'000, wanted));
    EXPECT_EQ(wanted.policy, uint32_t{SCHED_OTHER});
    EXPECT_EQ(wanted.nice, 7);
    EXPECT_EQ(wanted.flags, 0x01u); // SCHED_FLAG_RESET_ON_FORK
    EXPECT_EQ(wanted.runtime, 100'000u);
}

TEST(reader_slice, only_reset_on_fork_of_the_flags_is_passed_back)
{
    // 0x60: the utilization-clamp flags, which need their values (sched_attr v1).
    slice::attributes wanted{};
    ASSERT_TRUE(slice::with_slice(other_with_nice(0, 0x60), 100'000, wanted));
    EXPECT_EQ(wanted.flags, 0u);
}

TEST(reader_slice, other_policies_and_slice_zero_ask_for_nothing)
{
    slice::attributes wanted{};
    wanted.runtime = 12345;
    for(uint32_t policy : {uint32_t{SCHED_BATCH}, uint32_t{SCHED_IDLE}, uint32_t{SCHED_FIFO},
                           uint32_t{SCHED_RR}, uint32_t{6} /* SCHED_DEADLINE */})
    {
        auto current   = other_with_nice(0);
        current.policy = policy;
        EXPECT_FALSE(slice::with_slice(current, 100'000, wanted)) << "policy " << policy;
    }
    EXPECT_FALSE(slice::with_slice(other_with_nice(0), 0, wanted));
    EXPECT_EQ(wanted.runtime, 12345u); // untouched
}

TEST(reader_slice, this_thread_gets_the_slice_with_its_nice_kept)
{
    in_own_thread(
        []
        {
            // A nice value of its own (inherited by the reader from the thread that starts
            // tracing, in the SDK): raising it needs no privilege.
            ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 4), 0);
            int  error = -1;
            auto done  = slice::request_for_this_thread(100'000, error);
            ASSERT_EQ(done, slice::outcome::set) << "errno " << error;
            EXPECT_EQ(error, 0);
            auto a = attributes_of_this_thread();
            EXPECT_EQ(a.sched_policy, uint32_t{SCHED_OTHER});
            EXPECT_EQ(a.sched_nice, 4);
            if(kernel_keeps_the_slice())
                EXPECT_EQ(a.sched_runtime, 100'000u);
            else
                EXPECT_EQ(a.sched_runtime, 0u); // ignored before 6.12
        });
    // The test's own thread is as it was.
    EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))), 0);
}

TEST(reader_slice, a_batch_thread_keeps_its_policy_and_slice)
{
    in_own_thread(
        []
        {
            sched_param none{};
            ASSERT_EQ(sched_setscheduler(0, SCHED_BATCH, &none), 0);
            auto before = attributes_of_this_thread();
            int  error  = -1;
            EXPECT_EQ(slice::request_for_this_thread(100'000, error), slice::outcome::not_asked);
            auto after = attributes_of_this_thread();
            EXPECT_EQ(after.sched_policy, uint32_t{SCHED_BATCH});
            EXPECT_EQ(after.sched_runtime, before.sched_runtime);
            EXPECT_EQ(after.sched_nice, before.sched_nice);
        });
}

TEST(reader_slice, a_refused_request_says_why_and_changes_nothing)
{
    if(rocprofiler::test::seccomp_arch == 0)
        GTEST_SKIP() << "no seccomp filter written for this architecture";
    in_own_thread(
        []
        {
            ASSERT_TRUE(rocprofiler::test::refuse_in_this_thread(SYS_sched_setattr));
            auto before = attributes_of_this_thread();
            int  error  = 0;
            EXPECT_EQ(slice::request_for_this_thread(100'000, error), slice::outcome::refused);
            EXPECT_EQ(error, EPERM);
            auto after = attributes_of_this_thread();
            EXPECT_EQ(after.sched_runtime, before.sched_runtime);
            EXPECT_EQ(after.sched_nice, before.sched_nice);
        });
}

TEST(reader_slice, slice_zero_leaves_the_thread_as_it_was)
{
    in_own_thread(
        []
        {
            auto before = attributes_of_this_thread();
            int  error  = -1;
            EXPECT_EQ(slice::request_for_this_thread(0, error), slice::outcome::not_asked);
            auto after = attributes_of_this_thread();
            EXPECT_EQ(after.sched_policy, before.sched_policy);
            EXPECT_EQ(after.sched_runtime, before.sched_runtime);
            EXPECT_EQ(after.sched_nice, before.sched_nice);
        });
}
} // namespace
