// MIT License - see LICENSE.
//
// The per-client FIFO of a KFD SMI client: a byte ring of fixed capacity. Messages go in whole
// or not at all (kfifo_avail() >= len in the kernel); reads take any number of bytes, so a
// small read buffer splits a line exactly as the kernel's kfifo_out() does.
#pragma once

#include <cstddef>
#include <vector>

namespace kfd_emu
{
class byte_fifo
{
public:
    explicit byte_fifo(size_t capacity);

    size_t capacity() const { return buffer_.size(); }
    size_t size() const { return size_; }
    size_t available() const { return buffer_.size() - size_; }
    bool   empty() const { return size_ == 0; }

    // Queues all n bytes, or nothing when they do not fit.
    bool push_whole(const char* data, size_t n);
    // Removes up to n bytes into out (out may be null to discard them); returns how many.
    size_t pop(char* out, size_t n);
    // The n queued bytes from offset on (offset + n <= size()), in place: one span, or two
    // where they wrap around the ring's end (second.size is then non-zero).
    struct span
    {
        const char* data = nullptr;
        size_t      size = 0;
    };
    struct spans
    {
        span first;
        span second;
    };
    spans peek(size_t offset, size_t n) const;
    // Counts '\n' among the first n queued bytes (to report lines lost with them).
    size_t count_newlines(size_t n) const;
    // Frees the storage (closed clients keep only their counters).
    void release();

private:
    std::vector<char> buffer_;
    size_t            head_ = 0; // index of the oldest byte
    size_t            size_ = 0;
};
} // namespace kfd_emu
