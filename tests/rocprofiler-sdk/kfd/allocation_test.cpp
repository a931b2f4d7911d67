// MIT License - see LICENSE.
//
// Allocation behaviour of the KFD core, observed through a replaced global operator new
// (this test binary only): parsing, splitting and raw records never allocate; the pairing
// engine allocates only to store a new start, and an allocation failure there is absorbed
// (counted, no exception through the noexcept interface).
#include "replaced_operator_new.hpp"
#include "rocprofiler-sdk/kfd/pairing.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>
#include <string_view>

namespace
{
// Test-binary instrumentation: how many allocations happened, and whether to fail them.
size_t g_allocations      = 0;
bool   g_fail_allocations = false;

void*
counted_allocation(std::size_t size)
{
    ++g_allocations;
    if(g_fail_allocations) throw std::bad_alloc{};
    void* memory = std::malloc(size == 0 ? 1 : size);
    if(memory == nullptr) throw std::bad_alloc{};
    return memory;
}

// Counts the allocations made by `work`.
template <typename F>
size_t
allocations_during(F&& work)
{
    const size_t before = g_allocations;
    work();
    return g_allocations - before;
}

// Runs `work` with every allocation failing.
template <typename F>
void
with_failing_allocations(F&& work)
{
    g_fail_allocations = true;
    work();
    g_fail_allocations = false;
}
} // namespace

void*
test_allocation::allocate(std::size_t size)
{
    return counted_allocation(size);
}

using rocprofiler::kfd::event;
using rocprofiler::kfd::line_splitter;
using rocprofiler::kfd::pairing_engine;
using rocprofiler::kfd::parse_line;
using rocprofiler::kfd::parse_result;
using record_t = rocprofiler_buffer_tracing_page_migration_record_t;

namespace
{
constexpr std::string_view every_shape[] = {
    "1 2a3f:python3",
    "2 1f:3a",
    "3 5 MODE1",
    "4 5",
    "5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1",
    "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 0",
    "7 40507688414784 -156893 @7fa608127(ad5c) R",
    "8 40507688999999 -156893 @7fa608127(ad5c) M",
    "9 38086928279363 -125752 1ea0 1",
    "a 40082605896929 -148516 fc7d R",
    "b 15203214457186 -152990 @7f93ac200(200) 1ea0 2",
    "c 2a3f python3",
    "d 2a3f python3",
    "e 1000 -42 17",
    "e 1000 -42 1ea0",
    "9 1 -2 1ea0 1 garbage",
    "ff 1 2 3",
    "",
};

event
parsed(std::string_view line)
{
    event ev{};
    EXPECT_EQ(parse_line(line, ev), parse_result::ok);
    return ev;
}
} // namespace

TEST(kfd_allocation, instrumentation_works)
{
    // guards the other tests: the replaced operator new must see allocations
    const size_t count = allocations_during(
        []
        {
            auto* value = new int{5};
            delete value;
        });
    EXPECT_EQ(count, 1u);
}

TEST(kfd_allocation, parser_splitter_and_raw_records_never_allocate)
{
    std::string stream;
    for(auto line : every_shape)
        stream.append(line).push_back('\n');
    stream.append(400, 'x').append("\n9 1 -2 1 0\npartial");

    line_splitter splitter;
    size_t        lines   = 0;
    size_t        records = 0;
    const size_t  count   = allocations_during(
        [&]
        {
            for(char byte : stream) // worst case for the carry storage: one byte at a time
                splitter.feed(&byte, 1,
                                 [&](std::string_view line)
                                 {
                                  event ev{};
                                  if(parse_line(line, ev) == parse_result::ok)
                                  {
                                      const auto raw =
                                          rocprofiler::kfd::to_raw_record(ev, 1, line, 2);
                                      if(raw.operation >= 1) ++records;
                                  }
                                  ++lines;
                              });
        });
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(lines, std::size(every_shape) + 1);
    EXPECT_EQ(records, 16u); // every shape but the three bad lines, plus "9 1 -2 1 0"
    EXPECT_EQ(splitter.overlong_lines(), 1u);
    EXPECT_EQ(splitter.pending(), 7u);
}

TEST(kfd_allocation, pairing_allocates_only_when_its_table_grows)
{
    pairing_engine engine{16};
    record_t       out{};
    const event    start = parsed("7 100 -1 @10(1ea0) R");
    const event    end   = parsed("8 200 -1 @10(1ea0) M");
    const event    evict = parsed("9 100 -1 1ea0 0");
    const event    unmap = parsed("b 1 -2 @10(1) 1 0");
    const event    vm    = parsed("1 2a3f:python3");

    EXPECT_EQ(allocations_during([&] { EXPECT_TRUE(engine.process(unmap, out)); }), 0u);
    EXPECT_EQ(allocations_during([&] { EXPECT_FALSE(engine.process(vm, out)); }), 0u);
    EXPECT_EQ(allocations_during([&] { EXPECT_FALSE(engine.process(end, out)); }), 0u); // orphan
    // the first start sizes the table (16 starts: 32 slots at once)
    EXPECT_EQ(allocations_during([&] { EXPECT_FALSE(engine.process(start, out)); }), 1u);
    EXPECT_EQ(engine.capacity(), 32u);
    // from then on: no allocation per start, end, nesting or gap
    EXPECT_EQ(allocations_during([&] { EXPECT_FALSE(engine.process(start, out)); }), 0u); // dup
    EXPECT_EQ(allocations_during([&] { EXPECT_TRUE(engine.process(end, out)); }), 0u);
    EXPECT_EQ(allocations_during(
                  [&]
                  {
                      for(int i = 0; i < 100; ++i)
                      {
                          engine.process(start, out);
                          engine.process(evict, out);
                      }
                      engine.invalidate(rocprofiler::kfd::pair_kind_all);
                  }),
              0u);
    EXPECT_EQ(allocations_during([&] { engine.finish(); }), 0u);
}

TEST(kfd_allocation, pairing_absorbs_allocation_failure)
{
    pairing_engine engine{1000};
    record_t       out{};
    // 128 starts fill the first table (256 slots) to half: the 129th needs a bigger one
    for(int page = 0; page < 128; ++page)
        ASSERT_FALSE(engine.process(
            parsed("7 " + std::to_string(100 + page) + " -1 @" + std::to_string(page) + "(1ea0) R"),
            out));
    ASSERT_EQ(engine.capacity(), 256u);

    // events parsed before: gtest may allocate, so nothing but process() runs while failing
    const event new_start   = parsed("7 200 -1 @1000(1ea0) R");
    const event evict       = parsed("9 210 -1 1ea0 1");
    const event restore     = parsed("a 220 -1 1ea0");
    const event unmap       = parsed("b 1 -2 @10(1) 1 0");
    bool        produced[4] = {true, true, false, false};
    with_failing_allocations(
        [&]
        {
            // the table cannot grow: the oldest start ages out to make room, nothing thrown
            produced[0] = engine.process(new_start, out);
            produced[1] = engine.process(evict, out);
            produced[2] = engine.process(restore, out);
            produced[3] = engine.process(unmap, out);
        });
    EXPECT_FALSE(produced[0]);
    EXPECT_FALSE(produced[1]);
    EXPECT_TRUE(produced[2]);
    EXPECT_TRUE(produced[3]);
    EXPECT_EQ(engine.capacity(), 256u);
    EXPECT_EQ(engine.counters().starts_aged_out, 2u); // pages 0 and 1 made room
    EXPECT_EQ(engine.counters().records, 2u);
    EXPECT_EQ(engine.outstanding(), 127u);

    // the aged-out start's end is an orphan; the newest pairs; memory back: the table grows
    EXPECT_FALSE(engine.process(parsed("8 300 -1 @0(1ea0) M"), out));
    EXPECT_EQ(engine.counters().ends_without_start, 1u);
    EXPECT_TRUE(engine.process(parsed("8 300 -1 @1000(1ea0) M"), out));
    EXPECT_EQ(out.start_timestamp, 200u);
    for(int page = 1100; page < 1110; ++page)
        EXPECT_FALSE(engine.process(parsed("7 400 -1 @" + std::to_string(page) + "(1ea0) R"), out));
    EXPECT_EQ(engine.capacity(), 512u);
    EXPECT_EQ(engine.counters().starts_aged_out, 2u);
}
