// MIT License - see LICENSE.
//
// The summary's loss verdict (judge_loss): which counters are certain losses, which are signs
// of probable ones, and the records handed to the tool's callback that it could not take in.
#include <rocprof-kfd-output/loss.hpp>

#include <gtest/gtest.h>

using namespace rocprof_kfd;

namespace
{
loss_info
counted(uint64_t emitted, uint64_t dropped = 0)
{
    loss_info l;
    l.valid                 = true;
    l.stats.events_received = 2 * emitted;
    l.stats.records_emitted = emitted;
    l.stats.records_dropped = dropped;
    return l;
}
} // namespace

TEST(loss, every_record_received_is_no_loss)
{
    auto v = judge_loss(counted(10));
    EXPECT_FALSE(v.lost);
    EXPECT_FALSE(v.probably_lost);
    EXPECT_EQ(v.message, "no loss");
}

TEST(loss, unreadable_counters_are_a_probable_loss)
{
    loss_info l;
    auto      v = judge_loss(l);
    EXPECT_FALSE(v.lost);
    EXPECT_TRUE(v.probably_lost);
}

TEST(loss, definite_and_probable_counters_are_named)
{
    auto l                       = counted(10, 2);
    l.stats.ends_without_start   = 3;
    l.stats.fifo_saturations     = 1;
    l.stats.fields_out_of_range  = 5; // clamped, not lost
    l.stats.events_other_process = 7; // filtered, not lost
    l.buffer_drops               = 2;
    auto v                       = judge_loss(l);
    EXPECT_TRUE(v.lost);
    EXPECT_TRUE(v.probably_lost);
    EXPECT_EQ(v.message, "records were lost (ends_without_start=3, records_dropped=2, "
                         "buffer_drops=2) and probably more (fifo_saturations=1)");
}

TEST(loss, records_the_callback_could_not_take_in_are_lost)
{
    auto l                 = counted(10);
    l.records_not_received = 3;
    auto v                 = judge_loss(l);
    EXPECT_TRUE(v.lost);
    EXPECT_EQ(v.message, "records were lost (records_not_received=3)");
}

TEST(loss, records_discarded_at_finalization_are_counted_once)
{
    // 10 stored, 7 delivered and taken in, 3 discarded undelivered when the tool was
    // finalized: the buffer counts them in records_dropped, and nothing else counts them.
    auto v = judge_loss(counted(10, 3));
    EXPECT_TRUE(v.lost);
    EXPECT_EQ(v.message, "records were lost (records_dropped=3)");
}
