// MIT License - see LICENSE.
#include "line_reader.hpp"

#include <cerrno>
#include <cstring>

namespace kfd_emu
{
line_reader::line_reader(int fd, read_function read_fn)
    : fd_(fd), read_(read_fn), buffer_(64 * 1024 + read_slack)
{
}

bool
line_reader::fill()
{
    found_newline_ = std::string::npos; // the bytes move
    if(eof_) return false;
    if(begin_ > 0)
    {
        std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
    }
    while(true)
    {
        ssize_t n = read_(fd_, buffer_.data() + end_, buffer_.size() - read_slack - end_);
        if(n < 0 && errno == EINTR) continue;
        if(n < 0) failed_ = true;
        if(n <= 0)
        {
            eof_ = true;
            return false;
        }
        end_ += static_cast<size_t>(n);
        return true;
    }
}

bool
line_reader::has_line() const
{
    const size_t buffered = end_ - begin_;
    const void*  nl       = std::memchr(buffer_.data() + begin_, '\n', buffered);
    if(nl != nullptr)
        found_newline_ = static_cast<size_t>(static_cast<const char*>(nl) - buffer_.data());
    // More than a whole line buffered: next() finds its end (or cuts it) without a read.
    return nl != nullptr || buffered > max_line;
}

bool
line_reader::next(std::string& line, bool& too_long)
{
    found_newline_ = std::string::npos;
    line.clear();
    too_long = false;
    while(true)
    {
        const char* start = buffer_.data() + begin_;
        const void* nl    = std::memchr(start, '\n', end_ - begin_);
        size_t      take =
            nl ? static_cast<size_t>(static_cast<const char*>(nl) - start) : end_ - begin_;
        size_t room = line.size() < max_line ? max_line - line.size() : 0;
        if(take > room) too_long = true;
        line.append(start, take < room ? take : room);
        begin_ += take;
        if(nl)
        {
            ++begin_; // the '\n'
            return true;
        }
        begin_ = end_ = 0;
        if(!fill()) return !line.empty() || too_long; // a last line without '\n'
    }
}
bool
line_reader::next_view(std::string_view& line, bool& too_long)
{
    const char* start = buffer_.data() + begin_;
    const void* nl    = found_newline_ >= begin_ && found_newline_ < end_
                            ? buffer_.data() + found_newline_
                            : std::memchr(start, '\n', end_ - begin_);
    found_newline_    = std::string::npos;
    if(nl != nullptr)
    {
        const size_t take = static_cast<size_t>(static_cast<const char*>(nl) - start);
        if(take <= max_line)
        {
            line     = std::string_view(start, take);
            too_long = false;
            begin_ += take + 1;
            return true;
        }
    }
    // The end of the buffer cuts the line, or it is too long: next() handles both.
    bool more = next(spill_, too_long);
    line      = spill_;
    return more;
}
} // namespace kfd_emu
