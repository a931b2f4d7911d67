// MIT License - see LICENSE.
//
// line_splitter: the same lines whatever the read boundaries, bounded storage, overlong
// lines skipped and counted once.
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

using namespace std::literals;
using rocprofiler::kfd::line_splitter;
using rocprofiler::kfd::max_line_length;

namespace
{
using lines_t = std::vector<std::string>;

// A stream of real lines, including the 6.12 restore with its NUL byte and an empty line.
std::string
sample_stream()
{
    return std::string{"5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1\n"
                       "7 40507688414784 -156893 @7fa608127(ad5c) R\n"
                       "a 40082605896929 -148516 fc7d \0\n"
                       "\n"
                       "1 2a3f:python3\n"
                       "e 1000 -42 17\n"
                       "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 0\n"sv};
}

const lines_t&
sample_lines()
{
    static const lines_t lines = {
        "5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:0 1",
        "7 40507688414784 -156893 @7fa608127(ad5c) R",
        std::string{"a 40082605896929 -148516 fc7d \0"sv},
        "",
        "1 2a3f:python3",
        "e 1000 -42 17",
        "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 0",
    };
    return lines;
}

void
feed_into(line_splitter& splitter, std::string_view data, lines_t& out)
{
    splitter.feed(data.data(), data.size(),
                  [&out](std::string_view line) { out.emplace_back(line); });
}
} // namespace

TEST(kfd_line_splitter, whole_stream_in_one_feed)
{
    line_splitter splitter;
    lines_t       lines;
    feed_into(splitter, sample_stream(), lines);
    EXPECT_EQ(lines, sample_lines());
    EXPECT_EQ(splitter.pending(), 0u);
    EXPECT_EQ(splitter.overlong_lines(), 0u);
}

TEST(kfd_line_splitter, split_at_every_offset)
{
    const std::string stream = sample_stream();
    for(size_t split = 0; split <= stream.size(); ++split)
    {
        line_splitter splitter;
        lines_t       lines;
        feed_into(splitter, std::string_view{stream}.substr(0, split), lines);
        feed_into(splitter, std::string_view{stream}.substr(split), lines);
        EXPECT_EQ(lines, sample_lines()) << "split at " << split;
        EXPECT_EQ(splitter.pending(), 0u);
    }
}

TEST(kfd_line_splitter, split_at_every_pair_of_offsets)
{
    const std::string      stream = sample_stream();
    const std::string_view view{stream};
    for(size_t first = 0; first <= stream.size(); ++first)
    {
        for(size_t second = first; second <= stream.size(); ++second)
        {
            line_splitter splitter;
            lines_t       lines;
            feed_into(splitter, view.substr(0, first), lines);
            feed_into(splitter, view.substr(first, second - first), lines);
            feed_into(splitter, view.substr(second), lines);
            ASSERT_EQ(lines, sample_lines()) << "splits at " << first << ", " << second;
        }
    }
}

TEST(kfd_line_splitter, one_byte_feeds)
{
    const std::string stream = sample_stream();
    line_splitter     splitter;
    lines_t           lines;
    for(char byte : stream)
        splitter.feed(&byte, 1, [&lines](std::string_view line) { lines.emplace_back(line); });
    EXPECT_EQ(lines, sample_lines());
    EXPECT_EQ(splitter.pending(), 0u);
}

TEST(kfd_line_splitter, partial_line_is_carried_not_emitted)
{
    line_splitter splitter;
    lines_t       lines;
    feed_into(splitter, "9 1 -2 1ea0 1\n9 3 -4", lines);
    EXPECT_EQ(lines, lines_t{"9 1 -2 1ea0 1"});
    EXPECT_EQ(splitter.pending(), 6u);
    feed_into(splitter, " 1ea0", lines);
    EXPECT_EQ(splitter.pending(), 11u);
    feed_into(splitter, " 2\n", lines);
    EXPECT_EQ(lines, (lines_t{"9 1 -2 1ea0 1", "9 3 -4 1ea0 2"}));
    EXPECT_EQ(splitter.pending(), 0u);
}

TEST(kfd_line_splitter, reset_drops_the_partial_line)
{
    line_splitter splitter;
    lines_t       lines;
    feed_into(splitter, "9 1 -2", lines);
    EXPECT_EQ(splitter.pending(), 6u);
    splitter.reset();
    EXPECT_EQ(splitter.pending(), 0u);
    feed_into(splitter, "9 5 -6 1 0\n", lines);
    EXPECT_EQ(lines, lines_t{"9 5 -6 1 0"});
}

TEST(kfd_line_splitter, overlong_line_in_one_feed)
{
    line_splitter     splitter;
    lines_t           lines;
    const std::string data = std::string(300, 'x') + "\n9 1 -2 1ea0 1\n";
    feed_into(splitter, data, lines);
    EXPECT_EQ(lines, lines_t{"9 1 -2 1ea0 1"});
    EXPECT_EQ(splitter.overlong_lines(), 1u);
    EXPECT_FALSE(splitter.discarding());
}

TEST(kfd_line_splitter, overlong_line_over_many_feeds_is_counted_once)
{
    line_splitter     splitter;
    lines_t           lines;
    const std::string data = std::string(1000, 'x') + "\n9 1 -2 1ea0 1\n";
    for(char byte : data)
    {
        splitter.feed(&byte, 1, [&lines](std::string_view line) { lines.emplace_back(line); });
        EXPECT_LE(splitter.pending(), max_line_length);
    }
    EXPECT_EQ(lines, lines_t{"9 1 -2 1ea0 1"});
    EXPECT_EQ(splitter.overlong_lines(), 1u);

    // again, in big pieces cutting the overlong line in three
    lines.clear();
    const std::string_view view{data};
    feed_into(splitter, view.substr(0, 200), lines);
    EXPECT_FALSE(splitter.discarding());
    EXPECT_EQ(splitter.pending(), 200u);
    feed_into(splitter, view.substr(200, 200), lines);
    EXPECT_TRUE(splitter.discarding());
    EXPECT_EQ(splitter.pending(), 0u);
    feed_into(splitter, view.substr(400), lines);
    EXPECT_EQ(lines, lines_t{"9 1 -2 1ea0 1"});
    EXPECT_EQ(splitter.overlong_lines(), 2u);
}

TEST(kfd_line_splitter, line_length_boundary)
{
    const std::string longest(max_line_length, 'y');
    const std::string too_long(max_line_length + 1, 'z');
    static_assert(line_splitter::max_line == max_line_length + 1);

    // whole lines
    {
        line_splitter splitter;
        lines_t       lines;
        feed_into(splitter, longest + "\n" + too_long + "\nend\n", lines);
        EXPECT_EQ(lines, (lines_t{longest, "end"}));
        EXPECT_EQ(splitter.overlong_lines(), 1u);
    }
    // carried: the longest line fits exactly in the carry storage
    {
        line_splitter splitter;
        lines_t       lines;
        feed_into(splitter, longest, lines);
        EXPECT_EQ(splitter.pending(), max_line_length);
        feed_into(splitter, "\n", lines);
        EXPECT_EQ(lines, lines_t{longest});
        EXPECT_EQ(splitter.overlong_lines(), 0u);
    }
    // carried: one more byte makes it overlong, counted once, next line fine
    {
        line_splitter splitter;
        lines_t       lines;
        feed_into(splitter, longest, lines);
        feed_into(splitter, "z", lines);
        EXPECT_TRUE(splitter.discarding());
        feed_into(splitter, "zz\nend\n", lines);
        EXPECT_EQ(lines, lines_t{"end"});
        EXPECT_EQ(splitter.overlong_lines(), 1u);
    }
    // carried prefix plus a segment ending in '\n' that together are overlong
    {
        line_splitter splitter;
        lines_t       lines;
        feed_into(splitter, std::string(200, 'a'), lines);
        feed_into(splitter, std::string(56, 'b') + "\nend\n", lines);
        EXPECT_EQ(lines, lines_t{"end"});
        EXPECT_EQ(splitter.overlong_lines(), 1u);
        EXPECT_FALSE(splitter.discarding());
    }
}

TEST(kfd_line_splitter, reset_stops_discarding)
{
    line_splitter splitter;
    lines_t       lines;
    feed_into(splitter, std::string(400, 'x'), lines);
    EXPECT_TRUE(splitter.discarding());
    splitter.reset(); // fd closed: the next data starts a new line
    EXPECT_FALSE(splitter.discarding());
    feed_into(splitter, "9 1 -2 1 0\n", lines);
    EXPECT_EQ(lines, lines_t{"9 1 -2 1 0"});
    EXPECT_EQ(splitter.overlong_lines(), 1u);
}

TEST(kfd_line_splitter, empty_and_null_feeds)
{
    line_splitter splitter;
    lines_t       lines;
    splitter.feed(nullptr, 0, [&lines](std::string_view line) { lines.emplace_back(line); });
    splitter.feed(nullptr, 10, [&lines](std::string_view line) { lines.emplace_back(line); });
    feed_into(splitter, "", lines);
    EXPECT_TRUE(lines.empty());
    EXPECT_EQ(splitter.pending(), 0u);
    feed_into(splitter, "\n\n", lines);
    EXPECT_EQ(lines, (lines_t{"", ""}));
}

TEST(kfd_line_splitter, callback_may_reset)
{
    line_splitter splitter;
    lines_t       lines;
    feed_into(splitter, "9 1", lines);
    splitter.feed(" -2 1 0\nnext\n", 13,
                  [&](std::string_view line)
                  {
                      lines.emplace_back(line);
                      splitter.reset();
                  });
    EXPECT_EQ(lines, (lines_t{"9 1 -2 1 0", "next"}));
    EXPECT_EQ(splitter.pending(), 0u);
}

// A long stream (newlines at every offset of the splitter's 64-byte windows, runs of empty
// lines, lines of 0 to 150 bytes) fed whole and in reads of every size from 1 to 130 bytes:
// the lines are those of a plain search for '\n' in the whole stream (each read's last
// partial line carried to the next read).
TEST(kfd_line_splitter, long_stream_in_reads_of_every_size)
{
    std::string stream;
    unsigned    state = 12345;
    for(int i = 0; i < 400; ++i)
    {
        state               = state * 1103515245u + 12345u;
        const size_t length = (state >> 16) % 151;
        for(size_t j = 0; j < length; ++j)
            stream += static_cast<char>('a' + (j + i) % 26);
        stream += '\n';
        if(i % 37 == 0) stream += "\n\n\n";
    }
    lines_t expected;
    for(size_t from = 0; from < stream.size();)
    {
        const size_t newline = stream.find('\n', from);
        expected.push_back(stream.substr(from, newline - from));
        from = newline + 1;
    }
    ASSERT_GT(expected.size(), 400u);
    for(size_t read = 1; read <= 130; ++read)
    {
        line_splitter splitter;
        lines_t       lines;
        for(size_t at = 0; at < stream.size(); at += read)
            feed_into(splitter, std::string_view{stream}.substr(at, read), lines);
        EXPECT_EQ(lines, expected) << "reads of " << read << " bytes";
        EXPECT_EQ(splitter.pending(), 0u);
    }
    line_splitter splitter;
    lines_t       lines;
    feed_into(splitter, stream, lines);
    EXPECT_EQ(lines, expected);
}

// Overlong lines among short ones (the 64-byte-window path counts those that end inside one
// read, the carried path those cut by a read): in reads of many sizes, the lines are the
// stream's lines of at most max_line_length bytes and each longer one is counted once.
TEST(kfd_line_splitter, overlong_lines_among_short_ones_in_reads_of_many_sizes)
{
    std::string stream;
    lines_t     expected;
    uint64_t    overlong = 0;
    unsigned    state    = 777;
    for(int i = 0; i < 300; ++i)
    {
        state = state * 1103515245u + 12345u;
        const size_t length =
            i % 5 == 0 ? max_line_length - 2 + (state >> 16) % 300 : (state >> 16) % 90;
        std::string line;
        for(size_t j = 0; j < length; ++j)
            line += static_cast<char>('a' + (j * 7 + i) % 26);
        stream += line + '\n';
        if(line.size() > max_line_length)
            ++overlong;
        else
            expected.push_back(line);
    }
    ASSERT_GT(overlong, 20u);
    for(size_t read : {1u, 7u, 63u, 64u, 65u, 200u, 255u, 256u, 1000u, 8192u})
    {
        line_splitter splitter;
        lines_t       lines;
        for(size_t at = 0; at < stream.size(); at += read)
            feed_into(splitter, std::string_view{stream}.substr(at, read), lines);
        EXPECT_EQ(lines, expected) << "reads of " << read << " bytes";
        EXPECT_EQ(splitter.overlong_lines(), overlong) << "reads of " << read << " bytes";
        EXPECT_EQ(splitter.pending(), 0u);
        EXPECT_FALSE(splitter.discarding());
    }
}

// A callback that resets the splitter on every line of a long read (nothing is carried, so
// nothing changes): all lines still come out.
TEST(kfd_line_splitter, callback_may_reset_in_a_long_read)
{
    std::string stream;
    lines_t     expected;
    for(int i = 0; i < 100; ++i)
    {
        expected.push_back("9 " + std::to_string(1000 + i) + " -2 1ea0 1");
        stream += expected.back() + '\n';
    }
    line_splitter splitter;
    lines_t       lines;
    splitter.feed(stream.data(), stream.size(),
                  [&](std::string_view line)
                  {
                      lines.emplace_back(line);
                      splitter.reset();
                  });
    EXPECT_EQ(lines, expected);
}
