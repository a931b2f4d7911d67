// MIT License - see LICENSE.
//
// The reader without memory (observed through a replaced global operator new, this test
// binary only): a stream whose read buffer cannot be allocated is read again after a bounded
// wait, not at its next readiness. Its data stays queued, so poll() would report it at once,
// again and again: a busy loop for as long as memory stays short.
#include "replaced_operator_new.hpp"
#include "rocprofiler-sdk/kfd/device.hpp"
#include "rocprofiler-sdk/kfd/reader.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <new>
#include <string>

namespace
{
bool g_fail_allocations = false;
} // namespace

void*
test_allocation::allocate(std::size_t size)
{
    if(g_fail_allocations) throw std::bad_alloc{};
    void* memory = std::malloc(size == 0 ? 1 : size);
    if(memory == nullptr) throw std::bad_alloc{};
    return memory;
}

namespace
{
using rocprofiler::kfd::gpu_stream;
using rocprofiler::kfd::reader_config;

TEST(kfd_reader_allocation, without_a_read_buffer_a_stream_waits_instead_of_spinning)
{
    int ends[2] = {-1, -1};
    ASSERT_EQ(pipe2(ends, O_NONBLOCK | O_CLOEXEC), 0);
    gpu_stream    stream;
    reader_config config;
    stream.gpu_id   = 0x1ea0;
    stream.fd       = ends[0];
    stream.identity = rocprofiler::kfd::device::identify(ends[0]);
    config.streams.push_back(&stream);
    size_t chunks          = 0;
    config.on_chunk        = [&chunks](gpu_stream&, const char*, size_t, uint64_t) { ++chunks; };
    const std::string line = "7 100 -1 @10(1ea0) R\n";
    ASSERT_EQ(write(ends[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));

    g_fail_allocations = true;
    rocprofiler::kfd::drain_stream(config, stream); // allocates the read buffer: fails
    g_fail_allocations = false;
    EXPECT_EQ(chunks, 0u);
    EXPECT_TRUE(stream.watching.load());
    // Left out of poll() until then (the loop reads it when the wait ends).
    EXPECT_NE(stream.nap_until_ns, 0u);

    // With memory again, the next read gets what stayed queued.
    rocprofiler::kfd::drain_stream(config, stream);
    EXPECT_EQ(chunks, 1u);
    EXPECT_EQ(stream.nap_until_ns, 0u);

    rocprofiler::kfd::device::close_owned(ends[0], stream.identity);
    close(ends[1]);
}
} // namespace
