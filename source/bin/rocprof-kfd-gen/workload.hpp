// MIT License - see LICENSE.
//
// The generator's model of a workload: the KFD SMI events a kernel would emit for a named
// scenario, and the page-migration records a correct reader must pair them into. Both come
// from the same operations, so the records are an exact oracle for the log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kfd_gen
{
enum class scenario
{
    streaming, // managed memory streamed to the GPUs and written back
    thrashing, // CPU and GPUs fighting over the same pages
    prefetch,  // bursts of prefetches, preferred location undefined
    eviction,  // TTM eviction storms: queues evicted, VRAM migrated out, queues restored
    unmap,     // munmap() of ranges mapped on the GPUs
    mixed,     // all of the above
    managed,   // a managed-memory application: streaming, with a few ranges thrashing
};

enum class era
{
    linux_6_0,  // 6.0-6.11: MIGRATE_END without error code, restore "" or " R"
    linux_6_12, // 6.12: normal restore ends in " \0"
    linux_6_13, // 6.13+: MIGRATE_END error code, FIFO 8192, restore " \0"
    fixed_2026, // kernels fixed in 2026: normal restore ends in " 0"
    proposed,   // the proposed change: restore " 0"; a rescheduled restore is its own
                // id 14, "e <ns> -<pid> <node>" (no node field the emulator routes by:
                // the log routes it with "#@ route <node>")
};

struct options
{
    enum scenario scenario       = scenario::mixed;
    enum era      era            = era::linux_6_13;
    unsigned      gpus           = 1;
    uint64_t      events         = 200;
    uint64_t      seed           = 1;
    uint32_t      pid            = 0; // 0: chosen from the seed
    unsigned      other_pids     = 0; // other processes sharing the GPUs
    uint64_t      start_ns       = 40000000000000ull;
    bool          process_events = false; // PROCESS_START/END around the log (6.16+)
    std::string   gfx            = "gfx90a";
};

inline constexpr uint32_t node_undefined = 0xffffffffu;

// One kernel message, with every field any id needs.
struct event
{
    uint64_t    ns         = 0;
    uint64_t    seq        = 0; // creation order: ties in ns keep it
    uint32_t    id         = 0;
    uint32_t    pid        = 0;
    uint64_t    page       = 0;
    uint64_t    npages     = 0;
    uint32_t    node       = 0; // fault, queue, unmap
    uint32_t    from       = 0;
    uint32_t    to         = 0;
    uint32_t    prefetch   = node_undefined;
    uint32_t    preferred  = node_undefined;
    int         trigger    = 0;
    char        flag       = 0; // fault start R/W, fault end M/U, restore 'R' (rescheduled) or 0
    int         error_code = 0;
    std::string task; // PROCESS_START/END
};

enum class operation
{
    page_migrate   = 1,
    page_fault     = 2,
    queue_suspend  = 3,
    unmap_from_gpu = 4,
};

// A page-migration record as the SDK must fill it (api-contract.md, "Record semantics").
struct record
{
    enum operation operation   = operation::page_fault;
    uint64_t       seq         = 0;
    uint32_t       pid         = 0;
    uint64_t       start_ns    = 0;
    uint64_t       end_ns      = 0;
    uint32_t       node        = 0; // node_id, or from_node of a migration
    uint32_t       to          = 0;
    uint32_t       prefetch    = 0;
    uint32_t       preferred   = 0;
    int            trigger     = 0;
    uint64_t       addr_start  = 0;
    uint64_t       addr_end    = 0;
    bool           read_fault  = false;
    bool           migrated    = false;
    bool           rescheduled = false;
};

struct workload
{
    std::vector<uint32_t> gpu_ids;
    uint32_t              self_pid = 0;
    std::vector<event>    events;  // in log order
    std::vector<record>   records; // by start_ns, then creation order
};

workload generate(const options& opts);

bool        parse_scenario(const std::string& name, enum scenario& out);
bool        parse_era(const std::string& name, enum era& out);
const char* scenario_name(enum scenario s);
const char* era_name(enum era e);
} // namespace kfd_gen
