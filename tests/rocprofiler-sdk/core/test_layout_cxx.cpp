// MIT License - see LICENSE. The contract's layout pins, compiled as C++17.
#include "layout_pins.h"

#include <gtest/gtest.h>

#include <cstring>

TEST(layout, bitfields_sit_in_byte_40)
{
    rocprofiler_buffer_tracing_page_migration_record_t rec;
    auto* bytes = reinterpret_cast<unsigned char*>(&rec);
    std::memset(&rec, 0, sizeof(rec));
    rec.page_fault.read_fault = 1;
    EXPECT_EQ(bytes[40], 0x1);
    rec.page_fault.migrated = 1;
    EXPECT_EQ(bytes[40], 0x3);
    std::memset(&rec, 0, sizeof(rec));
    rec.queue_suspend.rescheduled = 1;
    EXPECT_EQ(bytes[40], 0x1);
}

TEST(layout, header_hash_and_context_none)
{
    EXPECT_EQ(rocprofiler_record_header_compute_hash(ROCPROFILER_BUFFER_CATEGORY_TRACING,
                                                     ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION),
              0xC00000001ull);
    rocprofiler_record_header_t header{};
    header.category = ROCPROFILER_BUFFER_CATEGORY_TRACING;
    header.kind     = ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION;
    EXPECT_EQ(header.hash, 0xC00000001ull);
    EXPECT_EQ(ROCPROFILER_CONTEXT_NONE.handle, UINT64_MAX);
}
