// MIT License - see LICENSE.
//
// read_coalescing::nap_ns, against values worked out by hand from its rules (burst bound:
// half the FIFO at 40 MB/s; rate bound: an eighth of the FIFO at the observed rate; at least
// 20 us and at least 256 bytes expected; never for a stream faster than 16 MB/s; never after a
// saturated read).
#include "rocprofiler-sdk/kfd/read_coalescing.hpp"

#include <gtest/gtest.h>

namespace
{
using rocprofiler::kfd::read_coalescing::last_read;
using rocprofiler::kfd::read_coalescing::nap_ns;

last_read
read_of(size_t fifo, size_t bytes, uint64_t ns_since_previous, bool saturated = false)
{
    last_read r{};
    r.fifo_capacity      = fifo;
    r.bytes              = bytes;
    r.ns_since_previous  = ns_since_previous;
    r.fifo_was_saturated = saturated;
    return r;
}

TEST(read_coalescing, busy_8k_stream_waits_the_burst_bound)
{
    // 200k events/s of 45 bytes: 585 bytes in 65 us (9 MB/s). Rate bound: 1024 B at 9 MB/s =
    // 113.8 us; burst bound: 4096 B at 40 MB/s = 102.4 us. Expected in 102.4 us: 921 B.
    EXPECT_EQ(nap_ns(read_of(8192, 585, 65'000)), 102'400u);
}

TEST(read_coalescing, faster_stream_waits_an_eighth_of_the_fifo_at_its_rate)
{
    // 300k events/s of 45 bytes: 675 bytes in 50 us (13.5 MB/s). Rate bound: 1024 B in
    // 1024 * 50000 / 675 = 75851 ns (integer division), under the burst bound.
    EXPECT_EQ(nap_ns(read_of(8192, 675, 50'000)), 75'851u);
}

TEST(read_coalescing, stream_over_16_mb_per_second_is_not_waited_on)
{
    // 16 MB/s exactly: 800 bytes in 50 us; the rate bound is 1024 * 50000 / 800 = 64 us.
    EXPECT_EQ(nap_ns(read_of(8192, 800, 50'000)), 64'000u);
    // One byte more is faster than 16 MB/s: no wait.
    EXPECT_EQ(nap_ns(read_of(8192, 801, 50'000)), 0u);
    // 1M events/s of 45 bytes (45 MB/s): none either.
    EXPECT_EQ(nap_ns(read_of(8192, 2250, 50'000)), 0u);
}

TEST(read_coalescing, quiet_stream_keeps_polling)
{
    // 10k events/s: 45 bytes after 100 us. 102.4 us would gather 46 bytes < 256.
    EXPECT_EQ(nap_ns(read_of(8192, 45, 100'000)), 0u);
    // 50k events/s: 2.25 MB/s gives 230 bytes in 102.4 us: still under 256.
    EXPECT_EQ(nap_ns(read_of(8192, 225, 100'000)), 0u);
    // 100k events/s: 4.5 MB/s gives 460 bytes: worth a wait.
    EXPECT_EQ(nap_ns(read_of(8192, 450, 100'000)), 102'400u);
}

TEST(read_coalescing, small_fifo_is_never_waited_on)
{
    // 1 KiB: the burst bound is 512 B at 40 MB/s = 12.8 us, under the 20 us minimum.
    EXPECT_EQ(nap_ns(read_of(1024, 585, 65'000)), 0u);
    EXPECT_EQ(nap_ns(read_of(1024, 900, 10'000)), 0u);
    // 2 KiB: 25.6 us by the burst bound. At 9 MB/s the rate bound is 256 * 65000 / 585 =
    // 28.4 us, and 25.6 us gather 230 bytes < 256: no wait. At twice the rate the rate bound
    // is 14.2 us, under the minimum. Only at exactly 10 MB/s do both allow 25.6 us and 256 B.
    EXPECT_EQ(nap_ns(read_of(2048, 585, 65'000)), 0u);
    EXPECT_EQ(nap_ns(read_of(2048, 1170, 65'000)), 0u);
    EXPECT_EQ(nap_ns(read_of(2048, 1000, 100'000)), 25'600u);
}

TEST(read_coalescing, saturated_or_empty_reads_never_wait)
{
    EXPECT_EQ(nap_ns(read_of(8192, 8150, 200'000, true)), 0u);
    EXPECT_EQ(nap_ns(read_of(8192, 0, 65'000)), 0u);
}

TEST(read_coalescing, unknown_or_stale_intervals_never_wait)
{
    EXPECT_EQ(nap_ns(read_of(8192, 585, 0)), 0u);
    // Over a second since the previous read: no rate to speak of.
    EXPECT_EQ(nap_ns(read_of(8192, 8000, 1'000'000'001)), 0u);
}

TEST(read_coalescing, very_fast_stream_polls)
{
    // 8000 bytes after 10 us (800 MB/s): far over 16 MB/s (and an eighth of the FIFO would
    // last 1.28 us, under the 20 us minimum).
    EXPECT_EQ(nap_ns(read_of(8192, 8000, 10'000)), 0u);
}

TEST(read_coalescing, a_wait_never_lets_the_fifo_fill_at_the_burst_rate)
{
    // Whatever was observed, burst_bytes_per_second * wait <= half the FIFO.
    for(size_t fifo : {size_t{1024}, size_t{4096}, size_t{8192}, size_t{65536}})
        for(size_t bytes : {size_t{50}, size_t{500}, size_t{5000}, size_t{60000}})
            for(uint64_t since : {1'000ull, 50'000ull, 1'000'000ull, 100'000'000ull})
            {
                auto wait = nap_ns(read_of(fifo, bytes, since));
                EXPECT_LE(wait * 40'000'000 / 1'000'000'000, fifo / 2)
                    << fifo << " " << bytes << " " << since;
                // and an eighth of it at the observed rate
                EXPECT_LE(wait * bytes / since, fifo / 8) << fifo << " " << bytes << " " << since;
            }
}
} // namespace
