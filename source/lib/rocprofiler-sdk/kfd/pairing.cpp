// MIT License - see LICENSE.
//
// Pairing engine (rules in pairing.hpp). Outstanding starts live in an unordered_map whose
// values also form an intrusive doubly-linked list in arrival order, so that the oldest start
// is found in O(1) when the cap is reached. Node addresses of an unordered_map are stable
// across rehashing, which is what makes the intrusive links safe.
#include "rocprofiler-sdk/kfd/pairing.hpp"

#include "common/kfd_abi.hpp"

#include <cstring>
#include <new>

namespace rocprofiler::kfd
{
namespace
{
using record_t = rocprofiler_buffer_tracing_page_migration_record_t;

// Trigger fields are C enums; the kernel's value is stored as printed, even when it is not
// one of the enumerators, which a static_cast to the enum type would not allow.
template <typename Enum>
void
store_trigger(Enum& field, int32_t value) noexcept
{
    static_assert(sizeof(Enum) == sizeof(int32_t), "trigger fields are 32-bit");
    std::memcpy(&field, &value, sizeof(value));
}

// Zeroes the whole record (no stale bytes in the union or padding) and fills the header.
void
begin_record(record_t& out, rocprofiler_page_migration_operation_t operation,
             uint64_t start_timestamp, uint64_t end_timestamp, uint32_t pid) noexcept
{
    std::memset(&out, 0, sizeof(out));
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

uint64_t
mix(uint64_t hash, uint64_t value) noexcept
{
    // splitmix64 finalizer over a running combination
    uint64_t x = hash ^ (value + 0x9e3779b97f4a7c15ull + (hash << 6) + (hash >> 2));
    x          = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x          = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
} // namespace

bool
pairing_engine::start_key::operator==(const start_key& other) const noexcept
{
    return kind == other.kind && pid == other.pid && node_a == other.node_a &&
           node_b == other.node_b && page == other.page && npages == other.npages;
}

size_t
pairing_engine::start_key_hash::operator()(const start_key& key) const noexcept
{
    uint64_t hash = static_cast<uint64_t>(key.kind);
    hash          = mix(hash, (uint64_t{key.pid} << 32) | key.node_a);
    hash          = mix(hash, key.node_b);
    hash          = mix(hash, key.page);
    hash          = mix(hash, key.npages);
    return static_cast<size_t>(hash);
}

pairing_engine::pairing_engine(size_t max_outstanding)
    : m_max_outstanding{max_outstanding == 0 ? 1 : max_outstanding}
{
}

pairing_engine::pairing_engine(pairing_engine&& other) noexcept
    : m_max_outstanding{other.m_max_outstanding}, m_starts{std::move(other.m_starts)}
      // moves the nodes: the links stay valid
      ,
      m_oldest{other.m_oldest}, m_newest{other.m_newest}, m_counters{other.m_counters}
{
    other.m_starts.clear();
    other.m_oldest = nullptr;
    other.m_newest = nullptr;
}

pairing_engine&
pairing_engine::operator=(pairing_engine&& other) noexcept
{
    if(this == &other) return *this;
    m_max_outstanding = other.m_max_outstanding;
    m_starts          = std::move(other.m_starts); // std::allocator: the nodes move over
    m_oldest          = other.m_oldest;
    m_newest          = other.m_newest;
    m_counters        = other.m_counters;
    other.m_starts.clear();
    other.m_oldest = nullptr;
    other.m_newest = nullptr;
    return *this;
}

pairing_engine::start_key
pairing_engine::fault_key(const event& ev) noexcept
{
    start_key key{};
    key.kind   = start_kind::page_fault;
    key.pid    = ev.pid;
    key.node_a = ev.node;
    key.page   = ev.page;
    return key;
}

pairing_engine::start_key
pairing_engine::migrate_key(const event& ev) noexcept
{
    start_key key{};
    key.kind   = start_kind::page_migrate;
    key.pid    = ev.pid;
    key.node_a = ev.from_node;
    key.node_b = ev.to_node;
    key.page   = ev.page;
    key.npages = ev.npages;
    return key;
}

pairing_engine::start_key
pairing_engine::queue_key(const event& ev) noexcept
{
    start_key key{};
    key.kind   = start_kind::queue_suspend;
    key.pid    = ev.pid;
    key.node_a = ev.node;
    return key;
}

void
pairing_engine::link_newest(entry& item) noexcept
{
    item.second.older = m_newest;
    item.second.newer = nullptr;
    if(m_newest != nullptr)
        m_newest->second.newer = &item;
    else
        m_oldest = &item;
    m_newest = &item;
}

void
pairing_engine::unlink(entry& item) noexcept
{
    outstanding_start& links = item.second;
    if(links.older != nullptr)
        links.older->second.newer = links.newer;
    else
        m_oldest = links.newer;
    if(links.newer != nullptr)
        links.newer->second.older = links.older;
    else
        m_newest = links.older;
    links.older = nullptr;
    links.newer = nullptr;
}

void
pairing_engine::evict_oldest() noexcept
{
    if(m_oldest == nullptr) return;
    // Erase through an iterator: erase(key) would read a key living in the erased node.
    auto oldest = m_starts.find(m_oldest->first);
    if(oldest == m_starts.end()) return; // cannot happen: every linked entry is in the map
    unlink(*oldest);
    m_starts.erase(oldest);
    ++m_counters.starts_aged_out;
}

void
pairing_engine::add_start(const start_key& key, const event& ev) noexcept
{
    const uint64_t timestamp = timestamp_of(ev);
    if(timestamp == 0)
    {
        ++m_counters.starts_aged_out; // could never pair: a record needs a start time
        return;
    }

    auto existing = m_starts.find(key);
    if(existing == m_starts.end())
    {
        if(m_starts.size() >= m_max_outstanding) evict_oldest();
        try
        {
            existing = m_starts.try_emplace(key).first;
        }
        catch(...) // std::bad_alloc from the node or the bucket array: drop this start
        {
            ++m_counters.starts_aged_out;
            return;
        }
    }
    else
    {
        ++m_counters.starts_aged_out; // a newer start with the same key replaces it
        unlink(*existing);
    }

    outstanding_start& start = existing->second;
    start.timestamp          = timestamp;
    start.trigger            = ev.trigger;
    start.prefetch_node      = ev.prefetch_node;
    start.preferred_node     = ev.preferred_node;
    start.read_fault         = ev.read_fault;
    link_newest(*existing);
}

bool
pairing_engine::take_start(const start_key& key, uint64_t end_timestamp,
                           outstanding_start& start) noexcept
{
    auto found = m_starts.find(key);
    // Stored starts have a non-zero timestamp, so an end at 0 never pairs either.
    if(found == m_starts.end() || found->second.timestamp > end_timestamp)
    {
        ++m_counters.ends_without_start;
        return false;
    }
    start = found->second;
    unlink(*found);
    m_starts.erase(found);
    return true;
}

bool
pairing_engine::finish_fault(const event& ev, record_t& out) noexcept
{
    outstanding_start start{};
    const uint64_t    end = timestamp_of(ev);
    if(!take_start(fault_key(ev), end, start)) return false;

    begin_record(out, ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT, start.timestamp, end, ev.pid);
    out.page_fault.read_fault = start.read_fault ? 1 : 0;
    out.page_fault.migrated   = ev.migrated ? 1 : 0;
    out.page_fault.node_id    = ev.node;
    out.page_fault.address    = ev.page << kfd_abi::page_shift;
    return true;
}

bool
pairing_engine::finish_migrate(const event& ev, record_t& out) noexcept
{
    outstanding_start start{};
    const uint64_t    end = timestamp_of(ev);
    if(!take_start(migrate_key(ev), end, start)) return false;
    if(start.trigger != ev.trigger) ++m_counters.migrate_trigger_mismatches;

    begin_record(out, ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE, start.timestamp, end, ev.pid);
    out.page_migrate.start_addr     = ev.page << kfd_abi::page_shift;
    out.page_migrate.end_addr       = ((ev.page + ev.npages) << kfd_abi::page_shift) - 1;
    out.page_migrate.from_node      = ev.from_node;
    out.page_migrate.to_node        = ev.to_node;
    out.page_migrate.prefetch_node  = start.prefetch_node;
    out.page_migrate.preferred_node = start.preferred_node;
    store_trigger(out.page_migrate.trigger, start.trigger);
    return true;
}

bool
pairing_engine::finish_queue(const event& ev, record_t& out) noexcept
{
    outstanding_start start{};
    const uint64_t    end = timestamp_of(ev);
    if(!take_start(queue_key(ev), end, start)) return false;

    begin_record(out, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND, start.timestamp, end, ev.pid);
    out.queue_suspend.rescheduled = ev.rescheduled ? 1 : 0;
    out.queue_suspend.node_id     = ev.node;
    store_trigger(out.queue_suspend.trigger, start.trigger); // the eviction's trigger
    return true;
}

bool
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
    store_trigger(out.unmap_from_gpu.trigger, ev.trigger);
    return true;
}

bool
pairing_engine::process(const event& ev, record_t& out) noexcept
{
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
        add_start(queue_key(ev), ev);
        break;
    case kfd_abi::event_page_fault_end:
        produced = finish_fault(ev, out);
        break;
    case kfd_abi::event_migrate_end:
        produced = finish_migrate(ev, out);
        break;
    case kfd_abi::event_queue_restore:
        produced = finish_queue(ev, out);
        break;
    case kfd_abi::event_id_14:
        if(ev.kind14 == id14_kind::rescheduled_restore) produced = finish_queue(ev, out);
        break;
    case kfd_abi::event_unmap_from_gpu:
        produced = make_unmap(ev, out);
        break;
    default:
        break; // no pairing role (VM fault, thermal, reset, process, dropped)
    }
    if(produced) ++m_counters.records;
    return produced;
}

void
pairing_engine::finish() noexcept
{
    m_counters.starts_never_ended += m_starts.size();
    m_starts.clear();
    m_oldest = nullptr;
    m_newest = nullptr;
}
} // namespace rocprofiler::kfd
