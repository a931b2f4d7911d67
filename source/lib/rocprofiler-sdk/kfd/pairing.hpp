// MIT License - see LICENSE.
//
// Pairing engine: parsed SMI events of one GPU's fd -> PAGE_MIGRATION records. Pure: no I/O,
// no globals, no exceptions escaping. Not thread-safe: one engine per reader stream (GPU fd).
//
// Pairs (keys include pid and GPU, so the same page faulting on two GPUs or from two
// processes pairs correctly):
//   PAGE_FAULT    = PAGE_FAULT_START (7) .. PAGE_FAULT_END (8)   key (pid, node, page)
//   PAGE_MIGRATE  = MIGRATE_START (5)    .. MIGRATE_END (6)      key (pid, page, npages, from, to)
//   QUEUE_SUSPEND = first QUEUE_EVICTION (9) .. the QUEUE_RESTORE (10) that brings the
//                   eviction depth back to zero                   key (pid, node)
//   UNMAP_FROM_GPU (11) is an instant: a record of its own.
//
// Queue suspensions follow the kernel, not the 0.x reference:
// - Evictions nest. kfd_process_evict_queues() emits one QUEUE_EVICTION per call, but the
//   device queue manager counts (qpd->evicted++: only the first call really stops the
//   queues) and each kfd_process_restore_queues() emits one QUEUE_RESTORE and decrements;
//   the queues run again only when the count returns to zero. SVM, userptr and TTM
//   evictions overlap. So the engine keeps a depth per (pid, node): the record starts at the
//   eviction that took the depth from 0 to 1 (with that eviction's trigger) and ends at the
//   restore that takes it back to 0. Evictions and restores in between produce nothing.
// - A rescheduled restore (" R" suffix, or the proposed id-14 shape) is emitted by
//   kfd_smi_event_queue_restore_rescheduled() when the SVM or userptr restore worker could
//   not finish and requeued itself: it calls no restore_process_queues(), the queues stay
//   evicted. It neither ends the suspension nor changes the depth; it sets `rescheduled` of
//   the record that the later real restore produces. (The 0.x reference ended the record at
//   the R line, which cut the suspension short and made the real restore an orphan end.)
// - A rescheduled restore with no suspension outstanding counts in ends_without_start (its
//   eviction was lost: the kernel emits R only while the queues are evicted).
//
// Rules for every kind:
// - A record is produced only when the start's timestamp is non-zero and <= the end's. An
//   end without an outstanding start, or whose start is later than the end, counts in
//   ends_without_start and produces nothing; in the second case the start stays outstanding.
//   An unmap with timestamp 0 also counts there.
// - A start with timestamp 0 can never produce a record: dropped and counted in
//   starts_aged_out.
// - Memory is bounded: at most max_outstanding starts (a nested suspension is one). When
//   full, the oldest outstanding start (by arrival) is evicted and counted in
//   starts_aged_out. A fault or migrate start whose key is already outstanding replaces the
//   older one (counted in starts_aged_out). The table grows by doubling up to its bound; if
//   that allocation fails it stays at its size and ages out instead.
// - Age bound: a fault or migrate start older than age_bounds (default 10 s; the kernel
//   handles a fault in microseconds to milliseconds and a 2 MiB migration in well under a
//   second) relative to the newest timestamp this engine has seen is dropped and counted in
//   starts_timed_out when an event shows the bound passed, before that event is paired (so
//   an end an hour later does not make a one-hour record). Queue suspensions have no age
//   bound by default: they legitimately last as long as a system suspend (CLOCK_BOOTTIME
//   counts it), and with the depth model they end when the kernel restores. Checked
//   lazily at the head of each kind's arrival list: amortized O(1) per event.
// - Gaps: invalidate(kinds) drops every outstanding start of those kinds and counts them in
//   starts_lost_in_gap. After a gap in queue events the kernel's eviction count of every
//   (pid, node) is unknown: an eviction the gap hid may still be outstanding, and a
//   suspension seen to start after the gap may be nested inside it, so its record would be
//   too short. Suspensions that end within age_bounds::queue_resync_ns (default 10 s) of the
//   first event after the gap are therefore withheld and counted in starts_lost_in_gap too
//   (the kernel's restore workers run within milliseconds and retry every 1-100 ms, so an
//   eviction outstanding for 10 s is not expected). Tracing that starts while a process's
//   queues are already evicted has the same blind spot; the kernel offers no way to read
//   the count, and the engine assumes it is zero when it starts. The caller feeds the engine
//   a kind's events only while a page-migration service traces that kind (both its ids are
//   then enabled: pair_kinds_of_mask), and invalidates the kind when it stops being paired
//   and when it is paired again while some of its events were read unpaired
//   (pair_kinds_to_invalidate). A suspension aged out by the
//   cap opens the same window (its key's count is unknown from then on). The caller invokes it when
//   events of a kind stop reaching the engine (a mask without them, a GPU no longer read, a failed
//   read) or may have been lost (a read of a nearly full FIFO); the engine does it itself for a
//   kernel drop report (id 14 read as dropped events). A start seen before a gap then never pairs
//   with an end after it.
// - Migrate trigger: not part of the key. The kernel prints the same trigger in a
//   migration's start and end and a range's migrations are serialized (per-range migrate
//   lock), so a different end trigger means events were lost between them. The record is
//   still produced with the start's trigger, and the mismatch is counted.
// - Triggers copied into records must be values of the record's C enum: a value outside
//   the enum's declared range becomes its NONE (-1) and counts in fields_out_of_range
//   (a C++ tool switching over an enum holding an undeclared value has undefined behaviour).
// - MIGRATE_END error codes are not part of the record.
#pragma once

#include "rocprofiler-sdk/kfd/parser.hpp"

#include <rocprofiler-sdk/buffer_tracing.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace rocprofiler::kfd
{
struct pairing_counters
{
    uint64_t ends_without_start         = 0; // end whose start is unknown, or later than the end
    uint64_t starts_aged_out            = 0; // evicted by the cap, replaced, or unusable
    uint64_t starts_never_ended         = 0; // counted by finish()
    uint64_t records                    = 0; // records produced
    uint64_t migrate_trigger_mismatches = 0; // paired migrations whose end trigger differed
    uint64_t starts_lost_in_gap         = 0; // dropped by invalidate() or a kernel drop report
    uint64_t starts_timed_out           = 0; // older than the age bound
    uint64_t fields_out_of_range        = 0; // records whose trigger was clamped to NONE
};

// Kinds of starts, as bits for invalidate().
enum pair_kind_bits : uint32_t
{
    pair_kind_page_fault    = 1u << 0,
    pair_kind_page_migrate  = 1u << 1,
    pair_kind_queue_suspend = 1u << 2,
    pair_kind_all = pair_kind_page_fault | pair_kind_page_migrate | pair_kind_queue_suspend,
};

// Pair kinds whose start AND end event ids are both set in an SMI event mask (bit id-1 = id):
// the kinds a stream with that mask can pair. A kind with only one of its ids (a kfd_events
// service tracing QUEUE_EVICTION alone) cannot: its starts would never end (or its ends never
// find a start), and fed to the engine they would count as losses or, for queue suspensions,
// leave an eviction depth that no restore brings back to zero.
uint32_t pair_kinds_of_mask(uint64_t event_mask) noexcept;

// Pair kinds with at least one of their ids set in the mask.
uint32_t pair_kinds_with_an_id_in_mask(uint64_t event_mask) noexcept;

// Pair kinds whose outstanding starts must be dropped when the kinds a stream pairs change
// from `paired_before` to `paired_after` (each within pair_kinds_of_mask of its mask) while
// its mask was `mask_before`: those no longer paired (their ends stop reaching the engine),
// and those paired again that had an id in the mask before (their events, read but not
// paired meanwhile, may be queued still and be paired from the first one; and for queue
// suspensions the kernel's eviction count is unknown).
uint32_t pair_kinds_to_invalidate(uint32_t paired_before, uint32_t paired_after,
                                  uint64_t mask_before) noexcept;

struct age_bounds
{
    uint64_t page_fault_ns    = 10'000'000'000ull;
    uint64_t page_migrate_ns  = 10'000'000'000ull;
    uint64_t queue_suspend_ns = 0; // 0: no bound
    // After a gap in queue events: suspensions ending this soon after it are withheld.
    uint64_t queue_resync_ns = 10'000'000'000ull;
};

class pairing_engine
{
public:
    // An outstanding start is one in-flight kernel operation (a fault being handled, a range
    // migrating, a process's queues evicted on a GPU): realistically hundreds at once, even
    // for a superuser tracing every process. 65536 leaves two orders of magnitude of headroom
    // for lost ends while bounding memory to about 6 MiB per engine (per start one 80-byte
    // pool place and at most two 8-byte buckets: the table starts at 256 buckets and doubles,
    // never past twice the cap). The key's hash is computed once per event; no start
    // allocates.
    static constexpr size_t default_max_outstanding = 65536;
    // Pool places and buckets are numbered with 32 bits: larger caps are taken as this.
    static constexpr size_t largest_max_outstanding = size_t{1} << 30;

    // max_outstanding 0 is taken as 1.
    explicit pairing_engine(size_t     max_outstanding = default_max_outstanding,
                            age_bounds bounds          = age_bounds{});
    ~pairing_engine() = default;

    pairing_engine(const pairing_engine&)            = delete;
    pairing_engine& operator=(const pairing_engine&) = delete;
    pairing_engine(pairing_engine&& other) noexcept;
    pairing_engine& operator=(pairing_engine&& other) noexcept;

    // Feeds one event. Returns true and fills `out` when it completes a record (an end matched
    // its start, or an UNMAP_FROM_GPU instant). Otherwise returns false and leaves `out` as is.
    bool process(const event& ev, rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;

    // process() for one id, for a caller that already knows the event's id (a handler of
    // parse_line_dispatch): the same rules and counters, without the switch on the id. Each
    // takes only an event of its id (page_fault_start: id 7, and so on; id_14: id 14 of
    // either kind; queue_restore: every restore form). Those that can complete a record
    // return true and fill `out` as process() does.
    void on_page_fault_start(const event& ev) noexcept;
    void on_migrate_start(const event& ev) noexcept;
    void on_queue_eviction(const event& ev) noexcept;
    bool on_page_fault_end(const event&                                        ev,
                           rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    bool on_migrate_end(const event&                                        ev,
                        rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    bool on_queue_restore(const event&                                        ev,
                          rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    bool on_unmap_from_gpu(const event&                                        ev,
                           rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    void on_id_14(const event& ev) noexcept;

    // Drops every outstanding start of `kinds` (pair_kind_bits) and counts them in
    // starts_lost_in_gap. Returns how many were dropped.
    uint64_t invalidate(uint32_t kinds) noexcept;

    // Counts outstanding starts as never ended and forgets them.
    void finish() noexcept;

    const pairing_counters& counters() const noexcept { return m_counters; }
    size_t                  outstanding() const noexcept { return m_count; }
    size_t                  max_outstanding() const noexcept { return m_max_outstanding; }
    // Buckets of the table now (a power of two, at most twice max_outstanding rounded up).
    size_t capacity() const noexcept { return m_capacity; }

private:
    static constexpr uint32_t nil        = UINT32_MAX;
    static constexpr size_t   kind_count = 3;

    enum class kind : uint8_t
    {
        empty = 0,
        page_fault,
        page_migrate,
        queue_suspend,
    };

    // Identity of a start, as four 64-bit words (compared and hashed as words, with no padding
    // to keep zero). Fields a kind does not use stay 0.
    struct key
    {
        uint64_t page        = 0;
        uint64_t npages      = 0; // migrate only
        uint64_t ids         = 0; // pid << 32 | node_a (fault/queue node, or migrate from_node)
        uint64_t to_and_kind = 0; // node_b (migrate to_node) << 8 | kind

        kind what() const noexcept { return static_cast<kind>(to_and_kind & 0xff); }
        bool operator==(const key& other) const noexcept;
    };

    // One outstanding start: the key, what the record needs from the start, and the links of
    // its kind's arrival list. It stays at its place in the pool while outstanding (erasing
    // or growing moves only buckets), so the links are pool indices that never need fixing.
    // A free place links the free list through `newer`.
    struct start
    {
        key      id             = {};
        uint64_t timestamp      = 0;
        uint64_t arrival        = 0; // engine-wide arrival number: oldest-first across kinds
        int32_t  trigger        = 0;
        uint32_t prefetch_node  = 0;
        uint32_t preferred_node = 0;
        uint32_t depth          = 0; // queue suspensions: evictions not yet restored
        uint32_t older          = nil;
        uint32_t newer          = nil;
        bool     read_fault     = false;
        bool     rescheduled    = false;
    };

    // One bucket of the open-addressing index (linear probing, at most half full,
    // backward-shift deletion): the low 32 bits of the key's hash (its home is tag & mask)
    // and the start's place in the pool, nil when the bucket is empty. 8 bytes: a probe
    // reads eight buckets per cache line and looks at a start only when its tag matches.
    struct bucket
    {
        uint32_t tag   = 0;
        uint32_t index = nil;
    };

    struct arrival_list
    {
        uint32_t oldest = nil;
        uint32_t newest = nil;
    };

    static key      fault_key(const event& ev) noexcept;
    static key      migrate_key(const event& ev) noexcept;
    static key      queue_key(const event& ev) noexcept;
    static uint64_t hash_of(const key& k) noexcept;
    static size_t   list_of(kind k) noexcept { return static_cast<size_t>(k) - 1; }

    // Table primitives. find() returns the bucket of k, or nil with `free_bucket` set to
    // where k would be inserted. insert() returns the pool index of a start keyed k whose other
    // fields the caller stores.
    uint32_t find(const key& k, uint64_t hash, uint32_t& free_bucket) const noexcept;
    uint32_t insert(const key& k, uint64_t hash, uint32_t free_bucket) noexcept;
    void     erase_bucket(uint32_t bucket_index) noexcept;
    void     erase_start(uint32_t index) noexcept; // by pool index (finds its bucket)
    bool     grow() noexcept;
    void     link_newest(uint32_t index) noexcept;
    void     unlink(uint32_t index) noexcept;
    void     note_head(uint32_t index) noexcept;
    void     evict_oldest() noexcept;
    void     expire_heads() noexcept;
    uint64_t bound_of(kind k) const noexcept;
    uint64_t deadline_of(uint32_t index) const noexcept;

    void add_start(const key& k, const event& ev) noexcept;
    void add_eviction(const event& ev) noexcept;
    void note_rescheduled(const event& ev) noexcept;
    // The bucket of the start of `k` when it can pair with an end at end_timestamp, else nil
    // (counted in ends_without_start). The caller erases it after reading it.
    uint32_t find_start(const key& k, uint64_t end_timestamp) noexcept;

    bool    finish_fault(const event&                                        ev,
                         rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    bool    finish_migrate(const event&                                        ev,
                           rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    bool    finish_queue(const event&                                        ev,
                         rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    bool    make_unmap(const event&                                        ev,
                       rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    int32_t checked_trigger(int32_t value, int32_t last) noexcept;
    // What every event does before its kind's rule: the newest timestamp, the age bound, the
    // resync window after a gap.
    void note_time(const event& ev) noexcept;
    void note_time_rarely(uint64_t timestamp) noexcept;
    void request_queue_resync() noexcept;
    void restore(const event& ev, bool& produced,
                 rocprofiler_buffer_tracing_page_migration_record_t& out) noexcept;
    void id_14(const event& ev) noexcept;

    start& start_at(uint32_t bucket_index) noexcept
    {
        return m_starts[m_buckets[bucket_index].index];
    }
    const start& start_at(uint32_t bucket_index) const noexcept
    {
        return m_starts[m_buckets[bucket_index].index];
    }

    size_t     m_max_outstanding = default_max_outstanding;
    size_t     m_max_capacity    = 0;
    age_bounds m_bounds          = {};
    // One allocation holds m_capacity buckets, then m_capacity / 2 pool places (the most
    // starts a table at most half full holds).
    std::unique_ptr<std::byte[]> m_storage;
    bucket*                      m_buckets   = nullptr;
    start*                       m_starts    = nullptr;
    size_t                       m_capacity  = 0;
    uint32_t                     m_pool_used = 0;   // places ever taken since the last reset
    uint32_t                     m_free      = nil; // free list of places below m_pool_used
    size_t                       m_count     = 0;
    uint64_t                     m_arrivals  = 0;
    uint64_t                     m_newest    = 0; // newest timestamp seen
    // No head of an arrival list can time out while m_newest <= m_next_deadline: a lower
    // bound of the heads' deadlines (timestamp + bound), lowered whenever a head changes and
    // made exact again by expire_heads(). 0 while m_queue_resync_pending: the per-event check
    // of both is one compare.
    uint64_t m_next_deadline = UINT64_MAX;
    // After a gap in queue events: set until the next event's timestamp starts the window
    // in which suspensions are withheld (see the header comment).
    bool             m_queue_resync_pending = false;
    uint64_t         m_queue_resync_until   = 0;
    arrival_list     m_lists[kind_count]    = {};
    pairing_counters m_counters             = {};
};
} // namespace rocprofiler::kfd
