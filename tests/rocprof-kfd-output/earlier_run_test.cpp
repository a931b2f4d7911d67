// MIT License - see LICENSE.
//
// The rule by which rocprof-kfd-merge and rocprof-kfd-report skip an earlier run's `<pid>_`
// outputs (earlier_run.hpp). The expectations are the rule's cases written out: renamed from
// the base's stem, both run ids known and different, ended before the base started.
#include <rocprof-kfd-output/earlier_run.hpp>

#include <gtest/gtest.h>

using namespace rocprof_kfd;

namespace
{
constexpr uint64_t boot = 1'800'000'000'000'000'000ull; // a Unix time, ns

run_span
span(uint64_t pid, const char* run_id, uint64_t start, uint64_t end)
{
    run_span s;
    s.pid               = pid;
    s.hostname          = "node1";
    s.run_id            = run_id;
    s.start_ns          = start;
    s.end_ns            = end;
    s.boot_time_unix_ns = boot;
    return s;
}
} // namespace

TEST(earlier_run, a_child_of_a_run_that_ended_before_the_rerun_started_is_left_over)
{
    EXPECT_TRUE(left_by_earlier_run("42", span(42, "a", 100, 200), "", span(7, "b", 300, 400)));
    EXPECT_TRUE(
        left_by_earlier_run("run_42", span(42, "a", 100, 200), "run", span(7, "b", 300, 400)));
}

TEST(earlier_run, runs_that_overlapped_are_all_current)
{
    // Started earlier but ended after the base started (mpirun -np N rocprof-kfd -d out).
    EXPECT_FALSE(left_by_earlier_run("42", span(42, "a", 100, 350), "", span(7, "b", 300, 400)));
    // Ended at the very moment the base started: not before it.
    EXPECT_FALSE(left_by_earlier_run("42", span(42, "a", 100, 300), "", span(7, "b", 300, 400)));
    // Started later than the base.
    EXPECT_FALSE(left_by_earlier_run("42", span(42, "a", 500, 600), "", span(7, "b", 300, 400)));
}

TEST(earlier_run, an_unknown_end_or_start_keeps_it)
{
    EXPECT_FALSE(left_by_earlier_run("42", span(42, "a", 100, 0), "", span(7, "b", 300, 400)));
    EXPECT_FALSE(left_by_earlier_run("42", span(42, "a", 100, 200), "", span(7, "b", 0, 400)));
}

TEST(earlier_run, one_run_or_an_unknown_run_keeps_it)
{
    EXPECT_FALSE(left_by_earlier_run("42", span(42, "a", 100, 200), "", span(7, "a", 300, 400)));
    auto no_id   = span(42, "a", 100, 200);
    no_id.run_id = std::nullopt;
    EXPECT_FALSE(left_by_earlier_run("42", no_id, "", span(7, "b", 300, 400)));
    auto base_no_id   = span(7, "b", 300, 400);
    base_no_id.run_id = std::nullopt;
    EXPECT_FALSE(left_by_earlier_run("42", span(42, "a", 100, 200), "", base_no_id));
}

TEST(earlier_run, only_a_stem_renamed_from_the_base_after_its_own_pid)
{
    const auto own  = span(42, "a", 100, 200);
    const auto base = span(7, "b", 300, 400);
    EXPECT_FALSE(left_by_earlier_run("43", own, "", base));     // another pid
    EXPECT_FALSE(left_by_earlier_run("x_42", own, "", base));   // not beside plain names
    EXPECT_FALSE(left_by_earlier_run("42", own, "run", base));  // not STEM_<pid>
    EXPECT_FALSE(left_by_earlier_run("run_42", own, "", base)); // STEM_<pid> beside plain
    EXPECT_FALSE(left_by_earlier_run("other_42", own, "run", base));
    EXPECT_FALSE(left_by_earlier_run("run", own, "run", base)); // itself
}

TEST(earlier_run, unix_times_span_a_reboot)
{
    // The earlier run's boot clock read a large value; the host rebooted; the rerun's boot
    // clock reads a small one but its Unix time is later.
    auto own               = span(42, "a", 9'000'000'000, 9'100'000'000);
    auto base              = span(7, "b", 1'000'000, 2'000'000);
    base.boot_time_unix_ns = boot + 20'000'000'000;
    EXPECT_TRUE(left_by_earlier_run("42", own, "", base));
    // On the boot clocks alone the rerun would look the earlier.
    own.boot_time_unix_ns  = std::nullopt;
    base.boot_time_unix_ns = std::nullopt;
    EXPECT_FALSE(left_by_earlier_run("42", own, "", base));
}

TEST(earlier_run, boot_clocks_compare_only_on_one_host_without_boot_times)
{
    auto own               = span(42, "a", 100, 200);
    auto base              = span(7, "b", 300, 400);
    own.boot_time_unix_ns  = std::nullopt;
    base.boot_time_unix_ns = std::nullopt;
    EXPECT_TRUE(left_by_earlier_run("42", own, "", base));
    base.hostname = "node2";
    EXPECT_FALSE(left_by_earlier_run("42", own, "", base));
    // One with a boot time and one without: not comparable.
    base.hostname          = "node1";
    base.boot_time_unix_ns = boot;
    EXPECT_FALSE(left_by_earlier_run("42", own, "", base));
}

TEST(earlier_run, one_boot_compares_boot_clocks_whatever_the_real_time_clock_did)
{
    // The real-time clock stepped back 0.5 s between the two runs (NTP): their boot times,
    // read as Unix time minus the boot clock, differ by that. On Unix time the rerun would
    // seem to start before the earlier run ended; on their one boot clock it did not.
    auto own               = span(42, "a", 100, 200'000'000);
    auto base              = span(7, "b", 300'000'000, 400'000'000);
    base.boot_time_unix_ns = boot - 500'000'000;
    EXPECT_TRUE(left_by_earlier_run("42", own, "", base));
    // And the other way: overlapping runs stay current however the clock stepped.
    own.end_ns             = 350'000'000;
    base.boot_time_unix_ns = boot + 500'000'000;
    EXPECT_FALSE(left_by_earlier_run("42", own, "", base));
}

TEST(earlier_run, a_run_that_did_not_finish_is_kept_and_named_when_it_may_be_earlier)
{
    const auto crashed = span(42, "a", 100, 0); // no end: killed, or still running
    const auto base    = span(7, "b", 300, 400);
    EXPECT_FALSE(left_by_earlier_run("42", crashed, "", base));
    EXPECT_TRUE(maybe_left_by_earlier_run("42", crashed, "", base));
    // Started after the base, or finished, or of the same run: nothing to say.
    EXPECT_FALSE(maybe_left_by_earlier_run("42", span(42, "a", 500, 0), "", base));
    EXPECT_FALSE(maybe_left_by_earlier_run("42", span(42, "a", 100, 200), "", base));
    EXPECT_FALSE(maybe_left_by_earlier_run("42", span(42, "b", 100, 0), "", base));
    EXPECT_FALSE(maybe_left_by_earlier_run("43", crashed, "", base));
}
