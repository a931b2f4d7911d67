// MIT License - see LICENSE.
//
// Unit tests of the emulator's parts that need no interposition: the FIFO, the message
// parser and rewriter, the directives and the scan of a log.
#include "byte_fifo.hpp"
#include "client_calls.hpp"
#include "config.hpp"
#include "line_format.hpp"
#include "line_reader.hpp"
#include "pacing.hpp"
#include "stats_json.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace kfd_emu;

namespace
{
// --- the emulator's lock hand-off, as client_thread_syscalls counts it -----------------------

// glibc's unlock makes a FUTEX_WAKE exactly when another thread waited for the lock: the word
// that unlock_will_wake reads must say so in each state (free, held, held with a waiter).
TEST(ClientCalls, AnUnlockWakesOnlyWhenAnotherThreadWaited)
{
#if !defined(__GLIBC__)
    GTEST_SKIP() << "reads glibc's mutex word; elsewhere unlock_will_wake says false";
#endif
    std::mutex                   m;
    std::unique_lock<std::mutex> held{m};
    EXPECT_FALSE(unlock_will_wake(m)) << "held, nobody waits";
    held.unlock();

    held.lock();
    std::thread waiter{[&m] { std::lock_guard<std::mutex> taken{m}; }};
    // Gate, not a sleep: the waiter marks the word before it sleeps in the kernel. Bounded,
    // so that a word that never says so fails the test instead of hanging it.
    bool seen = false;
    for(int i = 0; i < 10'000'000 && !seen; ++i)
    {
        seen = unlock_will_wake(m);
        if(!seen) std::this_thread::yield();
    }
    EXPECT_TRUE(seen) << "a thread waits for the lock";
    held.unlock();
    waiter.join();

    held.lock();
    EXPECT_FALSE(unlock_will_wake(m)) << "the waiter has gone";
}

// --- pacing ------------------------------------------------------------------------------

TEST(Pacing, ALateProducerMovesItsScheduleBeyondTheLagItMayKeep)
{
    using namespace std::chrono_literals;
    auto due = std::chrono::steady_clock::time_point{} + 1s;
    EXPECT_EQ(schedule_slip(due, due - 5ms).count(), 0); // early: waits, nothing moves
    EXPECT_EQ(schedule_slip(due, due).count(), 0);
    EXPECT_EQ(schedule_slip(due, due + max_schedule_lag).count(), 0); // within the lag
    EXPECT_EQ(schedule_slip(due, due + max_schedule_lag + 1ns).count(), 1);
    // 3 ms late: moved by all but the lag it may keep, so at most 100 us of events (20 at
    // 200k/s) go out back to back.
    EXPECT_EQ(schedule_slip(due, due + 3ms), 3ms - max_schedule_lag);
    EXPECT_EQ(schedule_slip(due, due + 3ms, 0ns), 3ms);
}

// --- byte_fifo ---------------------------------------------------------------------------

TEST(ByteFifo, QueuesWholeMessagesOnly)
{
    byte_fifo fifo(10);
    EXPECT_TRUE(fifo.push_whole("abcdef", 6));
    EXPECT_FALSE(fifo.push_whole("ghijk", 5)); // 4 bytes left: nothing of it goes in
    EXPECT_EQ(fifo.size(), 6u);
    EXPECT_TRUE(fifo.push_whole("ghij", 4)); // exactly full
    EXPECT_EQ(fifo.available(), 0u);
}

TEST(ByteFifo, PopsPartiallyAndWrapsAround)
{
    byte_fifo fifo(8);
    ASSERT_TRUE(fifo.push_whole("012345", 6));
    char out[8] = {};
    EXPECT_EQ(fifo.pop(out, 4), 4u);
    EXPECT_EQ(std::string(out, 4), "0123");
    ASSERT_TRUE(fifo.push_whole("abcdef", 6)); // wraps past the end of the ring
    EXPECT_EQ(fifo.pop(out, 100), 8u);
    EXPECT_EQ(std::string(out, 8), "45abcdef");
    EXPECT_TRUE(fifo.empty());
}

// What publish() sends: the bytes after those already in the socket, in place.
TEST(ByteFifo, PeekGivesTheBytesFromAnOffsetInOneOrTwoSpans)
{
    byte_fifo fifo(8);
    ASSERT_TRUE(fifo.push_whole("012345", 6));
    auto whole = fifo.peek(2, 3);
    EXPECT_EQ(std::string(whole.first.data, whole.first.size), "234");
    EXPECT_EQ(whole.second.size, 0u);
    EXPECT_EQ(fifo.pop(nullptr, 5), 5u);
    ASSERT_TRUE(fifo.push_whole("abcdef", 6)); // "5abcdef": ring indexes 5-7, then 0-3
    auto wrapped = fifo.peek(1, 6);
    EXPECT_EQ(std::string(wrapped.first.data, wrapped.first.size), "ab");
    EXPECT_EQ(std::string(wrapped.second.data, wrapped.second.size), "cdef");
    auto past_the_end = fifo.peek(4, 4); // 7 bytes queued
    EXPECT_EQ(past_the_end.first.size + past_the_end.second.size, 0u);
    EXPECT_EQ(fifo.size(), 7u) << "peek takes nothing";
}

TEST(ByteFifo, CountsNewlinesOfTheFirstBytes)
{
    byte_fifo fifo(32);
    ASSERT_TRUE(fifo.push_whole("a\nbb\nccc\n", 9));
    EXPECT_EQ(fifo.count_newlines(2), 1u);
    EXPECT_EQ(fifo.count_newlines(4), 1u);
    EXPECT_EQ(fifo.count_newlines(9), 3u);
    EXPECT_EQ(fifo.pop(nullptr, 5), 5u); // discard
    EXPECT_EQ(fifo.size(), 4u);
}

// --- parse_event -------------------------------------------------------------------------

parsed_event
parse(const std::string& line)
{
    parsed_event ev;
    EXPECT_TRUE(parse_event(line, ev)) << line;
    return ev;
}

TEST(ParseEvent, MigrateRoutesToDestinationGpu)
{
    auto ev = parse("5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1");
    EXPECT_EQ(ev.id, 5u);
    EXPECT_TRUE(ev.has_ns);
    EXPECT_EQ(ev.ns, 14601738586508);
    EXPECT_EQ(ev.text_pid, 152990u);
    EXPECT_EQ(ev.pid_kind, pid_style::decimal);
    ASSERT_TRUE(ev.has_route_node);
    EXPECT_EQ(ev.route_node, 0x1ea0u);
    ASSERT_EQ(ev.node_count, 4u); // from, to, prefetch, preferred
    EXPECT_EQ(ev.nodes[2], 0x1ea0u);
}

TEST(ParseEvent, MigrateToSystemMemoryRoutesToSourceGpu)
{
    auto end_old = parse("6 15202910515905 -152990 @7f0f15200(2c02) 1ea0->0 2");
    EXPECT_EQ(end_old.route_node, 0x1ea0u);
    auto end_new = parse("6 15202910515905 -152990 @7f0f15200(2c02) fc7d->0 2 0");
    EXPECT_EQ(end_new.route_node, 0xfc7du);
}

TEST(ParseEvent, FaultQueueAndUnmapRouteByTheirNode)
{
    EXPECT_EQ(parse("7 40507688414784 -156893 @7fa608127(ad5c) R").route_node, 0xad5cu);
    EXPECT_EQ(parse("8 40507688999999 -156893 @7fa608127(ad5c) M").route_node, 0xad5cu);
    EXPECT_EQ(parse("9 38086928279363 -125752 1ea0 1").route_node, 0x1ea0u);
    EXPECT_EQ(parse("a 40082605896929 -148516 fc7d R").route_node, 0xfc7du);
    EXPECT_EQ(parse("b 15203214457186 -152990 @7f93ac200(200) 1ea0 2").route_node, 0x1ea0u);
}

TEST(ParseEvent, AcceptsEveryQueueRestoreVariant)
{
    std::string nul_restore = std::string("a 400 -7 fc7d ") + '\0';
    for(const std::string& line : {std::string("a 400 -7 fc7d"), std::string("a 400 -7 fc7d R"),
                                   nul_restore, std::string("a 400 -7 fc7d 0")})
    {
        auto ev = parse(line);
        EXPECT_EQ(ev.route_node, 0xfc7du) << line;
        EXPECT_EQ(ev.text_pid, 7u);
    }
}

TEST(ParseEvent, PidInHexAndDeliveredToEveryone)
{
    auto vmfault = parse("1 2a3f:python3");
    EXPECT_EQ(vmfault.pid_kind, pid_style::hex);
    EXPECT_EQ(vmfault.text_pid, 0x2a3fu);
    EXPECT_FALSE(vmfault.has_route_node);
    EXPECT_EQ(delivery_pid(vmfault, vmfault.text_pid), 0u);

    auto start = parse("c 2a3f python3");
    EXPECT_EQ(start.pid_kind, pid_style::hex);
    EXPECT_EQ(start.text_pid, 0x2a3fu);
    EXPECT_EQ(delivery_pid(start, start.text_pid), 0u);

    auto thermal = parse("2 1:4");
    EXPECT_EQ(thermal.pid_kind, pid_style::none);
    EXPECT_EQ(delivery_pid(thermal, 0), 0u);
}

TEST(ParseEvent, UnknownIdTakesNsAndPidByShape)
{
    auto dropped = parse("e 123456 -77 15");
    EXPECT_EQ(dropped.id, 14u);
    EXPECT_TRUE(dropped.has_ns);
    EXPECT_EQ(dropped.ns, 123456);
    EXPECT_EQ(dropped.text_pid, 77u);
    EXPECT_EQ(delivery_pid(dropped, 77), 77u);
    EXPECT_FALSE(dropped.has_route_node);

    auto other = parse("1f something else");
    EXPECT_EQ(other.id, 31u);
    EXPECT_FALSE(other.has_ns);
}

TEST(ParseEvent, RejectsLinesItCannotRoute)
{
    parsed_event ev;
    for(const char* line : {"", "5", "zz 1 -2", "0 1 -2 3", "40 1 -2", "5 100 -7 @7f(2) 0-1ea0",
                            "7 100 -7 @7f R", "9 100 7 1ea0 1", "b 100 -7 @7f(200)", "5 x -7"})
        EXPECT_FALSE(parse_event(line, ev)) << line;
}

// --- rewrite_line ------------------------------------------------------------------------

TEST(RewriteLine, ReplacesSelfPidAndShiftsTimeKeepingEveryOtherByte)
{
    std::string  line = std::string("a 1000 -42 fc7d ") + '\0';
    parsed_event ev   = parse(line);
    rewrite_rule rule{true, 42, 31337, 500};
    uint32_t     pid = 0;
    std::string  out = rewrite_line(line, ev, rule, pid);
    EXPECT_EQ(out, std::string("a 1500 -31337 fc7d ") + '\0' + "\n");
    EXPECT_EQ(pid, 31337u);
}

TEST(RewriteLine, LeavesOtherPidsAndKeepsTimeWithZeroOffset)
{
    std::string  line = "7 40507688414784 -156893 @7fa608127(ad5c) R";
    parsed_event ev   = parse(line);
    uint32_t     pid  = 0;
    EXPECT_EQ(rewrite_line(line, ev, rewrite_rule{true, 42, 31337, 0}, pid), line + "\n");
    EXPECT_EQ(pid, 156893u);
}

TEST(RewriteLine, RewritesHexPidOfVmFault)
{
    std::string  line = "1 2a:python3";
    parsed_event ev   = parse(line);
    uint32_t     pid  = 0;
    EXPECT_EQ(rewrite_line(line, ev, rewrite_rule{true, 42, 255, 99}, pid), "1 ff:python3\n");
}

TEST(RewriteLine, RebaseNeverOverflowsNorGoesNegative)
{
    // The log's first event is late (offset < 0): an earlier event must not become negative.
    std::string  early = "7 5 -42 @1(1ea0) R";
    std::string  late  = "7 9223372036854775807 -42 @1(1ea0) R"; // INT64_MAX, "%lld" can print it
    uint32_t     pid   = 0;
    rewrite_rule back{false, 0, 0, -9223372036854775000LL};
    EXPECT_EQ(rewrite_line(early, parse(early), back, pid), "7 0 -42 @1(1ea0) R\n");
    EXPECT_EQ(rewrite_line(late, parse(late), back, pid), "7 807 -42 @1(1ea0) R\n");
    // The first event is early (offset > 0): a late one saturates instead of wrapping.
    rewrite_rule ahead{false, 0, 0, 1000};
    EXPECT_EQ(rewrite_line(late, parse(late), ahead, pid), late + "\n");
    EXPECT_EQ(shift_timestamp(INT64_MAX - 10, 10), INT64_MAX);
    EXPECT_EQ(shift_timestamp(INT64_MAX - 10, 11), INT64_MAX);
    EXPECT_EQ(shift_timestamp(0, INT64_MIN), 0);
    EXPECT_EQ(shift_timestamp(7, -3), 4);
}

TEST(RewriteLine, ShiftedTimestampsAndPidsOfEveryLengthAreWrittenInFull)
{
    // Every decimal length from 1 to 19 digits, at both ends of each length.
    std::vector<int64_t> values = {0, INT64_MAX};
    for(int64_t power = 10; power <= INT64_MAX / 10; power *= 10)
    {
        values.push_back(power - 1);
        values.push_back(power);
    }
    values.push_back(1000000000000000000); // 10^18, the largest power of ten in int64
    for(int64_t target : values)
    {
        // The line says 1; the offset moves it to target.
        std::string line = "7 1 -42 @1(1ea0) R";
        uint32_t    pid  = 0;
        std::string out =
            rewrite_line(line, parse(line), rewrite_rule{true, 42, 4000000000u, target - 1}, pid);
        EXPECT_EQ(out, "7 " + std::to_string(target) + " -4000000000 @1(1ea0) R\n") << target;
    }
}

// The routing parser (the producer's, for logs the scan found well formed) must give the
// fields that route and rewrite a line exactly as parse_event does, on every line it accepts.
// Returns whether it compared (parse_event accepted the line).
bool
expect_same_routing(const std::string& line)
{
    parsed_event full;
    if(!parse_event(line, full)) return false; // the routing parser is only used on such lines
    parsed_event routing;
    EXPECT_TRUE(parse_routing_fields(line, routing)) << line;
    EXPECT_EQ(routing.id, full.id) << line;
    EXPECT_EQ(routing.has_ns, full.has_ns) << line;
    EXPECT_EQ(routing.ns, full.ns) << line;
    EXPECT_EQ(routing.ns_span.pos, full.ns_span.pos) << line;
    EXPECT_EQ(routing.ns_span.len, full.ns_span.len) << line;
    EXPECT_EQ(routing.pid_kind, full.pid_kind) << line;
    EXPECT_EQ(routing.text_pid, full.text_pid) << line;
    EXPECT_EQ(routing.pid_span.pos, full.pid_span.pos) << line;
    EXPECT_EQ(routing.pid_span.len, full.pid_span.len) << line;
    EXPECT_EQ(routing.has_route_node, full.has_route_node) << line;
    EXPECT_EQ(routing.route_node, full.route_node) << line;
    return true;
}

TEST(ParseRoutingFields, AgreesWithParseEventOnEveryShape)
{
    const std::string queue_restore_612 = std::string("a 5000 -77 1ea0 ") + '\0';
    for(const std::string line :
        {"5 6000 -88 @7f0(10) 0->1ea0 ffffffff:ffffffff 1", "5 6000 -88 @7f0(10) 1ea0->0 1ea0:0 3",
         "6 7000 -88 @7f0(10) 1ea0->abcd 0 0", "6 7000 -88 @7f0(10) 1ea0->abcd",
         "7 7000 -88 @7f0(1ea0) R", "8 8000 -88 @7f0(abcd) M", "9 5000 -77 fc7d 2",
         "a 5000 -77 fc7d", "a 5000 -77 fc7d R", "b 9000 -66 @7fb403000(400) 176e 2",
         "1 2a:python3", "2 1:1", "3 1 reason", "4 1 reason", "c 2a python3", "d 2a python3",
         "e 5000 -77 something new", "f free text"})
        EXPECT_TRUE(expect_same_routing(line)) << line;
    EXPECT_TRUE(expect_same_routing(queue_restore_612));
}

// Calls on_line for every event line (not blank, not a comment or directive) of the logs
// bundled with the project; a missing log fails the calling test.
template <typename F>
void
for_each_bundled_event_line(F&& on_line)
{
    for(const char* name :
        {"eviction-1gpu-6.12.log", "eviction-2gpu-2026.log", "eviction-2gpu-proposed.log",
         "managed-2gpu-6.13.log", "mixed-4gpu-6.0.log", "prefetch-1gpu-6.13.log",
         "streaming-1gpu-6.13.log", "thrashing-2gpu-6.12.log", "unmap-2gpu-6.13-two-processes.log"})
    {
        std::ifstream in(std::string(KFD_LOGS_DIR) + "/" + name, std::ios::binary);
        EXPECT_TRUE(in) << name;
        std::string line;
        while(std::getline(in, line))
            if(!line.empty() && line[0] != '#') on_line(line);
    }
}

TEST(ParseRoutingFields, AgreesWithParseEventOnTheBundledLogs)
{
    size_t lines = 0;
    for_each_bundled_event_line(
        [&](const std::string& line)
        {
            if(expect_same_routing(line)) ++lines;
        });
    EXPECT_GT(lines, 1000u); // the logs were found, and their lines compared
}

// The fused hot path (route_and_rewrite) must give what the general path (parse_routing_fields,
// then rewrite_line_to) gives, on every line it accepts, and refuse every line parse_event
// refuses. Returns whether the fused path accepted the line.
// With memo: the fused path's memo of the lines before (a fresh one without).
bool
expect_same_as_general_path(const std::string& line, const rewrite_rule& rule,
                            rewrite_memo* memo = nullptr)
{
    std::vector<char> fused_out(line.size() + rewrite_growth);
    rewrite_memo      fresh_memo;
    rewrite_memo&     fused_memo = memo != nullptr ? *memo : fresh_memo;
    routed_event      fused;
    const size_t fused_size = route_and_rewrite(line, rule, fused_memo, fused_out.data(), fused);
    parsed_event full;
    if(!parse_event(line, full))
    {
        EXPECT_EQ(fused_size, 0u) << "a line parse_event refuses: " << line;
        return false;
    }
    if(fused_size == 0) return false; // another shape: the general path takes it
    parsed_event routing;
    EXPECT_TRUE(parse_routing_fields(line, routing)) << line;
    std::vector<char> general_out(line.size() + rewrite_growth);
    uint32_t          text_pid = 0;
    const size_t      general_size =
        rewrite_line_to(general_out.data(), line, routing, rule, text_pid, nullptr);
    EXPECT_EQ(std::string(fused_out.data(), fused_size),
              std::string(general_out.data(), general_size))
        << line;
    EXPECT_EQ(fused.id, routing.id) << line;
    EXPECT_EQ(fused.route_node, routing.route_node) << line;
    EXPECT_EQ(fused.pid, delivery_pid(routing, text_pid)) << line;
    EXPECT_EQ(fused.ns, routing.ns) << line;
    return true;
}

const rewrite_rule fused_rules[] = {
    rewrite_rule{},                         // the log as it is
    rewrite_rule{true, 88, 4000000000u, 7}, // the profiler's pid, timestamps moved
    rewrite_rule{true, 42, 1, -1000000000}, // another pid; timestamps moved back (to 0 at least)
    rewrite_rule{false, 0, 0, INT64_MAX},   // timestamps at the top of int64
};

TEST(RouteAndRewrite, AgreesWithTheGeneralPathOnEveryProfilerShape)
{
    const std::string queue_restore_612 = std::string("a 5000 -77 1ea0 ") + '\0';
    for(const rewrite_rule& rule : fused_rules)
    {
        for(const std::string line :
            {"5 6000 -88 @7f0(10) 0->1ea0 ffffffff:ffffffff 1",
             "5 6000 -88 @7f0(10) 1ea0->0 1ea0:0 3", "6 7000 -88 @7f0(10) 1ea0->abcd 0 0",
             "6 7000 -88 @7f0(10) 1ea0->abcd", "7 7000 -88 @7f0(1ea0) R", "8 8000 -88 @7f0(abcd) M",
             "9 5000 -77 fc7d 2", "a 5000 -77 fc7d", "a 5000 -77 fc7d R",
             "b 9000 -66 @7fb403000(400) 176e 2", "b 40000000762421 -54844 @7f8c6fa00(400) 176e 1",
             "7 1 -1 @0(0) R", "9 9223372036854775807 -4294967295 ffffffff 0"})
            EXPECT_TRUE(expect_same_as_general_path(line, rule)) << line;
        EXPECT_TRUE(expect_same_as_general_path(queue_restore_612, rule));
        // Other ids and shapes are the general path's (and so are nodes with leading zeros
        // beyond eight digits, which parse_event accepts).
        for(const std::string line : {"1 2a:python3", "2 1:1", "3 1 reason", "c 2a python3",
                                      "e 5000 -77 something new", "05 6000 -88 @7f0(10) 0->1ea0",
                                      "9 5000 -77 000001ea0 2", "7 5000 -77 @1(000001ea0) R"})
            EXPECT_FALSE(expect_same_as_general_path(line, rule)) << line;
    }
}

TEST(RouteAndRewrite, RefusesWhatParseEventRefuses)
{
    for(const std::string line : {"7 9223372036854775808 -1 @1(1ea0) R",
                                  "7 99999999999999999999 -1 @1(1ea0) R",
                                  "7 1 -4294967296 @1(1ea0) R",
                                  "9 18446744073709551616 -1 1ea0 1",
                                  "7 -1 @1(1ea0) R",
                                  "7 1 1 @1(1ea0) R",
                                  "7 1 -1",
                                  "7 1 -1 ",
                                  "7 1 -1 @1",
                                  "7 1 -1 @1(",
                                  "9 1 -1 ",
                                  "9 1 -1 x",
                                  "5 1 -1 @1(1) 1ea0-",
                                  "5 1 -1 @1(1) 1ea0->",
                                  "5 1 -1 @1(1)1ea0->0",
                                  "b 1 -1 @1(1)",
                                  "b 1 -1 @1(1) ",
                                  "7 12345678x -1 @1(1ea0) R",
                                  "7  1 -1 @1(1ea0) R",
                                  "7 1  -1 @1(1ea0) R",
                                  "7",
                                  "7 "})
        EXPECT_FALSE(expect_same_as_general_path(line, fused_rules[1])) << line;
}

TEST(RouteAndRewrite, TimestampsAndPidsOfEveryLengthAndTheByteThatEndsThem)
{
    // Every length from 1 to 20 digits (20: refused), at every position of the eight-byte
    // steps, followed by ' ' or by a byte next to '0' and '9' in ASCII or with the high bit.
    const std::string digits = "12345678909876543210";
    for(size_t length = 1; length <= 20; ++length)
    {
        const std::string number = digits.substr(digits.size() - length);
        for(const rewrite_rule& rule : fused_rules)
        {
            bool valid = length <= 19;
            EXPECT_EQ(expect_same_as_general_path("7 " + number + " -42 @1(1ea0) R", rule), valid)
                << number;
            bool pid_valid = length <= 10 && std::stoull(number) <= 0xffffffffull;
            EXPECT_EQ(expect_same_as_general_path("7 5 -" + number + " @1(1ea0) R", rule),
                      pid_valid)
                << number;
            for(char end : {'/', ':', '\0', static_cast<char>(0xb0), static_cast<char>(0xb5), 'a'})
            {
                EXPECT_FALSE(
                    expect_same_as_general_path("7 " + number + end + "5 -42 @1(1ea0) R", rule))
                    << number << " then byte " << int(end);
                EXPECT_FALSE(
                    expect_same_as_general_path("7 5 -" + number + end + " @1(1ea0) R", rule))
                    << number << " then byte " << int(end);
            }
            // The number at the very end of the line (no byte after it to end it).
            EXPECT_FALSE(expect_same_as_general_path("7 " + number, rule));
        }
    }
}

TEST(RouteAndRewrite, AgreesWithTheGeneralPathOnTheBundledLogs)
{
    size_t fused = 0;
    for_each_bundled_event_line(
        [&](const std::string& line)
        {
            for(const rewrite_rule& rule : fused_rules)
                if(expect_same_as_general_path(line, rule)) ++fused;
        });
    EXPECT_GT(fused, 4000u); // the logs were found, and most of their lines took the fused path
}

// The fused path converts only the last six digits of a timestamp whose leading digits are
// the bytes of the timestamp before, and no pid whose bytes are the pid before: lines in a row
// that repeat, change and cut those bytes must still give what the general path gives.
TEST(RouteAndRewrite, TheMemoOfThePreviousLinesNeverChangesWhatIsRead)
{
    const std::vector<std::string> lines = {
        "7 40000000020555 -54844 @1(1ea0) R",
        "7 40000000021722 -54844 @1(1ea0) R",  // same head, same pid
        "7 40000001021722 -54844 @1(1ea0) R",  // head differs in its last digit
        "7 40000001999999 -548440 @1(1ea0) R", // pid: the one before, one digit longer
        "7 40000001000000 -54844 @1(1ea0) R",
        "7 4000000100000 -5484 @1(1ea0) R",    // one digit shorter: the head's bytes differ
        "7 400000010000000 -5484 @1(1ea0) R",  // one longer: the head's bytes, then 7 digits
        "7 40000001000000 -54845 @1(1ea0) R",  // pid: its last digit differs
        "7 40000001123456x -54845 @1(1ea0) R", // refused after the head's bytes
        "7 40000001/23456 -54845 @1(1ea0) R",  // a byte next to '0' among the last six
        "7 40000001:23456 -54845 @1(1ea0) R",  // and next to '9'
        "7 4000000112345 -54845 @1(1ea0) R",   // five digits after the head's bytes
        "7 40000001123456 -54845x @1(1ea0) R", // refused after the pid's bytes
        "7 40000001123456 -54845",             // the line ends after the pid's bytes
        "7 40000001123456 -54845 @1(1ea0) R",
        "7 4000000112345 ",                     // too short for the eight-byte steps
        "7 40000001123456 -1234567 @1(1ea0) R", // seven digits: the longest pid remembered
        "7 40000001123457 -1234567 @1(1ea0) R",
        "7 40000001123457 -12345678 @1(1ea0) R",
        "7 40000001123457 -12345678 @1(1ea0) R",
        "7 9223372036854775807 -1 @1(1ea0) R", // 19 digits: the head is 13
        "7 9223372036854775808 -1 @1(1ea0) R", // its head's bytes, above INT64_MAX: refused
        "7 9223372036854775806 -1 @1(1ea0) R",
        "7 0000000000000000001 -01 @1(1ea0) R", // leading zeros
        "7 0000000000000999999 -01 @1(1ea0) R",
        "7 1234567 -7 @1(1ea0) R", // seven digits: a head of one
        "7 1999999 -7 @1(1ea0) R",
        "7 2999999 -7 @1(1ea0) R",
        "7 1 -7 @1(1ea0) R",
    };
    for(const rewrite_rule& rule : fused_rules)
        for(int round = 0; round < 2; ++round) // the second round starts with a used memo
        {
            rewrite_memo memo;
            for(const std::string& line : lines)
                expect_same_as_general_path(line, rule, &memo);
            for(auto it = lines.rbegin(); it != lines.rend(); ++it)
                expect_same_as_general_path(*it, rule, &memo);
        }
    // What the fused path accepts and refuses does not depend on the memo either.
    rewrite_memo memo;
    for(const std::string& line : lines)
    {
        rewrite_memo      fresh;
        std::vector<char> a(line.size() + rewrite_growth), b(line.size() + rewrite_growth);
        routed_event      ea, eb;
        EXPECT_EQ(route_and_rewrite(line, fused_rules[1], memo, a.data(), ea),
                  route_and_rewrite(line, fused_rules[1], fresh, b.data(), eb))
            << line;
    }
}

// The producer's form: lines read in place in the log reader's buffer, each ending at the
// first '\n' before the buffer's end. What lies past that end (stale bytes of an earlier read)
// is never taken for the line.
namespace
{
// route_and_rewrite_in_place of the bytes, with route_read_slack readable bytes after them
// (filled with `after`); the message it writes, or "" when it refuses.
std::string
in_place(const std::string& bytes, size_t& line_size, size_t max_line = line_reader::max_line,
         const std::string& after = std::string(route_read_slack, '\0'))
{
    std::string buffer = bytes + after;
    buffer.resize(bytes.size() + std::max(after.size(), route_read_slack), '\0');
    std::vector<char> out(std::min(bytes.size(), max_line) + rewrite_growth);
    rewrite_memo      memo;
    routed_event      ev;
    const size_t      n = route_and_rewrite_in_place(buffer.data(), bytes.size(), max_line,
                                                     fused_rules[1], memo, out.data(), ev, line_size);
    return std::string(out.data(), n);
}

std::string
alone(const std::string& line)
{
    std::vector<char> out(line.size() + rewrite_growth);
    rewrite_memo      memo;
    routed_event      ev;
    return std::string(out.data(), route_and_rewrite(line, fused_rules[1], memo, out.data(), ev));
}
} // namespace

TEST(RouteAndRewrite, InPlaceTakesTheLineUpToItsNewline)
{
    const std::string first     = "b 40000000762421 -88 @7f8c6fa00(400) 176e 1";
    const std::string second    = "9 40000000762500 -88 176e 2";
    size_t            line_size = 0;
    const std::string message   = in_place(first + '\n' + second + '\n', line_size);
    EXPECT_EQ(line_size, first.size());
    EXPECT_EQ(message, alone(first));
    EXPECT_FALSE(message.empty());
    EXPECT_EQ(in_place(second + '\n', line_size), alone(second));
    EXPECT_EQ(line_size, second.size());
    // Lines of every length around the sixteen-byte steps of the copy.
    for(size_t extra = 0; extra < 40; ++extra)
    {
        const std::string line = "9 5000 -88 176e " + std::string(extra, 'x');
        EXPECT_EQ(in_place(line + '\n', line_size), alone(line)) << extra;
        EXPECT_EQ(line_size, line.size());
    }
}

TEST(RouteAndRewrite, InPlaceRefusesALineTheBufferEndCuts)
{
    const std::string line      = "b 40000000762421 -88 @7f8c6fa00(400) 176e 1";
    size_t            line_size = 0;
    // The buffer ends anywhere inside the line: no '\n' before its end, refused, even when the
    // bytes after it would complete the line.
    for(size_t cut = 0; cut <= line.size(); ++cut)
    {
        const std::string rest = line.substr(cut) + '\n' + std::string(route_read_slack, '\0');
        EXPECT_EQ(in_place(line.substr(0, cut), line_size, line_reader::max_line, rest), "") << cut;
    }
    // The ')' and the '(' that route a line are looked for in the line only.
    EXPECT_EQ(in_place("b 1 -1 @1(1\n) 176e 2\n", line_size), "");
    EXPECT_EQ(in_place("7 1 -1 @1\n(1ea0) R\n", line_size), "");
    EXPECT_EQ(in_place("5 1 -1 @1(1\n) 0->1ea0\n", line_size), "");
}

TEST(RouteAndRewrite, InPlaceRefusesALineLongerThanTheLongestLine)
{
    size_t            line_size = 0;
    const std::string head      = "9 5000 -88 176e ";
    for(size_t max_line : {size_t{40}, size_t{47}, size_t{48}, size_t{64}})
    {
        const std::string longest = head + std::string(max_line - head.size(), 'x');
        EXPECT_EQ(in_place(longest + '\n', line_size, max_line), alone(longest)) << max_line;
        EXPECT_EQ(line_size, longest.size());
        EXPECT_EQ(in_place(longest + "x\n", line_size, max_line), "") << max_line;
    }
}

TEST(ParseEvent, TimestampsOfEveryLengthAndTheByteThatEndsThem)
{
    const std::string digits = "1234567890987654321"; // 19 digits within int64
    for(size_t length = 1; length <= 19; ++length)
    {
        const std::string ns = digits.substr(digits.size() - length);
        parsed_event      ev = parse("7 " + ns + " -42 @1(1ea0) R");
        EXPECT_EQ(ev.ns, std::stoll(ns)) << ns;
        EXPECT_EQ(ev.ns_span.len, length);
        // Bytes next to '0' and '9' in ASCII (and one with the high bit set) end a number: a
        // timestamp followed by any of them is not followed by ' ' and the line is refused.
        for(char end : {'/', ':', '\0', static_cast<char>(0xb0), 'a'})
        {
            std::string  line = "7 " + ns + end + "5 -42 @1(1ea0) R";
            parsed_event refused;
            EXPECT_FALSE(parse_event(line, refused)) << ns << " then byte " << int(end);
        }
    }
}

TEST(RewriteLine, TheMemoOfThePreviousLinesNeverChangesTheText)
{
    // Timestamps below, at and across multiples of 10^6, repeated leading digits and not, with
    // lines whose pid is written in decimal and in hex in turn (the memo keeps one pid text).
    rewrite_memo memo;
    rewrite_rule rule{true, 42, 31337, 1};
    for(int64_t ns : {int64_t{5}, int64_t{999998}, int64_t{999999}, int64_t{1000000},
                      int64_t{1000001}, int64_t{1999999}, int64_t{40000000037271},
                      int64_t{40000000038007}, int64_t{40000000999999}, int64_t{40000001000007},
                      int64_t{123}, int64_t{40000001000007}, INT64_MAX - 1})
    {
        for(const std::string& line :
            {"7 " + std::to_string(ns) + " -42 @1(1ea0) R", std::string("1 2a:python3")})
        {
            std::vector<char> out(line.size() + rewrite_growth);
            uint32_t          pid = 0;
            size_t            n = rewrite_line_to(out.data(), line, parse(line), rule, pid, &memo);
            std::string       expected = line[0] == '7'
                                             ? "7 " + std::to_string(ns + 1) + " -31337 @1(1ea0) R\n"
                                             : "1 7a69:python3\n"; // 31337 in hex
            EXPECT_EQ(std::string(out.data(), n), expected) << ns;
        }
    }
}

TEST(ParseEvent, TimestampsAndPidsBeyondTheirRangeAreRefused)
{
    parsed_event ev;
    ASSERT_TRUE(parse_event("7 9223372036854775807 -4294967295 @1(1ea0) R", ev));
    EXPECT_EQ(ev.ns, INT64_MAX);
    EXPECT_EQ(ev.text_pid, 4294967295u);
    for(const char* line :
        {"7 9223372036854775808 -1 @1(1ea0) R", "7 99999999999999999999 -1 @1(1ea0) R",
         "7 1 -4294967296 @1(1ea0) R", "9 18446744073709551616 -1 1ea0 1"})
        EXPECT_FALSE(parse_event(line, ev)) << line;
}

// --- directives --------------------------------------------------------------------------

config
directives(std::initializer_list<const char*> lines)
{
    config   cfg;
    uint64_t n = 0;
    for(const char* line : lines)
        apply_directive(line, ++n, cfg);
    return cfg;
}

TEST(Directives, ParseEveryDocumentedSpelling)
{
    config cfg = directives({"#@ gpu 1ea0 gfx942", "#@ gpu 0xfc7d", "#@ fifo 1024",
                             "#@ version 1.9", "#@ superuser yes", "#@ all-process required",
                             "#@ self 4242", "#@ timestamps keep", "#@ pace rate 250"});
    EXPECT_TRUE(cfg.warnings.empty()) << cfg.warnings.front();
    ASSERT_EQ(cfg.gpus.size(), 2u);
    EXPECT_EQ(cfg.gpus[0].gpu_id, 0x1ea0u);
    EXPECT_EQ(cfg.gpus[0].name, "gfx942");
    EXPECT_EQ(cfg.gpus[1].name, "gfx90a");
    EXPECT_EQ(cfg.fifo_bytes, 1024u);
    EXPECT_EQ(cfg.version_major, 1u);
    EXPECT_EQ(cfg.version_minor, 9u);
    EXPECT_TRUE(cfg.superuser);
    EXPECT_TRUE(cfg.all_process_required);
    EXPECT_TRUE(cfg.has_self);
    EXPECT_EQ(cfg.self_pid, 4242u);
    EXPECT_FALSE(cfg.rebase);
    EXPECT_EQ(cfg.pace, pace_kind::rate);
    EXPECT_DOUBLE_EQ(cfg.rate, 250.0);
}

TEST(Directives, ParseFaultInjection)
{
    config cfg = directives({"#@ fault open eacces", "#@ fault version enomem", "#@ fault smi 1ea0",
                             "#@ fault smi fc7d eperm", "#@ fault read efault every 3",
                             "#@ fault vanish 1ea0 12 err"});
    EXPECT_TRUE(cfg.warnings.empty()) << cfg.warnings.front();
    EXPECT_EQ(cfg.open_error, EACCES);
    EXPECT_EQ(cfg.version_error, ENOMEM);
    EXPECT_EQ(cfg.smi_error(0x1ea0), EINVAL);
    EXPECT_EQ(cfg.smi_error(0xfc7d), EPERM);
    EXPECT_EQ(cfg.smi_error(0x1234), 0);
    EXPECT_EQ(cfg.read_fault_rule.error, EFAULT);
    EXPECT_EQ(cfg.read_fault_rule.every, 3u);
    EXPECT_FALSE(cfg.read_fault_rule.once);
    ASSERT_EQ(cfg.vanish_faults.size(), 1u);
    EXPECT_EQ(cfg.vanish_faults[0].line, 12u);
    EXPECT_TRUE(cfg.vanish_faults[0].pollerr);

    config once = directives({"#@ fault read eintr once"});
    EXPECT_EQ(once.read_fault_rule.error, EINTR);
    EXPECT_TRUE(once.read_fault_rule.once);
}

TEST(Directives, InvalidOnesWarnAndChangeNothing)
{
    config cfg =
        directives({"#@ fifo 12", "#@ version 1", "#@ superuser maybe", "#@ pace slow", "#@ gpu 0",
                    "#@ gpu ffffffff", "#@ self -3", "#@ frobnicate", "#@ fault read eintr twice",
                    "#@ fault open eperm", "#@ fault vanish 1ea0 0", "#@ timestamps"});
    EXPECT_EQ(cfg.warnings.size(), 12u);
    config defaults;
    EXPECT_EQ(cfg.fifo_bytes, defaults.fifo_bytes);
    EXPECT_EQ(cfg.version_minor, defaults.version_minor);
    EXPECT_EQ(cfg.pace, pace_kind::lossless);
    EXPECT_TRUE(cfg.gpus.empty());
    EXPECT_EQ(cfg.read_fault_rule.error, 0);
    EXPECT_EQ(cfg.open_error, 0);
    EXPECT_TRUE(cfg.rebase);
}

TEST(Directives, NumbersOutOfTheirRangeAreRefused)
{
    config cfg = directives({"#@ fifo 18446744073709551617", "#@ fifo +4096", "#@ self 2147483648",
                             "#@ version 4294967296.1", "#@ gpu 1ffffffffffffffff",
                             "#@ fault read eintr every 18446744073709551616",
                             "#@ fault vanish 1ea0 99999999999999999999", "#@ pace rate 1e-9",
                             "#@ pace rate 0.0009"});
    EXPECT_EQ(cfg.warnings.size(), 9u);
    config defaults;
    EXPECT_EQ(cfg.fifo_bytes, defaults.fifo_bytes);
    EXPECT_FALSE(cfg.has_self);
    EXPECT_TRUE(cfg.gpus.empty());
    EXPECT_EQ(cfg.read_fault_rule.error, 0);
    EXPECT_TRUE(cfg.vanish_faults.empty());
    EXPECT_EQ(cfg.pace, pace_kind::lossless);
    // The largest values are still taken.
    config top = directives({"#@ fault vanish 1ea0 18446744073709551615", "#@ pace rate 0.001"});
    EXPECT_TRUE(top.warnings.empty());
    ASSERT_EQ(top.vanish_faults.size(), 1u);
    EXPECT_EQ(top.vanish_faults[0].line, UINT64_MAX);
    EXPECT_EQ(top.pace, pace_kind::rate);
}

// --- line_reader -------------------------------------------------------------------------

TEST(LineReader, ViewsGiveEveryLineAcrossBufferEndsAndCutTheLongOnes)
{
    // Lines of every length from 1 to 300 bytes, more than 64 KiB in all (the reader's
    // buffer), so that lines straddle its end; one line longer than max_line in the middle.
    std::vector<std::string> lines;
    for(int i = 0; i < 1200; ++i)
        lines.push_back(std::string(1 + i % 300, static_cast<char>('a' + i % 26)));
    lines[700] = std::string(line_reader::max_line + 10, 'L');
    std::string text;
    for(const auto& line : lines)
        text += line + "\n";
    text += "last line without a newline";
    char templ[] = "/tmp/kfd-emulator-lines-XXXXXX";
    int  fd      = mkstemp(templ);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::lseek(fd, 0, SEEK_SET);
    unlink(templ);

    // Read three times: as the scan does, with has_line() before each line (whose search
    // next_view() reuses), and as the producer does (a line whose '\n' is buffered is taken in
    // place, through buffered() and skip(); the others through next_view()).
    for(int way = 0; way < 3; ++way)
    {
        ::lseek(fd, 0, SEEK_SET);
        line_reader      reader(fd, ::read);
        std::string_view view;
        bool             too_long = false;
        for(size_t i = 0; i < lines.size(); ++i)
        {
            if(way == 1) reader.has_line();
            if(way == 2)
            {
                const std::string_view buffered = reader.buffered();
                const size_t           newline  = buffered.find('\n');
                if(newline != std::string_view::npos && newline <= line_reader::max_line)
                {
                    EXPECT_EQ(buffered.substr(0, newline), lines[i]) << i;
                    reader.skip(newline + 1);
                    continue;
                }
            }
            ASSERT_TRUE(reader.next_view(view, too_long)) << i;
            EXPECT_EQ(too_long, i == 700) << i;
            EXPECT_EQ(view, i == 700 ? std::string(line_reader::max_line, 'L') : lines[i]) << i;
        }
        ASSERT_TRUE(reader.next_view(view, too_long));
        EXPECT_EQ(view, "last line without a newline");
        EXPECT_FALSE(reader.next_view(view, too_long));
    }
    ::close(fd);
}

// --- load_config (the scan of a log) -----------------------------------------------------

class LogScan : public ::testing::Test
{
protected:
    void SetUp() override
    {
        char templ[] = "/tmp/kfd-emulator-unit-XXXXXX";
        int  fd      = mkstemp(templ);
        ASSERT_GE(fd, 0);
        ::close(fd);
        path_ = templ;
    }
    void TearDown() override { unlink(path_.c_str()); }

    config load(const std::string& text)
    {
        std::ofstream(path_, std::ios::binary) << text;
        config      cfg;
        std::string error;
        file_io     io{::open, ::read, ::close};
        EXPECT_TRUE(load_config(path_, io, cfg, error)) << error;
        return cfg;
    }

    std::string path_;
};

TEST_F(LogScan, DefaultsComeFromTheEvents)
{
    config cfg = load("# a comment\n"
                      "\n"
                      "1 2a:python3\n"
                      "9 5000 -77 fc7d 2\n"
                      "5 6000 -88 @7f0(10) 0->1ea0 ffffffff:ffffffff 1\n"
                      "7 7000 -88 @7f0(1ea0) R\n"
                      "zz not an event\n"
                      "7 8000 -88 @7f0(abcd) R\n");
    // GPUs: every node id named, ascending; self: the first profiler event's pid.
    ASSERT_EQ(cfg.gpus.size(), 3u);
    EXPECT_EQ(cfg.gpus[0].gpu_id, 0x1ea0u);
    EXPECT_EQ(cfg.gpus[1].gpu_id, 0xabcdu);
    EXPECT_EQ(cfg.gpus[2].gpu_id, 0xfc7du);
    EXPECT_TRUE(cfg.has_self);
    EXPECT_EQ(cfg.self_pid, 77u);
    EXPECT_TRUE(cfg.has_first_ns);
    EXPECT_EQ(cfg.first_ns, 5000);
    EXPECT_EQ(cfg.line_count, 8u);
    EXPECT_EQ(cfg.event_lines, 6u);
    EXPECT_EQ(cfg.unroutable, 1u); // "zz"
    // The vmfault has no node: it goes to the first GPU.
    EXPECT_EQ(cfg.lines_per_gpu, (std::vector<uint64_t>{3, 1, 1}));
}

TEST_F(LogScan, GpuDirectivesAndRouteDecideWhereLinesGo)
{
    config cfg = load("#@ gpu fc7d\n"
                      "#@ gpu 1ea0 gfx942\n"
                      "1 2a:a\n"
                      "#@ route 1ea0\n"
                      "2 1:1\n"
                      "3 1 reason\n"
                      "9 5000 -77 abcd 2\n"
                      "#@ route 4444\n"
                      "4 1 reason\n");
    ASSERT_EQ(cfg.gpus.size(), 2u);
    EXPECT_EQ(cfg.gpus[0].gpu_id, 0xfc7du);
    EXPECT_EQ(cfg.lines_per_gpu, (std::vector<uint64_t>{1, 2}));
    // abcd is not emulated and 4444 routes nowhere.
    EXPECT_EQ(cfg.unroutable, 2u);
    EXPECT_EQ(cfg.event_lines, 5u);
}

TEST_F(LogScan, GpuDirectivesAfterTheEventsStillDecideWhereTheyGo)
{
    // The scan counts each line's destination before it knows the final GPU list.
    config cfg = load("9 5000 -77 fc7d 2\n"
                      "9 5001 -77 abcd 2\n"
                      "2 1:1\n" // no node, no route: the first GPU of the final list
                      "9 5002 -77 1234 2\n"
                      "#@ gpu abcd\n"
                      "#@ gpu fc7d\n");
    ASSERT_EQ(cfg.gpus.size(), 2u);
    EXPECT_EQ(cfg.gpus[0].gpu_id, 0xabcdu);
    EXPECT_EQ(cfg.lines_per_gpu, (std::vector<uint64_t>{2, 1}));
    EXPECT_EQ(cfg.unroutable, 1u); // 1234 is not emulated
    EXPECT_EQ(cfg.event_lines, 4u);
}

TEST_F(LogScan, ManyDestinationsAreCountedAsExactlyAsFew)
{
    // More distinct nodes than the scan counts in one pass (it then takes a second one).
    std::string text = "#@ gpu 1\n#@ gpu 2\n9 10 -77 1 2\n";
    for(int node = 3; node < 3 + 1500; ++node)
        text += "9 20 -77 " + std::to_string(node) + " 2\n"; // decimal digits read as hex ids
    text += "9 30 -77 1 2\n9 40 -77 2 2\n9 50 -77 2 2\n#@ route 2\n4 1 reason\nzz\n";
    config cfg = load(text);
    EXPECT_EQ(cfg.lines_per_gpu, (std::vector<uint64_t>{2, 3}));
    EXPECT_EQ(cfg.unroutable, 1501u); // 1500 nodes not emulated and "zz"
    EXPECT_EQ(cfg.event_lines, 1506u);
}

TEST_F(LogScan, SelfDirectiveWinsOverTheFirstEvent)
{
    config cfg = load("9 5000 -77 fc7d 2\n#@ self 99\n");
    EXPECT_EQ(cfg.self_pid, 99u);
    EXPECT_TRUE(cfg.self_from_directive);
}

TEST(LoadConfig, MissingLogIsAnError)
{
    config      cfg;
    std::string error;
    file_io     io{::open, ::read, ::close};
    EXPECT_FALSE(load_config("/nonexistent/kfd.log", io, cfg, error));
    EXPECT_NE(error.find("cannot open"), std::string::npos);
}

TEST_F(LogScan, OverLongLinesAreNotUsedByTheScan)
{
    // Cut at max_line, the first line still reads as an event with a time, and the
    // directive as a GPU: neither may count.
    config cfg = load("e 5000 -77 " + std::string(5000, 'x') + "\n" + "#@ gpu abcd" +
                      std::string(5000, ' ') + "\n" + "9 6000 -88 fc7d 2\n");
    EXPECT_EQ(cfg.first_ns, 6000);
    ASSERT_EQ(cfg.gpus.size(), 1u);
    EXPECT_EQ(cfg.gpus[0].gpu_id, 0xfc7du);
    EXPECT_EQ(cfg.unroutable, 1u);
    ASSERT_EQ(cfg.warnings.size(), 1u);
    EXPECT_NE(cfg.warnings[0].find("directive too long"), std::string::npos);
}

TEST_F(LogScan, WarningsAreCappedInNumberAndLength)
{
    std::string text = "#@ nonsense " + std::string(2000, 'y') + "\n";
    for(int i = 0; i < 149; ++i)
        text += "#@ nonsense\n";
    config cfg = load(text);
    EXPECT_EQ(cfg.warnings.size(), max_warnings);
    EXPECT_EQ(cfg.warnings_omitted, 150u - max_warnings);
    EXPECT_LE(cfg.warnings[0].size(), max_warning_text + 3);
}

TEST(LoadConfig, LogThatIsNotARegularFileIsAnError)
{
    std::string fifo = "/tmp/kfd-emulator-unit-fifo-" + std::to_string(getpid());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    config      cfg;
    std::string error;
    file_io     io{::open, ::read, ::close};
    EXPECT_FALSE(load_config(fifo, io, cfg, error)); // returns at once: no writer needed
    unlink(fifo.c_str());
    EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
}

// Strict UTF-8 check (what JSON parsers require).
bool
valid_utf8(const std::string& text)
{
    for(size_t i = 0; i < text.size();)
    {
        unsigned char c = static_cast<unsigned char>(text[i]);
        size_t        n = c < 0x80                 ? 1
                          : c >= 0xc2 && c <= 0xdf ? 2
                          : c >= 0xe0 && c <= 0xef ? 3
                          : c >= 0xf0 && c <= 0xf4 ? 4
                                                   : 0;
        if(n == 0 || i + n > text.size()) return false;
        for(size_t k = 1; k < n; ++k)
            if((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return false;
        i += n;
    }
    return true;
}

TEST(StatsJson, AnyBytesOfTheLogGiveValidJson)
{
    config cfg;
    cfg.warnings         = {"bad \xff\xfe bytes", "cut \xc3", "kept \xc3\xa9", "ctl \x7f"};
    cfg.warnings_omitted = 7;
    cfg.log_path         = "/tmp/\xe9.log";
    stats_input in;
    in.cfg         = &cfg;
    std::string js = stats_to_json(in);
    EXPECT_TRUE(valid_utf8(js)) << js;
    EXPECT_NE(js.find("bad \\u00ff\\u00fe bytes"), std::string::npos) << js;
    EXPECT_NE(js.find("cut \\u00c3\""), std::string::npos) << js;
    EXPECT_NE(js.find("kept \xc3\xa9"), std::string::npos) << js;
    EXPECT_NE(js.find("ctl \\u007f"), std::string::npos) << js;
    EXPECT_NE(js.find("\"/tmp/\\u00e9.log\""), std::string::npos) << js;
    EXPECT_NE(js.find("\"warnings_omitted\":7"), std::string::npos) << js;
}

TEST(ErrnoNames, RoundTrip)
{
    EXPECT_EQ(errno_from_name("EINTR"), EINTR);
    EXPECT_EQ(errno_from_name("efault"), EFAULT);
    EXPECT_EQ(errno_from_name("nope"), 0);
    EXPECT_STREQ(errno_name(EACCES), "eacces");
}
} // namespace
