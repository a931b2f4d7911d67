// MIT License - see LICENSE.
//
// to_raw_record: every field of rocprofiler_kfd_event_record_t as ext/kfd.h documents it.
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>

using namespace std::literals;
using rocprofiler::kfd::event;
using rocprofiler::kfd::parse_line;
using rocprofiler::kfd::parse_result;
using rocprofiler::kfd::to_raw_record;

namespace
{
constexpr uint32_t fd_gpu    = 0x1ea0;
constexpr uint64_t read_time = 999999;

rocprofiler_kfd_event_record_t
raw(std::string_view line)
{
    event ev{};
    EXPECT_EQ(parse_line(line, ev), parse_result::ok) << "line: [" << line << "]";
    return to_raw_record(ev, fd_gpu, line, read_time);
}

// The text holds the line (up to 95 bytes), then NULs to the end of the array.
void
expect_text(const rocprofiler_kfd_event_record_t& record, std::string_view line)
{
    const size_t kept = line.size() < ROCPROFILER_KFD_EVENT_TEXT_SIZE - 1
                            ? line.size()
                            : ROCPROFILER_KFD_EVENT_TEXT_SIZE - 1;
    EXPECT_EQ(std::string_view(record.text, kept), line.substr(0, kept));
    for(size_t i = kept; i < ROCPROFILER_KFD_EVENT_TEXT_SIZE; ++i)
        EXPECT_EQ(record.text[i], '\0') << "text byte " << i;
}

void
expect_header(const rocprofiler_kfd_event_record_t& record, int32_t operation)
{
    EXPECT_EQ(record.size, sizeof(rocprofiler_kfd_event_record_t));
    EXPECT_EQ(record.kind, 256u);
    EXPECT_EQ(record.kind, static_cast<uint32_t>(ROCPROFILER_BUFFER_TRACING_KFD_EVENT));
    EXPECT_EQ(record.operation, operation);
    EXPECT_EQ(record.gpu_id, fd_gpu);
}
} // namespace

TEST(kfd_raw_record, page_fault_start)
{
    constexpr auto line = "7 40507688414784 -156893 @7fa608127(ad5c) R"sv;
    const auto     r    = raw(line);
    expect_header(r, ROCPROFILER_KFD_EVENT_PAGE_FAULT_START);
    EXPECT_EQ(r.timestamp, 40507688414784ull);
    EXPECT_EQ(r.pid, 156893u);
    EXPECT_EQ(r.node_id, 0xad5cu);
    EXPECT_EQ(r.address, 0x7fa608127ull << 12);
    EXPECT_EQ(r.length, 0u);
    EXPECT_EQ(r.flags,
              ROCPROFILER_KFD_EVENT_FLAG_READ_FAULT | ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
    EXPECT_EQ(r.from_node, 0u);
    EXPECT_EQ(r.count, 0u);
    expect_text(r, line);

    const auto write = raw("7 1 -2 @10(3) W");
    EXPECT_EQ(write.flags, ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
}

TEST(kfd_raw_record, page_fault_end)
{
    const auto migrated = raw("8 5 -6 @10(3) M");
    expect_header(migrated, ROCPROFILER_KFD_EVENT_PAGE_FAULT_END);
    EXPECT_EQ(migrated.flags,
              ROCPROFILER_KFD_EVENT_FLAG_MIGRATED | ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
    EXPECT_EQ(migrated.address, 0x10000u);
    EXPECT_EQ(migrated.node_id, 3u);
    EXPECT_EQ(raw("8 5 -6 @10(3) U").flags, ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
}

TEST(kfd_raw_record, migrate_start_and_end)
{
    constexpr auto start_line = "5 14601738586508 -152990 @7f0f15200(2c02) 0->1ea0 ffffffff:0 3"sv;
    const auto     start      = raw(start_line);
    expect_header(start, ROCPROFILER_KFD_EVENT_MIGRATE_START);
    EXPECT_EQ(start.timestamp, 14601738586508ull);
    EXPECT_EQ(start.pid, 152990u);
    EXPECT_EQ(start.address, 0x7f0f15200ull << 12);
    EXPECT_EQ(start.length, 0x2c02ull << 12);
    EXPECT_EQ(start.from_node, 0u);
    EXPECT_EQ(start.to_node, 0x1ea0u);
    EXPECT_EQ(start.prefetch_node, 0xffffffffu);
    EXPECT_EQ(start.preferred_node, 0u);
    EXPECT_EQ(start.trigger, 3);
    EXPECT_EQ(start.flags, ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
    expect_text(start, start_line);

    const auto end = raw("6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1 -5");
    expect_header(end, ROCPROFILER_KFD_EVENT_MIGRATE_END);
    EXPECT_EQ(end.error_code, -5);
    EXPECT_EQ(end.trigger, 1);
    EXPECT_EQ(end.flags,
              ROCPROFILER_KFD_EVENT_FLAG_HAS_ERROR_CODE | ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);

    const auto old_end = raw("6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 1");
    EXPECT_EQ(old_end.error_code, 0);
    EXPECT_EQ(old_end.flags, ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
}

TEST(kfd_raw_record, queue_events)
{
    const auto eviction = raw("9 38086928279363 -125752 1ea0 4");
    expect_header(eviction, ROCPROFILER_KFD_EVENT_QUEUE_EVICTION);
    EXPECT_EQ(eviction.node_id, 0x1ea0u);
    EXPECT_EQ(eviction.trigger, 4);

    const auto rescheduled = raw("a 40082605896929 -148516 fc7d R");
    expect_header(rescheduled, ROCPROFILER_KFD_EVENT_QUEUE_RESTORE);
    EXPECT_EQ(rescheduled.flags,
              ROCPROFILER_KFD_EVENT_FLAG_RESCHEDULED | ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
    EXPECT_EQ(rescheduled.node_id, 0xfc7du);

    // the 6.12 line keeps its NUL in the text (raw bytes), then NUL padding
    constexpr auto nul_line = "a 40082605896929 -148516 fc7d \0"sv;
    const auto     nul      = raw(nul_line);
    EXPECT_EQ(nul.flags, ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
    expect_text(nul, nul_line);
    EXPECT_STREQ(nul.text, "a 40082605896929 -148516 fc7d ");

    EXPECT_EQ(raw("a 1 -2 fc7d 0").flags, ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
    EXPECT_EQ(raw("a 1 -2 fc7d").flags, ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
}

TEST(kfd_raw_record, unmap)
{
    const auto r = raw("b 15203214457186 -152990 @7f93ac200(200) 1ea0 2");
    expect_header(r, ROCPROFILER_KFD_EVENT_UNMAP_FROM_GPU);
    EXPECT_EQ(r.address, 0x7f93ac200ull << 12);
    EXPECT_EQ(r.length, 0x200ull << 12);
    EXPECT_EQ(r.node_id, 0x1ea0u);
    EXPECT_EQ(r.trigger, 2);
}

TEST(kfd_raw_record, events_without_timestamp_use_read_time)
{
    constexpr auto vm_line = "1 2a3f:python3"sv;
    const auto     vm      = raw(vm_line);
    expect_header(vm, ROCPROFILER_KFD_EVENT_VMFAULT);
    EXPECT_EQ(vm.timestamp, read_time);
    EXPECT_EQ(vm.flags, 0u);
    EXPECT_EQ(vm.pid, 0x2a3fu);
    expect_text(vm, vm_line);

    const auto thermal = raw("2 1f:3a");
    expect_header(thermal, ROCPROFILER_KFD_EVENT_THERMAL_THROTTLE);
    EXPECT_EQ(thermal.timestamp, read_time);
    EXPECT_EQ(thermal.bitmask, 0x1fu);
    EXPECT_EQ(thermal.count, 0x3au);

    const auto pre = raw("3 5 MODE1");
    expect_header(pre, ROCPROFILER_KFD_EVENT_GPU_PRE_RESET);
    EXPECT_EQ(pre.count, 5u);
    const auto post = raw("4 6");
    expect_header(post, ROCPROFILER_KFD_EVENT_GPU_POST_RESET);
    EXPECT_EQ(post.count, 6u);

    const auto start = raw("c 2a3f python3");
    expect_header(start, ROCPROFILER_KFD_EVENT_PROCESS_START);
    EXPECT_EQ(start.pid, 0x2a3fu);
    EXPECT_EQ(start.timestamp, read_time);
    const auto end = raw("d 2a3f python3");
    expect_header(end, ROCPROFILER_KFD_EVENT_PROCESS_END);
}

TEST(kfd_raw_record, id14_by_shape)
{
    const auto dropped = raw("e 1000 -42 17");
    expect_header(dropped, ROCPROFILER_KFD_EVENT_DROPPED_EVENTS);
    EXPECT_EQ(dropped.operation, 14);
    EXPECT_EQ(dropped.count, 17u);
    EXPECT_EQ(dropped.timestamp, 1000u);
    EXPECT_EQ(dropped.pid, 42u);
    EXPECT_EQ(dropped.node_id, 0u);
    EXPECT_EQ(dropped.flags, ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);

    const auto restore = raw("e 1000 -42 fc7d");
    expect_header(restore, ROCPROFILER_KFD_EVENT_QUEUE_RESTORE_RESCHEDULED);
    EXPECT_EQ(restore.operation, 15);
    EXPECT_EQ(restore.node_id, 0xfc7du);
    EXPECT_EQ(restore.count, 0u);
    EXPECT_EQ(restore.flags,
              ROCPROFILER_KFD_EVENT_FLAG_RESCHEDULED | ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP);
}

TEST(kfd_raw_record, long_line_text_is_truncated_and_terminated)
{
    const std::string line = "1 2a3f:" + std::string(193, 'n');
    const auto        r    = raw(line);
    EXPECT_EQ(std::strlen(r.text), ROCPROFILER_KFD_EVENT_TEXT_SIZE - 1u);
    EXPECT_EQ(r.text[ROCPROFILER_KFD_EVENT_TEXT_SIZE - 1], '\0');
    expect_text(r, line);

    // exactly 95 bytes fits entirely
    const std::string fits = "1 2a3f:" + std::string(88, 'n');
    ASSERT_EQ(fits.size(), ROCPROFILER_KFD_EVENT_TEXT_SIZE - 1u);
    EXPECT_EQ(std::string_view(raw(fits).text), fits);
}

TEST(kfd_raw_record, no_stale_bytes)
{
    // Two records from the same event must be byte-identical, padding included, whatever
    // was in the memory before (the record is zeroed first).
    event ev{};
    ASSERT_EQ(parse_line("9 1 -2 1ea0 1", ev), parse_result::ok);
    rocprofiler_kfd_event_record_t a;
    rocprofiler_kfd_event_record_t b;
    std::memset(&a, 0xab, sizeof(a));
    std::memset(&b, 0xcd, sizeof(b));
    a = to_raw_record(ev, 7, "9 1 -2 1ea0 1", 0);
    b = to_raw_record(ev, 7, "9 1 -2 1ea0 1", 0);
    EXPECT_EQ(std::memcmp(&a, &b, sizeof(a)), 0);
    EXPECT_EQ(a.gpu_id, 7u);
    EXPECT_EQ(a.timestamp, 1u);
}
