// MIT License - see LICENSE.
//
// parse_line first tries the hot shapes of the profiler events in one AVX-512 pass
// (parse_line_avx512, parse_line_hot_shape) when the CPU has AVX-512 VBMI2, and otherwise
// classifies a line of 16 to 127 bytes at once (SIMD bitmaps, a zero-padded
// copy), 32 bytes at a time with AVX2 (parse_line_avx2) when the CPU has it, and converts
// numbers with SSSE3 (parse_line_ssse3) when the CPU has it, else eight
// bytes at a time (SWAR, parse_line_sse2); parse_line_swar classifies eight bytes at a time;
// parse_line_scalar reads a byte at a time. All of them must agree on every input,
// valid or not: the bundled logs of every scenario and era, and systematic mutations of one line of
// every format (each byte replaced by a tricky byte, deleted, duplicated; every truncation; numbers
// of 0 to 24 digits in every numeric field, around the overflow and overlong limits).
#include "bundled_logs.hpp"
#include "dispatch_recording.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace std::literals;
using rocprofiler::kfd::event;
using rocprofiler::kfd::parse_line;
using rocprofiler::kfd::parse_line_avx2;
using rocprofiler::kfd::parse_line_avx512;
using rocprofiler::kfd::parse_line_has_avx2;
using rocprofiler::kfd::parse_line_has_avx512;
using rocprofiler::kfd::parse_line_has_ssse3;
using rocprofiler::kfd::parse_line_hot_shape;
using rocprofiler::kfd::parse_line_scalar;
using rocprofiler::kfd::parse_line_sse2;
using rocprofiler::kfd::parse_line_ssse3;
using rocprofiler::kfd::parse_line_swar;
using rocprofiler::kfd::parse_result;

namespace
{
// Every field of the two results; true when all agree.
bool
same_event(const event& a, const event& b)
{
    return a.id == b.id && a.timestamp == b.timestamp && a.has_timestamp == b.has_timestamp &&
           a.pid == b.pid && a.page == b.page && a.npages == b.npages && a.node == b.node &&
           a.from_node == b.from_node && a.to_node == b.to_node &&
           a.prefetch_node == b.prefetch_node && a.preferred_node == b.preferred_node &&
           a.trigger == b.trigger && a.error_code == b.error_code &&
           a.has_error_code == b.has_error_code && a.read_fault == b.read_fault &&
           a.migrated == b.migrated && a.rescheduled == b.rescheduled && a.count == b.count &&
           a.bitmask == b.bitmask && a.kind14 == b.kind14 && a.restore == b.restore &&
           a.id14_ambiguous == b.id14_ambiguous && a.id14_restore_node == b.id14_restore_node &&
           a.text_offset == b.text_offset && a.text_length == b.text_length;
}

std::string
printable(std::string_view line)
{
    std::string out;
    for(unsigned char c : line)
    {
        if(c >= 0x20 && c < 0x7f)
            out += static_cast<char>(c);
        else
        {
            char hex[8];
            std::snprintf(hex, sizeof(hex), "\\x%02x", c);
            out += hex;
        }
    }
    return out;
}

// Parses with both; counts disagreements (reports the first few). parse_line_dispatch must
// agree too, and call exactly the handler of the parsed id when the line is ok, else none.
struct twin_checker
{
    uint64_t checked   = 0;
    uint64_t ok        = 0;
    uint64_t hot       = 0; // taken by the hot shapes' pass alone
    uint64_t disagreed = 0;

    void check(std::string_view line)
    {
        event                  fast{}, avx512{}, avx2{}, ssse3{}, sse2{}, swar{}, scalar{};
        const auto             a  = parse_line(line, fast);
        const auto             v5 = parse_line_avx512(line, avx512);
        const auto             v2 = parse_line_avx2(line, avx2);
        const auto             s3 = parse_line_ssse3(line, ssse3);
        const auto             s2 = parse_line_sse2(line, sse2);
        const auto             w  = parse_line_swar(line, swar);
        const auto             b  = parse_line_scalar(line, scalar);
        kfd_test::dispatch_log log;
        event                  dispatched{};
        const auto             d = rocprofiler::kfd::parse_line_dispatch(line, dispatched,
                                                                         kfd_test::recording_handlers(log));
        // The same without the hot shapes' pass (a reader's small reads).
        kfd_test::dispatch_log no_hot_log;
        event                  no_hot{};
        auto                   no_hot_handlers = kfd_test::recording_handlers(no_hot_log);
        no_hot_handlers.hot_shapes             = false;
        const auto no_hot_result =
            rocprofiler::kfd::parse_line_dispatch(line, no_hot, no_hot_handlers);
        const bool dispatch_agrees =
            d == b && no_hot_result == b && same_event(no_hot, scalar) &&
            no_hot_log.calls == log.calls && no_hot_log.slot == log.slot &&
            same_event(dispatched, scalar) &&
            (b == parse_result::ok
                 ? log.calls == 1 && log.slot == scalar.id && same_event(log.ev, scalar) &&
                       log.line.data() == line.data() && log.line.size() == line.size()
                 : log.calls == 0);
        event      hot_event{};
        const bool taken      = parse_line_hot_shape(line, hot_event);
        const bool hot_agrees = !taken || (b == parse_result::ok && same_event(hot_event, scalar));
        ++checked;
        ok += a == parse_result::ok;
        hot += taken;
        if(a == b && v5 == b && v2 == b && s3 == b && s2 == b && w == b &&
           same_event(fast, scalar) && same_event(avx512, scalar) && same_event(avx2, scalar) &&
           same_event(ssse3, scalar) && same_event(sse2, scalar) && same_event(swar, scalar) &&
           dispatch_agrees && hot_agrees)
            return;
        if(++disagreed <= 10)
            ADD_FAILURE() << "the parsers disagree on [" << printable(line)
                          << "]: " << static_cast<int>(a) << " (parse_line), "
                          << static_cast<int>(v5) << " (AVX-512, hot pass "
                          << (taken ? "took it" : "did not take it") << "), "
                          << static_cast<int>(v2) << " (AVX2), " << static_cast<int>(s3)
                          << " (SSSE3), " << static_cast<int>(s2) << " (SSE2), "
                          << static_cast<int>(w) << " (SWAR), " << static_cast<int>(d)
                          << " (dispatch, " << log.calls << " calls of handler " << log.slot
                          << ") vs " << static_cast<int>(b) << " (scalar)";
    }
};

// One line of every format and variant (docs/kfd-smi-interface.md).
const std::vector<std::string> samples = {
    "1 25f3:python3",
    "1 25f3:",
    "2 ffff0000ffff:1234abcd",
    "3 7 MODE1",
    "3 7",
    "4 8 MODE2",
    "5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1",
    "5 14601738586508 -152990 @7f0f15200(2c02) 1ea0->0 ffffffff:ffffffff 3",
    "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 0",
    "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 -14",
    "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1",
    "7 40507688414784 -156893 @7fa608127(ad5c) R",
    "7 40507688414784 -156893 @7FA608127(AD5C) W",
    "8 40507688999999 -156893 @7fa608127(ad5c) M",
    "8 40507688999999 -156893 @7fa608127(ad5c) U",
    "9 38086928279363 -125752 1ea0 1",
    "a 38086928279399 -125752 1ea0",
    "a 38086928279399 -125752 1ea0 R",
    "a 38086928279399 -125752 1ea0 \0"s,
    "a 38086928279399 -125752 1ea0 0",
    "b 15203214457186 -152990 @7f93ac200(200) 1ea0 2",
    "c 25f3 python3",
    "d 25f3 python3",
    "e 15203214457186 -152990 17",
    "e 15203214457186 -152990 1ea0",
    "e 15203214457186 -152990 beef",
    "00000005 1 -1 @1(1) 1->2 3:4 5",
    "f 1 -1 1",
    "0 1 -1 1",
    // Longer than 64 bytes (every field at its widest): numbers across the 64-byte boundary
    // of the masks, and lines near and past the masked path's 127 bytes.
    "5 9223372036854775807 -2147483647 @ffffffffffff(fffff) ffffffff->ffffffff "
    "ffffffff:ffffffff -2147483648",
    "6 9223372036854775807 -2147483647 @ffffffffffff(fffff) ffffffff->ffffffff -2147483648 "
    "-2147483648",
    "b 9223372036854775807 -2147483647 @ffffffffffff(fffff) ffffffff 2147483647",
    "1 25f3:" + std::string(120, 'p'),
    "1 25f3:" + std::string(121, 'p') + "1",
    "4 ffffffff " + std::string(140, 'r'),
};

const char tricky_bytes[] = {' ',    '0',    '1',    '9',    'a',    'f',    'g',    'A',
                             'F',    'G',    '-',    '@',    '(',    ')',    ':',    '>',
                             '\0',   '\n',   '\r',   '\x10', '\x19', '\x7f', '\x80', '\xb0',
                             '\xc1', '\xe6', '\xff', '/',    '`'};

TEST(kfd_parser_twin, every_mutation_of_every_format)
{
    twin_checker twin;
    for(const auto& line : samples)
    {
        twin.check(line);
        for(size_t i = 0; i <= line.size(); ++i)
        {
            twin.check(std::string_view{line}.substr(0, i)); // every truncation
            if(i == line.size()) break;
            for(char b : tricky_bytes)
            {
                std::string replaced = line;
                replaced[i]          = b;
                twin.check(replaced);
                std::string inserted = line;
                inserted.insert(i, 1, b);
                twin.check(inserted);
            }
            std::string deleted = line;
            deleted.erase(i, 1);
            twin.check(deleted);
        }
    }
    EXPECT_EQ(twin.disagreed, 0u);
    EXPECT_GT(twin.ok, samples.size()); // many mutations are still valid lines
}

// Every maximal run of digits/letters in each sample replaced by runs of 0 to 24 characters:
// below, at and above every limit (8/16 hex digits, 10/19 decimal digits, INT32/INT64 max).
TEST(kfd_parser_twin, numbers_of_every_length)
{
    const std::vector<std::string> runs = []
    {
        std::vector<std::string> r;
        for(size_t n = 0; n <= 24; ++n)
        {
            r.push_back(std::string(n, '9'));
            r.push_back(std::string(n, 'f'));
            r.push_back(std::string(n, 'F'));
            r.push_back(n ? "1" + std::string(n - 1, '0') : "");
            r.push_back(std::string("1234567890abcdefABCDEF1234567").substr(0, n));
        }
        for(const char* limit :
            {"2147483647", "2147483648", "4294967295", "4294967296", "9223372036854775807",
             "9223372036854775808", "18446744073709551615", "18446744073709551616", "ffffffff",
             "100000000", "fffffffffffff", "10000000000000", "ffffffffffffffff",
             "10000000000000000", "0000000000000000001"})
            r.push_back(limit);
        return r;
    }();
    twin_checker twin;
    for(const auto& line : samples)
    {
        for(size_t start = 0; start < line.size();)
        {
            auto is_alnum = [](char c)
            { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
            if(!is_alnum(line[start]))
            {
                ++start;
                continue;
            }
            size_t end = start;
            while(end < line.size() && is_alnum(line[end]))
                ++end;
            for(const auto& run : runs)
                twin.check(line.substr(0, start) + run + line.substr(end));
            start = end;
        }
    }
    EXPECT_EQ(twin.disagreed, 0u);
    EXPECT_GT(twin.ok, 100u);
}

TEST(kfd_parser_twin, bundled_logs_of_every_scenario_and_era)
{
    twin_checker twin;
    for(const char* entry : kfd_test::every_scenario_and_era)
    {
        const std::string text = kfd_test::bundled_log(entry);
        ASSERT_FALSE(text.empty()) << entry;
        rocprofiler::kfd::line_splitter splitter;
        splitter.feed(text.data(), text.size(),
                      [&](std::string_view line)
                      {
                          twin.check(line);
                          // A line cut at every length ends a number at the end of the line (the
                          // words read past the end of the line must read as NUL).
                          if(twin.checked % 7 == 0)
                              for(size_t i = 1; i < line.size(); ++i)
                                  twin.check(line.substr(0, i));
                      });
    }
    EXPECT_EQ(twin.disagreed, 0u);
    EXPECT_GT(twin.ok, 1000u);
}

// Nearly every line of a kernel log has a hot shape: the hot shapes' pass is what parse_line
// runs for them, so its share of the bundled logs is part of its contract (a pass that took
// nothing would leave every comparison above passing).
TEST(kfd_parser_twin, the_hot_shapes_take_nearly_every_kernel_line)
{
#if defined(__x86_64__)
    if(!parse_line_has_avx512())
        GTEST_SKIP() << "this CPU has no AVX-512 VBMI2: the hot shapes' pass is not run";
    uint64_t lines = 0, ok = 0, hot = 0;
    for(const auto& entry :
        {"eviction-1gpu-6.12", "eviction-2gpu-2026", "eviction-2gpu-proposed", "managed-2gpu-6.13",
         "mixed-4gpu-6.0", "prefetch-1gpu-6.13", "streaming-1gpu-6.13", "thrashing-2gpu-6.12",
         "unmap-2gpu-6.13-two-processes"})
    {
        const std::string text = kfd_test::bundled_log(entry);
        ASSERT_FALSE(text.empty()) << entry;
        rocprofiler::kfd::line_splitter splitter;
        splitter.feed(text.data(), text.size(),
                      [&](std::string_view line)
                      {
                          event a{}, b{};
                          ++lines;
                          ok += parse_line_scalar(line, b) == parse_result::ok;
                          hot += parse_line_hot_shape(line, a);
                      });
    }
    EXPECT_GT(lines, 6000u);
    EXPECT_GE(hot * 100, ok * 99) << hot << " of " << ok << " good lines (" << lines << " in all)";
#else
    GTEST_SKIP() << "not x86-64";
#endif
}

// A line inside a larger buffer: bytes after the line are digits, which a reader going past
// the end would take as part of the last number.
// Lines of every length from 1 to 200 bytes (text fields and numbers ending at the end):
// across the masked path's limits of 16 and 127 bytes and the 64-bit boundary of its masks.
TEST(kfd_parser_twin, lines_of_every_length)
{
    twin_checker twin;
    for(size_t length = 1; length <= 200; ++length)
    {
        for(const std::string head : {"1 25f3:", "c 25f3 ", "3 7 "})
            if(length >= head.size()) twin.check(head + std::string(length - head.size(), 't'));
        // a number that ends the line, of every width (overlong ones are malformed)
        const std::string header = "e 15203214457186 -152990 ";
        if(length > header.size()) twin.check(header + std::string(length - header.size(), '1'));
        const std::string migrate = "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 ";
        if(length > migrate.size()) twin.check(migrate + std::string(length - migrate.size(), '7'));
    }
    EXPECT_EQ(twin.disagreed, 0u);
    EXPECT_GT(twin.ok, 400u);
}

// The hot pass keeps each run of hex digits' start and end interleaved in one 64-byte
// register, room for 32 runs: lines of hot ids with 1 to 64 runs (narrow and wide, one-byte
// and two-byte runs, a hot shape with runs appended) must still agree with the scalar parser.
TEST(kfd_parser_twin, lines_with_many_numbers)
{
    twin_checker twin;
    for(size_t runs = 1; runs <= 64; ++runs)
    {
        for(const char* head : {"5 ", "b ", "8 ", "7 "})
            for(const char* run : {"1 ", "a1 ", "f"})
            {
                std::string line = head;
                for(size_t k = 0; k < runs && line.size() < 127; ++k)
                    line += run;
                twin.check(line);
                twin.check(line + "\n");
            }
        std::string fault = "7 15203214457186 -152990 @7f0f15200(1ea0) W";
        for(size_t k = 0; k < runs && fault.size() < 125; ++k)
            fault += " 1";
        twin.check(fault);
    }
    // A literal 'x' where a number was: the pass writes each number as 'x' in the line's
    // shape, so only its count of numbers tells the two apart.
    for(const std::string shape : {"7 15203214457186 -152990 @7f0f15200(1ea0) W",
                                   "5 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:1ea0 1"})
        for(size_t i = 0; i < shape.size(); ++i)
        {
            if(!std::isxdigit(static_cast<unsigned char>(shape[i])) ||
               (i > 0 && std::isxdigit(static_cast<unsigned char>(shape[i - 1]))))
                continue;
            size_t end = i;
            while(end < shape.size() && std::isxdigit(static_cast<unsigned char>(shape[end])))
                ++end;
            twin.check(shape.substr(0, i) + "x" + shape.substr(end));
        }
    // The hot shapes themselves, so that the test also shows the pass took its lines.
    twin.check("7 15203214457186 -152990 @7f0f15200(1ea0) W");
    twin.check("5 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:1ea0 1");
    EXPECT_EQ(twin.disagreed, 0u);
    if(parse_line_has_avx512())
    {
        EXPECT_GE(twin.hot, 2u);
    }
}

// The SSSE3 path is only compared when this CPU runs it (else parse_line_ssse3 is the SSE2
// path and the comparison above would not test it): say so instead of passing silently.
TEST(kfd_parser_twin, the_ssse3_path_runs_here)
{
#if defined(__x86_64__)
    if(!parse_line_has_ssse3())
        GTEST_SKIP() << "this CPU has no SSSE3: only the SSE2 path is compared";
    event a{}, b{};
    EXPECT_EQ(parse_line_ssse3("5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1", a),
              parse_result::ok);
    EXPECT_EQ(parse_line_scalar("5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1", b),
              parse_result::ok);
    EXPECT_TRUE(same_event(a, b));
    EXPECT_EQ(a.timestamp, 14601738586508u);
    EXPECT_EQ(a.page, 0x7f0f15200u);
#else
    GTEST_SKIP() << "not x86-64";
#endif
}

// The hot shapes' pass takes every sample of a hot shape (else the comparisons above would
// only test the paths it falls back to) and none of the others.
TEST(kfd_parser_twin, the_avx512_hot_shapes_run_here)
{
#if defined(__x86_64__)
    if(!parse_line_has_avx512())
        GTEST_SKIP() << "this CPU has no AVX-512 VBMI2: the hot shapes' pass is not compared";
    const std::vector<std::string> hot = {
        "5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1",
        "5 14601738586508 -152990 @7f0f15200(2c02) 1ea0->0 ffffffff:ffffffff 3",
        "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 0",
        "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1",
        "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 -14",
        "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 -0",
        "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 -99999999",
        "7 40507688414784 -156893 @7fa608127(ad5c) R",
        "7 40507688414784 -156893 @7FA608127(AD5C) W",
        "8 40507688999999 -156893 @7fa608127(ad5c) M",
        "8 40507688999999 -156893 @7fa608127(ad5c) U",
        "9 38086928279363 -125752 1ea0 1",
        "a 38086928279399 -125752 1ea0",
        "a 38086928279399 -125752 1ea0 R",
        "a 38086928279399 -125752 1ea0 \0"s,
        "a 38086928279399 -125752 1ea0 0",
        "b 15203214457186 -152990 @7f93ac200(200) 1ea0 2",
        // 64 bytes and more (the pass's two halves), a number across byte 64
        "5 1234567890123456 -4194304 @7fffffffff00(ffff) ffffffff->ffffffff ffffffff:ffffffff 7",
        "6 1234567890123456 -4194304 @7fffffffff00(ffff) ffff->ffffff 12345678 87654321",
        "b 1234567890123456 -4194304 @7fffffffff00(fffffffff) ffffffff 12345678",
    };
    for(const auto& line : hot)
    {
        event a{}, b{};
        EXPECT_TRUE(parse_line_hot_shape(line, a)) << printable(line);
        EXPECT_EQ(parse_line_scalar(line, b), parse_result::ok) << printable(line);
        EXPECT_TRUE(same_event(a, b)) << printable(line);
    }
    event ev{};
    EXPECT_TRUE(parse_line_hot_shape(hot[0], ev));
    EXPECT_EQ(ev.timestamp, 14601738586508u);
    EXPECT_EQ(ev.pid, 152990u);
    EXPECT_EQ(ev.page, 0x7f0f15200u);
    EXPECT_EQ(ev.npages, 0x2c02u);
    EXPECT_EQ(ev.to_node, 0x1ea0u);
    EXPECT_EQ(ev.prefetch_node, 0x1ea0u);
    EXPECT_EQ(ev.trigger, 1);
    EXPECT_TRUE(parse_line_hot_shape(hot[4], ev));
    EXPECT_EQ(ev.error_code, -14);
    EXPECT_TRUE(ev.has_error_code);
    // Not hot shapes: a sign, a number longer than its lanes, other ids, a 2-digit id.
    for(const std::string line :
        {"6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 -2147483648",
         "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 -1 0",
         "9 38086928279363 -125752 1ea0 -1", "5 12345678901234567 -1 @1(1) 1->2 3:4 5",
         "5 1 -123456789 @1(1) 1->2 3:4 5", "7 1 -1 @1(123456789) R", "1 25f3:python3",
         "e 15203214457186 -152990 17", "00000005 1 -1 @1(1) 1->2 3:4 5",
         "5 1 -1 @1(1) 1->2 3:4 5 "})
    {
        event a{};
        EXPECT_FALSE(parse_line_hot_shape(line, a)) << printable(line);
    }
#else
    GTEST_SKIP() << "not x86-64";
#endif
}

// The same for the AVX2 path.
TEST(kfd_parser_twin, the_avx2_path_runs_here)
{
#if defined(__x86_64__)
    if(!parse_line_has_avx2())
        GTEST_SKIP() << "this CPU has no AVX2/BMI2: the AVX2 path is not compared";
    const std::string_view line = "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 -14";
    event                  a{}, b{};
    EXPECT_EQ(parse_line_avx2(line, a), parse_result::ok);
    EXPECT_EQ(parse_line_scalar(line, b), parse_result::ok);
    EXPECT_TRUE(same_event(a, b));
    EXPECT_EQ(a.timestamp, 15202910515905u);
    EXPECT_EQ(a.to_node, 0x1ea0u);
    EXPECT_EQ(a.error_code, -14);
#else
    GTEST_SKIP() << "not x86-64";
#endif
}

TEST(kfd_parser_twin, never_reads_past_the_line)
{
    twin_checker twin;
    for(const auto& line : samples)
    {
        std::string buffer = line + "123456789abcdef0123456789";
        twin.check(std::string_view{buffer}.substr(0, line.size()));
        event a{}, b{};
        EXPECT_EQ(parse_line(std::string_view{buffer}.substr(0, line.size()), a),
                  parse_line(line, b));
        EXPECT_TRUE(same_event(a, b)) << printable(line);
    }
    EXPECT_EQ(twin.disagreed, 0u);
}
} // namespace
