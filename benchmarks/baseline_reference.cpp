// MIT License - see LICENSE.
//
// The reference approach (see baseline_reference.hpp). Formats: the kernel's (see
// shared/docs/kfd-smi-interface.md), each preceded by the id's "%x ", as the reference scans
// the id again with every body.
#include "baseline_reference.hpp"

#include <cstdio>
#include <cstring>

namespace bench_baseline
{
namespace
{
constexpr uint64_t
page_bytes(uint64_t page)
{
    return page << 12;
}

uint64_t
key_of(uint32_t id, const record& rec)
{
    switch(id)
    {
    case 5:
    case 6:
        return rec.page_migrate.start_addr;
    case 7:
    case 8:
        return rec.page_fault.address;
    default:
        return (uint64_t{rec.queue_suspend.node_id} << 32) | rec.pid;
    }
}
} // namespace

bool
parse(const char* line, uint32_t& id, record& rec) noexcept
{
    id = 0;
    if(std::sscanf(line, "%x ", &id) != 1) return false;
    rec           = record{};
    rec.size      = sizeof(rec);
    rec.kind      = ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION;
    unsigned kind = 0, trigger = 0;
    char     flag = 0;
    switch(id)
    {
    case 7: // PAGE_FAULT_START
    case 8: // PAGE_FAULT_END
    {
        auto& e = rec.page_fault;
        std::sscanf(line, "%x %lu -%u @%lx(%x) %c", &kind,
                    id == 7 ? &rec.start_timestamp : &rec.end_timestamp, &rec.pid, &e.address,
                    &e.node_id, &flag);
        if(id == 7) e.read_fault = flag == 'R';
        if(id == 8) e.migrated = flag == 'M';
        e.address     = page_bytes(e.address);
        rec.operation = ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT;
        return true;
    }
    case 5: // MIGRATE_START
    case 6: // MIGRATE_END
    {
        auto& e = rec.page_migrate;
        if(id == 5)
            std::sscanf(line, "%x %lu -%u @%lx(%lx) %x->%x %x:%x %u", &kind, &rec.start_timestamp,
                        &rec.pid, &e.start_addr, &e.end_addr, &e.from_node, &e.to_node,
                        &e.prefetch_node, &e.preferred_node, &trigger);
        else
            std::sscanf(line, "%x %lu -%u @%lx(%lx) %x->%x %u", &kind, &rec.end_timestamp, &rec.pid,
                        &e.start_addr, &e.end_addr, &e.from_node, &e.to_node, &trigger);
        e.end_addr += e.start_addr;
        e.trigger     = static_cast<rocprofiler_page_migration_trigger_t>(trigger);
        e.start_addr  = page_bytes(e.start_addr);
        e.end_addr    = page_bytes(e.end_addr) - 1;
        rec.operation = ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE;
        return true;
    }
    case 9: // QUEUE_EVICTION
    {
        auto& e = rec.queue_suspend;
        std::sscanf(line, "%x %lu -%u %x %u", &kind, &rec.start_timestamp, &rec.pid, &e.node_id,
                    &trigger);
        e.trigger     = static_cast<rocprofiler_page_migration_queue_suspend_trigger_t>(trigger);
        rec.operation = ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND;
        return true;
    }
    case 10: // QUEUE_RESTORE
    {
        auto& e = rec.queue_suspend;
        std::sscanf(line, "%x %lu -%u %x", &kind, &rec.end_timestamp, &rec.pid, &e.node_id);
        size_t n      = std::strlen(line);
        e.rescheduled = n >= 1 && line[n - 1] == 'R';
        rec.operation = ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND;
        return true;
    }
    case 11: // UNMAP_FROM_GPU
    {
        auto& e = rec.unmap_from_gpu;
        std::sscanf(line, "%x %lu -%u @%lx(%lx) %x %u", &kind, &rec.start_timestamp, &rec.pid,
                    &e.start_addr, &e.end_addr, &e.node_id, &trigger);
        e.end_addr += e.start_addr;
        rec.end_timestamp = rec.start_timestamp;
        e.trigger     = static_cast<rocprofiler_page_migration_unmap_from_gpu_trigger_t>(trigger);
        e.start_addr  = page_bytes(e.start_addr);
        e.end_addr    = page_bytes(e.end_addr);
        rec.operation = ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU;
        return true;
    }
    default:
        return false;
    }
}

bool
pairer::process(uint32_t id, record& rec) noexcept
{
    std::unordered_map<uint64_t, record>* map = nullptr;
    switch(id)
    {
    case 5:
    case 6:
        map = &m_migrates;
        break;
    case 7:
    case 8:
        map = &m_faults;
        break;
    case 9:
    case 10:
        map = &m_queues;
        break;
    case 11:
        return true; // an instant
    default:
        return false;
    }
    const uint64_t key = key_of(id, rec);
    if(id == 5 || id == 7 || id == 9)
    {
        (*map)[key] = rec;
        return false;
    }
    auto it = map->find(key);
    if(it == map->end()) return false;
    rec.start_timestamp = it->second.start_timestamp;
    if(id == 6)
    {
        rec.page_migrate.prefetch_node  = it->second.page_migrate.prefetch_node;
        rec.page_migrate.preferred_node = it->second.page_migrate.preferred_node;
    }
    if(id == 8) rec.page_fault.read_fault = it->second.page_fault.read_fault;
    if(id == 10) rec.queue_suspend.trigger = it->second.queue_suspend.trigger;
    map->erase(it);
    return true;
}

size_t
pairer::outstanding() const noexcept
{
    return m_faults.size() + m_migrates.size() + m_queues.size();
}
} // namespace bench_baseline
