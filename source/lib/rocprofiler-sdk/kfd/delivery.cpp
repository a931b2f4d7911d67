// MIT License - see LICENSE.
#include "rocprofiler-sdk/kfd/delivery.hpp"
#include "rocprofiler-sdk/context.hpp"
#include "rocprofiler-sdk/logging.hpp"

#include "common/kfd_abi.hpp"

#include <cstring>
#include <new>
#include <string_view>

namespace rocprofiler::kfd::delivery
{
namespace
{
using migration_record = rocprofiler_buffer_tracing_page_migration_record_t;

size_t
batch_for(chunk_delivery& cd, uint64_t buffer_id)
{
    for(size_t i = 0; i < cd.batches.size(); ++i)
        if(cd.batches[i].buffer_id == buffer_id)
        {
            cd.batches[i].in_use = true;
            return i;
        }
    cd.batches.emplace_back();
    cd.batches.back().buffer_id = buffer_id;
    cd.batches.back().in_use    = true;
    return cd.batches.size() - 1;
}

// The lists keep their storage, so this allocates only when more contexts are active than
// ever before. A service that cannot be listed (out of memory) loses this read's records:
// counted as dropped, one per event (raw) or paired record for each such service (an upper
// bound: its operation filter is not known then).
void
collect_destinations(chunk_delivery& cd)
{
    cd.raw.clear();
    cd.paired.clear();
    cd.unlisted_raw = cd.unlisted_paired = 0;
    cd.lost_raw = cd.lost_paired = 0;
    for(size_t i = 0; i < context::count(); ++i)
    {
        auto* ctx = context::at(i);
        if(ctx == nullptr || !ctx->active.load(std::memory_order_seq_cst)) continue;
        const auto& raw    = ctx->kfd_events;
        const auto& paired = ctx->page_migration;
        try
        {
            if(raw.configured) cd.raw.push_back({raw.operations, batch_for(cd, raw.buffer_id)});
        }
        catch(...)
        {
            ++cd.unlisted_raw;
        }
        try
        {
            if(paired.configured)
                cd.paired.push_back({paired.operations, batch_for(cd, paired.buffer_id)});
        }
        catch(...)
        {
            ++cd.unlisted_paired;
        }
    }
    // After the loop: batch_for may have moved cd.batches.
    cd.sole_paired            = nullptr;
    cd.sole_paired_operations = 0;
    if(cd.paired.size() == 1)
    {
        cd.sole_paired            = &cd.batches[cd.paired.front().batch].records;
        cd.sole_paired_operations = cd.paired.front().operations;
    }
}

// Copies `size` bytes of a built record into the batch of `d`.
void
add_copy(chunk_delivery& cd, const destination& d, uint32_t kind, const void* record, size_t size)
{
    auto& batch = cd.batches[d.batch].records;
    void* room  = batch.reserve(size);
    if(room == nullptr) // out of memory: dropped and counted, as a failed emplace's record
    {
        ++(kind == ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION ? cd.lost_paired : cd.lost_raw);
        return;
    }
    std::memcpy(room, record, size);
    batch.commit(ROCPROFILER_BUFFER_CATEGORY_TRACING, kind, size);
}

// The raw record's operation (to_raw_record's): the id, id 14 by its shape.
int32_t
raw_operation(const event& ev)
{
    if(ev.id != kfd_abi::event_id_14) return static_cast<int32_t>(ev.id);
    return ev.kind14 == id14_kind::rescheduled_restore
               ? ROCPROFILER_KFD_EVENT_QUEUE_RESTORE_RESCHEDULED
               : ROCPROFILER_KFD_EVENT_DROPPED_EVENTS;
}

// The raw record of the event, for every kfd_events destination that wants its operation:
// built in place when there is one destination, else once and copied. Out of line: its
// record on the stack would otherwise give every line's frame its size.
__attribute__((noinline)) void
add_raw(chunk_delivery& cd, gpu_stream& stream, const event& ev, std::string_view line,
        uint64_t now)
{
    using raw_record         = rocprofiler_kfd_event_record_t;
    constexpr auto kind      = ROCPROFILER_BUFFER_TRACING_KFD_EVENT;
    const int32_t  operation = raw_operation(ev);
    if(operation <= 0 || operation >= 64) return;
    const uint64_t bit = uint64_t{1} << operation;
    if(cd.raw.size() == 1)
    {
        if((cd.raw.front().operations & bit) == 0) return;
        auto& batch = cd.batches[cd.raw.front().batch].records;
        void* room  = batch.reserve(sizeof(raw_record));
        if(room == nullptr) // out of memory: dropped and counted, as a failed emplace's record
        {
            ++cd.lost_raw;
            return;
        }
        new(room) raw_record(to_raw_record(ev, stream.gpu_id, line, now));
        batch.commit(ROCPROFILER_BUFFER_CATEGORY_TRACING, kind, sizeof(raw_record));
        return;
    }
    bool       made = false;
    raw_record raw;
    for(const auto& d : cd.raw)
    {
        if((d.operations & bit) == 0) continue;
        if(!made) raw = to_raw_record(ev, stream.gpu_id, line, now), made = true;
        add_copy(cd, d, kind, &raw, sizeof(raw));
    }
}

// One of the pairing engine's entry points that can complete a record (on_page_fault_end...).
using pairing_end = bool (pairing_engine::*)(const event&, migration_record&) noexcept;

// Pairs the event; a record it completes is built in place in the first page-migration
// destination's batch, and copied for any further one that wants its operation. Returns
// whether the engine completed a record. Out of line: the general case (none or several
// services, or a batch that cannot grow), whose record on the stack would otherwise give
// every line's frame its size.
__attribute__((noinline)) bool
pair_and_copy(chunk_delivery& cd, gpu_stream& stream, const event& ev, pairing_end end)
{
    constexpr auto    kind = ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION;
    migration_record  local;
    migration_record* room = nullptr;
    if(!cd.paired.empty())
        room = static_cast<migration_record*>(
            cd.batches[cd.paired.front().batch].records.reserve(sizeof(migration_record)));
    migration_record* out = room != nullptr ? room : &local;
    if(!(stream.pairing.*end)(ev, *out)) return false;
    const uint64_t bit = uint64_t{1} << out->operation;
    if(cd.paired.size() == 1 && out == room)
    {
        if(cd.paired.front().operations & bit)
            cd.batches[cd.paired.front().batch].records.commit(ROCPROFILER_BUFFER_CATEGORY_TRACING,
                                                               kind, sizeof(migration_record));
        return true;
    }
    if(out != &local) local = *out; // a later reserve may move the batch's storage
    for(const auto& d : cd.paired)
        if(d.operations & bit) add_copy(cd, d, kind, &local, sizeof(local));
    return true;
}

// The common case, one page-migration service: the record is built where its batch keeps
// it and committed if the service traces its operation. `end` is a constant in each caller
// (inlined: a direct call).
__attribute__((always_inline)) inline bool
pair_and_add(chunk_delivery& cd, gpu_stream& stream, const event& ev, pairing_end end)
{
    if(cd.sole_paired != nullptr)
    {
        auto* room =
            static_cast<migration_record*>(cd.sole_paired->reserve(sizeof(migration_record)));
        if(room != nullptr)
        {
            if(!(stream.pairing.*end)(ev, *room)) return false;
            if(cd.sole_paired_operations & (uint64_t{1} << room->operation))
                cd.sole_paired->commit(ROCPROFILER_BUFFER_CATEGORY_TRACING,
                                       ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
                                       sizeof(migration_record));
            return true;
        }
    }
    return pair_and_copy(cd, stream, ev, end);
}

// What one read's lines add to the stream's counters (published once per read).
struct chunk_tally
{
    uint64_t received      = 0;
    uint64_t malformed     = 0;
    uint64_t kernel_drops  = 0;
    uint64_t other_process = 0;
    uint64_t paired        = 0; // records the engine completed

    uint64_t delivered() const { return received - other_process; } // past the process filter
};

// Once per read that had unparsable lines: rare, and its logging is large.
__attribute__((noinline, cold)) void
note_malformed(const gpu_stream& stream, chunk_tally& tally, uint64_t lines)
{
    tally.malformed += lines;
    try
    {
        ROCP_INFO << "GPU " << stream.gpu_id << ": skipped " << lines << " unparsable event line"
                  << (lines == 1 ? "" : "s");
    }
    catch(...)
    {
    }
}

// What the handlers of one read share (event_handlers::context).
struct read_context
{
    const process_filter& filter;
    chunk_delivery&       cd;
    gpu_stream&           stream;
    uint64_t              now;
    chunk_tally&          tally;
    // This read neither filters by process nor has a kfd_events service: accept() only counts.
    bool count_only;
    // The stream's paired_kinds as this read began: events of other kinds are not paired.
    uint32_t paired_kinds;
};

// accept() when the read filters by process or has a kfd_events service.
__attribute__((noinline)) bool
accept_filtered(read_context& rc, const event& ev, std::string_view line)
{
    if(rc.filter.only_own_process && ev.pid != 0 && ev.pid != rc.filter.self_pid)
    {
        ++rc.tally.other_process;
        return false;
    }
    if(!rc.cd.raw.empty()) add_raw(rc.cd, rc.stream, ev, line, rc.now);
    return true;
}

// The work every parsed event gets before its id's: counted, filtered by process, its raw
// record. False when the event is another process's (counted and dropped).
__attribute__((always_inline)) inline bool
accept(read_context& rc, const event& ev, std::string_view line)
{
    ++rc.tally.received;
    return rc.count_only || accept_filtered(rc, ev, line);
}

// One handler per id (parse_line_dispatch calls the parsed id's): no switch on the id here
// or in the pairing engine.
void
on_unpaired(void* context, event& ev, std::string_view line) // VM fault, thermal, reset, process
{
    accept(*static_cast<read_context*>(context), ev, line);
}

void
on_page_fault_start(void* context, event& ev, std::string_view line)
{
    auto& rc = *static_cast<read_context*>(context);
    if(accept(rc, ev, line) && (rc.paired_kinds & pair_kind_page_fault))
        rc.stream.pairing.on_page_fault_start(ev);
}

void
on_migrate_start(void* context, event& ev, std::string_view line)
{
    auto& rc = *static_cast<read_context*>(context);
    if(accept(rc, ev, line) && (rc.paired_kinds & pair_kind_page_migrate))
        rc.stream.pairing.on_migrate_start(ev);
}

void
on_queue_eviction(void* context, event& ev, std::string_view line)
{
    auto& rc = *static_cast<read_context*>(context);
    if(accept(rc, ev, line) && (rc.paired_kinds & pair_kind_queue_suspend))
        rc.stream.pairing.on_queue_eviction(ev);
}

// An event that can complete a record of `kind` (pair_kind_bits; 0: an instant, always
// paired), through the engine's entry point `end`.
__attribute__((always_inline)) inline void
on_end(void* context, event& ev, std::string_view line, pairing_end end, uint32_t kind)
{
    auto& rc = *static_cast<read_context*>(context);
    if(accept(rc, ev, line) && (kind == 0 || (rc.paired_kinds & kind)))
        rc.tally.paired += pair_and_add(rc.cd, rc.stream, ev, end) ? 1 : 0;
}

void
on_page_fault_end(void* context, event& ev, std::string_view line)
{
    on_end(context, ev, line, &pairing_engine::on_page_fault_end, pair_kind_page_fault);
}

void
on_migrate_end(void* context, event& ev, std::string_view line)
{
    on_end(context, ev, line, &pairing_engine::on_migrate_end, pair_kind_page_migrate);
}

void
on_queue_restore(void* context, event& ev, std::string_view line)
{
    on_end(context, ev, line, &pairing_engine::on_queue_restore, pair_kind_queue_suspend);
}

void
on_unmap_from_gpu(void* context, event& ev, std::string_view line)
{
    on_end(context, ev, line, &pairing_engine::on_unmap_from_gpu, 0);
}

void
on_id_14(void* context, event& ev, std::string_view line)
{
    auto& rc = *static_cast<read_context*>(context);
    resolve_id14(ev, rc.stream.gpu_id); // an ambiguous token that names this fd's GPU
    if(ev.kind14 == id14_kind::dropped_events) rc.tally.kernel_drops += ev.count;
    // A rescheduled restore belongs to queue suspensions; a drop report to every kind.
    const bool paired = ev.kind14 != id14_kind::rescheduled_restore ||
                        (rc.paired_kinds & pair_kind_queue_suspend) != 0;
    if(accept(rc, ev, line) && paired) rc.stream.pairing.on_id_14(ev);
}

// Reads of fewer bytes (about 45 kernel lines) are parsed without the hot shapes' pass: it
// only pays for its vector unit's warm-up after a wake-up over more lines than that (see
// event_handlers::hot_shapes).
constexpr size_t hot_shapes_min_read = 2048;

// The handler of each id (kfd_abi::event_id values).
event_handlers
handlers_for(read_context& rc)
{
    event_handlers h;
    h.context                                = &rc;
    h.on_id[kfd_abi::event_vmfault]          = on_unpaired;
    h.on_id[kfd_abi::event_thermal_throttle] = on_unpaired;
    h.on_id[kfd_abi::event_gpu_pre_reset]    = on_unpaired;
    h.on_id[kfd_abi::event_gpu_post_reset]   = on_unpaired;
    h.on_id[kfd_abi::event_migrate_start]    = on_migrate_start;
    h.on_id[kfd_abi::event_migrate_end]      = on_migrate_end;
    h.on_id[kfd_abi::event_page_fault_start] = on_page_fault_start;
    h.on_id[kfd_abi::event_page_fault_end]   = on_page_fault_end;
    h.on_id[kfd_abi::event_queue_eviction]   = on_queue_eviction;
    h.on_id[kfd_abi::event_queue_restore]    = on_queue_restore;
    h.on_id[kfd_abi::event_unmap_from_gpu]   = on_unmap_from_gpu;
    h.on_id[kfd_abi::event_process_start]    = on_unpaired;
    h.on_id[kfd_abi::event_process_end]      = on_unpaired;
    h.on_id[kfd_abi::event_id_14]            = on_id_14;
    return h;
}
} // namespace

void
deliver_chunk(chunk_delivery& cd, const process_filter& filter, gpu_stream& stream,
              const char* data, size_t size, uint64_t now) noexcept
{
    chunk_tally tally;
    collect_destinations(cd);
    read_context   rc{filter,
                    cd,
                    stream,
                    now,
                    tally,
                    !filter.only_own_process && cd.raw.empty(),
                    paired_kinds_for_read(stream)};
    event_handlers handlers = handlers_for(rc);
    handlers.hot_shapes     = size >= hot_shapes_min_read;
    // The parser writes every field of scratch (`event ev;` would be a `rep stos`) and calls
    // the id's handler for each line that is ok.
    const feed_tally fed = feed_dispatch(stream.splitter, data, size, cd.scratch, handlers);
    if(fed.ok != fed.lines) note_malformed(stream, tally, fed.lines - fed.ok);
    auto& c = stream.counters;
    for(auto& b : cd.batches)
    {
        if(!b.in_use) continue;
        buffer::batch_outcome outcome;
        buffer::append_batch(b.buffer_id, b.records, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
                             outcome);
        b.records.clear();
        b.in_use = false;
        c.records_emitted.fetch_add(outcome.stored[0], std::memory_order_relaxed);
        c.records_dropped.fetch_add(outcome.dropped[0], std::memory_order_relaxed);
        c.raw_events_dropped.fetch_add(outcome.dropped[1], std::memory_order_relaxed);
    }
    // A service that could not be listed loses each event (raw) or record (paired) of the read.
    cd.lost_raw += cd.unlisted_raw * tally.delivered();
    cd.lost_paired += cd.unlisted_paired * tally.paired;
    c.records_dropped.fetch_add(cd.lost_paired, std::memory_order_relaxed);
    c.raw_events_dropped.fetch_add(cd.lost_raw, std::memory_order_relaxed);
    c.events_received.fetch_add(tally.received, std::memory_order_relaxed);
    c.lines_malformed.fetch_add(tally.malformed, std::memory_order_relaxed);
    c.kernel_reported_drops.fetch_add(tally.kernel_drops, std::memory_order_relaxed);
    c.events_other_process.fetch_add(tally.other_process, std::memory_order_relaxed);
    publish_pairing_counters(stream);
}

} // namespace rocprofiler::kfd::delivery
