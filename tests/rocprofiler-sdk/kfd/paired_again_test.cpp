// MIT License - see LICENSE.
//
// A kind paired again after some of its events were read unpaired (a second context traced
// raw evictions while the QUEUE_SUSPEND service was stopped) opens its gap before the reader
// pairs the first event read under the new paired kinds. The service sets paired_again, then
// paired_kinds, then writes the mask; the kernel's events after that write may be read before
// any drain the service requests. The gap used to open at that drain only, after such events
// had been paired: a suspension the gap should have withheld was reported (seen under
// ThreadSanitizer on a loaded CI machine, service_e2e.suspensions_pair_again_...).
#include "rocprofiler-sdk/kfd/pairing.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"
#include "rocprofiler-sdk/kfd/reader.hpp"

#include <gtest/gtest.h>

namespace
{
using rocprofiler::kfd::event;
using rocprofiler::kfd::gpu_stream;
using rocprofiler::kfd::pair_kind_queue_suspend;
using rocprofiler::kfd::paired_kinds_for_read;
using rocprofiler::kfd::parse_line;
using rocprofiler::kfd::parse_result;
using record_t = rocprofiler_buffer_tracing_page_migration_record_t;

// Feeds an eviction at 1.0 s and its restore at 1.1 s; true if they made a record.
bool
suspension_reported(gpu_stream& stream)
{
    event    eviction{}, restore{};
    record_t out{};
    EXPECT_EQ(parse_line("9 1000000000 -4242 1ea0 2", eviction), parse_result::ok);
    EXPECT_EQ(parse_line("a 1100000000 -4242 1ea0", restore), parse_result::ok);
    bool reported = stream.pairing.process(eviction, out);
    reported      = stream.pairing.process(restore, out) || reported;
    return reported;
}
} // namespace

TEST(paired_again, without_a_gap_the_suspension_is_reported)
{
    gpu_stream stream;
    stream.paired_kinds.store(pair_kind_queue_suspend);
    EXPECT_EQ(paired_kinds_for_read(stream), pair_kind_queue_suspend);
    EXPECT_TRUE(suspension_reported(stream));
    EXPECT_EQ(stream.pairing.counters().starts_lost_in_gap, 0u);
}

TEST(paired_again, the_gap_opens_before_the_first_read_that_pairs_the_kind)
{
    gpu_stream stream;
    stream.paired_kinds.store(0);
    stream.paired_again.store(pair_kind_queue_suspend);
    // Seen before its paired_kinds bit (the service's stores in between): kept for a later read.
    EXPECT_EQ(paired_kinds_for_read(stream), 0u);
    EXPECT_EQ(stream.paired_again.load(), pair_kind_queue_suspend);
    stream.paired_kinds.store(pair_kind_queue_suspend);
    EXPECT_EQ(paired_kinds_for_read(stream), pair_kind_queue_suspend);
    EXPECT_EQ(stream.paired_again.load(), 0u);
    // The eviction count is unknown: the suspension ending within 10 s of the first event
    // after the gap is withheld and counted lost in it.
    EXPECT_FALSE(suspension_reported(stream));
    EXPECT_EQ(stream.pairing.counters().starts_lost_in_gap, 1u);
}
