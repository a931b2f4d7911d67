// MIT License - see LICENSE.
//
// A growable byte buffer for the writers' per-record paths. Appends are inline pointer
// writes (std::string::append is an out-of-line call per piece, and a CSV row or a Perfetto
// packet has dozens of pieces); clear() keeps the memory, so a buffer reused for every
// record stops allocating once it has grown to the largest one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace rocprof_kfd
{
class byte_buffer
{
public:
    void             clear() { size_ = 0; }
    size_t           size() const { return size_; }
    bool             empty() const { return size_ == 0; }
    std::string_view view() const { return {data_.data(), size_}; }
    std::string      str() const { return std::string(view()); }

    // Room for n more bytes: write them at the pointer returned, then commit() how many.
    char* room(size_t n)
    {
        if(data_.size() - size_ < n) grow(n);
        return data_.data() + size_;
    }
    void commit(size_t n) { size_ += n; }

    void append(std::string_view s)
    {
        if(s.empty()) return;
        std::memcpy(room(s.size()), s.data(), s.size());
        size_ += s.size();
    }
    void         push_back(char c) { *room(1) = c, size_ += 1; }
    byte_buffer& operator+=(std::string_view s) { return append(s), *this; }
    byte_buffer& operator+=(char c) { return push_back(c), *this; }

private:
    void grow(size_t n) { data_.resize(std::max(data_.size() * 2, size_ + n + 256)); }

    std::vector<char> data_; // its size is the capacity; bytes past size_ are free
    size_t            size_ = 0;
};
} // namespace rocprof_kfd
