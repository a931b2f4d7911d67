// MIT License - see LICENSE.
//
// The baseline the hot-path benchmarks compare against: the reference SDK's approach to the
// same work, written from its description (not its code): every line is copied into a
// NUL-terminated buffer, its id read with sscanf("%x "), its body with sscanf and the
// reference's per-event format, and starts are paired with ends through one
// std::unordered_map<uint64_t, record> per operation, keyed as the reference keys them
// (fault and migrate by address, queue suspend by node << 32 | pid).
//
// It is a conservative baseline: it leaves out what the reference does besides (a
// std::vector of contexts and a LOG(INFO) fmt::format per event, a copy of every map on an
// unmatched end, matched starts never erased), all of which would make it slower.
#pragma once

#include <rocprofiler-sdk/buffer_tracing.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace bench_baseline
{
using record = rocprofiler_buffer_tracing_page_migration_record_t;

// What the reference's parse produces for one line: its KFD id and a record half-filled
// (start or end). Returns false for ids it does not parse.
bool parse(const char* line_nul, uint32_t& id, record& out) noexcept;

class pairer
{
public:
    // Pairs one parsed event; true and `out` filled when it completes a record.
    bool   process(uint32_t id, record& rec) noexcept;
    size_t outstanding() const noexcept;

private:
    std::unordered_map<uint64_t, record> m_faults;
    std::unordered_map<uint64_t, record> m_migrates;
    std::unordered_map<uint64_t, record> m_queues;
};

// Splits `data` into lines, copies each into a NUL-terminated buffer and calls
// on_line(const char*, size_t). A line longer than 255 bytes is skipped.
template <typename F>
void
for_each_line_copied(const char* data, size_t size, F&& on_line)
{
    char        line[256];
    const char* end = data + size;
    while(data < end)
    {
        const char* nl = static_cast<const char*>(__builtin_memchr(data, '\n', end - data));
        size_t      n  = static_cast<size_t>((nl ? nl : end) - data);
        if(n < sizeof(line))
        {
            __builtin_memcpy(line, data, n);
            line[n] = '\0';
            on_line(static_cast<const char*>(line), n);
        }
        if(nl == nullptr) break;
        data = nl + 1;
    }
}
} // namespace bench_baseline
