// MIT License - see LICENSE.
//
// Pairing engine: parsed SMI events -> PAGE_MIGRATION records. Pure: no I/O, no globals, no
// exceptions escaping. Not thread-safe: one engine per reader thread (or per GPU).
//
// Pairs (keys include pid and GPU, so the same page faulting on two GPUs or from two
// processes pairs correctly):
//   PAGE_FAULT    = PAGE_FAULT_START (7) .. PAGE_FAULT_END (8)   key (pid, node, page)
//   PAGE_MIGRATE  = MIGRATE_START (5)    .. MIGRATE_END (6)      key (pid, page, npages, from, to)
//   QUEUE_SUSPEND = QUEUE_EVICTION (9)   .. QUEUE_RESTORE (10), or the id-14 rescheduled
//                                           restore shape         key (pid, node)
//   UNMAP_FROM_GPU (11) is an instant: a record of its own.
//
// Rules:
// - A record is produced only when the start's timestamp is non-zero and <= the end's. An
//   end without an outstanding start, or whose start is later than the end, counts in
//   ends_without_start and produces nothing; in the second case the start stays outstanding
//   (it may belong to a later end). An unmap with timestamp 0 also counts there.
// - A start with timestamp 0 can never produce a record: it is dropped on arrival and counted
//   in starts_aged_out.
// - Memory is bounded: at most max_outstanding starts over all kinds. When full, the oldest
//   outstanding start (by arrival) is evicted and counted in starts_aged_out. A start whose
//   key is already outstanding replaces the older one (counted in starts_aged_out). If
//   memory for a new start cannot be allocated, that start is dropped and counted there too.
// - Migrate trigger: not part of the key. The kernel prints the same trigger in a migration's
//   start and end, and a range's migrations are serialized (per-range migrate lock), so a
//   different end trigger means events were lost between them. The record is still produced
//   (the key fields agree), with the start's trigger (the start also gives prefetch and
//   preferred), and the mismatch is counted in migrate_trigger_mismatches.
// - MIGRATE_END error codes are not part of the record (the record has no such field).
// - QUEUE_SUSPEND `rescheduled` is set when the restore said " R" or was the id-14
//   rescheduled-restore shape; every other restore variant gives 0. As in the reference SDK
//   a rescheduled restore ends the suspension; a later plain restore of the same (pid, node)
//   then has no start and is counted in ends_without_start.
#pragma once

#include "rocprofiler-sdk/kfd/parser.hpp"

#include <rocprofiler-sdk/buffer_tracing.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>

namespace rocprofiler::kfd
{
struct pairing_counters
{
    uint64_t ends_without_start         = 0; // end whose start is unknown, or later than the end
    uint64_t starts_aged_out            = 0; // evicted by the cap, replaced, or unusable
    uint64_t starts_never_ended         = 0; // counted by finish()
    uint64_t records                    = 0; // records produced
    uint64_t migrate_trigger_mismatches = 0; // paired migrations whose end trigger differed
};

class pairing_engine
{
public:
    // An outstanding start is one in-flight kernel operation (a fault being handled, a range
    // migrating, a process's queues evicted on a GPU): realistically hundreds at once, even
    // for a superuser tracing every process. 65536 leaves two orders of magnitude of headroom
    // for lost ends while bounding memory to about 7 MiB per engine (~100 bytes per start).
    static constexpr size_t default_max_outstanding = 65536;

    // max_outstanding 0 is taken as 1.
    explicit pairing_engine(size_t max_outstanding = default_max_outstanding);
    ~pairing_engine() = default;

    pairing_engine(const pairing_engine&)            = delete;
    pairing_engine& operator=(const pairing_engine&) = delete;
    pairing_engine(pairing_engine&& other) noexcept;
    pairing_engine& operator=(pairing_engine&& other) noexcept;

    // Feeds one event. Returns true and fills `out` when it completes a record (an end matched
    // its start, or an UNMAP_FROM_GPU instant). Other ids return false and leave `out` as is.
    bool process(const event& ev, rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;

    // Counts outstanding starts as never ended and forgets them.
    void finish() noexcept;

    const pairing_counters& counters() const noexcept { return m_counters; }
    size_t                  outstanding() const noexcept { return m_starts.size(); }
    size_t                  max_outstanding() const noexcept { return m_max_outstanding; }

private:
    enum class start_kind : uint32_t
    {
        page_fault = 1,
        page_migrate,
        queue_suspend,
    };

    // Identity of a start. Fields a kind does not use stay 0.
    struct start_key
    {
        start_kind kind   = start_kind::page_fault;
        uint32_t   pid    = 0;
        uint32_t   node_a = 0; // fault/queue node, or migrate from_node
        uint32_t   node_b = 0; // migrate to_node
        uint64_t   page   = 0;
        uint64_t   npages = 0; // migrate only

        bool operator==(const start_key& other) const noexcept;
    };

    struct start_key_hash
    {
        size_t operator()(const start_key& key) const noexcept;
    };

    struct outstanding_start;
    using entry = std::pair<const start_key, outstanding_start>;

    // What the record needs from the start, plus the links of the age list (oldest first).
    struct outstanding_start
    {
        uint64_t timestamp      = 0;
        int32_t  trigger        = 0;
        uint32_t prefetch_node  = 0;
        uint32_t preferred_node = 0;
        bool     read_fault     = false;
        entry*   older          = nullptr;
        entry*   newer          = nullptr;
    };

    using start_map = std::unordered_map<start_key, outstanding_start, start_key_hash>;

    static start_key fault_key(const event& ev) noexcept;
    static start_key migrate_key(const event& ev) noexcept;
    static start_key queue_key(const event& ev) noexcept;

    void add_start(const start_key& key, const event& ev) noexcept;
    // Finds and removes the start of `key` when it can pair with an end at end_timestamp.
    bool take_start(const start_key& key, uint64_t end_timestamp,
                    outstanding_start& start) noexcept;
    void link_newest(entry& item) noexcept;
    void unlink(entry& item) noexcept;
    void evict_oldest() noexcept;

    bool finish_fault(const event&                                        ev,
                      rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    bool finish_migrate(const event&                                        ev,
                        rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    bool finish_queue(const event&                                        ev,
                      rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    bool make_unmap(const event&                                        ev,
                    rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;

    size_t           m_max_outstanding = default_max_outstanding;
    start_map        m_starts          = {};
    entry*           m_oldest          = nullptr;
    entry*           m_newest          = nullptr;
    pairing_counters m_counters        = {};
};
} // namespace rocprofiler::kfd
