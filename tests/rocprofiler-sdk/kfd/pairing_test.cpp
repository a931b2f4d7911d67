// MIT License - see LICENSE.
//
// pairing_engine: records field by field (api-contract "Record semantics"), keys with pid and
// GPU, orphan ends, bounded memory with aging, and a randomized property test.
#include "rocprofiler-sdk/kfd/pairing.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace std::literals;
using rocprofiler::kfd::event;
using rocprofiler::kfd::id14_kind;
using rocprofiler::kfd::pairing_engine;
using rocprofiler::kfd::parse_line;
using rocprofiler::kfd::parse_result;

using record_t = rocprofiler_buffer_tracing_page_migration_record_t;

namespace
{
event
ev(std::string_view line)
{
    event parsed{};
    EXPECT_EQ(parse_line(line, parsed), parse_result::ok) << "line: [" << line << "]";
    return parsed;
}

// One event into the engine: through process(), or, in the binary built with
// KFD_PAIRING_BY_ENTRY_POINT (test-kfd-pairing-entry-points), through the entry point of its
// id (the kernel's ids, kfd-smi-interface.md), as parse_line_dispatch's handlers call them:
// every test of this file then checks the entry points against the same expected records.
bool
pair_one(pairing_engine& engine, const event& e, record_t& out)
{
#if defined(KFD_PAIRING_BY_ENTRY_POINT)
    switch(e.id)
    {
    case 5:
        engine.on_migrate_start(e);
        return false;
    case 6:
        return engine.on_migrate_end(e, out);
    case 7:
        engine.on_page_fault_start(e);
        return false;
    case 8:
        return engine.on_page_fault_end(e, out);
    case 9:
        engine.on_queue_eviction(e);
        return false;
    case 10:
        return engine.on_queue_restore(e, out);
    case 11:
        return engine.on_unmap_from_gpu(e, out);
    case 14:
        engine.on_id_14(e);
        return false;
    default:
        return false; // no pairing role: the handlers call no entry point
    }
#else
    return engine.process(e, out);
#endif
}

// A record full of a marker byte, to see that process() leaves `out` alone or overwrites
// every byte.
record_t
poisoned_record()
{
    record_t record;
    std::memset(&record, 0x5a, sizeof(record));
    return record;
}

bool
is_poisoned(const record_t& record)
{
    const auto* bytes = reinterpret_cast<const unsigned char*>(&record);
    return std::all_of(bytes, bytes + sizeof(record), [](unsigned char b) { return b == 0x5a; });
}

// Feeds an event that must not produce a record.
void
feed_no_record(pairing_engine& engine, std::string_view line)
{
    record_t out = poisoned_record();
    EXPECT_FALSE(pair_one(engine, ev(line), out)) << "line: [" << line << "]";
    EXPECT_TRUE(is_poisoned(out)) << "out was written for [" << line << "]";
}

// Feeds an event that must produce a record and returns it.
record_t
feed_record(pairing_engine& engine, std::string_view line)
{
    record_t out = poisoned_record();
    EXPECT_TRUE(pair_one(engine, ev(line), out)) << "line: [" << line << "]";
    return out;
}

uint8_t
byte_at(const record_t& record, size_t offset)
{
    uint8_t value = 0;
    std::memcpy(&value, reinterpret_cast<const unsigned char*>(&record) + offset, 1);
    return value;
}

uint32_t
u32_at(const record_t& record, size_t offset)
{
    uint32_t value = 0;
    std::memcpy(&value, reinterpret_cast<const unsigned char*>(&record) + offset, 4);
    return value;
}

int32_t
i32_at(const record_t& record, size_t offset)
{
    int32_t value = 0;
    std::memcpy(&value, reinterpret_cast<const unsigned char*>(&record) + offset, 4);
    return value;
}

uint64_t
u64_at(const record_t& record, size_t offset)
{
    uint64_t value = 0;
    std::memcpy(&value, reinterpret_cast<const unsigned char*>(&record) + offset, 8);
    return value;
}

// Bytes [from, to) of the record are zero (padding and unused union bytes).
void
expect_zero_bytes(const record_t& record, size_t from, size_t to)
{
    for(size_t offset = from; offset < to; ++offset)
        EXPECT_EQ(byte_at(record, offset), 0u) << "byte " << offset;
}

void
expect_header(const record_t& r, int32_t operation, uint64_t start, uint64_t end, uint32_t pid)
{
    EXPECT_EQ(r.size, 136u);
    EXPECT_EQ(r.size, sizeof(record_t));
    // kind read as bytes: on a failure path the record may hold a value outside the enum
    EXPECT_EQ(u32_at(r, 8), static_cast<uint32_t>(ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION));
    EXPECT_EQ(r.operation, operation);
    EXPECT_EQ(r.start_timestamp, start);
    EXPECT_EQ(r.end_timestamp, end);
    EXPECT_EQ(r.pid, pid);
    expect_zero_bytes(r, 36, 40); // padding after pid
}

void
expect_counters(const pairing_engine& engine, uint64_t records, uint64_t ends_without_start,
                uint64_t aged_out, uint64_t never_ended)
{
    EXPECT_EQ(engine.counters().records, records);
    EXPECT_EQ(engine.counters().ends_without_start, ends_without_start);
    EXPECT_EQ(engine.counters().starts_aged_out, aged_out);
    EXPECT_EQ(engine.counters().starts_never_ended, never_ended);
}
} // namespace

static_assert(sizeof(record_t) == 136);

// ---------------------------------------------------------------- record fields

TEST(kfd_pairing, page_fault_read_migrated)
{
    pairing_engine engine;
    feed_no_record(engine, "7 40507688414784 -156893 @7fa608127(ad5c) R");
    EXPECT_EQ(engine.outstanding(), 1u);
    const record_t r = feed_record(engine, "8 40507688999999 -156893 @7fa608127(ad5c) M");

    expect_header(r, ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT, 40507688414784ull, 40507688999999ull,
                  156893);
    EXPECT_EQ(r.page_fault.read_fault, 1u);
    EXPECT_EQ(r.page_fault.migrated, 1u);
    EXPECT_EQ(r.page_fault.node_id, 0xad5cu);
    EXPECT_EQ(r.page_fault.address, 0x7fa608127ull << 12);
    // layout: flags byte @40 (bit 0 read_fault, bit 1 migrated), node_id @44, address @48
    EXPECT_EQ(byte_at(r, 40), 0x3u);
    expect_zero_bytes(r, 41, 44);
    EXPECT_EQ(u32_at(r, 44), 0xad5cu);
    EXPECT_EQ(u64_at(r, 48), 0x7fa608127000ull);
    expect_zero_bytes(r, 56, 136);

    EXPECT_EQ(engine.outstanding(), 0u);
    expect_counters(engine, 1, 0, 0, 0);
}

TEST(kfd_pairing, page_fault_write_updated)
{
    pairing_engine engine;
    feed_no_record(engine, "7 100 -7 @10(1) W");
    const record_t r = feed_record(engine, "8 200 -7 @10(1) U");
    expect_header(r, ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT, 100, 200, 7);
    EXPECT_EQ(r.page_fault.read_fault, 0u);
    EXPECT_EQ(r.page_fault.migrated, 0u);
    EXPECT_EQ(byte_at(r, 40), 0u);
    EXPECT_EQ(r.page_fault.address, 0x10000u);

    // read + updated, write + migrated: the flags come from the right event
    feed_no_record(engine, "7 100 -7 @10(1) R");
    EXPECT_EQ(byte_at(feed_record(engine, "8 200 -7 @10(1) U"), 40), 0x1u);
    feed_no_record(engine, "7 100 -7 @10(1) W");
    EXPECT_EQ(byte_at(feed_record(engine, "8 200 -7 @10(1) M"), 40), 0x2u);
}

TEST(kfd_pairing, page_migrate_every_trigger)
{
    for(int trigger = 0; trigger <= 3; ++trigger)
    {
        pairing_engine    engine;
        const std::string t = std::to_string(trigger);
        feed_no_record(engine,
                       "5 15202900515905 -152990 @7f0f15200(2c02) 0->1ea0 1ea0:ffffffff " + t);
        const record_t r =
            feed_record(engine, "6 15202910515905 -152990 @7f0f15200(2c02) 0->1ea0 " + t + " 0");

        // 10 ms: within the age bound (the documentation's example lines, 601 s apart, are
        // not the two ends of one migration)
        expect_header(r, ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE, 15202900515905ull,
                      15202910515905ull, 152990);
        EXPECT_EQ(r.page_migrate.start_addr, 0x7f0f15200000ull);
        EXPECT_EQ(r.page_migrate.end_addr, ((0x7f0f15200ull + 0x2c02ull) << 12) - 1); // inclusive
        EXPECT_EQ(r.page_migrate.end_addr, 0x7f0f17e01fffull);
        EXPECT_EQ(r.page_migrate.from_node, 0u);
        EXPECT_EQ(r.page_migrate.to_node, 0x1ea0u);
        EXPECT_EQ(r.page_migrate.prefetch_node, 0x1ea0u);
        EXPECT_EQ(r.page_migrate.preferred_node, 0xffffffffu);
        EXPECT_EQ(static_cast<int>(r.page_migrate.trigger), trigger);
        // layout: start@40 end@48 from@56 to@60 prefetch@64 preferred@68 trigger@72
        EXPECT_EQ(u64_at(r, 40), 0x7f0f15200000ull);
        EXPECT_EQ(u64_at(r, 48), 0x7f0f17e01fffull);
        EXPECT_EQ(u32_at(r, 56), 0u);
        EXPECT_EQ(u32_at(r, 60), 0x1ea0u);
        EXPECT_EQ(u32_at(r, 64), 0x1ea0u);
        EXPECT_EQ(u32_at(r, 68), 0xffffffffu);
        EXPECT_EQ(i32_at(r, 72), trigger);
        expect_zero_bytes(r, 76, 136);
        expect_counters(engine, 1, 0, 0, 0);
    }
}

TEST(kfd_pairing, page_migrate_with_and_without_error_code)
{
    pairing_engine engine;
    feed_no_record(engine, "5 10 -1 @100(1) 1ea0->0 ffffffff:ffffffff 3");
    const record_t old_kernel = feed_record(engine, "6 20 -1 @100(1) 1ea0->0 3");
    EXPECT_EQ(old_kernel.page_migrate.start_addr, 0x100000u);
    EXPECT_EQ(old_kernel.page_migrate.end_addr, 0x100fffu); // one page: inclusive last byte
    EXPECT_EQ(old_kernel.page_migrate.from_node, 0x1ea0u);

    feed_no_record(engine, "5 30 -1 @100(1) 1ea0->0 ffffffff:ffffffff 3");
    const record_t failed = feed_record(engine, "6 40 -1 @100(1) 1ea0->0 3 -14");
    EXPECT_EQ(failed.start_timestamp, 30u);
    EXPECT_EQ(failed.end_timestamp, 40u);
    expect_counters(engine, 2, 0, 0, 0);
}

TEST(kfd_pairing, migrate_trigger_mismatch_pairs_with_start_trigger)
{
    pairing_engine engine;
    feed_no_record(engine, "5 10 -1 @100(1) 0->1ea0 1ea0:0 0");
    const record_t r = feed_record(engine, "6 20 -1 @100(1) 0->1ea0 2 0");
    EXPECT_EQ(static_cast<int>(r.page_migrate.trigger), 0);
    EXPECT_EQ(engine.counters().migrate_trigger_mismatches, 1u);
    feed_no_record(engine, "5 30 -1 @100(1) 0->1ea0 1ea0:0 1");
    feed_record(engine, "6 40 -1 @100(1) 0->1ea0 1 0");
    EXPECT_EQ(engine.counters().migrate_trigger_mismatches, 1u);
}

TEST(kfd_pairing, migrate_key_has_npages_from_and_to)
{
    pairing_engine engine;
    feed_no_record(engine, "5 10 -1 @100(2) 0->1ea0 1ea0:0 1");
    feed_no_record(engine, "6 20 -1 @100(3) 0->1ea0 1 0");    // other npages
    feed_no_record(engine, "6 20 -1 @100(2) 0->fc7d 1 0");    // other destination
    feed_no_record(engine, "6 20 -1 @100(2) fc7d->1ea0 1 0"); // other source
    feed_no_record(engine, "6 20 -1 @101(2) 0->1ea0 1 0");    // other page
    feed_no_record(engine, "6 20 -2 @100(2) 0->1ea0 1 0");    // other pid
    expect_counters(engine, 0, 5, 0, 0);
    EXPECT_EQ(engine.outstanding(), 1u);
    feed_record(engine, "6 20 -1 @100(2) 0->1ea0 1 0");
    expect_counters(engine, 1, 5, 0, 0);
}

TEST(kfd_pairing, queue_suspend_every_trigger)
{
    for(int trigger = 0; trigger <= 5; ++trigger)
    {
        pairing_engine engine;
        feed_no_record(engine, "9 38086928279363 -125752 1ea0 " + std::to_string(trigger));
        const record_t r = feed_record(engine, "a 40082605896929 -125752 1ea0");
        expect_header(r, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND, 38086928279363ull,
                      40082605896929ull, 125752);
        EXPECT_EQ(r.queue_suspend.rescheduled, 0u);
        EXPECT_EQ(r.queue_suspend.node_id, 0x1ea0u);
        EXPECT_EQ(static_cast<int>(r.queue_suspend.trigger), trigger);
        // layout: rescheduled bit 0 of byte 40, node_id@44, trigger@48
        EXPECT_EQ(byte_at(r, 40), 0u);
        EXPECT_EQ(u32_at(r, 44), 0x1ea0u);
        EXPECT_EQ(i32_at(r, 48), trigger);
        expect_zero_bytes(r, 52, 136);
    }
}

TEST(kfd_pairing, queue_restore_variants_and_rescheduled)
{
    struct restore_case
    {
        std::string_view line;
        unsigned         rescheduled;
    };
    const restore_case cases[] = {
        {"a 20 -5 fc7d"sv, 0},    // 6.0-6.11 normal
        {"a 15 -5 fc7d R"sv, 1},  // rescheduled
        {"a 20 -5 fc7d \0"sv, 0}, // 6.12 normal, NUL before the newline
        {"a 20 -5 fc7d 0"sv, 0},  // fixed kernels' normal
        {"e 15 -5 fc7d"sv, 1},    // proposed id-14 rescheduled restore
    };
    for(const auto& c : cases)
    {
        pairing_engine engine;
        feed_no_record(engine, "9 10 -5 fc7d 2");
        // A rescheduled restore leaves the queues evicted: the record ends at the next
        // normal restore and says it was rescheduled.
        if(c.rescheduled != 0) feed_no_record(engine, c.line);
        const record_t r = feed_record(engine, c.rescheduled != 0 ? "a 20 -5 fc7d 0"sv : c.line);
        expect_header(r, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND, 10, 20, 5);
        EXPECT_EQ(r.queue_suspend.rescheduled, c.rescheduled) << "line: [" << c.line << "]";
        EXPECT_EQ(byte_at(r, 40), c.rescheduled);
        EXPECT_EQ(r.queue_suspend.node_id, 0xfc7du);
        EXPECT_EQ(static_cast<int>(r.queue_suspend.trigger), 2);
        expect_counters(engine, 1, 0, 0, 0);
    }
}

TEST(kfd_pairing, id14_dropped_events_drop_every_outstanding_start)
{
    // A kernel drop report: ends of outstanding starts may be among the dropped events.
    pairing_engine engine;
    feed_no_record(engine, "9 10 -5 17 2");
    feed_no_record(engine, "7 11 -5 @10(17) R");
    feed_no_record(engine, "e 15 -5 17"); // dropped count 17 (could be node 0x17)
    EXPECT_EQ(engine.outstanding(), 0u);
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 2u);
    feed_no_record(engine, "8 16 -5 @10(17) M"); // would have made a record across the loss
    expect_counters(engine, 0, 1, 0, 0);

    // A suspension right after the loss may be nested in an eviction the loss hid: withheld.
    feed_no_record(engine, "9 20 -5 17 2");
    feed_no_record(engine, "a 30 -5 17 0");
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 3u);
    EXPECT_EQ(engine.counters().records, 0u);

    // 10 s later: the same line resolved with the fd's gpu_id 0x17 is a rescheduled restore
    feed_no_record(engine, "9 20000000000 -5 17 2");
    event resolved = ev("e 20000000005 -5 17");
    rocprofiler::kfd::resolve_id14(resolved, 0x17);
    ASSERT_EQ(resolved.kind14, id14_kind::rescheduled_restore);
    record_t r = poisoned_record();
    ASSERT_FALSE(pair_one(engine, resolved, r)); // the queues stay evicted
    EXPECT_EQ(engine.outstanding(), 1u);
    r = feed_record(engine, "a 20000000010 -5 17 0");
    EXPECT_EQ(r.queue_suspend.rescheduled, 1u);
    EXPECT_EQ(r.queue_suspend.node_id, 0x17u);
    EXPECT_EQ(r.start_timestamp, 20000000000u);
    EXPECT_EQ(r.end_timestamp, 20000000010u);
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 3u);
}

TEST(kfd_pairing, unmap_every_trigger)
{
    for(int trigger = 0; trigger <= 2; ++trigger)
    {
        pairing_engine engine;
        const record_t r = feed_record(engine, "b 15203214457186 -152990 @7f93ac200(200) 1ea0 " +
                                                   std::to_string(trigger));
        expect_header(r, ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU, 15203214457186ull,
                      15203214457186ull, 152990);
        EXPECT_EQ(r.unmap_from_gpu.node_id, 0x1ea0u);
        EXPECT_EQ(r.unmap_from_gpu.start_addr, 0x7f93ac200000ull);
        EXPECT_EQ(r.unmap_from_gpu.end_addr, (0x7f93ac200ull + 0x200) << 12); // exclusive
        EXPECT_EQ(r.unmap_from_gpu.end_addr, 0x7f93ac400000ull);
        EXPECT_EQ(static_cast<int>(r.unmap_from_gpu.trigger), trigger);
        // layout: node_id@40, start@48, end@56, trigger@64
        EXPECT_EQ(u32_at(r, 40), 0x1ea0u);
        expect_zero_bytes(r, 44, 48);
        EXPECT_EQ(u64_at(r, 48), 0x7f93ac200000ull);
        EXPECT_EQ(u64_at(r, 56), 0x7f93ac400000ull);
        EXPECT_EQ(i32_at(r, 64), trigger);
        expect_zero_bytes(r, 68, 136);
        EXPECT_EQ(engine.outstanding(), 0u);
        expect_counters(engine, 1, 0, 0, 0);
    }
}

TEST(kfd_pairing, triggers_outside_their_enum_become_none_and_are_counted)
{
    // Each record's trigger must be one of its C enum's values (a C++ tool's switch over an
    // undeclared value is undefined): anything else becomes NONE (-1) and is counted.
    pairing_engine engine;
    EXPECT_EQ(i32_at(feed_record(engine, "b 1 -2 @10(1) 1 2"), 64), 2); // last valid
    EXPECT_EQ(engine.counters().fields_out_of_range, 0u);
    EXPECT_EQ(i32_at(feed_record(engine, "b 1 -2 @10(1) 1 3"), 64), -1); // _LAST
    EXPECT_EQ(i32_at(feed_record(engine, "b 1 -2 @10(1) 1 -1"), 64), -1);
    EXPECT_EQ(engine.counters().fields_out_of_range, 2u);
    feed_no_record(engine, "9 1 -2 1 5");
    EXPECT_EQ(i32_at(feed_record(engine, "a 2 -2 1"), 48), 5); // CRIU_RESTORE: valid
    feed_no_record(engine, "9 1 -2 1 42");
    const record_t q = feed_record(engine, "a 2 -2 1");
    EXPECT_EQ(q.queue_suspend.trigger, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_NONE);
    feed_no_record(engine, "5 1 -2 @10(1) 0->1 1:1 -7");
    EXPECT_EQ(i32_at(feed_record(engine, "6 2 -2 @10(1) 0->1 -7"), 72), -1);
    feed_no_record(engine, "5 1 -2 @10(1) 0->1 1:1 4");
    const record_t m = feed_record(engine, "6 2 -2 @10(1) 0->1 4");
    EXPECT_EQ(m.page_migrate.trigger, ROCPROFILER_PAGE_MIGRATION_TRIGGER_NONE);
    feed_no_record(engine, "5 1 -2 @10(1) 0->1 1:1 3");
    EXPECT_EQ(i32_at(feed_record(engine, "6 2 -2 @10(1) 0->1 3"), 72), 3);
    EXPECT_EQ(engine.counters().fields_out_of_range, 5u);
    EXPECT_EQ(engine.counters().records, 8u);
}

TEST(kfd_pairing, other_ids_produce_nothing)
{
    pairing_engine         engine;
    const std::string_view lines[] = {
        "1 2a3f:python3", "2 1f:3a",        "3 5 MODE1", "4 5",
        "c 2a3f python3", "d 2a3f python3", "e 1 -2 5",
    };
    for(auto line : lines)
        feed_no_record(engine, line);
    record_t out   = poisoned_record();
    event    blank = {};
    EXPECT_FALSE(pair_one(engine, blank, out)); // id 0
    blank.id = 99;
    EXPECT_FALSE(pair_one(engine, blank, out));
    EXPECT_TRUE(is_poisoned(out));
    expect_counters(engine, 0, 0, 0, 0);
    EXPECT_EQ(engine.outstanding(), 0u);
}

// ---------------------------------------------------------------- keys

TEST(kfd_pairing, interleaved_outstanding_pairs)
{
    pairing_engine engine;
    feed_no_record(engine, "7 100 -1 @10(1ea0) R");
    feed_no_record(engine, "5 101 -1 @20(4) 0->1ea0 1ea0:0 1");
    feed_no_record(engine, "9 102 -1 1ea0 0");
    feed_no_record(engine, "7 103 -1 @11(1ea0) W");
    EXPECT_EQ(engine.outstanding(), 4u);

    const record_t fault11 = feed_record(engine, "8 200 -1 @11(1ea0) M");
    EXPECT_EQ(fault11.start_timestamp, 103u);
    EXPECT_EQ(fault11.page_fault.read_fault, 0u);
    EXPECT_EQ(fault11.page_fault.address, 0x11000u);
    const record_t queue = feed_record(engine, "a 201 -1 1ea0");
    EXPECT_EQ(queue.start_timestamp, 102u);
    const record_t fault10 = feed_record(engine, "8 202 -1 @10(1ea0) U");
    EXPECT_EQ(fault10.start_timestamp, 100u);
    EXPECT_EQ(fault10.page_fault.read_fault, 1u);
    const record_t migrate = feed_record(engine, "6 203 -1 @20(4) 0->1ea0 1 0");
    EXPECT_EQ(migrate.start_timestamp, 101u);
    EXPECT_EQ(migrate.page_migrate.end_addr, 0x23fffu);
    EXPECT_EQ(engine.outstanding(), 0u);
    expect_counters(engine, 4, 0, 0, 0);
}

TEST(kfd_pairing, same_page_on_two_gpus)
{
    pairing_engine engine;
    feed_no_record(engine, "7 100 -1 @7fa608127(1ea0) R");
    feed_no_record(engine, "7 110 -1 @7fa608127(fc7d) W");
    const record_t second = feed_record(engine, "8 200 -1 @7fa608127(fc7d) M");
    EXPECT_EQ(second.page_fault.node_id, 0xfc7du);
    EXPECT_EQ(second.start_timestamp, 110u);
    EXPECT_EQ(second.page_fault.read_fault, 0u);
    const record_t first = feed_record(engine, "8 210 -1 @7fa608127(1ea0) U");
    EXPECT_EQ(first.page_fault.node_id, 0x1ea0u);
    EXPECT_EQ(first.start_timestamp, 100u);
    EXPECT_EQ(first.page_fault.read_fault, 1u);

    feed_no_record(engine, "9 300 -1 1ea0 0");
    feed_no_record(engine, "9 310 -1 fc7d 1");
    EXPECT_EQ(feed_record(engine, "a 400 -1 1ea0").start_timestamp, 300u);
    EXPECT_EQ(static_cast<int>(feed_record(engine, "a 410 -1 fc7d").queue_suspend.trigger), 1);
    expect_counters(engine, 4, 0, 0, 0);
}

TEST(kfd_pairing, same_page_from_two_pids)
{
    pairing_engine engine;
    feed_no_record(engine, "7 100 -1 @10(1ea0) R");
    feed_no_record(engine, "7 110 -2 @10(1ea0) W");
    const record_t two = feed_record(engine, "8 200 -2 @10(1ea0) M");
    EXPECT_EQ(two.pid, 2u);
    EXPECT_EQ(two.start_timestamp, 110u);
    const record_t one = feed_record(engine, "8 210 -1 @10(1ea0) M");
    EXPECT_EQ(one.pid, 1u);
    EXPECT_EQ(one.start_timestamp, 100u);

    feed_no_record(engine, "5 100 -1 @10(1) 0->1ea0 1ea0:0 1");
    feed_no_record(engine, "5 120 -2 @10(1) 0->1ea0 1ea0:0 2");
    EXPECT_EQ(
        static_cast<int>(feed_record(engine, "6 200 -2 @10(1) 0->1ea0 2").page_migrate.trigger), 2);
    EXPECT_EQ(feed_record(engine, "6 200 -1 @10(1) 0->1ea0 1").start_timestamp, 100u);
    expect_counters(engine, 4, 0, 0, 0);
}

TEST(kfd_pairing, kinds_do_not_pair_with_each_other)
{
    pairing_engine engine;
    feed_no_record(engine, "9 100 -1 1ea0 0");
    feed_no_record(engine, "8 200 -1 @0(1ea0) M"); // fault end: not the queue's end
    feed_no_record(engine, "7 100 -1 @0(1ea0) R");
    feed_no_record(engine, "a 200 -1 0"); // wrong node
    EXPECT_EQ(engine.outstanding(), 2u);
    expect_counters(engine, 0, 2, 0, 0);
}

// ---------------------------------------------------------------- orphans and time order

TEST(kfd_pairing, orphan_ends_are_counted_without_record)
{
    pairing_engine engine;
    feed_no_record(engine, "8 200 -1 @10(1ea0) M");
    feed_no_record(engine, "6 200 -1 @10(1) 0->1ea0 1 0");
    feed_no_record(engine, "a 200 -1 1ea0 R"); // R only comes while the queues are evicted
    feed_no_record(engine, "e 200 -1 1ea0");
    expect_counters(engine, 0, 4, 0, 0);
    EXPECT_EQ(engine.outstanding(), 0u);
}

TEST(kfd_pairing, start_later_than_end_is_not_paired)
{
    pairing_engine engine;
    feed_no_record(engine, "7 500 -1 @10(1ea0) R");
    feed_no_record(engine, "8 400 -1 @10(1ea0) M"); // earlier than the start
    expect_counters(engine, 0, 1, 0, 0);
    EXPECT_EQ(engine.outstanding(), 1u); // the start waits for its own end
    const record_t r = feed_record(engine, "8 600 -1 @10(1ea0) M");
    EXPECT_EQ(r.start_timestamp, 500u);
    EXPECT_EQ(r.end_timestamp, 600u);
    expect_counters(engine, 1, 1, 0, 0);

    // equal timestamps pair (start <= end)
    feed_no_record(engine, "9 700 -1 1 0");
    const record_t same = feed_record(engine, "a 700 -1 1");
    EXPECT_EQ(same.start_timestamp, 700u);
    EXPECT_EQ(same.end_timestamp, 700u);
}

TEST(kfd_pairing, zero_timestamps_never_make_records)
{
    pairing_engine engine;
    feed_no_record(engine, "7 0 -1 @10(1ea0) R"); // unusable start: dropped, counted
    EXPECT_EQ(engine.outstanding(), 0u);
    expect_counters(engine, 0, 0, 1, 0);
    feed_no_record(engine, "8 5 -1 @10(1ea0) M");
    expect_counters(engine, 0, 1, 1, 0);

    feed_no_record(engine, "9 5 -1 1 0");
    feed_no_record(engine, "a 0 -1 1"); // end at 0 is before any stored start
    expect_counters(engine, 0, 2, 1, 0);

    feed_no_record(engine, "b 0 -1 @10(1) 1 0"); // an unmap at 0 cannot be a record
    expect_counters(engine, 0, 3, 1, 0);

    // an event built by hand without a timestamp behaves like timestamp 0
    event start         = ev("7 10 -1 @20(1) R");
    start.has_timestamp = false;
    record_t out        = poisoned_record();
    EXPECT_FALSE(pair_one(engine, start, out));
    expect_counters(engine, 0, 3, 2, 0);
}

TEST(kfd_pairing, finish_counts_never_ended_starts)
{
    pairing_engine engine;
    feed_no_record(engine, "7 100 -1 @10(1ea0) R");
    feed_no_record(engine, "5 100 -1 @10(1) 0->1ea0 1ea0:0 1");
    feed_no_record(engine, "9 100 -1 1ea0 0");
    EXPECT_EQ(engine.outstanding(), 3u);
    engine.finish();
    EXPECT_EQ(engine.outstanding(), 0u);
    expect_counters(engine, 0, 0, 0, 3);
    feed_no_record(engine, "8 200 -1 @10(1ea0) M"); // forgotten
    expect_counters(engine, 0, 1, 0, 3);
    engine.finish();
    expect_counters(engine, 0, 1, 0, 3);

    // still usable after finish()
    feed_no_record(engine, "7 300 -1 @10(1ea0) R");
    feed_record(engine, "8 400 -1 @10(1ea0) M");
    expect_counters(engine, 1, 1, 0, 3);
}

// ---------------------------------------------------------------- bounded memory

TEST(kfd_pairing, cap_evicts_the_oldest_start)
{
    pairing_engine engine{3};
    EXPECT_EQ(engine.max_outstanding(), 3u);
    feed_no_record(engine, "7 100 -1 @1(1) R");
    feed_no_record(engine, "5 101 -1 @2(1) 0->1 1:0 1");
    feed_no_record(engine, "9 102 -1 1 0");
    EXPECT_EQ(engine.outstanding(), 3u);
    feed_no_record(engine, "7 103 -1 @4(1) R"); // evicts the fault on page 1
    EXPECT_EQ(engine.outstanding(), 3u);
    expect_counters(engine, 0, 0, 1, 0);

    feed_no_record(engine, "8 200 -1 @1(1) M"); // its end is now an orphan
    expect_counters(engine, 0, 1, 1, 0);
    EXPECT_EQ(feed_record(engine, "8 201 -1 @4(1) M").start_timestamp, 103u); // newest pairs
    EXPECT_EQ(feed_record(engine, "6 202 -1 @2(1) 0->1 1").start_timestamp, 101u);
    EXPECT_EQ(feed_record(engine, "a 203 -1 1").start_timestamp, 102u);
    EXPECT_EQ(engine.outstanding(), 0u);
    expect_counters(engine, 3, 1, 1, 0);
}

TEST(kfd_pairing, cap_ages_out_in_arrival_order_across_many_starts)
{
    pairing_engine engine{4};
    for(int page = 0; page < 10; ++page)
        feed_no_record(engine, "7 " + std::to_string(100 + page) + " -1 @" + std::to_string(page) +
                                   "(1) R");
    EXPECT_EQ(engine.outstanding(), 4u);
    expect_counters(engine, 0, 0, 6, 0);
    for(int page = 0; page < 6; ++page)
        feed_no_record(engine, "8 500 -1 @" + std::to_string(page) + "(1) M");
    for(int page = 6; page < 10; ++page)
        EXPECT_EQ(
            feed_record(engine, "8 500 -1 @" + std::to_string(page) + "(1) M").start_timestamp,
            100u + static_cast<unsigned>(page));
    expect_counters(engine, 4, 6, 6, 0);
}

TEST(kfd_pairing, duplicate_start_replaces_and_becomes_newest)
{
    pairing_engine engine{3};
    feed_no_record(engine, "7 100 -1 @1(1) R"); // A
    feed_no_record(engine, "7 101 -1 @2(1) R"); // B
    feed_no_record(engine, "7 102 -1 @3(1) R"); // C
    feed_no_record(engine, "7 103 -1 @1(1) W"); // A again: replaces, now the newest
    EXPECT_EQ(engine.outstanding(), 3u);
    expect_counters(engine, 0, 0, 1, 0);
    feed_no_record(engine, "7 104 -1 @4(1) R"); // full: evicts B, the oldest now
    expect_counters(engine, 0, 0, 2, 0);

    const record_t a = feed_record(engine, "8 200 -1 @1(1) M");
    EXPECT_EQ(a.start_timestamp, 103u);         // the newer start
    EXPECT_EQ(a.page_fault.read_fault, 0u);     // with its own data
    feed_no_record(engine, "8 200 -1 @2(1) M"); // B was evicted
    EXPECT_EQ(feed_record(engine, "8 200 -1 @3(1) M").start_timestamp, 102u);
    EXPECT_EQ(feed_record(engine, "8 200 -1 @4(1) M").start_timestamp, 104u);
    expect_counters(engine, 3, 1, 2, 0);
}

TEST(kfd_pairing, cap_of_zero_means_one)
{
    pairing_engine engine{0};
    EXPECT_EQ(engine.max_outstanding(), 1u);
    feed_no_record(engine, "7 1 -1 @1(1) R");
    feed_no_record(engine, "7 2 -1 @2(1) R"); // evicts the first
    EXPECT_EQ(engine.outstanding(), 1u);
    feed_no_record(engine, "8 3 -1 @1(1) M");
    feed_record(engine, "8 3 -1 @2(1) M");
    expect_counters(engine, 1, 1, 1, 0);
}

TEST(kfd_pairing, default_cap)
{
    EXPECT_EQ(pairing_engine::default_max_outstanding, 65536u);
    pairing_engine engine;
    EXPECT_EQ(engine.max_outstanding(), 65536u);
}

TEST(kfd_pairing, move_keeps_outstanding_starts)
{
    pairing_engine first{8};
    feed_no_record(first, "7 100 -1 @1(1) R");
    feed_no_record(first, "7 101 -1 @2(1) R");
    pairing_engine second{std::move(first)};
    EXPECT_EQ(second.outstanding(), 2u);
    EXPECT_EQ(feed_record(second, "8 200 -1 @2(1) M").start_timestamp, 101u);

    pairing_engine third{2};
    feed_no_record(third, "9 1 -1 1 0");
    third = std::move(second);
    EXPECT_EQ(third.outstanding(), 1u);
    EXPECT_EQ(third.max_outstanding(), 8u);
    EXPECT_EQ(feed_record(third, "8 200 -1 @1(1) M").start_timestamp, 100u);
    // the age list survived the move: filling up evicts in order
    for(int page = 10; page < 20; ++page)
        feed_no_record(third, "7 300 -1 @" + std::to_string(page) + "(1) R");
    EXPECT_EQ(third.outstanding(), 8u);
    EXPECT_EQ(third.counters().starts_aged_out, 2u);
    EXPECT_EQ(third.counters().records, 2u); // counters moved with the state
}

// ---------------------------------------------------------------- randomized property test

namespace
{
// One generated start/end pair (or an unmap instant) and the record it must give.
struct generated_pair
{
    std::string start_line;  // empty for an unmap
    std::string middle_line; // a rescheduled restore inside a queue suspension, or empty
    std::string end_line;
    record_t    expected;
};

record_t
blank_record(int32_t operation, uint64_t start, uint64_t end, uint32_t pid)
{
    record_t r;
    std::memset(&r, 0, sizeof(r));
    r.size            = sizeof(r);
    r.kind            = ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION;
    r.operation       = operation;
    r.start_timestamp = start;
    r.end_timestamp   = end;
    r.pid             = pid;
    return r;
}

std::string
hex(uint64_t value)
{
    char buffer[24];
    std::snprintf(buffer, sizeof(buffer), "%llx", static_cast<unsigned long long>(value));
    return buffer;
}

// Generates pairs whose keys come from small domains (so keys are reused many times), with
// every pair of a key strictly after the previous pair of that key, then interleaves the
// keys' event sequences at random. Per-key order is the only ordering constraint, as on a
// real fd (and across fds there is none).
class pair_generator
{
public:
    // with_rescheduled: queue suspensions may contain a rescheduled restore (only where no
    // start can be lost: such a line without its start counts as an end without start).
    explicit pair_generator(uint64_t seed, bool with_rescheduled = true)
        : m_random{seed}, m_with_rescheduled{with_rescheduled}
    {
    }

    // events: (line, index of its pair, is_end)
    struct stream_event
    {
        std::string line;
        size_t      pair;
        bool        is_end;
        bool        is_middle = false;
    };

    std::vector<stream_event> generate(size_t count, std::vector<generated_pair>& pairs)
    {
        // a key is identified by its string; each key has its own clock and sequence
        std::map<std::string, size_t>          key_names;
        std::vector<uint64_t>                  key_clock;
        std::vector<std::vector<stream_event>> per_key;
        auto                                   key_index = [&](const std::string& name)
        {
            const auto found = key_names.find(name);
            if(found != key_names.end()) return found->second;
            key_names.emplace(name, per_key.size());
            key_clock.push_back(1 + uniform(0, 1000));
            per_key.emplace_back();
            return per_key.size() - 1;
        };

        for(size_t n = 0; n < count; ++n)
        {
            const uint32_t pid  = static_cast<uint32_t>(1 + uniform(0, 2));
            const uint32_t node = node_ids[uniform(0, 2)];
            const uint64_t page = 0x7f0000000ull + uniform(0, 15);
            const int      kind = static_cast<int>(uniform(0, 3));
            // migrate: the key is (pid, page, npages, from, to), to or from system memory
            const uint64_t npages = 1 + uniform(0, 2);
            const bool     to_gpu = uniform(0, 1) == 0;
            const uint32_t from   = to_gpu ? 0 : node;
            const uint32_t to     = to_gpu ? node : 0;
            generated_pair pair{};
            std::string    key;
            if(kind == 0)
                key = "f " + std::to_string(pid) + " " + hex(node) + " " + hex(page);
            else if(kind == 1)
                key = "m " + std::to_string(pid) + " " + hex(page) + " " + hex(npages) + " " +
                      hex(from) + " " + hex(to);
            else if(kind == 2)
                key = "q " + std::to_string(pid) + " " + hex(node);
            else
                key = "u " + std::to_string(n); // unmaps: one-event "pairs"

            const size_t   k     = key_index(key);
            uint64_t&      clock = key_clock[k];
            const uint64_t start = clock + uniform(0, 50);
            const uint64_t end   = start + uniform(0, 1000); // may equal start
            clock                = end + uniform(0, 50);

            if(kind == 0) make_fault(pair, pid, node, page, start, end);
            if(kind == 1) make_migrate(pair, pid, page, npages, from, to, start, end);
            if(kind == 2) make_queue(pair, pid, node, start, end);
            if(kind == 3) make_unmap(pair, pid, node, page, start);

            const size_t index = pairs.size();
            pairs.push_back(pair);
            if(!pair.start_line.empty()) per_key[k].push_back({pair.start_line, index, false});
            if(!pair.middle_line.empty())
                per_key[k].push_back({pair.middle_line, index, true, true});
            per_key[k].push_back({pair.end_line, index, true});
        }

        // interleave: repeatedly take the next event of a random key that has some left
        std::vector<size_t> next(per_key.size(), 0);
        std::vector<size_t> active;
        for(size_t k = 0; k < per_key.size(); ++k)
            active.push_back(k);
        std::vector<stream_event> stream;
        while(!active.empty())
        {
            const size_t slot = uniform(0, active.size() - 1);
            const size_t k    = active[slot];
            stream.push_back(per_key[k][next[k]++]);
            if(next[k] == per_key[k].size())
            {
                active[slot] = active.back();
                active.pop_back();
            }
        }
        return stream;
    }

private:
    static constexpr uint32_t node_ids[3] = {0x1ea0, 0xfc7d, 0xffffffff};

    size_t uniform(size_t low, size_t high)
    {
        return std::uniform_int_distribution<size_t>{low, high}(m_random);
    }

    void make_fault(generated_pair& pair, uint32_t pid, uint32_t node, uint64_t page,
                    uint64_t start, uint64_t end)
    {
        const bool        read     = uniform(0, 1) == 0;
        const bool        migrated = uniform(0, 1) == 0;
        const std::string body =
            " -" + std::to_string(pid) + " @" + hex(page) + "(" + hex(node) + ") ";
        pair.start_line = "7 " + std::to_string(start) + body + (read ? "R" : "W");
        pair.end_line   = "8 " + std::to_string(end) + body + (migrated ? "M" : "U");
        pair.expected   = blank_record(ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT, start, end, pid);
        pair.expected.page_fault.read_fault = read ? 1 : 0;
        pair.expected.page_fault.migrated   = migrated ? 1 : 0;
        pair.expected.page_fault.node_id    = node;
        pair.expected.page_fault.address    = page << 12;
    }

    void make_migrate(generated_pair& pair, uint32_t pid, uint64_t page, uint64_t npages,
                      uint32_t from, uint32_t to, uint64_t start, uint64_t end)
    {
        const uint32_t    prefetch  = node_ids[uniform(0, 2)];
        const uint32_t    preferred = node_ids[uniform(0, 2)];
        const int         trigger   = static_cast<int>(uniform(0, 3));
        const bool        has_error = uniform(0, 1) == 0;
        const std::string range     = " -" + std::to_string(pid) + " @" + hex(page) + "(" +
                                  hex(npages) + ") " + hex(from) + "->" + hex(to) + " ";
        pair.start_line = "5 " + std::to_string(start) + range + hex(prefetch) + ":" +
                          hex(preferred) + " " + std::to_string(trigger);
        pair.end_line = "6 " + std::to_string(end) + range + std::to_string(trigger) +
                        (has_error ? " -" + std::to_string(uniform(0, 20)) : "");
        pair.expected = blank_record(ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE, start, end, pid);
        pair.expected.page_migrate.start_addr     = page << 12;
        pair.expected.page_migrate.end_addr       = ((page + npages) << 12) - 1;
        pair.expected.page_migrate.from_node      = from;
        pair.expected.page_migrate.to_node        = to;
        pair.expected.page_migrate.prefetch_node  = prefetch;
        pair.expected.page_migrate.preferred_node = preferred;
        pair.expected.page_migrate.trigger =
            static_cast<rocprofiler_page_migration_trigger_t>(trigger);
    }

    void make_queue(generated_pair& pair, uint32_t pid, uint32_t node, uint64_t start, uint64_t end)
    {
        // normal restores of every era; a rescheduled one (R, or the id-14 shape) may come
        // between the eviction and the restore that ends the suspension
        static constexpr std::string_view suffixes[] = {""sv, " \0"sv, " 0"sv};
        const int                         trigger    = static_cast<int>(uniform(0, 5));
        const size_t                      variant    = uniform(0, 2);
        const size_t      middle      = m_with_rescheduled ? uniform(0, 2) : 0; // 1: R, 2: id 14
        const bool        rescheduled = middle != 0;
        const std::string body        = " -" + std::to_string(pid) + " " + hex(node);
        pair.start_line = "9 " + std::to_string(start) + body + " " + std::to_string(trigger);
        if(middle == 1) pair.middle_line = "a " + std::to_string(start) + body + " R";
        if(middle == 2) pair.middle_line = "e " + std::to_string(end) + body; // hex letters
        pair.end_line = "a " + std::to_string(end) + body + std::string{suffixes[variant]};
        pair.expected = blank_record(ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND, start, end, pid);
        pair.expected.queue_suspend.rescheduled = rescheduled ? 1 : 0;
        pair.expected.queue_suspend.node_id     = node;
        pair.expected.queue_suspend.trigger =
            static_cast<rocprofiler_page_migration_queue_suspend_trigger_t>(trigger);
    }

    void make_unmap(generated_pair& pair, uint32_t pid, uint32_t node, uint64_t page,
                    uint64_t timestamp)
    {
        const uint64_t npages  = 1 + uniform(0, 0x400);
        const int      trigger = static_cast<int>(uniform(0, 2));
        pair.end_line = "b " + std::to_string(timestamp) + " -" + std::to_string(pid) + " @" +
                        hex(page) + "(" + hex(npages) + ") " + hex(node) + " " +
                        std::to_string(trigger);
        pair.expected =
            blank_record(ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU, timestamp, timestamp, pid);
        pair.expected.unmap_from_gpu.node_id    = node;
        pair.expected.unmap_from_gpu.start_addr = page << 12;
        pair.expected.unmap_from_gpu.end_addr   = (page + npages) << 12;
        pair.expected.unmap_from_gpu.trigger =
            static_cast<rocprofiler_page_migration_unmap_from_gpu_trigger_t>(trigger);
    }

    std::mt19937_64 m_random;
    bool            m_with_rescheduled = true;
};

struct run_result
{
    uint64_t records         = 0;
    uint64_t mismatches      = 0;
    uint64_t ends            = 0;
    uint64_t starts          = 0;
    size_t   max_outstanding = 0;
};

// Feeds a stream; every record must equal, byte for byte, the record of the pair its end
// came from.
run_result
run_stream(pairing_engine& engine, const std::vector<pair_generator::stream_event>& stream,
           const std::vector<generated_pair>& pairs)
{
    run_result result;
    for(const auto& item : stream)
    {
        event parsed{};
        if(parse_line(item.line, parsed) != parse_result::ok)
        {
            ADD_FAILURE() << "generated line does not parse: [" << item.line << "]";
            continue;
        }
        (item.is_end ? result.ends : result.starts) += 1;
        if(item.is_middle) --result.ends; // a rescheduled restore: neither start nor end
        record_t   out         = poisoned_record();
        const bool produced    = pair_one(engine, parsed, out);
        result.max_outstanding = std::max(result.max_outstanding, engine.outstanding());
        if(!produced) continue;
        ++result.records;
        if(!item.is_end || std::memcmp(&out, &pairs[item.pair].expected, sizeof(out)) != 0)
        {
            if(++result.mismatches <= 5)
                ADD_FAILURE() << "record differs for pair " << item.pair << " end [" << item.line
                              << "]";
        }
    }
    return result;
}
} // namespace

TEST(kfd_pairing, randomized_pairs_match_exactly)
{
    pair_generator              generator{0x5eed1234abcdull};
    std::vector<generated_pair> pairs;
    const auto                  stream = generator.generate(20000, pairs);
    ASSERT_EQ(pairs.size(), 20000u);

    pairing_engine   engine;
    const run_result result = run_stream(engine, stream, pairs);
    EXPECT_EQ(result.mismatches, 0u);
    EXPECT_EQ(result.records, pairs.size());
    EXPECT_EQ(result.ends, pairs.size());
    expect_counters(engine, pairs.size(), 0, 0, 0);
    EXPECT_EQ(engine.outstanding(), 0u);
}

TEST(kfd_pairing, randomized_pairs_with_small_cap_account_for_every_start)
{
    pair_generator              generator{42, false};
    std::vector<generated_pair> pairs;
    const auto                  stream = generator.generate(20000, pairs);

    pairing_engine   engine{8};
    const run_result result = run_stream(engine, stream, pairs);
    EXPECT_LE(result.max_outstanding, 8u); // the cap held after every event
    const size_t left = engine.outstanding();
    engine.finish();
    const auto& counters = engine.counters();
    EXPECT_EQ(result.mismatches, 0u); // whatever pairs, pairs correctly
    EXPECT_GT(counters.starts_aged_out, 0u);
    EXPECT_EQ(counters.starts_never_ended, left);
    EXPECT_EQ(engine.outstanding(), 0u);
    const uint64_t unmaps = result.ends - result.starts;
    // every end made a record, was an orphan, or ended a suspension withheld because an
    // aged-out one left its count unknown (counted in starts_lost_in_gap: no gap otherwise)
    EXPECT_EQ(counters.records + counters.ends_without_start + counters.starts_lost_in_gap,
              result.ends);
    // every start was paired, aged out, withheld or left at the end
    EXPECT_EQ(counters.records - unmaps + counters.starts_aged_out + counters.starts_never_ended +
                  counters.starts_lost_in_gap,
              result.starts);
    EXPECT_EQ(counters.records, result.records);
}

// ---------------------------------------------------------------- the kernel's queue model
//
// Expected records below come from the kernel's rules (kfd_process.c, dqm qpd->evicted,
// kfd_svm.c restore worker), written out by hand for each input.

TEST(kfd_pairing, nested_evictions_make_one_suspension_from_first_eviction_to_last_restore)
{
    // Issue 7, case 1: an SVM eviction, then a userptr eviction while the queues are already
    // evicted (qpd->evicted 1 -> 2), then two restores (2 -> 1, 1 -> 0): the queues were
    // suspended from 100 to 400, by SVM.
    pairing_engine engine;
    feed_no_record(engine, "9 100 -5 1ea0 0");
    feed_no_record(engine, "9 200 -5 1ea0 1");
    feed_no_record(engine, "a 300 -5 1ea0");
    EXPECT_EQ(engine.outstanding(), 1u);
    const record_t r = feed_record(engine, "a 400 -5 1ea0");
    expect_header(r, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND, 100, 400, 5);
    EXPECT_EQ(r.queue_suspend.trigger, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_SVM);
    EXPECT_EQ(r.queue_suspend.node_id, 0x1ea0u);
    EXPECT_EQ(r.queue_suspend.rescheduled, 0u);
    expect_counters(engine, 1, 0, 0, 0); // no false "aged out", no false "end without start"
    EXPECT_EQ(engine.outstanding(), 0u);
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 0u);
    EXPECT_EQ(engine.counters().starts_timed_out, 0u);
}

TEST(kfd_pairing, three_deep_nesting_of_different_triggers)
{
    pairing_engine engine;
    feed_no_record(engine, "9 10 -5 1ea0 2");                 // TTM: depth 1, the queues stop
    feed_no_record(engine, "9 20 -5 1ea0 0");                 // SVM: 2
    feed_no_record(engine, "a 30 -5 1ea0 0");                 // 1
    feed_no_record(engine, "9 40 -5 1ea0 1");                 // userptr: 2
    feed_no_record(engine, "a 50 -5 1ea0 0");                 // 1
    const record_t r = feed_record(engine, "a 60 -5 1ea0 0"); // 0: the queues run again
    EXPECT_EQ(r.start_timestamp, 10u);
    EXPECT_EQ(r.end_timestamp, 60u);
    EXPECT_EQ(r.queue_suspend.trigger, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_TTM);
    expect_counters(engine, 1, 0, 0, 0);
    // a further restore at depth 0 is the kernel's WARN case: an end without start
    feed_no_record(engine, "a 70 -5 1ea0 0");
    expect_counters(engine, 1, 1, 0, 0);
}

TEST(kfd_pairing, nesting_is_per_pid_and_gpu)
{
    pairing_engine engine;
    feed_no_record(engine, "9 10 -5 1ea0 0");
    feed_no_record(engine, "9 11 -5 fc7d 2"); // same process, other GPU
    feed_no_record(engine, "9 12 -6 1ea0 1"); // other process, same GPU
    EXPECT_EQ(feed_record(engine, "a 20 -5 fc7d").start_timestamp, 11u);
    EXPECT_EQ(feed_record(engine, "a 21 -6 1ea0").start_timestamp, 12u);
    const record_t r = feed_record(engine, "a 22 -5 1ea0");
    EXPECT_EQ(r.start_timestamp, 10u);
    EXPECT_EQ(r.queue_suspend.trigger, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_SVM);
    expect_counters(engine, 3, 0, 0, 0);
}

TEST(kfd_pairing, rescheduled_restore_keeps_the_queues_evicted)
{
    // Issue 7, case 2: the SVM restore worker failed and requeued itself ("R"): the queues
    // stay evicted until the later normal restore, which ends the record.
    pairing_engine engine;
    feed_no_record(engine, "9 10 -5 fc7d 0");
    feed_no_record(engine, "a 20 -5 fc7d R");
    feed_no_record(engine, "a 25 -5 fc7d R"); // retried again
    EXPECT_EQ(engine.outstanding(), 1u);
    const record_t r = feed_record(engine, "a 30 -5 fc7d 0");
    expect_header(r, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND, 10, 30, 5);
    EXPECT_EQ(r.queue_suspend.rescheduled, 1u);
    EXPECT_EQ(r.queue_suspend.trigger, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_SVM);
    expect_counters(engine, 1, 0, 0, 0); // the real restore is not an orphan

    // the next suspension starts clean
    feed_no_record(engine, "9 40 -5 fc7d 2");
    EXPECT_EQ(feed_record(engine, "a 50 -5 fc7d \0"sv).queue_suspend.rescheduled, 0u);
}

TEST(kfd_pairing, rescheduled_restore_neither_ends_nor_decrements_a_nested_suspension)
{
    pairing_engine engine;
    feed_no_record(engine, "9 10 -5 fc7d 0"); // SVM
    feed_no_record(engine, "9 11 -5 fc7d 2"); // TTM: depth 2
    feed_no_record(engine, "e 12 -5 fc7d");   // id-14 rescheduled restore
    feed_no_record(engine, "a 13 -5 fc7d R");
    feed_no_record(engine, "a 14 -5 fc7d 0"); // depth 1
    const record_t r = feed_record(engine, "a 15 -5 fc7d 0");
    EXPECT_EQ(r.start_timestamp, 10u);
    EXPECT_EQ(r.end_timestamp, 15u);
    EXPECT_EQ(r.queue_suspend.rescheduled, 1u);
    expect_counters(engine, 1, 0, 0, 0);
}

TEST(kfd_pairing, rescheduled_restore_without_a_suspension_is_counted)
{
    pairing_engine engine;
    feed_no_record(engine, "a 10 -5 fc7d R");
    expect_counters(engine, 0, 1, 0, 0);
    EXPECT_EQ(engine.outstanding(), 0u);
    feed_no_record(engine, "9 20 -5 fc7d 0");
    feed_no_record(engine, "a 15 -5 fc7d R"); // older than the eviction: not part of it
    expect_counters(engine, 0, 2, 0, 0);
    EXPECT_EQ(feed_record(engine, "a 30 -5 fc7d").queue_suspend.rescheduled, 0u);
}

// ---------------------------------------------------------------- gaps

TEST(kfd_pairing, invalidate_drops_only_the_given_kinds)
{
    pairing_engine engine;
    feed_no_record(engine, "7 100 -1 @10(1ea0) R");
    feed_no_record(engine, "5 100 -1 @10(1) 0->1ea0 1ea0:0 1");
    feed_no_record(engine, "9 100 -1 1ea0 0");
    feed_no_record(engine, "9 101 -1 1ea0 1"); // nested: still one suspension
    EXPECT_EQ(engine.invalidate(rocprofiler::kfd::pair_kind_queue_suspend), 1u);
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 1u);
    EXPECT_EQ(engine.outstanding(), 2u);
    // after the gap: restores of the dropped suspension pair with nothing
    feed_no_record(engine, "a 500 -1 1ea0");
    feed_no_record(engine, "a 501 -1 1ea0");
    EXPECT_EQ(engine.counters().ends_without_start, 2u);
    // the other kinds still pair
    EXPECT_EQ(feed_record(engine, "8 200 -1 @10(1ea0) M").start_timestamp, 100u);
    EXPECT_EQ(feed_record(engine, "6 200 -1 @10(1) 0->1ea0 1").start_timestamp, 100u);

    feed_no_record(engine, "7 300 -1 @10(1ea0) R");
    feed_no_record(engine, "5 300 -1 @10(1) 0->1ea0 1ea0:0 1");
    EXPECT_EQ(engine.invalidate(rocprofiler::kfd::pair_kind_page_fault |
                                rocprofiler::kfd::pair_kind_page_migrate),
              2u);
    EXPECT_EQ(engine.invalidate(rocprofiler::kfd::pair_kind_all), 0u);
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 3u);
    EXPECT_EQ(engine.outstanding(), 0u);
    engine.finish();
    EXPECT_EQ(engine.counters().starts_never_ended, 0u); // counted once, as lost in the gap
}

TEST(kfd_pairing, context_stop_and_restart_never_pairs_across_the_gap)
{
    // Issue 7, case 3 as the engine sees it: evict@0 arrives, the context stops at 250 ms
    // (the service invalidates queue suspensions), restore@500 and evict@1000 are not
    // delivered, the context starts at 1250 ms, restore@1500 arrives. No record may span the
    // gap; the start is counted lost, the restore counted as an end without start.
    pairing_engine engine;
    feed_no_record(engine, "9 1000000000 -5 1ea0 2");
    EXPECT_EQ(engine.invalidate(rocprofiler::kfd::pair_kinds_of_mask(0)), 0u); // nothing lost
    // the stop: the mask loses ids 9 and 10
    const uint64_t before = (1ull << 8) | (1ull << 9) | (1ull << 13);
    const uint64_t after  = 1ull << 13;
    EXPECT_EQ(engine.invalidate(rocprofiler::kfd::pair_kinds_of_mask(before) &
                                ~rocprofiler::kfd::pair_kinds_of_mask(after)),
              1u);
    feed_no_record(engine, "a 2500000000 -5 1ea0");
    expect_counters(engine, 0, 1, 0, 0);
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 1u);
}

TEST(kfd_pairing, suspension_soon_after_a_gap_is_withheld_as_it_may_be_nested)
{
    // The case the toggled-context test found: a TTM eviction hidden by the gap keeps the
    // queues evicted; after the restart an SVM eviction, an R and the SVM restore (the
    // kernel's count 2 -> 1) look like a complete suspension. The kernel's count is unknown
    // after a gap, so such a suspension is withheld (and counted), not reported too short.
    const uint64_t s = 1000000000ull;
    pairing_engine engine;
    EXPECT_EQ(engine.invalidate(rocprofiler::kfd::pair_kind_queue_suspend), 0u); // the gap
    feed_no_record(engine, "9 " + std::to_string(100 * s) + " -5 76b5 0");       // after it
    feed_no_record(engine, "a " + std::to_string(100 * s + 20) + " -5 76b5 R");
    feed_no_record(engine, "a " + std::to_string(100 * s + 140) + " -5 76b5");
    EXPECT_EQ(engine.counters().records, 0u);
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 1u);
    // the hidden eviction's restore: an end without start
    feed_no_record(engine, "a " + std::to_string(100 * s + 370) + " -5 76b5");
    EXPECT_EQ(engine.counters().ends_without_start, 1u);
    // faults are not affected
    feed_no_record(engine, "7 " + std::to_string(100 * s + 400) + " -5 @1(76b5) R");
    feed_record(engine, "8 " + std::to_string(100 * s + 500) + " -5 @1(76b5) M");
    // the window: up to 10 s after the first event after the gap (100 s), ends included
    feed_no_record(engine, "9 " + std::to_string(110 * s - 1) + " -5 76b5 2");
    feed_no_record(engine, "a " + std::to_string(110 * s) + " -5 76b5");
    EXPECT_EQ(engine.counters().records, 1u); // the fault only
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 2u);
    // past it, suspensions are reported again
    feed_no_record(engine, "9 " + std::to_string(110 * s + 2) + " -5 76b5 2");
    const record_t r = feed_record(engine, "a " + std::to_string(110 * s + 3) + " -5 76b5");
    EXPECT_EQ(r.start_timestamp, 110 * s + 2);
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 2u);
}

TEST(kfd_pairing, a_gap_in_other_kinds_does_not_withhold_suspensions)
{
    pairing_engine engine;
    engine.invalidate(rocprofiler::kfd::pair_kind_page_fault |
                      rocprofiler::kfd::pair_kind_page_migrate);
    feed_no_record(engine, "9 100 -5 76b5 0");
    EXPECT_EQ(feed_record(engine, "a 200 -5 76b5").start_timestamp, 100u);
}

TEST(kfd_pairing, mask_bits_name_their_pair_kinds)
{
    using rocprofiler::kfd::pair_kinds_of_mask;
    using rocprofiler::kfd::pair_kinds_with_an_id_in_mask;
    constexpr uint32_t fault   = rocprofiler::kfd::pair_kind_page_fault;
    constexpr uint32_t migrate = rocprofiler::kfd::pair_kind_page_migrate;
    constexpr uint32_t queue   = rocprofiler::kfd::pair_kind_queue_suspend;
    // A kind is paired only with both its ids (bit id-1): 5+6, 7+8, 9+10.
    EXPECT_EQ(pair_kinds_of_mask(0), 0u);
    EXPECT_EQ(pair_kinds_of_mask((1ull << 4) | (1ull << 5)), migrate);
    EXPECT_EQ(pair_kinds_of_mask((1ull << 6) | (1ull << 7)), fault);
    EXPECT_EQ(pair_kinds_of_mask((1ull << 8) | (1ull << 9)), queue);
    for(int bit = 4; bit <= 9; ++bit) // one id alone pairs nothing
        EXPECT_EQ(pair_kinds_of_mask(1ull << bit), 0u) << "id " << bit + 1;
    EXPECT_EQ(pair_kinds_of_mask((1ull << 4) | (1ull << 7) | (1ull << 8)), 0u);    // 5, 8, 9
    EXPECT_EQ(pair_kinds_of_mask((1ull << 10) | (1ull << 13) | (1ull << 63)), 0u); // 11, 14, all
    EXPECT_EQ(pair_kinds_of_mask(~0ull), rocprofiler::kfd::pair_kind_all);
    // ... while either id counts as "an id in the mask"
    EXPECT_EQ(pair_kinds_with_an_id_in_mask(1ull << 4), migrate);
    EXPECT_EQ(pair_kinds_with_an_id_in_mask(1ull << 5), migrate);
    EXPECT_EQ(pair_kinds_with_an_id_in_mask(1ull << 6), fault);
    EXPECT_EQ(pair_kinds_with_an_id_in_mask(1ull << 7), fault);
    EXPECT_EQ(pair_kinds_with_an_id_in_mask(1ull << 8), queue);
    EXPECT_EQ(pair_kinds_with_an_id_in_mask(1ull << 9), queue);
    EXPECT_EQ(pair_kinds_with_an_id_in_mask((1ull << 10) | (1ull << 13) | (1ull << 63)), 0u);
}

TEST(kfd_pairing, a_change_of_paired_kinds_invalidates_those_stopped_or_resumed_from_events_read)
{
    using rocprofiler::kfd::pair_kinds_to_invalidate;
    constexpr uint32_t queue = rocprofiler::kfd::pair_kind_queue_suspend;
    constexpr uint32_t fault = rocprofiler::kfd::pair_kind_page_fault;
    const uint64_t     evict = 1ull << 8, restore = 1ull << 9, id14 = 1ull << 13;
    const uint64_t     fault_start = 1ull << 6, fault_end = 1ull << 7;
    // No longer paired, whatever stays in the mask (the case a review found: a raw context
    // keeps QUEUE_EVICTION while the QUEUE_SUSPEND context stops).
    EXPECT_EQ(pair_kinds_to_invalidate(queue, 0, evict | restore | id14), queue);
    EXPECT_EQ(pair_kinds_to_invalidate(queue | fault, fault, ~0ull), queue);
    // Paired again while evictions (or both ids, for a kfd_events service) were read
    // unpaired: they may be queued still, and the kernel's count is unknown.
    EXPECT_EQ(pair_kinds_to_invalidate(0, queue, evict | id14), queue);
    EXPECT_EQ(pair_kinds_to_invalidate(0, queue, restore), queue);
    EXPECT_EQ(pair_kinds_to_invalidate(0, queue, evict | restore), queue);
    // Paired from nothing in the mask: nothing can be stale (the start of tracing).
    EXPECT_EQ(pair_kinds_to_invalidate(0, queue, id14), 0u);
    EXPECT_EQ(pair_kinds_to_invalidate(0, queue | fault, 0), 0u);
    EXPECT_EQ(pair_kinds_to_invalidate(0, fault, evict | restore), 0u); // other kinds' ids
    // Unchanged: nothing.
    EXPECT_EQ(pair_kinds_to_invalidate(fault, fault, fault_start | fault_end), 0u);
    EXPECT_EQ(pair_kinds_to_invalidate(0, 0, ~0ull), 0u);
    // Kinds are independent.
    EXPECT_EQ(pair_kinds_to_invalidate(fault, queue, fault_start | fault_end | evict),
              fault | queue);
}

// ---------------------------------------------------------------- age bound

TEST(kfd_pairing, fault_older_than_the_bound_is_dropped_before_its_late_end)
{
    // Issue 7, case 4: a fault start at t and an end an hour later must not make an
    // hour-long record.
    pairing_engine engine;
    const uint64_t t    = 40000000000000ull;
    const uint64_t hour = 3600ull * 1000000000ull;
    feed_no_record(engine, "7 " + std::to_string(t) + " -1 @10(1ea0) R");
    feed_no_record(engine, "8 " + std::to_string(t + hour) + " -1 @10(1ea0) M");
    EXPECT_EQ(engine.counters().starts_timed_out, 1u);
    expect_counters(engine, 0, 1, 0, 0);
    EXPECT_EQ(engine.outstanding(), 0u);
}

TEST(kfd_pairing, age_bound_is_relative_to_the_newest_timestamp_and_spares_queues)
{
    const uint64_t s = 1000000000ull;
    pairing_engine engine;
    feed_no_record(engine, "7 " + std::to_string(1 * s) + " -1 @10(1ea0) R");
    feed_no_record(engine, "5 " + std::to_string(1 * s) + " -1 @10(1) 0->1ea0 1ea0:0 1");
    feed_no_record(engine, "9 " + std::to_string(1 * s) + " -1 1ea0 0");
    feed_no_record(engine, "7 " + std::to_string(5 * s) + " -1 @20(1ea0) R");
    // exactly 10 s later: not yet past the bound
    feed_record(engine, "b " + std::to_string(11 * s) + " -1 @30(1) 1ea0 0");
    EXPECT_EQ(engine.counters().starts_timed_out, 0u);
    EXPECT_EQ(engine.outstanding(), 4u);
    // any event (here an unmap on another page) showing the bound passed ages them out
    feed_record(engine, "b " + std::to_string(11 * s + 1) + " -1 @30(1) 1ea0 0");
    EXPECT_EQ(engine.counters().starts_timed_out, 2u); // the fault and the migration at 1 s
    EXPECT_EQ(engine.outstanding(), 2u);
    // the queue suspension has no bound; the fault at 5 s is within it
    EXPECT_EQ(
        feed_record(engine, "8 " + std::to_string(12 * s) + " -1 @20(1ea0) M").start_timestamp,
        5 * s);
    EXPECT_EQ(feed_record(engine, "a " + std::to_string(100 * s) + " -1 1ea0").start_timestamp,
              1 * s);
    EXPECT_EQ(engine.counters().starts_timed_out, 2u);
}

TEST(kfd_pairing, age_bounds_are_configurable)
{
    rocprofiler::kfd::age_bounds bounds;
    bounds.page_fault_ns    = 100;
    bounds.page_migrate_ns  = 0; // none
    bounds.queue_suspend_ns = 50;
    pairing_engine engine{16, bounds};
    feed_no_record(engine, "7 1000 -1 @10(1ea0) R");
    feed_no_record(engine, "5 1000 -1 @10(1) 0->1ea0 1ea0:0 1");
    feed_no_record(engine, "9 1000 -1 1ea0 0");
    feed_no_record(engine, "7 1060 -1 @11(1ea0) R"); // 60 ns later: the queue is past 50
    EXPECT_EQ(engine.counters().starts_timed_out, 1u);
    feed_no_record(engine, "8 1101 -1 @10(1ea0) M"); // 101 ns: the fault is past 100
    EXPECT_EQ(engine.counters().starts_timed_out, 2u);
    EXPECT_EQ(engine.counters().ends_without_start, 1u);
    EXPECT_EQ(feed_record(engine, "6 999999 -1 @10(1) 0->1ea0 1").start_timestamp, 1000u);
}

// ---------------------------------------------------------------- the open-addressing table

TEST(kfd_pairing, table_grows_by_doubling_up_to_twice_the_cap)
{
    pairing_engine engine{1000};
    EXPECT_EQ(engine.capacity(), 0u); // nothing allocated before the first start
    for(int page = 0; page < 1000; ++page)
        feed_no_record(engine, "7 " + std::to_string(100 + page) + " -1 @" + std::to_string(page) +
                                   "(1) R");
    EXPECT_EQ(engine.outstanding(), 1000u);
    EXPECT_EQ(engine.capacity(), 2048u); // at most half full
    for(int page = 1000; page < 3000; ++page)
        feed_no_record(engine, "7 " + std::to_string(100 + page) + " -1 @" + std::to_string(page) +
                                   "(1) R");
    EXPECT_EQ(engine.capacity(), 2048u); // bounded
    EXPECT_EQ(engine.outstanding(), 1000u);
    EXPECT_EQ(engine.counters().starts_aged_out, 2000u);
    // the survivors are the newest 1000, and every one still pairs
    for(int page = 0; page < 2000; ++page)
        feed_no_record(engine, "8 9000 -1 @" + std::to_string(page) + "(1) M");
    for(int page = 2000; page < 3000; ++page)
        EXPECT_EQ(
            feed_record(engine, "8 9000 -1 @" + std::to_string(page) + "(1) M").start_timestamp,
            100u + static_cast<unsigned>(page));
    EXPECT_EQ(engine.outstanding(), 0u);
}

TEST(kfd_pairing, colliding_keys_survive_deletions_in_any_order)
{
    // Many keys that differ only in one field probe into the same clusters; deleting from
    // the middle of a cluster (backward shift) must keep every other key findable and the
    // arrival lists intact.
    pairing_engine   engine{4096};
    std::vector<int> pages;
    for(int page = 0; page < 3000; ++page)
        pages.push_back(page);
    for(int page : pages)
        feed_no_record(engine, "7 100 -1 @" + hex(static_cast<uint64_t>(page)) + "(1) R");
    std::mt19937 random{7};
    std::shuffle(pages.begin(), pages.end(), random);
    for(size_t i = 0; i < pages.size(); ++i)
    {
        if(i % 3 == 0) // and new starts between deletions
            feed_no_record(engine, "9 150 -1 " + std::to_string(i + 1) + " 0");
        const record_t r =
            feed_record(engine, "8 200 -1 @" + hex(static_cast<uint64_t>(pages[i])) + "(1) M");
        EXPECT_EQ(r.page_fault.address, static_cast<uint64_t>(pages[i]) << 12);
    }
    EXPECT_EQ(engine.outstanding(), 1000u);
    // the queue suspensions are all still there
    for(size_t i = 0; i < pages.size(); i += 3)
        EXPECT_EQ(feed_record(engine, "a 300 -1 " + std::to_string(i + 1)).start_timestamp, 150u);
    expect_counters(engine, 4000, 0, 0, 0);
}

TEST(kfd_pairing, cap_ages_out_oldest_first_across_kinds)
{
    pairing_engine engine{3};
    feed_no_record(engine, "9 100 -1 1 0"); // oldest
    feed_no_record(engine, "7 101 -1 @1(1) R");
    feed_no_record(engine, "5 102 -1 @2(1) 0->1 1:0 1");
    feed_no_record(engine, "9 103 -1 1 1"); // nested: no new start, no aging
    EXPECT_EQ(engine.counters().starts_aged_out, 0u);
    feed_no_record(engine, "7 104 -1 @3(1) W"); // full: the queue suspension goes
    EXPECT_EQ(engine.counters().starts_aged_out, 1u);
    feed_no_record(engine, "a 105 -1 1");
    EXPECT_EQ(engine.counters().ends_without_start, 1u);
    feed_no_record(engine, "7 106 -1 @4(1) W"); // then the fault at 101
    feed_no_record(engine, "8 107 -1 @1(1) M");
    EXPECT_EQ(engine.counters().ends_without_start, 2u);
    EXPECT_EQ(feed_record(engine, "6 108 -1 @2(1) 0->1 1").start_timestamp, 102u);
    // the aged-out suspension left its count unknown (it was nested: one restore is still
    // due): a suspension soon after is withheld rather than reported too short
    feed_no_record(engine, "9 109 -1 1 0");
    feed_no_record(engine, "a 110 -1 1");
    EXPECT_EQ(engine.counters().starts_lost_in_gap, 1u);
}

TEST(kfd_pairing, age_bound_applies_to_an_older_start_that_becomes_a_head_later)
{
    // Arrival order is not timestamp order (another process's events, another clock domain):
    // when the head of a list ends, the next start may be older than it was. Its own bound
    // must apply from then on, not the ended head's.
    rocprofiler::kfd::age_bounds bounds;
    bounds.page_fault_ns = 100;
    pairing_engine engine{16, bounds};
    feed_no_record(engine, "7 1000 -1 @1(1) R"); // head
    feed_no_record(engine, "7 950 -1 @2(1) R");  // arrives later, 50 ns older
    EXPECT_EQ(feed_record(engine, "8 1010 -1 @1(1) M").start_timestamp, 1000u);
    feed_record(engine, "b 1051 -1 @30(1) 1 0"); // an unmap 101 ns after 950
    EXPECT_EQ(engine.counters().starts_timed_out, 1u);
    EXPECT_EQ(engine.outstanding(), 0u);
    feed_no_record(engine, "8 1052 -1 @2(1) M"); // its end is an orphan now
    EXPECT_EQ(engine.counters().ends_without_start, 1u);
}

TEST(kfd_pairing, reused_places_keep_arrival_order_through_growth_and_the_cap)
{
    // Starts keep their pool places while outstanding; ended ones are reused by later starts.
    // Whatever places they take, the cap ages out by arrival, and growth keeps every start.
    pairing_engine engine{200};
    for(int page = 0; page < 30; ++page) // 30 starts: in the first table (256 buckets)
        feed_no_record(engine, "7 " + std::to_string(100 + page) + " -1 @" + hex(page) + "(1) R");
    ASSERT_EQ(engine.capacity(), 256u);
    // end the even pages (their places go to the free list), then start new pages
    for(int page = 0; page < 30; page += 2)
        feed_record(engine, "8 1000 -1 @" + hex(page) + "(1) M");
    for(int page = 100; page < 300; ++page) // grows to 512 buckets; past 200: ages out
        feed_no_record(engine, "7 " + std::to_string(1000 + page) + " -1 @" + hex(page) + "(1) R");
    EXPECT_EQ(engine.capacity(), 512u);
    EXPECT_EQ(engine.outstanding(), 200u);
    // 15 odd pages + 200 new = 215: the 15 oldest (all the odd pages) aged out, oldest first
    EXPECT_EQ(engine.counters().starts_aged_out, 15u);
    for(int page = 1; page < 30; page += 2)
        feed_no_record(engine, "8 5000 -1 @" + hex(page) + "(1) M");
    EXPECT_EQ(engine.counters().ends_without_start, 15u);
    // one more start ages out exactly the oldest survivor (page 100), not any other
    feed_no_record(engine, "7 4000 -1 @1000(1) R");
    feed_no_record(engine, "8 5000 -1 @" + hex(100) + "(1) M");
    EXPECT_EQ(engine.counters().ends_without_start, 16u);
    for(int page = 101; page < 300; ++page)
        EXPECT_EQ(feed_record(engine, "8 5000 -1 @" + hex(page) + "(1) M").start_timestamp,
                  1000u + static_cast<unsigned>(page));
    EXPECT_EQ(feed_record(engine, "8 5000 -1 @1000(1) M").start_timestamp, 4000u);
    EXPECT_EQ(engine.outstanding(), 0u);
}
