// MIT License - see LICENSE.
//
// parse_line: every event id and variant of docs/kfd-smi-interface.md, and every malformed
// shape we could think of (each known failure of older readers is a case here).
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace std::literals;
using rocprofiler::kfd::event;
using rocprofiler::kfd::event_text;
using rocprofiler::kfd::id14_kind;
using rocprofiler::kfd::max_line_length;
using rocprofiler::kfd::parse_result;
using rocprofiler::kfd::resolve_id14;
using rocprofiler::kfd::restore_form;

namespace
{
void expect_same_event(const event& a, const event& b);

// Every test input goes through both parsers: the SWAR one (whose result the test checks)
// and its scalar twin, which must agree on the result and every field.
parse_result
parse_twins(std::string_view line, event& out)
{
    event      twin{};
    const auto result = rocprofiler::kfd::parse_line(line, out);
    EXPECT_EQ(rocprofiler::kfd::parse_line_scalar(line, twin), result) << "line: [" << line << "]";
    expect_same_event(out, twin);
    event swar{};
    EXPECT_EQ(rocprofiler::kfd::parse_line_swar(line, swar), result) << "line: [" << line << "]";
    expect_same_event(out, swar);
    return result;
}

// Parses a line that must be valid.
event
parse_ok(std::string_view line)
{
    event ev{};
    EXPECT_EQ(parse_twins(line, ev), parse_result::ok) << "line: [" << line << "]";
    return ev;
}

parse_result
parse(std::string_view line)
{
    event ev{};
    return parse_twins(line, ev);
}

// Compares every field of two events (gtest has no operator== for the struct).
void
expect_same_event(const event& a, const event& b)
{
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.timestamp, b.timestamp);
    EXPECT_EQ(a.has_timestamp, b.has_timestamp);
    EXPECT_EQ(a.pid, b.pid);
    EXPECT_EQ(a.page, b.page);
    EXPECT_EQ(a.npages, b.npages);
    EXPECT_EQ(a.node, b.node);
    EXPECT_EQ(a.from_node, b.from_node);
    EXPECT_EQ(a.to_node, b.to_node);
    EXPECT_EQ(a.prefetch_node, b.prefetch_node);
    EXPECT_EQ(a.preferred_node, b.preferred_node);
    EXPECT_EQ(a.trigger, b.trigger);
    EXPECT_EQ(a.error_code, b.error_code);
    EXPECT_EQ(a.has_error_code, b.has_error_code);
    EXPECT_EQ(a.read_fault, b.read_fault);
    EXPECT_EQ(a.migrated, b.migrated);
    EXPECT_EQ(a.rescheduled, b.rescheduled);
    EXPECT_EQ(a.count, b.count);
    EXPECT_EQ(a.bitmask, b.bitmask);
    EXPECT_EQ(a.kind14, b.kind14);
    EXPECT_EQ(a.restore, b.restore);
    EXPECT_EQ(a.id14_ambiguous, b.id14_ambiguous);
    EXPECT_EQ(a.id14_restore_node, b.id14_restore_node);
    EXPECT_EQ(a.text_offset, b.text_offset);
    EXPECT_EQ(a.text_length, b.text_length);
}

event
with_id(uint32_t id)
{
    event ev{};
    ev.id = id;
    return ev;
}
} // namespace

// ---------------------------------------------------------------- valid lines, id by id

TEST(kfd_parser, vmfault_hex_pid_and_task_name)
{
    constexpr auto line     = "1 2a3f:python3"sv;
    event          ev       = parse_ok(line);
    event          expected = with_id(1);
    expected.pid            = 0x2a3f;
    expected.text_offset    = 7;
    expected.text_length    = 7;
    expect_same_event(ev, expected);
    EXPECT_EQ(event_text(ev, line), "python3");
    EXPECT_FALSE(ev.has_timestamp);
    EXPECT_EQ(ev.timestamp, 0u);
}

TEST(kfd_parser, vmfault_name_variants)
{
    // colons and spaces belong to the name; an empty name is what "%s" of "" prints
    constexpr auto line = "1 ffffffff:my app:v2"sv;
    event          ev   = parse_ok(line);
    EXPECT_EQ(ev.pid, 0xffffffffu);
    EXPECT_EQ(event_text(ev, line), "my app:v2");

    event empty = parse_ok("1 0:");
    EXPECT_EQ(empty.pid, 0u);
    EXPECT_EQ(empty.text_length, 0u);
    EXPECT_EQ(event_text(empty, "1 0:"), "");
}

TEST(kfd_parser, thermal_throttle_bitmask_and_counter)
{
    event ev         = parse_ok("2 1f:3a");
    event expected   = with_id(2);
    expected.bitmask = 0x1f;
    expected.count   = 0x3a;
    expect_same_event(ev, expected);

    event full = parse_ok("2 ffffffffffffffff:FFFFFFFFFFFFFFFF");
    EXPECT_EQ(full.bitmask, UINT64_MAX);
    EXPECT_EQ(full.count, UINT64_MAX);
}

TEST(kfd_parser, gpu_reset_with_and_without_reason)
{
    constexpr auto with_reason = "3 5 MODE1"sv;
    event          pre         = parse_ok(with_reason);
    EXPECT_EQ(pre.id, 3u);
    EXPECT_EQ(pre.count, 5u);
    EXPECT_EQ(event_text(pre, with_reason), "MODE1");
    EXPECT_FALSE(pre.has_timestamp);

    constexpr auto spaced = "4 1a job hang on ring gfx"sv;
    event          post   = parse_ok(spaced);
    EXPECT_EQ(post.id, 4u);
    EXPECT_EQ(post.count, 0x1au);
    EXPECT_EQ(event_text(post, spaced), "job hang on ring gfx");

    // Linux 6.0: "%x" only
    event old = parse_ok("3 7");
    EXPECT_EQ(old.count, 7u);
    EXPECT_EQ(old.text_length, 0u);
    // empty reason string
    event empty = parse_ok("4 7 ");
    EXPECT_EQ(empty.count, 7u);
    EXPECT_EQ(empty.text_length, 0u);
    EXPECT_EQ(empty.text_offset, 4u);
}

TEST(kfd_parser, migrate_start_doc_example)
{
    event ev               = parse_ok("5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1");
    event expected         = with_id(5);
    expected.timestamp     = 14601738586508ull;
    expected.has_timestamp = true;
    expected.pid           = 152990;
    expected.page          = 0x7f0f15200ull;
    expected.npages        = 0x2c02;
    expected.from_node     = 0;
    expected.to_node       = 0x1ea0;
    expected.prefetch_node = 0x1ea0;
    expected.preferred_node = 0;
    expected.trigger        = 1;
    expect_same_event(ev, expected);
}

TEST(kfd_parser, migrate_start_undefined_nodes_and_every_trigger)
{
    for(int trigger = 0; trigger <= 3; ++trigger)
    {
        std::string line = "5 10 -7 @1000(1) 1ea0->0 ffffffff:ffffffff " + std::to_string(trigger);
        event       ev   = parse_ok(line);
        EXPECT_EQ(ev.from_node, 0x1ea0u);
        EXPECT_EQ(ev.to_node, 0u);
        EXPECT_EQ(ev.prefetch_node, 0xffffffffu);
        EXPECT_EQ(ev.preferred_node, 0xffffffffu);
        EXPECT_EQ(ev.trigger, trigger);
    }
}

TEST(kfd_parser, migrate_end_with_and_without_error_code)
{
    event with              = parse_ok("6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 0");
    event expected          = with_id(6);
    expected.timestamp      = 15202910515905ull;
    expected.has_timestamp  = true;
    expected.pid            = 152990;
    expected.page           = 0x7f0f15200ull;
    expected.npages         = 0x2c02;
    expected.to_node        = 0x1ea0;
    expected.trigger        = 1;
    expected.has_error_code = true;
    expect_same_event(with, expected);

    event without           = parse_ok("6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1");
    expected.has_error_code = false;
    expect_same_event(without, expected);

    event failed = parse_ok("6 1 -2 @10(1) 1ea0->0 3 -12");
    EXPECT_TRUE(failed.has_error_code);
    EXPECT_EQ(failed.error_code, -12);
    EXPECT_EQ(failed.trigger, 3);
}

TEST(kfd_parser, page_fault_start_read_and_write)
{
    event read             = parse_ok("7 40507688414784 -156893 @7fa608127(ad5c) R");
    event expected         = with_id(7);
    expected.timestamp     = 40507688414784ull;
    expected.has_timestamp = true;
    expected.pid           = 156893;
    expected.page          = 0x7fa608127ull;
    expected.node          = 0xad5c;
    expected.read_fault    = true;
    expect_same_event(read, expected);

    event write         = parse_ok("7 40507688414784 -156893 @7fa608127(ad5c) W");
    expected.read_fault = false;
    expect_same_event(write, expected);
}

TEST(kfd_parser, page_fault_end_migrated_and_updated)
{
    event migrated         = parse_ok("8 40507688999999 -156893 @7fa608127(ad5c) M");
    event expected         = with_id(8);
    expected.timestamp     = 40507688999999ull;
    expected.has_timestamp = true;
    expected.pid           = 156893;
    expected.page          = 0x7fa608127ull;
    expected.node          = 0xad5c;
    expected.migrated      = true;
    expect_same_event(migrated, expected);

    event updated     = parse_ok("8 40507688999999 -156893 @7fa608127(ad5c) U");
    expected.migrated = false;
    expect_same_event(updated, expected);
}

TEST(kfd_parser, page_fault_undefined_node)
{
    event ev = parse_ok("7 1 -2 @0(ffffffff) W");
    EXPECT_EQ(ev.node, 0xffffffffu);
    EXPECT_EQ(ev.page, 0u);
}

TEST(kfd_parser, queue_eviction_every_trigger)
{
    for(int trigger = 0; trigger <= 5; ++trigger)
    {
        event ev           = parse_ok("9 38086928279363 -125752 1ea0 " + std::to_string(trigger));
        event expected     = with_id(9);
        expected.timestamp = 38086928279363ull;
        expected.has_timestamp = true;
        expected.pid           = 125752;
        expected.node          = 0x1ea0;
        expected.trigger       = trigger;
        expect_same_event(ev, expected);
    }
}

TEST(kfd_parser, queue_restore_every_variant)
{
    struct variant
    {
        std::string_view line;
        restore_form     form;
        bool             rescheduled;
    };
    const variant variants[] = {
        {"a 40082605896929 -148516 fc7d"sv, restore_form::bare, false},
        {"a 40082605896929 -148516 fc7d R"sv, restore_form::suffix_r, true},
        {"a 40082605896929 -148516 fc7d \0"sv, restore_form::suffix_nul, false},
        {"a 40082605896929 -148516 fc7d 0"sv, restore_form::suffix_zero, false},
    };
    for(const auto& v : variants)
    {
        event ev               = parse_ok(v.line);
        event expected         = with_id(10);
        expected.timestamp     = 40082605896929ull;
        expected.has_timestamp = true;
        expected.pid           = 148516;
        expected.node          = 0xfc7d;
        expected.rescheduled   = v.rescheduled;
        expected.restore       = v.form;
        expect_same_event(ev, expected);
    }
}

TEST(kfd_parser, unmap_from_gpu_every_trigger)
{
    for(int trigger = 0; trigger <= 2; ++trigger)
    {
        event ev =
            parse_ok("b 15203214457186 -152990 @7f93ac200(200) 1ea0 " + std::to_string(trigger));
        event expected         = with_id(11);
        expected.timestamp     = 15203214457186ull;
        expected.has_timestamp = true;
        expected.pid           = 152990;
        expected.page          = 0x7f93ac200ull;
        expected.npages        = 0x200;
        expected.node          = 0x1ea0;
        expected.trigger       = trigger;
        expect_same_event(ev, expected);
    }
}

TEST(kfd_parser, process_start_and_end_hex_pid)
{
    constexpr auto start = "c 2a3f python3"sv;
    event          s     = parse_ok(start);
    EXPECT_EQ(s.id, 12u);
    EXPECT_EQ(s.pid, 0x2a3fu);
    EXPECT_EQ(event_text(s, start), "python3");
    EXPECT_FALSE(s.has_timestamp);

    constexpr auto end = "d 2a3f my tool"sv;
    event          e   = parse_ok(end);
    EXPECT_EQ(e.id, 13u);
    EXPECT_EQ(e.pid, 0x2a3fu);
    EXPECT_EQ(event_text(e, end), "my tool");

    event unnamed = parse_ok("d 1 ");
    EXPECT_EQ(unnamed.pid, 1u);
    EXPECT_EQ(unnamed.text_length, 0u);
}

TEST(kfd_parser, id14_decimal_token_is_dropped_events_and_ambiguous)
{
    event ev                   = parse_ok("e 1000 -42 17");
    event expected             = with_id(14);
    expected.timestamp         = 1000;
    expected.has_timestamp     = true;
    expected.pid               = 42;
    expected.count             = 17;
    expected.kind14            = id14_kind::dropped_events;
    expected.id14_ambiguous    = true;
    expected.id14_restore_node = 0x17;
    expect_same_event(ev, expected);
    EXPECT_FALSE(ev.rescheduled);
    EXPECT_EQ(ev.node, 0u);
}

TEST(kfd_parser, id14_hex_letter_token_is_rescheduled_restore)
{
    event ev               = parse_ok("e 1000 -42 1ea0");
    event expected         = with_id(14);
    expected.timestamp     = 1000;
    expected.has_timestamp = true;
    expected.pid           = 42;
    expected.node          = 0x1ea0;
    expected.rescheduled   = true;
    expected.kind14        = id14_kind::rescheduled_restore;
    expect_same_event(ev, expected);
}

TEST(kfd_parser, id14_bounds)
{
    event max_count = parse_ok("e 1 -2 2147483647");
    EXPECT_EQ(max_count.count, 2147483647u);
    EXPECT_FALSE(max_count.id14_ambiguous); // 10 digits: too long for a 32-bit hex node
    event nine_digits = parse_ok("e 1 -2 123456789");
    EXPECT_EQ(nine_digits.count, 123456789u);
    EXPECT_FALSE(nine_digits.id14_ambiguous);
    event eight_digits = parse_ok("e 1 -2 12345678");
    EXPECT_TRUE(eight_digits.id14_ambiguous);
    EXPECT_EQ(eight_digits.id14_restore_node, 0x12345678u);
    event zero = parse_ok("e 1 -2 0");
    EXPECT_EQ(zero.kind14, id14_kind::dropped_events);
    EXPECT_EQ(zero.count, 0u);
    event undefined = parse_ok("e 1 -2 ffffffff");
    EXPECT_EQ(undefined.kind14, id14_kind::rescheduled_restore);
    EXPECT_EQ(undefined.node, 0xffffffffu);

    EXPECT_EQ(parse("e 1 -2 2147483648"), parse_result::malformed); // "%d" cannot print it
    EXPECT_EQ(parse("e 1 -2 -3"), parse_result::malformed);
    EXPECT_EQ(parse("e 1 -2 1ea00000f"), parse_result::malformed); // 9 hex digits
    EXPECT_EQ(parse("e 1 -2 1ea0 R"), parse_result::malformed);
    EXPECT_EQ(parse("e 1 -2 17 "), parse_result::malformed);
    EXPECT_EQ(parse("e 1 -2 "), parse_result::malformed);
    EXPECT_EQ(parse("e 1 -2"), parse_result::malformed);
    EXPECT_EQ(parse("e 1 -2 1x"), parse_result::malformed);
    EXPECT_EQ(parse("e 1 -2 1\0"sv), parse_result::malformed);
}

TEST(kfd_parser, resolve_id14_with_the_fd_gpu)
{
    event ev = parse_ok("e 1000 -42 1234");
    ASSERT_EQ(ev.kind14, id14_kind::dropped_events);

    event other_gpu = ev;
    resolve_id14(other_gpu, 0x1ea0); // not this fd's GPU: stays a drop count
    EXPECT_EQ(other_gpu.kind14, id14_kind::dropped_events);
    EXPECT_EQ(other_gpu.count, 1234u);
    EXPECT_TRUE(other_gpu.id14_ambiguous);

    event zero_gpu = ev;
    resolve_id14(zero_gpu, 0);
    EXPECT_EQ(zero_gpu.kind14, id14_kind::dropped_events);

    resolve_id14(ev, 0x1234); // the fd's GPU: a rescheduled restore of that GPU
    EXPECT_EQ(ev.kind14, id14_kind::rescheduled_restore);
    EXPECT_TRUE(ev.rescheduled);
    EXPECT_EQ(ev.node, 0x1234u);
    EXPECT_EQ(ev.count, 0u);
    EXPECT_FALSE(ev.id14_ambiguous);

    // no-op on other events and on unambiguous id 14
    event restore = parse_ok("e 1000 -42 1ea0");
    resolve_id14(restore, 0x1234);
    EXPECT_EQ(restore.node, 0x1ea0u);
    event eviction = parse_ok("9 1 -2 1234 0");
    resolve_id14(eviction, 0x1234);
    EXPECT_FALSE(eviction.rescheduled);
    EXPECT_EQ(eviction.kind14, id14_kind::not_id14);
}

// ---------------------------------------------------------------- numbers

TEST(kfd_parser, number_limits)
{
    // ns: up to INT64_MAX ("%lld"), at most 19 digits
    EXPECT_EQ(parse_ok("9 9223372036854775807 -1 1 0").timestamp, 9223372036854775807ull);
    EXPECT_EQ(parse("9 9223372036854775808 -1 1 0"), parse_result::malformed);
    EXPECT_EQ(parse("9 18446744073709551616 -1 1 0"), parse_result::malformed); // > UINT64_MAX
    EXPECT_EQ(parse("9 00000000000000000001 -1 1 0"), parse_result::malformed); // 20 digits
    // pid: up to INT32_MAX ("%d")
    EXPECT_EQ(parse_ok("9 1 -2147483647 1 0").pid, 2147483647u);
    EXPECT_EQ(parse("9 1 -2147483648 1 0"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 -4294967296 1 0"), parse_result::malformed); // > UINT32_MAX
    EXPECT_EQ(parse("9 1 -12345678901 1 0"), parse_result::malformed);
    EXPECT_EQ(parse_ok("9 1 -0 1 0").pid, 0u);
    // hex 32-bit: at most 8 digits
    EXPECT_EQ(parse_ok("9 1 -2 ffffffff 0").node, 0xffffffffu);
    EXPECT_EQ(parse("9 1 -2 100000000 0"), parse_result::malformed); // > UINT32_MAX
    EXPECT_EQ(parse("9 1 -2 0ffffffff 0"), parse_result::malformed); // overlong
    EXPECT_EQ(parse("1 100000000:x"), parse_result::malformed);
    EXPECT_EQ(parse("3 100000000"), parse_result::malformed);
    // hex 64-bit: at most 16 digits
    EXPECT_EQ(parse("2 10000000000000000:0"), parse_result::malformed); // > UINT64_MAX
    EXPECT_EQ(parse("2 0:10000000000000000"), parse_result::malformed);
    // trigger / error code: int32 range
    EXPECT_EQ(parse_ok("9 1 -2 1 2147483647").trigger, 2147483647);
    EXPECT_EQ(parse_ok("9 1 -2 1 -2147483648").trigger, INT32_MIN);
    EXPECT_EQ(parse_ok("9 1 -2 1 -1").trigger, -1);
    EXPECT_EQ(parse("9 1 -2 1 2147483648"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 -2 1 -2147483649"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 -2 1 99999999999"), parse_result::malformed);
    EXPECT_EQ(parse_ok("6 1 -2 @10(1) 0->1 0 -2147483648").error_code, INT32_MIN);
    EXPECT_EQ(parse("6 1 -2 @10(1) 0->1 0 2147483648"), parse_result::malformed);
    // signs where the kernel prints none
    EXPECT_EQ(parse("9 -1 -2 1 0"), parse_result::malformed);
    EXPECT_EQ(parse("9 +1 -2 1 0"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 --2 1 0"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 -+2 1 0"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 -2 1 +0"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 -2 1 -"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 -2 1 --1"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 -2 -1 0"), parse_result::malformed);
    // a timestamp of 0 is well-formed (pairing refuses to use it)
    event zero = parse_ok("9 0 -1 1 0");
    EXPECT_TRUE(zero.has_timestamp);
    EXPECT_EQ(zero.timestamp, 0u);
}

TEST(kfd_parser, hex_digits_in_either_case)
{
    EXPECT_EQ(parse_ok("9 1 -2 1EA0 0").node, 0x1ea0u);
    EXPECT_EQ(parse_ok("7 1 -2 @7FA608127(AD5C) R").page, 0x7fa608127ull);
    EXPECT_EQ(parse("9 1 -2 1eg0 0"), parse_result::malformed);
    EXPECT_EQ(parse("9 1 -2 0x1ea0 0"), parse_result::malformed);
}

TEST(kfd_parser, addresses_must_fit_in_bytes)
{
    // page + npages must stay below 2^52 (so page << 12 and the end fit in 64 bits)
    EXPECT_EQ(parse_ok("b 1 -2 @ffffffffffffe(1) 1 0").page, 0xffffffffffffeull);
    EXPECT_EQ(parse("b 1 -2 @fffffffffffff(1) 1 0"), parse_result::malformed);
    EXPECT_EQ(parse("b 1 -2 @1(fffffffffffff) 1 0"), parse_result::malformed);
    EXPECT_EQ(parse_ok("b 1 -2 @0(fffffffffffff) 1 0").npages, 0xfffffffffffffull);
    EXPECT_EQ(parse("5 1 -2 @ffffffffffffffff(1) 0->1 0:0 0"), parse_result::malformed);
    EXPECT_EQ(parse("6 1 -2 @10000000000000(1) 0->1 0"), parse_result::malformed);
    EXPECT_EQ(parse_ok("7 1 -2 @fffffffffffff(1) R").page, 0xfffffffffffffull);
    EXPECT_EQ(parse("7 1 -2 @10000000000000(1) R"), parse_result::malformed);
    EXPECT_EQ(parse("8 1 -2 @ffffffffffffffff(1) M"), parse_result::malformed);
    // empty ranges are never printed by the kernel
    EXPECT_EQ(parse("b 1 -2 @10(0) 1 0"), parse_result::malformed);
    EXPECT_EQ(parse("5 1 -2 @10(0) 0->1 0:0 0"), parse_result::malformed);
    EXPECT_EQ(parse("6 1 -2 @10(0) 0->1 0"), parse_result::malformed);
}

// ---------------------------------------------------------------- malformed shapes

TEST(kfd_parser, wrong_separators)
{
    const std::string_view lines[] = {
        "5 1 -2 @10(1) 0-1 0:0 0",
        "5 1 -2 @10(1) 0=>1 0:0 0",
        "5 1 -2 @10(1) 0->1 0-0 0",
        "5 1 -2 10(1) 0->1 0:0 0",
        "5 1 -2 @10[1] 0->1 0:0 0",
        "5 1 -2 @10(1)0->1 0:0 0",
        "5 1 -2 @10(1) 0->1 0:0\t0",
        "5 1 2 @10(1) 0->1 0:0 0",
        "5 1  -2 @10(1) 0->1 0:0 0",
        "5  1 -2 @10(1) 0->1 0:0 0",
        "6 1 -2 @10(1) 0->1 0\t0",
        "6 1 -2 @10(1) 0->1 0,0",
        "7 1 -2 @10 1 R",
        "7 1 -2 @10(1)R",
        "7 1 -2 @10(1)  R",
        "8 1 -2 (10)@1 M",
        "9 1 -2 1,0",
        "9 1 -2 1  0",
        "9 1 - 2 1 0",
        "9 1,-2 1 0",
        "a 1 -2 1:R",
        "a 1 -2 1  R",
        "b 1 -2 @10(1) 1,0",
        "b 1 -2 @10(1)  1 0",
        "1 2a3f python3",
        "1 2a3f;python3",
        "2 1f 3a",
        "2 1f;3a",
        "3 5:MODE1",
        "c 2a3f:python3",
        "d 2a3f\tpython3",
        "e 1 -2:3",
    };
    for(auto line : lines)
        EXPECT_EQ(parse(line), parse_result::malformed) << "line: [" << line << "]";
}

TEST(kfd_parser, missing_fields)
{
    const std::string_view lines[] = {
        "5",
        "5 ",
        "5 1",
        "5 1 -2",
        "5 1 -2 @10(1)",
        "5 1 -2 @10(1) 0->1",
        "5 1 -2 @10(1) 0->1 0:0",
        "5 1 -2 @10(1) 0->1 0:0 ",
        "5 1 -2 @10(1) 0-> 0:0 0",
        "5 1 -2 @10(1) ->1 0:0 0",
        "5 1 -2 @10(1) 0->1 :0 0",
        "5 1 -2 @10(1) 0->1 0: 0",
        "5 1 -2 @(1) 0->1 0:0 0",
        "5 1 -2 @10() 0->1 0:0 0",
        "5 1 - @10(1) 0->1 0:0 0",
        "5 -2 @10(1) 0->1 0:0 0",
        "6 1 -2 @10(1) 0->1",
        "6 1 -2 @10(1) 0->1 ",
        "6 1 -2 @10(1) 0->1 0 ",
        "7 1 -2 @10(1)",
        "7 1 -2 @10(1) ",
        "7 1 -2 @10() R",
        "8 1 -2 @10(1) ",
        "9 1 -2 1",
        "9 1 -2 1 ",
        "9 1 -2  0",
        "a 1 -2",
        "a 1 -2 ",
        "a 1 -2 R",
        "b 1 -2 @10(1) 1",
        "b 1 -2 @10(1) 1 ",
        "b 1 -2 @10(1)  0",
        "1 2a3f",
        "1 :python3",
        "1 ",
        "2 1f",
        "2 1f:",
        "2 :3a",
        "3 ",
        "3",
        "4  MODE1",
        "c 2a3f",
        "c  python3",
        "d ",
        "e 1 -2",
    };
    for(auto line : lines)
        EXPECT_EQ(parse(line), parse_result::malformed) << "line: [" << line << "]";
}

TEST(kfd_parser, trailing_garbage)
{
    const std::string_view lines[] = {
        "5 1 -2 @10(1) 0->1 0:0 0 ",
        "5 1 -2 @10(1) 0->1 0:0 0x",
        "5 1 -2 @10(1) 0->1 0:0 0 0",
        "6 1 -2 @10(1) 0->1 0 0 ",
        "6 1 -2 @10(1) 0->1 0 0 0",
        "6 1 -2 @10(1) 0->1 0 0x",
        "7 1 -2 @10(1) RW",
        "7 1 -2 @10(1) R ",
        "7 1 -2 @10(1) M",
        "7 1 -2 @10(1) r",
        "8 1 -2 @10(1) MM",
        "8 1 -2 @10(1) R",
        "8 1 -2 @10(1) m",
        "9 1 -2 1 0 ",
        "9 1 -2 1 0x",
        "9 1 -2 1 0\r",
        "9 1 -2 1 0\n",
        "a 1 -2 1 R ",
        "a 1 -2 1 RR",
        "a 1 -2 1 X",
        "a 1 -2 1 1",
        "a 1 -2 1 r",
        "a 1 -2 1 00",
        "a 1 -2 1 ",
        "a 1 -2 1\r",
        "a 1 -2 1\n",
        "b 1 -2 @10(1) 1 0 ",
        "b 1 -2 @10(1) 1 0 0",
        "2 1f:3a:",
        "2 1f:3a ",
        "e 1 -2 17 0",
    };
    for(auto line : lines)
        EXPECT_EQ(parse(line), parse_result::malformed) << "line: [" << line << "]";

    // NUL-related restore shapes: only exactly " \0" at the very end is the 6.12 variant
    EXPECT_EQ(parse("a 1 -2 1 \0\0"sv), parse_result::malformed);
    EXPECT_EQ(parse("a 1 -2 1 \0 "sv), parse_result::malformed);
    EXPECT_EQ(parse("a 1 -2 1\0"sv), parse_result::malformed);
    EXPECT_EQ(parse("a 1 -2 1  \0"sv), parse_result::malformed);
    EXPECT_EQ(parse("a 1 -2 1 \0\n"sv), parse_result::malformed);
    EXPECT_EQ(parse("a 1 -2 1 R\0"sv), parse_result::malformed);
    EXPECT_EQ(parse_ok("a 1 -2 1 \0"sv).restore, restore_form::suffix_nul);
}

TEST(kfd_parser, nul_inside_text_fields)
{
    EXPECT_EQ(parse("1 2a3f:py\0thon"sv), parse_result::malformed);
    EXPECT_EQ(parse("1 2a3f:\0"sv), parse_result::malformed);
    EXPECT_EQ(parse("3 5 MO\0DE1"sv), parse_result::malformed);
    EXPECT_EQ(parse("c 2a3f python3\0"sv), parse_result::malformed);
    EXPECT_EQ(parse("d 2a3f \0"sv), parse_result::malformed);
}

// A NUL replacing any byte of a valid line: the id token is then unparsable (positions 0
// and 1) or the body malformed; never ok, never a read past the end.
TEST(kfd_parser, nul_at_every_position)
{
    const std::string_view lines[] = {
        "5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1",
        "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 0",
        "7 40507688414784 -156893 @7fa608127(ad5c) R",
        "8 40507688999999 -156893 @7fa608127(ad5c) M",
        "9 38086928279363 -125752 1ea0 1",
        "b 15203214457186 -152990 @7f93ac200(200) 1ea0 2",
        "1 2a3f:python3",
        "2 1f:3a",
        "3 5 MODE1",
        "c 2a3f python3",
        "e 1000 -42 1ea0",
    };
    for(auto line : lines)
    {
        for(size_t position = 0; position < line.size(); ++position)
        {
            std::string copy{line};
            copy[position] = '\0';
            const parse_result expected =
                position <= 1 ? parse_result::unknown_id : parse_result::malformed;
            event ev{};
            EXPECT_EQ(parse_twins(copy, ev), expected)
                << "line: [" << line << "] NUL at " << position;
        }
    }
}

// Every proper prefix of a valid line is rejected, except the prefixes that are themselves
// valid lines (listed), e.g. MIGRATE_END without its error code.
TEST(kfd_parser, truncated_at_every_length)
{
    struct truncation_case
    {
        std::string_view    line;
        std::vector<size_t> valid_prefix_lengths;
    };
    const std::string_view migrate_end = "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 0";
    const std::string_view restore_r   = "a 40082605896929 -148516 fc7d R";
    const std::string_view restore_nul = "a 40082605896929 -148516 fc7d \0"sv;
    const std::string_view vmfault     = "1 2a3f:python3";
    const std::string_view process     = "c 2a3f python3";
    const std::string_view reset       = "3 5 MODE1";
    const std::string_view thermal     = "2 1f:3a";
    const std::string_view dropped     = "e 1000 -42 1ea0";

    const truncation_case cases[] = {
        {"5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1", {}},
        {migrate_end, {migrate_end.size() - 2}},
        {"7 40507688414784 -156893 @7fa608127(ad5c) R", {}},
        {"8 40507688999999 -156893 @7fa608127(ad5c) M", {}},
        {"9 38086928279363 -125752 1ea0 1", {}},
        // node "fc7d": "f", "fc", "fc7" and "fc7d" are all valid bare restores
        {restore_r,
         {restore_r.size() - 5, restore_r.size() - 4, restore_r.size() - 3, restore_r.size() - 2}},
        {restore_nul,
         {restore_nul.size() - 5, restore_nul.size() - 4, restore_nul.size() - 3,
          restore_nul.size() - 2}},
        {"b 15203214457186 -152990 @7f93ac200(200) 1ea0 2", {}},
        // "1 2a3f:" and every longer prefix is a VM fault with a shorter name
        {vmfault, {7, 8, 9, 10, 11, 12, 13}},
        {process, {7, 8, 9, 10, 11, 12, 13}},
        // "3 5", "3 5 " and the reason's prefixes
        {reset, {3, 4, 5, 6, 7, 8}},
        {thermal, {6}},
        // "e 1000 -42 1" (drop count), "1e", "1ea" (restores)
        {dropped, {12, 13, 14}},
    };
    for(const auto& c : cases)
    {
        EXPECT_EQ(parse(c.line), parse_result::ok) << "line: [" << c.line << "]";
        for(size_t length = 0; length < c.line.size(); ++length)
        {
            const std::string_view prefix = c.line.substr(0, length);
            bool                   valid  = false;
            for(size_t allowed : c.valid_prefix_lengths)
                valid = valid || allowed == length;
            const parse_result result = parse(prefix);
            if(valid)
                EXPECT_EQ(result, parse_result::ok) << "prefix: [" << prefix << "]";
            else
                EXPECT_EQ(result, parse_result::malformed) << "prefix: [" << prefix << "]";
        }
    }
}

TEST(kfd_parser, empty_and_long_lines)
{
    EXPECT_EQ(parse(""), parse_result::malformed);

    // A 200-byte line: a VM fault with a long name is within max_line_length...
    std::string vmfault = "1 2a3f:" + std::string(193, 'n');
    ASSERT_EQ(vmfault.size(), 200u);
    event ev = parse_ok(vmfault);
    EXPECT_EQ(ev.text_length, 193u);
    // ... a valid event padded to 200 bytes is trailing garbage
    std::string padded = "9 1 -2 1ea0 1";
    padded.resize(200, ' ');
    EXPECT_EQ(parse(padded), parse_result::malformed);
    std::string zero_padded = "9 1 -2 1ea0 1";
    zero_padded.resize(200, '\0');
    EXPECT_EQ(parse(zero_padded), parse_result::malformed);

    // the limit itself
    std::string longest = "1 2a3f:" + std::string(max_line_length - 7, 'n');
    ASSERT_EQ(longest.size(), max_line_length);
    EXPECT_EQ(parse(longest), parse_result::ok);
    event too_long_ev{};
    EXPECT_EQ(parse_twins(longest + "n", too_long_ev), parse_result::malformed);
    EXPECT_EQ(too_long_ev.id, 0u); // rejected before the id was read
}

TEST(kfd_parser, unknown_ids)
{
    const std::string_view lines[] = {
        "0 123",
        "0",
        "f 1 -2 3",
        "10 1 -2 3", // 16
        "40 1 -2 3", // 0x40 = ALL_PROCESS
        "0x40 1 -2 3",
        "ff 1 -2",
        "ffffffff 1",
        "100000005 1 -2 1ea0 1", // 9 digits
        "zz 1 -2",
        "5x 1 -2 1ea0 1",
        "5\t1 -2 @10(1) 0->1 0:0 0", // the id token runs to the first space
        " 5 1 -2 1ea0 1",
        "-5 1 -2",
        "\0"sv,
        "\x01 1",
        "\xff\xfe",
        " ",
    };
    for(auto line : lines)
    {
        event ev{};
        ev.pid = 77; // must be cleared
        EXPECT_EQ(parse_twins(line, ev), parse_result::unknown_id) << "line: [" << line << "]";
        expect_same_event(ev, event{});
    }
}

TEST(kfd_parser, malformed_keeps_only_the_id)
{
    event ev{};
    ev.pid = 77;
    EXPECT_EQ(parse_twins("9 1 -2 1ea0 1 x", ev), parse_result::malformed);
    expect_same_event(ev, with_id(9));
    EXPECT_EQ(parse_twins("e 1 -2 1ea0 1", ev), parse_result::malformed);
    expect_same_event(ev, with_id(14));
    EXPECT_EQ(parse_twins("a", ev), parse_result::malformed);
    expect_same_event(ev, with_id(10));
}

TEST(kfd_parser, ok_resets_previous_contents)
{
    event ev = parse_ok("7 1 -2 @10(1) R");
    ASSERT_TRUE(ev.read_fault);
    ASSERT_EQ(parse_twins("1 5:x", ev), parse_result::ok);
    event expected       = with_id(1);
    expected.pid         = 5;
    expected.text_offset = 4;
    expected.text_length = 1;
    expect_same_event(ev, expected);
}

TEST(kfd_parser, event_text_is_bounded)
{
    event ev = parse_ok("1 5:abc");
    EXPECT_EQ(event_text(ev, "1 5:abc"), "abc");
    EXPECT_EQ(event_text(ev, "1 5:a"), "a"); // a shorter line than parsed: clipped
    EXPECT_EQ(event_text(ev, "1"), "");
    EXPECT_EQ(event_text(event{}, "1 5:abc"), "");
}
