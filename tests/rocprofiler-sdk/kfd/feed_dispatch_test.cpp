// MIT License - see LICENSE.
//
// feed_dispatch is the reader's entry point for a read: it must do exactly what
// line_splitter::feed with parse_line_dispatch for each line does (the reference here): the
// same handler calls with the same events and lines, in the same order, and the same count
// of lines and of lines parsed ok. Where the CPU has the hot shapes' pass, feed_dispatch
// runs its own copy of the splitter's loop with the pass inlined, so that copy is compared
// on the bundled logs of every scenario and era, on malformed, empty, NUL-bearing and
// overlong lines, and with the text cut into reads of many sizes (lines carried across).
#include "bundled_logs.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using rocprofiler::kfd::event;
using rocprofiler::kfd::event_handlers;
using rocprofiler::kfd::feed_dispatch;
using rocprofiler::kfd::feed_tally;
using rocprofiler::kfd::line_splitter;
using rocprofiler::kfd::parse_line_dispatch;
using rocprofiler::kfd::parse_result;

namespace
{
// One handler call: its slot, the event's bytes and the line.
struct call
{
    uint32_t    slot;
    std::string event_bytes;
    std::string line;

    bool operator==(const call& other) const
    {
        return slot == other.slot && event_bytes == other.event_bytes && line == other.line;
    }
};

template <uint32_t slot>
void
append_call(void* context, event& ev, std::string_view line)
{
    auto& calls = *static_cast<std::vector<call>*>(context);
    calls.push_back(
        {slot, std::string(reinterpret_cast<const char*>(&ev), sizeof ev), std::string(line)});
}

template <uint32_t... slot>
event_handlers
appending_handlers(std::vector<call>& calls, bool hot_shapes,
                   std::integer_sequence<uint32_t, slot...>)
{
    event_handlers h;
    h.context    = &calls;
    h.hot_shapes = hot_shapes;
    ((h.on_id[slot] = append_call<slot>), ...);
    h.on_id[3] = nullptr; // GPU_PRE_RESET: a null entry, which calls nothing
    return h;
}

struct outcome
{
    std::vector<call> calls;
    uint64_t          lines = 0;
    uint64_t          ok    = 0;
};

// The text cut into reads of `read_size` bytes, through feed_dispatch or the reference.
outcome
run(std::string_view text, size_t read_size, bool hot_shapes, bool reference)
{
    outcome        out;
    event_handlers handlers =
        appending_handlers(out.calls, hot_shapes, std::make_integer_sequence<uint32_t, 15>{});
    line_splitter splitter;
    event         scratch{};
    for(size_t offset = 0; offset < text.size(); offset += read_size)
    {
        // Each read in a buffer of its own size, as the reader's read() fills it.
        const std::string read{text.substr(offset, read_size)};
        if(reference)
            splitter.feed(read.data(), read.size(),
                          [&](std::string_view line)
                          {
                              ++out.lines;
                              out.ok +=
                                  parse_line_dispatch(line, scratch, handlers) == parse_result::ok;
                          });
        else
        {
            const feed_tally tally =
                feed_dispatch(splitter, read.data(), read.size(), scratch, handlers);
            out.lines += tally.lines;
            out.ok += tally.ok;
        }
    }
    return out;
}

void
expect_same(std::string_view text, const std::string& what)
{
    for(size_t read_size : {size_t{1}, size_t{7}, size_t{63}, size_t{64}, size_t{100}, size_t{1024},
                            size_t{4096}, size_t{8192}, text.size() + 1})
        for(bool hot : {true, false})
        {
            const outcome expected = run(text, read_size, hot, true);
            const outcome got      = run(text, read_size, hot, false);
            EXPECT_EQ(got.lines, expected.lines) << what << ", reads of " << read_size;
            EXPECT_EQ(got.ok, expected.ok) << what << ", reads of " << read_size;
            ASSERT_EQ(got.calls.size(), expected.calls.size())
                << what << ", reads of " << read_size;
            for(size_t i = 0; i < got.calls.size(); ++i)
                ASSERT_TRUE(got.calls[i] == expected.calls[i])
                    << what << ", reads of " << read_size << ": call " << i << " differs (line ["
                    << expected.calls[i].line << "])";
        }
}
} // namespace

TEST(kfd_feed_dispatch, the_bundled_logs_as_the_splitter_and_parse_line_dispatch)
{
    for(const char* entry : kfd_test::every_scenario_and_era)
    {
        const std::string text = kfd_test::bundled_log(entry);
        ASSERT_FALSE(text.empty()) << entry;
        // The first 400 lines (every read size is run on them): enough for each kind.
        size_t end = 0;
        for(int lines = 0; lines < 400 && end != std::string::npos; ++lines)
            end = text.find('\n', end + 1);
        expect_same(
            std::string_view{text}.substr(0, end == std::string::npos ? text.size() : end + 1),
            entry);
    }
}

TEST(kfd_feed_dispatch, odd_lines_as_the_splitter_and_parse_line_dispatch)
{
    std::string text;
    text += "7 15203214457186 -152990 @7f0f15200(1ea0) W\n"; // hot
    text += "\n";                                            // empty
    text += "7 15203214457186 -152990 @7f0f15200(1ea0) X\n"; // a flag byte neither R nor W
    text += "5 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:1ea0 1\n"; // wide, hot
    text += "a 15203214457186 -152990 1ea0 "; // " \0" restore: a NUL byte
    text.push_back('\0');
    text += "\n";
    text += "a 15203214457186 -152990 1ea0 R\n";
    text += "3 1ea0\n";                                       // GPU_PRE_RESET: a null entry
    text += std::string(300, '7') + "\n";                     // overlong: skipped
    text += "e 2\n";                                          // dropped events
    text += "f 15203214457186 -152990\n";                     // unknown id
    text += "6 x x\n";                                        // malformed
    text += "9 15203214457186 -152990 1ea0 2\n";              // queue eviction
    text += "b 15203214457186 -152990 @7f0f15200(10) 1ea0 2"; // no '\n': carried, not fed
    expect_same(text, "odd lines");
    // Each line once more, on its own, cut at every length.
    size_t start = 0;
    for(size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start))
    {
        const std::string line = text.substr(start, end - start);
        for(size_t cut = 0; cut <= line.size() && line.size() < 100; ++cut)
            expect_same(line.substr(0, cut) + "\n", "line [" + line + "] cut");
        start = end + 1;
    }
}
