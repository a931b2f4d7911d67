// MIT License - see LICENSE.
#include "byte_fifo.hpp"

#include <algorithm>
#include <cstring>

namespace kfd_emu
{
byte_fifo::byte_fifo(size_t capacity) : buffer_(capacity) {}

bool
byte_fifo::push_whole(const char* data, size_t n)
{
    if(n > available()) return false;
    // head_ and size_ are both below the capacity: one subtraction wraps the tail (no division
    // per message).
    size_t tail = head_ + size_;
    if(tail >= buffer_.size()) tail -= buffer_.size();
    size_t first = std::min(n, buffer_.size() - tail);
    std::memcpy(buffer_.data() + tail, data, first);
    if(first < n) std::memcpy(buffer_.data(), data + first, n - first); // wrapped
    size_ += n;
    return true;
}

size_t
byte_fifo::pop(char* out, size_t n)
{
    n            = std::min(n, size_);
    size_t first = std::min(n, buffer_.size() - head_);
    if(out != nullptr)
    {
        std::memcpy(out, buffer_.data() + head_, first);
        std::memcpy(out + first, buffer_.data(), n - first);
    }
    head_ = buffer_.empty() ? 0 : (head_ + n) % buffer_.size();
    size_ -= n;
    return n;
}

byte_fifo::spans
byte_fifo::peek(size_t offset, size_t n) const
{
    spans out;
    if(n == 0 || offset + n > size_) return out;
    size_t start = head_ + offset;
    if(start >= buffer_.size()) start -= buffer_.size();
    size_t first = std::min(n, buffer_.size() - start);
    out.first    = span{buffer_.data() + start, first};
    if(first < n) out.second = span{buffer_.data(), n - first};
    return out;
}

size_t
byte_fifo::count_newlines(size_t n) const
{
    n            = std::min(n, size_);
    size_t count = 0;
    for(size_t i = 0; i < n; ++i)
        if(buffer_[(head_ + i) % buffer_.size()] == '\n') ++count;
    return count;
}

void
byte_fifo::release()
{
    std::vector<char>().swap(buffer_);
    head_ = 0;
    size_ = 0;
}
} // namespace kfd_emu
