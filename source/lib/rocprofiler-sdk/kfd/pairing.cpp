// MIT License - see LICENSE.
//
// Pairing engine (rules in pairing.hpp). Outstanding starts live in a pool of fixed places
// (a free list reuses them), found through an open-addressing index of 8-byte buckets
// (linear probing, at most half full, backward-shift deletion so that there are no
// tombstones). Each kind's starts also form a doubly-linked list in arrival order through
// pool indices: the oldest start of a kind (age bound) and of all kinds (cap) is found in
// O(1). Deleting or growing moves buckets only, never a start, so no link is ever re-pointed.
#include "rocprofiler-sdk/kfd/pairing.hpp"

#include "common/kfd_abi.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace rocprofiler::kfd
{
namespace
{
using record_t = rocprofiler_buffer_tracing_page_migration_record_t;

// The first table: 256 buckets (2 KiB, and 128 pool places: 12 KiB in all). A kernel stream
// keeps few starts outstanding (fewer than 32 on the benchmark's realistic mix), so the table
// stays at most an eighth full: most probes and backward shifts stop at the first bucket,
// which the CPU then predicts. At 64 buckets (up to half full) parse + pair on the realistic
// mix took 8% longer (bench-kfd-hot-path, BENCHMARKS.md).
constexpr size_t initial_capacity = 256;

// Zeroes the whole record (no stale bytes in the union or padding) and fills the header.
void
begin_record(record_t& out, rocprofiler_page_migration_operation_t operation,
             uint64_t start_timestamp, uint64_t end_timestamp, uint32_t pid) noexcept
{
    // memcpy of a zero record: a memset of this size compiles to a slow `rep stos`.
    static constexpr record_t zero_record{};
    std::memcpy(&out, &zero_record, sizeof(out));
    out.size            = sizeof(out);
    out.kind            = ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION;
    out.operation       = operation;
    out.start_timestamp = start_timestamp;
    out.end_timestamp   = end_timestamp;
    out.pid             = pid;
}

uint64_t
timestamp_of(const event& ev) noexcept
{
    return ev.has_timestamp ? ev.timestamp : 0;
}

// Folds the high half of a 128-bit product into the low half: one multiply that spreads
// every input bit over the low bits, which the table's mask keeps.
uint64_t
fold_multiply(uint64_t a, uint64_t b) noexcept
{
    const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
    return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

size_t
power_of_two_at_least(size_t n) noexcept
{
    size_t p = 1;
    while(p < n && p < (size_t{1} << 40))
        p <<= 1;
    return p;
}

// Copies a checked trigger into a record's C enum field.
template <typename Enum>
void
store_trigger(Enum& field, int32_t value) noexcept
{
    static_assert(sizeof(Enum) == sizeof(int32_t), "trigger fields are 32-bit");
    field = static_cast<Enum>(value); // value is one of the enum's declared values or -1
}

// Each pair kind's start and end ids, as mask bits.
struct pair_kind_ids
{
    uint32_t kind;
    uint64_t start;
    uint64_t end;
};

constexpr pair_kind_ids pair_kind_table[] = {
    {pair_kind_page_fault, kfd_abi::event_mask(kfd_abi::event_page_fault_start),
     kfd_abi::event_mask(kfd_abi::event_page_fault_end)},
    {pair_kind_page_migrate, kfd_abi::event_mask(kfd_abi::event_migrate_start),
     kfd_abi::event_mask(kfd_abi::event_migrate_end)},
    {pair_kind_queue_suspend, kfd_abi::event_mask(kfd_abi::event_queue_eviction),
     kfd_abi::event_mask(kfd_abi::event_queue_restore)},
};
} // namespace

uint32_t
pair_kinds_of_mask(uint64_t event_mask) noexcept
{
    uint32_t kinds = 0;
    for(const auto& k : pair_kind_table)
        if((event_mask & k.start) != 0 && (event_mask & k.end) != 0) kinds |= k.kind;
    return kinds;
}

uint32_t
pair_kinds_with_an_id_in_mask(uint64_t event_mask) noexcept
{
    uint32_t kinds = 0;
    for(const auto& k : pair_kind_table)
        if((event_mask & (k.start | k.end)) != 0) kinds |= k.kind;
    return kinds;
}

uint32_t
pair_kinds_to_invalidate(uint32_t paired_before, uint32_t paired_after,
                         uint64_t mask_before) noexcept
{
    const uint32_t no_longer = paired_before & ~paired_after;
    const uint32_t again     = paired_after & ~paired_before;
    return no_longer | (again & pair_kinds_with_an_id_in_mask(mask_before));
}

pairing_engine::pairing_engine(size_t max_outstanding, age_bounds bounds)
    : m_max_outstanding{max_outstanding == 0                        ? 1
                        : max_outstanding > largest_max_outstanding ? largest_max_outstanding
                                                                    : max_outstanding},
      m_bounds{bounds}
{
    m_max_capacity = power_of_two_at_least(m_max_outstanding * 2);
    if(m_max_capacity < 2) m_max_capacity = 2;
}

pairing_engine::pairing_engine(pairing_engine&& other) noexcept
{
    *this = std::move(other);
}

pairing_engine&
pairing_engine::operator=(pairing_engine&& other) noexcept
{
    if(this == &other) return *this;
    m_max_outstanding      = other.m_max_outstanding;
    m_max_capacity         = other.m_max_capacity;
    m_bounds               = other.m_bounds;
    m_storage              = std::move(other.m_storage);
    m_buckets              = other.m_buckets;
    m_starts               = other.m_starts;
    m_capacity             = other.m_capacity;
    m_pool_used            = other.m_pool_used;
    m_free                 = other.m_free;
    m_count                = other.m_count;
    m_arrivals             = other.m_arrivals;
    m_newest               = other.m_newest;
    m_next_deadline        = other.m_next_deadline;
    m_queue_resync_pending = other.m_queue_resync_pending;
    m_queue_resync_until   = other.m_queue_resync_until;
    m_counters             = other.m_counters;
    for(size_t i = 0; i < kind_count; ++i)
        m_lists[i] = other.m_lists[i], other.m_lists[i] = arrival_list{};
    other.m_buckets       = nullptr;
    other.m_starts        = nullptr;
    other.m_capacity      = 0;
    other.m_pool_used     = 0;
    other.m_free          = nil;
    other.m_count         = 0;
    other.m_next_deadline = UINT64_MAX;
    return *this;
}

// ---------------------------------------------------------------- keys

namespace
{
uint64_t
ids_of(uint32_t pid, uint32_t node) noexcept
{
    return (uint64_t{pid} << 32) | node;
}

uint64_t
rotate_left(uint64_t value, unsigned bits) noexcept
{
    return (value << bits) | (value >> (64 - bits));
}
} // namespace

pairing_engine::key
pairing_engine::fault_key(const event& ev) noexcept
{
    key k{};
    k.page        = ev.page;
    k.ids         = ids_of(ev.pid, ev.node);
    k.to_and_kind = static_cast<uint64_t>(kind::page_fault);
    return k;
}

pairing_engine::key
pairing_engine::migrate_key(const event& ev) noexcept
{
    key k{};
    k.page        = ev.page;
    k.npages      = ev.npages;
    k.ids         = ids_of(ev.pid, ev.from_node);
    k.to_and_kind = (uint64_t{ev.to_node} << 8) | static_cast<uint64_t>(kind::page_migrate);
    return k;
}

pairing_engine::key
pairing_engine::queue_key(const event& ev) noexcept
{
    key k{};
    k.ids         = ids_of(ev.pid, ev.node);
    k.to_and_kind = static_cast<uint64_t>(kind::queue_suspend);
    return k;
}

// hash_of and find run for every start and end: inlined into their callers.
__attribute__((always_inline)) inline uint64_t
pairing_engine::hash_of(const key& k) noexcept
{
    // One folded multiply (wyhash's mixing step) of two words that together hold every bit of
    // the key: npages rotated into the top bits the page leaves unused (a page is below 2^52:
    // kfd_abi page addresses), and to_node with the kind spread by a multiply over the ids.
    // Keys that still collide only cost a longer probe.
    const uint64_t range = k.page ^ rotate_left(k.npages, 52) ^ 0xa0761d6478bd642full;
    const uint64_t owner = k.ids ^ (k.to_and_kind * 0x8ebc6af09c88c6e3ull) ^ 0xe7037ed1a0b428dbull;
    return fold_multiply(range, owner);
}

__attribute__((always_inline)) inline bool
pairing_engine::key::operator==(const key& other) const noexcept
{
    // Word by word without a branch per word, on values (a byte-wise compare would force
    // the key, built in registers, through the stack: a stalled store-to-load forward).
    const uint64_t differ = (page ^ other.page) | (npages ^ other.npages) | (ids ^ other.ids) |
                            (to_and_kind ^ other.to_and_kind);
    return differ == 0;
}

// ---------------------------------------------------------------- table

__attribute__((always_inline)) inline uint32_t
pairing_engine::find(const key& k, uint64_t hash, uint32_t& free_bucket) const noexcept
{
    free_bucket = nil;
    if(m_capacity == 0) return nil;
    const size_t   mask = m_capacity - 1;
    const uint32_t tag  = static_cast<uint32_t>(hash);
    // At most half full: the probe always reaches an empty bucket.
    for(size_t i = tag & mask;; i = (i + 1) & mask)
    {
        const bucket& b = m_buckets[i];
        if(b.index == nil)
        {
            free_bucket = static_cast<uint32_t>(i);
            return nil;
        }
        if(b.tag == tag && m_starts[b.index].id == k) return static_cast<uint32_t>(i);
    }
}

bool
pairing_engine::grow() noexcept
{
    if(m_capacity >= m_max_capacity) return false;
    const size_t capacity =
        m_capacity == 0 ? std::min(initial_capacity, m_max_capacity) : m_capacity * 2;
    const size_t bucket_bytes = capacity * sizeof(bucket);
    static_assert(sizeof(bucket) % alignof(start) == 0, "the pool follows the buckets aligned");
    std::unique_ptr<std::byte[]> storage;
    try
    {
        storage.reset(new std::byte[bucket_bytes + (capacity / 2) * sizeof(start)]);
    }
    catch(...) // std::bad_alloc: keep the table as it is
    {
        return false;
    }
    auto* buckets = reinterpret_cast<bucket*>(storage.get());
    auto* starts  = reinterpret_cast<start*>(storage.get() + bucket_bytes);
    for(size_t i = 0; i < capacity; ++i)
        new(&buckets[i]) bucket{};
    // Starts keep their places (and so their links and the free list); buckets are re-homed.
    for(uint32_t i = 0; i < m_pool_used; ++i)
        new(&starts[i]) start{m_starts[i]};
    const size_t mask = capacity - 1;
    for(size_t i = 0; i < m_capacity; ++i)
    {
        if(m_buckets[i].index == nil) continue;
        size_t to = m_buckets[i].tag & mask;
        while(buckets[to].index != nil)
            to = (to + 1) & mask;
        buckets[to] = m_buckets[i];
    }
    m_storage  = std::move(storage);
    m_buckets  = buckets;
    m_starts   = starts;
    m_capacity = capacity;
    return true;
}

__attribute__((always_inline)) inline uint32_t
pairing_engine::insert(const key& k, uint64_t hash, uint32_t free_bucket) noexcept
{
    bool moved = false; // buckets moved: free_bucket must be found again
    if(m_count >= m_max_outstanding)
    {
        evict_oldest();
        moved = true;
    }
    if((m_count + 1) * 2 > m_capacity)
    {
        if(!grow())
        {
            if(m_capacity == 0) return nil;
            // Cannot grow (allocation failed): stay at most half full by aging out.
            while(m_count > 0 && (m_count + 1) * 2 > m_capacity)
                evict_oldest();
        }
        moved = true;
    }
    if(moved) find(k, hash, free_bucket);
    if(free_bucket == nil) return nil;
    // A free place, else the next never used one (there is one: m_count < m_capacity / 2
    // and every place below m_pool_used is outstanding or free).
    uint32_t index = m_free;
    if(index != nil)
        m_free = m_starts[index].newer;
    else
        index = m_pool_used++;
    // The key word by word: a copy of the whole key (built in registers) goes through the
    // stack and stalls on reloading it. The caller (add_start, add_eviction) stores every
    // other field.
    start& s               = m_starts[index];
    s.id.page              = k.page;
    s.id.npages            = k.npages;
    s.id.ids               = k.ids;
    s.id.to_and_kind       = k.to_and_kind;
    m_buckets[free_bucket] = bucket{static_cast<uint32_t>(hash), index};
    ++m_count;
    return index;
}

__attribute__((always_inline)) inline void
pairing_engine::erase_bucket(uint32_t bucket_index) noexcept
{
    const uint32_t index = m_buckets[bucket_index].index;
    unlink(index);
    m_starts[index].newer = m_free;
    m_free                = index;
    const size_t mask     = m_capacity - 1;
    size_t       hole     = bucket_index;
    for(size_t next = (hole + 1) & mask; m_buckets[next].index != nil; next = (next + 1) & mask)
    {
        const size_t home = m_buckets[next].tag & mask;
        // Move `next` into the hole unless its home lies cyclically in (hole, next].
        const bool stays =
            (hole <= next) ? (hole < home && home <= next) : (hole < home || home <= next);
        if(stays) continue;
        m_buckets[hole] = m_buckets[next];
        hole            = next;
    }
    m_buckets[hole].index = nil;
    --m_count;
}

void
pairing_engine::erase_start(uint32_t index) noexcept
{
    const key& k           = m_starts[index].id;
    uint32_t   free_bucket = nil;
    const auto found       = find(k, hash_of(k), free_bucket);
    if(found != nil) erase_bucket(found); // always found: every outstanding start has a bucket
}

uint64_t
pairing_engine::deadline_of(uint32_t index) const noexcept
{
    const start&   s     = m_starts[index];
    const uint64_t bound = bound_of(s.id.what());
    if(bound == 0) return UINT64_MAX;
    // Stored timestamps are at most m_newest, so the start times out once m_newest passes
    // timestamp + bound (saturated).
    return s.timestamp > UINT64_MAX - bound ? UINT64_MAX : s.timestamp + bound;
}

// `index` became the head of its list: the deadline bound must not exceed its deadline.
inline void
pairing_engine::note_head(uint32_t index) noexcept
{
    const uint64_t deadline = deadline_of(index);
    if(deadline < m_next_deadline) m_next_deadline = deadline;
}

__attribute__((always_inline)) inline void
pairing_engine::link_newest(uint32_t index) noexcept
{
    start&        s    = m_starts[index];
    arrival_list& list = m_lists[list_of(s.id.what())];
    s.older            = list.newest;
    s.newer            = nil;
    if(list.newest != nil)
        m_starts[list.newest].newer = index;
    else
    {
        list.oldest = index;
        note_head(index);
    }
    list.newest = index;
}

__attribute__((always_inline)) inline void
pairing_engine::unlink(uint32_t index) noexcept
{
    start&        s    = m_starts[index];
    arrival_list& list = m_lists[list_of(s.id.what())];
    if(s.older != nil)
        m_starts[s.older].newer = s.newer;
    else
    {
        list.oldest = s.newer;
        if(s.newer != nil) note_head(s.newer);
    }
    if(s.newer != nil)
        m_starts[s.newer].older = s.older;
    else
        list.newest = s.older;
    // s.older and s.newer are left as they are: the caller links the start again or frees it.
}

// The next event with a timestamp opens the resync window (note_time_rarely).
void
pairing_engine::request_queue_resync() noexcept
{
    m_queue_resync_pending = true;
    m_next_deadline        = 0; // so that note_time's one compare sees it
}

void
pairing_engine::evict_oldest() noexcept
{
    uint32_t oldest = nil;
    for(const auto& list : m_lists)
        if(list.oldest != nil &&
           (oldest == nil || m_starts[list.oldest].arrival < m_starts[oldest].arrival))
            oldest = list.oldest;
    if(oldest == nil) return;
    // A suspension forgotten this way leaves its key's eviction count unknown, as a gap does.
    if(m_starts[oldest].id.what() == kind::queue_suspend) request_queue_resync();
    erase_start(oldest);
    ++m_counters.starts_aged_out;
}

uint64_t
pairing_engine::bound_of(kind k) const noexcept
{
    switch(k)
    {
    case kind::page_fault:
        return m_bounds.page_fault_ns;
    case kind::page_migrate:
        return m_bounds.page_migrate_ns;
    case kind::queue_suspend:
        return m_bounds.queue_suspend_ns;
    case kind::empty:
        break;
    }
    return 0;
}

// Runs when m_newest passed the deadline bound: drops every head past its bound, then makes
// the bound exact (the earliest deadline of the remaining heads).
void
pairing_engine::expire_heads() noexcept
{
    for(kind k : {kind::page_fault, kind::page_migrate, kind::queue_suspend})
    {
        const uint64_t bound = bound_of(k);
        if(bound == 0) continue;
        arrival_list& list = m_lists[list_of(k)];
        while(list.oldest != nil && m_newest - m_starts[list.oldest].timestamp > bound)
        {
            erase_start(list.oldest);
            ++m_counters.starts_timed_out;
            if(k == kind::queue_suspend) request_queue_resync(); // as for the cap
        }
    }
    m_next_deadline = UINT64_MAX;
    for(const auto& list : m_lists)
        if(list.oldest != nil) note_head(list.oldest);
}

uint64_t
pairing_engine::invalidate(uint32_t kinds) noexcept
{
    uint64_t dropped = 0;
    for(kind k : {kind::page_fault, kind::page_migrate, kind::queue_suspend})
    {
        if((kinds & (1u << list_of(k))) == 0) continue;
        arrival_list& list = m_lists[list_of(k)];
        while(list.oldest != nil)
        {
            erase_start(list.oldest);
            ++dropped;
        }
    }
    m_counters.starts_lost_in_gap += dropped;
    if((kinds & pair_kind_queue_suspend) != 0) request_queue_resync();
    return dropped;
}

// ---------------------------------------------------------------- starts and ends

__attribute__((always_inline)) inline void
pairing_engine::add_start(const key& k, const event& ev) noexcept
{
    const uint64_t timestamp = timestamp_of(ev);
    if(timestamp == 0)
    {
        ++m_counters.starts_aged_out; // could never pair: a record needs a start time
        return;
    }
    const uint64_t hash        = hash_of(k);
    uint32_t       free_bucket = nil;
    const uint32_t found       = find(k, hash, free_bucket);
    uint32_t       index       = nil;
    if(found != nil)
    {
        ++m_counters.starts_aged_out; // a newer start with the same key replaces it
        index = m_buckets[found].index;
        unlink(index);
    }
    else
    {
        index = insert(k, hash, free_bucket);
        if(index == nil)
        {
            ++m_counters.starts_aged_out;
            return;
        }
    }
    // Every field but the key and the links (link_newest sets those), new or replaced.
    start& s         = m_starts[index];
    s.timestamp      = timestamp;
    s.arrival        = m_arrivals++;
    s.trigger        = ev.trigger;
    s.prefetch_node  = ev.prefetch_node;
    s.preferred_node = ev.preferred_node;
    s.depth          = 0;
    s.read_fault     = ev.read_fault;
    s.rescheduled    = false;
    link_newest(index);
}

void
pairing_engine::add_eviction(const event& ev) noexcept
{
    const uint64_t timestamp = timestamp_of(ev);
    if(timestamp == 0)
    {
        ++m_counters.starts_aged_out;
        return;
    }
    const key      k           = queue_key(ev);
    const uint64_t hash        = hash_of(k);
    uint32_t       free_bucket = nil;
    const uint32_t found       = find(k, hash, free_bucket);
    if(found != nil)
    {
        // Nested: the queues are already evicted; only the count changes (qpd->evicted++).
        start& s = start_at(found);
        if(s.depth < UINT32_MAX) ++s.depth;
        return;
    }
    const uint32_t index = insert(k, hash, free_bucket);
    if(index == nil)
    {
        ++m_counters.starts_aged_out;
        return;
    }
    // Every field but the key and the links (link_newest sets those).
    start& s         = m_starts[index];
    s.timestamp      = timestamp;
    s.arrival        = m_arrivals++;
    s.trigger        = ev.trigger; // the first eviction's trigger
    s.prefetch_node  = 0;
    s.preferred_node = 0;
    s.depth          = 1;
    s.read_fault     = false;
    s.rescheduled    = false;
    link_newest(index);
}

void
pairing_engine::note_rescheduled(const event& ev) noexcept
{
    const key      k           = queue_key(ev);
    uint32_t       free_bucket = nil;
    const uint32_t found       = find(k, hash_of(k), free_bucket);
    if(found == nil || timestamp_of(ev) == 0 || start_at(found).timestamp > timestamp_of(ev))
    {
        ++m_counters.ends_without_start; // R is only emitted while the queues are evicted
        return;
    }
    start_at(found).rescheduled = true;
}

__attribute__((always_inline)) inline uint32_t
pairing_engine::find_start(const key& k, uint64_t end_timestamp) noexcept
{
    uint32_t       free_bucket = nil;
    const uint32_t found       = find(k, hash_of(k), free_bucket);
    // Stored starts have a non-zero timestamp, so an end at 0 never pairs either.
    if(found == nil || start_at(found).timestamp > end_timestamp)
    {
        ++m_counters.ends_without_start;
        return nil;
    }
    return found;
}

int32_t
pairing_engine::checked_trigger(int32_t value, int32_t last) noexcept
{
    if(value >= 0 && value < last) return value;
    ++m_counters.fields_out_of_range;
    return -1; // every trigger enum's NONE
}

// The finishers are inlined into process() and their entry points, as the starts are.
__attribute__((always_inline)) inline bool
pairing_engine::finish_fault(const event& ev, record_t& out) noexcept
{
    const uint64_t end   = timestamp_of(ev);
    const uint32_t found = find_start(fault_key(ev), end);
    if(found == nil) return false;
    const start& first = start_at(found); // read in place, erased once the record is built

    begin_record(out, ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT, first.timestamp, end, ev.pid);
    out.page_fault.read_fault = first.read_fault ? 1 : 0;
    out.page_fault.migrated   = ev.migrated ? 1 : 0;
    out.page_fault.node_id    = ev.node;
    out.page_fault.address    = ev.page << kfd_abi::page_shift;
    erase_bucket(found);
    return true;
}

__attribute__((always_inline)) inline bool
pairing_engine::finish_migrate(const event& ev, record_t& out) noexcept
{
    const uint64_t end   = timestamp_of(ev);
    const uint32_t found = find_start(migrate_key(ev), end);
    if(found == nil) return false;
    const start& first = start_at(found); // read in place, erased once the record is built
    if(first.trigger != ev.trigger) ++m_counters.migrate_trigger_mismatches;

    begin_record(out, ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE, first.timestamp, end, ev.pid);
    out.page_migrate.start_addr     = ev.page << kfd_abi::page_shift;
    out.page_migrate.end_addr       = ((ev.page + ev.npages) << kfd_abi::page_shift) - 1;
    out.page_migrate.from_node      = ev.from_node;
    out.page_migrate.to_node        = ev.to_node;
    out.page_migrate.prefetch_node  = first.prefetch_node;
    out.page_migrate.preferred_node = first.preferred_node;
    store_trigger(out.page_migrate.trigger,
                  checked_trigger(first.trigger, ROCPROFILER_PAGE_MIGRATION_TRIGGER_LAST));
    erase_bucket(found);
    return true;
}

__attribute__((always_inline)) inline bool
pairing_engine::finish_queue(const event& ev, record_t& out) noexcept
{
    const key      k           = queue_key(ev);
    const uint64_t end         = timestamp_of(ev);
    uint32_t       free_bucket = nil;
    const uint32_t found       = find(k, hash_of(k), free_bucket);
    if(found == nil || start_at(found).timestamp > end)
    {
        ++m_counters.ends_without_start;
        return false;
    }
    start& s = start_at(found);
    if(s.depth > 1)
    {
        --s.depth; // an inner restore: the queues stay evicted
        return false;
    }
    // What the record needs from the start, read before erasing it.
    const uint64_t start_timestamp = s.timestamp;
    const int32_t  trigger         = s.trigger;
    const bool     rescheduled     = s.rescheduled;
    erase_bucket(found);
    if(end <= m_queue_resync_until)
    {
        // Soon after a gap: this suspension may be nested in an eviction the gap hid.
        ++m_counters.starts_lost_in_gap;
        return false;
    }

    begin_record(out, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND, start_timestamp, end, ev.pid);
    out.queue_suspend.rescheduled = rescheduled ? 1 : 0;
    out.queue_suspend.node_id     = ev.node;
    store_trigger(out.queue_suspend.trigger,
                  checked_trigger(trigger, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_LAST));
    return true;
}

__attribute__((always_inline)) inline bool
pairing_engine::make_unmap(const event& ev, record_t& out) noexcept
{
    const uint64_t timestamp = timestamp_of(ev);
    if(timestamp == 0)
    {
        ++m_counters.ends_without_start; // a record may never have start_timestamp 0
        return false;
    }
    begin_record(out, ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU, timestamp, timestamp, ev.pid);
    out.unmap_from_gpu.node_id    = ev.node;
    out.unmap_from_gpu.start_addr = ev.page << kfd_abi::page_shift;
    out.unmap_from_gpu.end_addr   = (ev.page + ev.npages) << kfd_abi::page_shift;
    store_trigger(
        out.unmap_from_gpu.trigger,
        checked_trigger(ev.trigger, ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU_TRIGGER_LAST));
    return true;
}

__attribute__((always_inline)) inline void
pairing_engine::note_time(const event& ev) noexcept
{
    // Before pairing: an end that shows its start is past the bound must not pair with it.
    // A select, not a branch: interleaved clocks make "newer than the newest" random. A
    // timestamp of 0 leaves m_newest as it is.
    const uint64_t timestamp = timestamp_of(ev);
    m_newest                 = timestamp > m_newest ? timestamp : m_newest;
    // One compare for both rare cases: a head may be past its bound, or a queue resync waits
    // for this timestamp (m_next_deadline is 0 then).
    if(m_newest > m_next_deadline) note_time_rarely(timestamp);
}

// note_time's rare work, for an event whose timestamp (0: none) took m_newest past
// m_next_deadline.
__attribute__((noinline)) void
pairing_engine::note_time_rarely(uint64_t timestamp) noexcept
{
    if(timestamp == 0) return; // an event without a time neither ages starts nor opens the window
    expire_heads();            // makes m_next_deadline exact again (it may request a resync too)
    if(m_queue_resync_pending)
    {
        m_queue_resync_pending = false;
        m_queue_resync_until   = timestamp + m_bounds.queue_resync_ns;
    }
}

__attribute__((always_inline)) inline void
pairing_engine::restore(const event& ev, bool& produced, record_t& out) noexcept
{
    if(ev.rescheduled)
        note_rescheduled(ev);
    else
        produced = finish_queue(ev, out);
}

__attribute__((always_inline)) inline void
pairing_engine::id_14(const event& ev) noexcept
{
    if(ev.kind14 == id14_kind::rescheduled_restore)
        note_rescheduled(ev);
    else if(ev.kind14 == id14_kind::dropped_events)
        invalidate(pair_kind_all); // the kernel lost events of this client: ends may be gone
}

bool
pairing_engine::process(const event& ev, record_t& out) noexcept
{
    note_time(ev);
    bool produced = false;
    switch(ev.id)
    {
    case kfd_abi::event_page_fault_start:
        add_start(fault_key(ev), ev);
        break;
    case kfd_abi::event_migrate_start:
        add_start(migrate_key(ev), ev);
        break;
    case kfd_abi::event_queue_eviction:
        add_eviction(ev);
        break;
    case kfd_abi::event_page_fault_end:
        produced = finish_fault(ev, out);
        break;
    case kfd_abi::event_migrate_end:
        produced = finish_migrate(ev, out);
        break;
    case kfd_abi::event_queue_restore:
        restore(ev, produced, out);
        break;
    case kfd_abi::event_id_14:
        id_14(ev);
        break;
    case kfd_abi::event_unmap_from_gpu:
        produced = make_unmap(ev, out);
        break;
    default:
        break; // no pairing role (VM fault, thermal, reset, process)
    }
    if(produced) ++m_counters.records;
    return produced;
}

// ---------------------------------------------------------------- one entry point per id

void
pairing_engine::on_page_fault_start(const event& ev) noexcept
{
    note_time(ev);
    add_start(fault_key(ev), ev);
}

void
pairing_engine::on_migrate_start(const event& ev) noexcept
{
    note_time(ev);
    add_start(migrate_key(ev), ev);
}

void
pairing_engine::on_queue_eviction(const event& ev) noexcept
{
    note_time(ev);
    add_eviction(ev);
}

bool
pairing_engine::on_page_fault_end(const event& ev, record_t& out) noexcept
{
    note_time(ev);
    const bool produced = finish_fault(ev, out);
    m_counters.records += produced ? 1 : 0;
    return produced;
}

bool
pairing_engine::on_migrate_end(const event& ev, record_t& out) noexcept
{
    note_time(ev);
    const bool produced = finish_migrate(ev, out);
    m_counters.records += produced ? 1 : 0;
    return produced;
}

bool
pairing_engine::on_queue_restore(const event& ev, record_t& out) noexcept
{
    note_time(ev);
    bool produced = false;
    restore(ev, produced, out);
    m_counters.records += produced ? 1 : 0;
    return produced;
}

bool
pairing_engine::on_unmap_from_gpu(const event& ev, record_t& out) noexcept
{
    note_time(ev);
    const bool produced = make_unmap(ev, out);
    m_counters.records += produced ? 1 : 0;
    return produced;
}

void
pairing_engine::on_id_14(const event& ev) noexcept
{
    note_time(ev);
    id_14(ev);
}

void
pairing_engine::finish() noexcept
{
    m_counters.starts_never_ended += m_count;
    for(size_t i = 0; i < m_capacity; ++i)
        m_buckets[i] = bucket{};
    for(auto& list : m_lists)
        list = arrival_list{};
    m_pool_used     = 0;
    m_free          = nil;
    m_count         = 0;
    m_next_deadline = m_queue_resync_pending ? 0 : UINT64_MAX; // no heads; a resync may wait
}
} // namespace rocprofiler::kfd
