// MIT License - see LICENSE.
//
// read_coalescing::nap_ns, against values worked out by hand from its rules (burst bound:
// half the FIFO at 40 MB/s; rate bound: an eighth of the FIFO at the observed rate; at least
// 20 us and at least 256 bytes expected; the FIFO must last the wait plus 2 ms at the observed
// rate; never for a stream faster than 16 MB/s; never after a saturated read).
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

TEST(read_coalescing, busy_8k_stream_is_not_waited_on_when_a_late_wake_up_would_overflow)
{
    // 200k events/s of 45 bytes: 585 bytes in 65 us (9 MB/s). The bounds would allow
    // 102.4 us (burst: 4096 B at 40 MB/s; rate: 1024 B at 9 MB/s = 113.8 us), but the FIFO
    // fills in 8192 * 65000 / 585 = 910 us, less than 102.4 us + 2 ms: no wait.
    EXPECT_EQ(nap_ns(read_of(8192, 585, 65'000)), 0u);
    // 300k events/s (13.5 MB/s): 607 us to fill. None either.
    EXPECT_EQ(nap_ns(read_of(8192, 675, 50'000)), 0u);
}

TEST(read_coalescing, moderate_8k_stream_waits_the_burst_bound)
{
    // 70k events/s of 45 bytes: 315 bytes in 100 us (3.15 MB/s). Rate bound: 1024 B at
    // 3.15 MB/s = 325 us; burst bound 102.4 us. The FIFO lasts 8192 * 100000 / 315 = 2.6 ms,
    // over 2.1024 ms; expected in 102.4 us: 322 B >= 256.
    EXPECT_EQ(nap_ns(read_of(8192, 315, 100'000)), 102'400u);
}

TEST(read_coalescing, the_fifo_must_last_the_wait_plus_two_ms)
{
    // 4096 bytes in 1051200 ns: the FIFO lasts 8192 * 1051200 / 4096 = 2102400 ns, exactly
    // 102400 (the burst bound; the rate bound is 1024 * 1051200 / 4096 = 262800) + 2000000.
    // Expected in the wait: 4096 * 102400 / 1051200 = 399 B.
    EXPECT_EQ(nap_ns(read_of(8192, 4096, 1'051'200)), 102'400u);
    // One ns less between the reads: the FIFO lasts less than that. No wait.
    EXPECT_EQ(nap_ns(read_of(8192, 4096, 1'051'199)), 0u);
}

TEST(read_coalescing, large_fifo_waits_at_rates_an_8k_one_cannot)
{
    // 200k events/s (9 MB/s: 585 bytes in 65 us) with a 64 KiB FIFO. Burst bound: 32 KiB at
    // 40 MB/s = 819.2 us; rate bound: 8 KiB at 9 MB/s = 8192 * 65000 / 585 = 910.2 us. The
    // FIFO lasts 65536 * 65000 / 585 = 7.28 ms, over 2.82 ms.
    EXPECT_EQ(nap_ns(read_of(65536, 585, 65'000)), 819'200u);
    // 300k events/s (675 bytes in 50 us): rate bound 8192 * 50000 / 675 = 606814 ns (integer
    // division), under the burst bound; the FIFO lasts 4.85 ms, over 2.61 ms.
    EXPECT_EQ(nap_ns(read_of(65536, 675, 50'000)), 606'814u);
}

TEST(read_coalescing, stream_over_16_mb_per_second_is_not_waited_on)
{
    // 16 MB/s exactly, 64 KiB FIFO: 800 bytes in 50 us; the rate bound is 8192 * 50000 / 800
    // = 512 us, and the FIFO lasts 4.1 ms.
    EXPECT_EQ(nap_ns(read_of(65536, 800, 50'000)), 512'000u);
    // One byte more is faster than 16 MB/s: no wait.
    EXPECT_EQ(nap_ns(read_of(65536, 801, 50'000)), 0u);
    // 1M events/s of 45 bytes (45 MB/s): none either.
    EXPECT_EQ(nap_ns(read_of(65536, 2250, 50'000)), 0u);
}

TEST(read_coalescing, quiet_stream_keeps_polling)
{
    // 10k events/s: 45 bytes after 100 us. 102.4 us would gather 46 bytes < 256.
    EXPECT_EQ(nap_ns(read_of(8192, 45, 100'000)), 0u);
    // 50k events/s: 2.25 MB/s gives 230 bytes in 102.4 us: still under 256.
    EXPECT_EQ(nap_ns(read_of(8192, 225, 100'000)), 0u);
    // 100k events/s: 4.5 MB/s gives 460 bytes, worth a wait, but the FIFO fills in
    // 8192 * 100000 / 450 = 1.82 ms, less than 2.1024 ms: none. A 64 KiB FIFO waits 819.2 us
    // (burst bound; rate bound 8192 B at 4.5 MB/s = 1.82 ms; it lasts 14.6 ms).
    EXPECT_EQ(nap_ns(read_of(8192, 450, 100'000)), 0u);
    EXPECT_EQ(nap_ns(read_of(65536, 450, 100'000)), 819'200u);
}

TEST(read_coalescing, small_fifo_is_never_waited_on)
{
    // 1 KiB: the burst bound is 512 B at 40 MB/s = 12.8 us, under the 20 us minimum.
    EXPECT_EQ(nap_ns(read_of(1024, 585, 65'000)), 0u);
    EXPECT_EQ(nap_ns(read_of(1024, 900, 10'000)), 0u);
    // 2 KiB: 25.6 us by the burst bound. At 9 MB/s the rate bound is 256 * 65000 / 585 =
    // 28.4 us, and 25.6 us gather 230 bytes < 256: no wait. At twice the rate the rate bound
    // is 14.2 us, under the minimum. At 10 MB/s both allow 25.6 us and 256 B, but the FIFO
    // fills in 205 us, less than 2.0256 ms: none. A 2 KiB FIFO is never waited on: 256 bytes
    // in the wait need at least 10 MB/s, at which it lasts 205 us.
    EXPECT_EQ(nap_ns(read_of(2048, 585, 65'000)), 0u);
    EXPECT_EQ(nap_ns(read_of(2048, 1170, 65'000)), 0u);
    EXPECT_EQ(nap_ns(read_of(2048, 1000, 100'000)), 0u);
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
                // and the FIFO lasts the wait plus 2 ms at that rate
                if(wait != 0)
                {
                    EXPECT_LE((wait + 2'000'000) * bytes / since, fifo)
                        << fifo << " " << bytes << " " << since;
                }
            }
}
} // namespace
