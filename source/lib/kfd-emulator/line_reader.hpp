// MIT License - see LICENSE.
//
// Streams a file line by line through a given read function (the real libc read() inside the
// preloaded library), so the log is never held in memory. Lines may contain NUL bytes (the
// 6.12 QUEUE_RESTORE format); a line longer than max_line is cut and flagged.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kfd_emu
{
using read_function = ssize_t (*)(int, void*, size_t);

class line_reader
{
public:
    static constexpr size_t max_line = 4096;
    // Bytes past the buffered ones that are always readable (initialized, never filled by a
    // read): a parser may load eight bytes at a time up to the buffer's end.
    static constexpr size_t read_slack = 32;

    line_reader(int fd, read_function read_fn);

    // Fills line (without '\n'); returns false at end of file or on a read error.
    // too_long is set when the line was longer than max_line (the rest is skipped).
    bool next(std::string& line, bool& too_long);
    // The same as a view, valid until the next call: into the read buffer when the whole
    // line is there (no copy, the common case), else into a string of the reader's own.
    bool next_view(std::string_view& line, bool& too_long);
    // The buffered bytes from the next line on, for a parser that reads lines in place (its
    // end is the first '\n' among them, when it is there); read_slack more bytes after them
    // are readable. skip(n) then consumes n of them (a line and its '\n').
    std::string_view buffered() const
    {
        return std::string_view(buffer_.data() + begin_, end_ - begin_);
    }
    void skip(size_t n)
    {
        begin_ += n;
        found_newline_ = std::string::npos;
    }
    bool failed() const { return failed_; }
    // True when next() will return a line without reading the file.
    bool has_line() const;

private:
    bool fill();

    int               fd_;
    read_function     read_;
    std::vector<char> buffer_; // read_slack bytes longer than what reads fill
    size_t            begin_  = 0;
    size_t            end_    = 0;
    bool              eof_    = false;
    bool              failed_ = false;
    std::string       spill_; // a line cut by the end of the buffer (next_view)
    // Where has_line() found the next '\n' (an index into buffer_), so that next_view() does
    // not search for it again; npos when not known.
    mutable size_t found_newline_ = std::string::npos;
};
} // namespace kfd_emu
