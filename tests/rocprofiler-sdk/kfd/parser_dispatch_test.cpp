// MIT License - see LICENSE.
//
// parse_line_dispatch: one line of each id (docs/kfd-smi-interface.md) calls the handler of
// that id, once, with the parsed event and the line; a line that does not parse calls none;
// a null entry calls nothing; lines outside the masked path's 16..127 bytes dispatch too.
// (Every twin input of parser_twin_test.cpp is also checked against parse_line_scalar.)
#include "dispatch_recording.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

using namespace std::literals;
using kfd_test::dispatch_log;
using kfd_test::recording_handlers;
using rocprofiler::kfd::event;
using rocprofiler::kfd::event_handlers;
using rocprofiler::kfd::parse_line_dispatch;
using rocprofiler::kfd::parse_result;

namespace
{
struct expected_dispatch
{
    std::string line;
    uint32_t    slot;
};

// The id is the line's first token, in hex (the kernel's "%x ").
const std::vector<expected_dispatch> one_line_per_id = {
    {"1 25f3:python3", 1},
    {"2 ffff0000ffff:1234abcd", 2},
    {"3 7 MODE1", 3},
    {"3 7", 3}, // 6.0: no reset cause, shorter than 16 bytes
    {"4 8 MODE2", 4},
    {"5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1", 5},
    {"6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 -14", 6},
    {"6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1", 6},
    {"7 40507688414784 -156893 @7fa608127(ad5c) R", 7},
    {"8 40507688999999 -156893 @7fa608127(ad5c) M", 8},
    {"9 38086928279363 -125752 1ea0 1", 9},
    {"a 38086928279399 -125752 1ea0", 10},
    {"a 38086928279399 -125752 1ea0 R", 10},
    {"a 38086928279399 -125752 1ea0 \0"s, 10},
    {"b 15203214457186 -152990 @7f93ac200(200) 1ea0 2", 11},
    {"c 25f3 python3", 12},
    {"d 25f3 python3", 13},
    {"e 15203214457186 -152990 17", 14},
    {"e 15203214457186 -152990 1ea0", 14},
    {"00000005 1 -1 @1(1) 1->2 3:4 5", 5}, // a padded id token
    // longer than 64 and than 127 bytes (the wide and the fallback instances)
    {"6 9223372036854775807 -2147483647 @ffffffffffff(fffff) ffffffff->ffffffff -2147483648 "
     "-2147483648",
     6},
    {"4 ffffffff " + std::string(140, 'r'), 4},
};

TEST(kfd_parser_dispatch, each_id_calls_its_own_handler_once)
{
    for(const auto& expected : one_line_per_id)
    {
        dispatch_log log;
        event        out{};
        EXPECT_EQ(parse_line_dispatch(expected.line, out, recording_handlers(log)),
                  parse_result::ok)
            << expected.line;
        ASSERT_EQ(log.calls, 1) << expected.line;
        EXPECT_EQ(log.slot, expected.slot) << expected.line;
        EXPECT_EQ(log.ev.id, expected.slot) << expected.line;
        EXPECT_EQ(log.line, expected.line);
        EXPECT_EQ(out.id, expected.slot);
    }
}

TEST(kfd_parser_dispatch, handlers_get_the_parsed_fields)
{
    dispatch_log log;
    event        out{};
    ASSERT_EQ(parse_line_dispatch("8 40507688999999 -156893 @7fa608127(ad5c) M", out,
                                  recording_handlers(log)),
              parse_result::ok);
    ASSERT_EQ(log.calls, 1);
    const event ev = log.ev;
    EXPECT_EQ(ev.timestamp, 40507688999999u);
    EXPECT_TRUE(ev.has_timestamp);
    EXPECT_EQ(ev.pid, 156893u);
    EXPECT_EQ(ev.page, 0x7fa608127u);
    EXPECT_EQ(ev.node, 0xad5cu);
    EXPECT_TRUE(ev.migrated);

    log = dispatch_log{};
    ASSERT_EQ(parse_line_dispatch("5 14601738586508 -152990 @7f0f15200(2c02) 1ea0->0 ffff:3 2", out,
                                  recording_handlers(log)),
              parse_result::ok);
    ASSERT_EQ(log.calls, 1);
    EXPECT_EQ(log.ev.npages, 0x2c02u);
    EXPECT_EQ(log.ev.from_node, 0x1ea0u);
    EXPECT_EQ(log.ev.to_node, 0u);
    EXPECT_EQ(log.ev.prefetch_node, 0xffffu);
    EXPECT_EQ(log.ev.preferred_node, 3u);
    EXPECT_EQ(log.ev.trigger, 2);
}

TEST(kfd_parser_dispatch, lines_that_do_not_parse_call_no_handler)
{
    for(const std::string line :
        {"", "7", "0 1 -1 1", "f 1 -1 1", "7 40507688414784 -156893 @7fa608127(ad5c) X",
         "7 40507688414784 -156893 @7fa608127(ad5c) R ", "6 15202910515905 -152990 @0(0) 0->1 1",
         "9 38086928279363 -125752 1ea0 1\n", "a 38086928279399 -125752 1ea0 Q",
         "e 15203214457186 -152990 -17", "5x 1 -1 @1(1) 1->2 3:4 5"})
    {
        dispatch_log log;
        event        out{};
        EXPECT_NE(parse_line_dispatch(line, out, recording_handlers(log)), parse_result::ok)
            << line;
        EXPECT_EQ(log.calls, 0) << line;
    }
}

TEST(kfd_parser_dispatch, a_null_entry_calls_nothing)
{
    dispatch_log   log;
    event_handlers h = recording_handlers(log);
    h.on_id[7]       = nullptr;
    event out{};
    EXPECT_EQ(parse_line_dispatch("7 40507688414784 -156893 @7fa608127(ad5c) R", out, h),
              parse_result::ok);
    EXPECT_EQ(log.calls, 0);
    EXPECT_EQ(out.id, 7u);
    EXPECT_TRUE(out.read_fault);
    EXPECT_EQ(parse_line_dispatch("8 40507688999999 -156893 @7fa608127(ad5c) U", out, h),
              parse_result::ok);
    ASSERT_EQ(log.calls, 1);
    EXPECT_EQ(log.slot, 8u);
}

// A handler may change the event it is given (delivery resolves id 14 in its handler): the
// change is the caller's event.
void
set_node(void*, event& ev, std::string_view)
{
    ev.node = 42;
}

TEST(kfd_parser_dispatch, the_handler_sees_the_callers_event)
{
    event_handlers h;
    h.on_id[9] = set_node;
    event out{};
    EXPECT_EQ(parse_line_dispatch("9 38086928279363 -125752 1ea0 1", out, h), parse_result::ok);
    EXPECT_EQ(out.node, 42u);
}
} // namespace
