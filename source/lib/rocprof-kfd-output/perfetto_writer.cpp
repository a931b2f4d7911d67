// MIT License - see LICENSE.
#include "perfetto_writer.hpp"

#include "csv_writer.hpp"
#include "names.hpp"
#include "protobuf.hpp"
#include "trace_names.hpp"

#include <vector>

namespace rocprof_kfd
{
namespace
{
// Field numbers (Perfetto's public protos).
namespace trace_packet
{
constexpr uint32_t timestamp                  = 8;
constexpr uint32_t trusted_packet_sequence_id = 10;
constexpr uint32_t track_event                = 11;
constexpr uint32_t interned_data              = 12;
constexpr uint32_t sequence_flags             = 13;
constexpr uint32_t timestamp_clock_id         = 58;
constexpr uint32_t track_descriptor           = 60;
} // namespace trace_packet
constexpr uint32_t seq_incremental_state_cleared = 1;
constexpr uint32_t seq_needs_incremental_state   = 2;
constexpr uint32_t builtin_clock_boottime        = 6;
constexpr uint32_t trace_packet_field            = 1; // Trace.packet
constexpr uint32_t sequence_id                   = 1;

namespace track_desc
{
constexpr uint32_t uuid        = 1;
constexpr uint32_t name        = 2;
constexpr uint32_t process     = 3;
constexpr uint32_t parent_uuid = 5;
constexpr uint32_t counter     = 8;
} // namespace track_desc
namespace process_desc
{
constexpr uint32_t pid          = 1;
constexpr uint32_t process_name = 6;
} // namespace process_desc
namespace track_event
{
constexpr uint32_t category_iids        = 3;
constexpr uint32_t debug_annotations    = 4;
constexpr uint32_t type                 = 9;
constexpr uint32_t name_iid             = 10;
constexpr uint32_t track_uuid           = 11;
constexpr uint32_t name                 = 23;
constexpr uint32_t double_counter_value = 44;
constexpr uint32_t type_slice_begin     = 1;
constexpr uint32_t type_slice_end       = 2;
constexpr uint32_t type_instant         = 3;
constexpr uint32_t type_counter         = 4;
} // namespace track_event
namespace debug_annotation
{
constexpr uint32_t name_iid      = 1;
constexpr uint32_t bool_value    = 2;
constexpr uint32_t uint_value    = 3;
constexpr uint32_t string_value  = 6;
constexpr uint32_t pointer_value = 7;
} // namespace debug_annotation
namespace interned
{
constexpr uint32_t event_categories       = 1;
constexpr uint32_t event_names            = 2;
constexpr uint32_t debug_annotation_names = 3;
constexpr uint32_t iid                    = 1;
constexpr uint32_t name                   = 2;
} // namespace interned

// Interned debug-annotation names: iid = index + 1.
enum annotation : uint64_t
{
    ann_pid = 1,
    ann_address,
    ann_read_fault,
    ann_migrated,
    ann_node_id,
    ann_start_addr,
    ann_end_addr,
    ann_bytes,
    ann_from_node,
    ann_to_node,
    ann_prefetch_node,
    ann_preferred_node,
    ann_trigger,
    ann_rescheduled,
};
const char* const annotation_names[] = {
    "pid",           "address",        "read_fault", "migrated",   "node_id",
    "start_addr",    "end_addr",       "bytes",      "from_node",  "to_node",
    "prefetch_node", "preferred_node", "trigger",    "rescheduled"};

// Every slice name the records can have with in-range triggers: iid = index + 1.
// Slice names are interned in this order (iid = index + 1): the 4 fault names (write/read
// outer, updated/migrated inner), then for each operation with triggers, in this order, one
// name per trigger from -1 to its last.
constexpr int triggered_operations[] = {1, 3, 4};
constexpr int last_trigger[]         = {0, 3, 0, 5, 2};

std::vector<std::string>
all_slice_names()
{
    std::vector<std::string> v;
    record                   r = {};
    r.operation                = ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT;
    for(int rf = 0; rf < 2; ++rf)
        for(int mg = 0; mg < 2; ++mg)
        {
            r.page_fault.read_fault = rf;
            r.page_fault.migrated   = mg;
            v.push_back(slice_name(r));
        }
    for(int op : triggered_operations)
        for(int t = -1; t <= last_trigger[op]; ++t)
            v.push_back(std::string(op == 1   ? "migrate"
                                    : op == 3 ? "queue suspend"
                                              : "unmap") +
                        " (" + trigger_name(op, t) + ")");
    return v;
}

// Never destroyed: the SDK's callback thread can still deliver records while exit() runs the
// tool library's static destructors (ASan saw write() read the freed vector on that thread).
const std::vector<std::string>&
interned_slice_names()
{
    static const std::vector<std::string>* const names =
        new std::vector<std::string>(all_slice_names());
    return *names;
}

// The interned iid of slice_name(r), in the order all_slice_names() lists them (0 for a
// trigger outside the enum, whose name is then written in full).
uint64_t
slice_iid(const record& r)
{
    if(r.operation == ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT)
        return 1 + (r.page_fault.read_fault ? 2 : 0) + (r.page_fault.migrated ? 1 : 0);
    int      trigger = record_trigger(r);
    uint64_t first   = 5; // after the fault names
    for(int op : triggered_operations)
    {
        if(op == r.operation)
            return trigger < -1 || trigger > last_trigger[op]
                       ? 0
                       : first + static_cast<uint64_t>(trigger + 1);
        first += static_cast<uint64_t>(last_trigger[op] + 2);
    }
    return 0;
}

// Annotations are written straight into the event: their size is known beforehand.
void
add_uint_annotation(proto_message& ev, uint64_t name, uint64_t value, uint32_t kind)
{
    ev.begin_message(track_event::debug_annotations,
                     uint_field_size(debug_annotation::name_iid, name) +
                         uint_field_size(kind, value));
    ev.add_uint(debug_annotation::name_iid, name);
    ev.add_uint(kind, value);
}

void
add_string_annotation(proto_message& ev, uint64_t name, std::string_view value)
{
    ev.begin_message(track_event::debug_annotations,
                     uint_field_size(debug_annotation::name_iid, name) +
                         bytes_field_size(debug_annotation::string_value, value.size()));
    ev.add_uint(debug_annotation::name_iid, name);
    ev.add_string(debug_annotation::string_value, value);
}

void
add_trigger_annotation(proto_message& ev, byte_buffer& scratch, int operation, int trigger)
{
    scratch.clear();
    append_trigger_name(scratch, operation, trigger);
    add_string_annotation(ev, ann_trigger, scratch.view());
}

// scratch: a reused buffer for the trigger's name.
void
annotate(proto_message& ev, byte_buffer& scratch, const record& r)
{
    using namespace debug_annotation;
    add_uint_annotation(ev, ann_pid, r.pid, uint_value);
    switch(r.operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
        add_uint_annotation(ev, ann_address, r.page_fault.address, pointer_value);
        add_uint_annotation(ev, ann_read_fault, r.page_fault.read_fault, bool_value);
        add_uint_annotation(ev, ann_migrated, r.page_fault.migrated, bool_value);
        add_uint_annotation(ev, ann_node_id, r.page_fault.node_id, uint_value);
        break;
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
    {
        const auto& m = r.page_migrate;
        add_uint_annotation(ev, ann_start_addr, m.start_addr, pointer_value);
        add_uint_annotation(ev, ann_end_addr, m.end_addr, pointer_value);
        add_uint_annotation(ev, ann_bytes,
                            m.end_addr >= m.start_addr ? m.end_addr - m.start_addr + 1 : 0,
                            uint_value);
        add_uint_annotation(ev, ann_from_node, m.from_node, uint_value);
        add_uint_annotation(ev, ann_to_node, m.to_node, uint_value);
        add_uint_annotation(ev, ann_prefetch_node, m.prefetch_node, uint_value);
        add_uint_annotation(ev, ann_preferred_node, m.preferred_node, uint_value);
        add_trigger_annotation(ev, scratch, r.operation, m.trigger);
        break;
    }
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        add_uint_annotation(ev, ann_node_id, r.queue_suspend.node_id, uint_value);
        add_trigger_annotation(ev, scratch, r.operation, r.queue_suspend.trigger);
        add_uint_annotation(ev, ann_rescheduled, r.queue_suspend.rescheduled, bool_value);
        break;
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
    {
        const auto& m = r.unmap_from_gpu;
        add_uint_annotation(ev, ann_node_id, m.node_id, uint_value);
        add_uint_annotation(ev, ann_start_addr, m.start_addr, pointer_value);
        add_uint_annotation(ev, ann_end_addr, m.end_addr, pointer_value);
        add_trigger_annotation(ev, scratch, r.operation, m.trigger);
        break;
    }
    default:
        break;
    }
}

// Appends to out a Trace.packet field: a packet at ts holding the TrackEvent ev. The
// packet's size is known beforehand, so it is written in place (no nested copy).
void
append_timed_packet(proto_message& out, uint64_t ts, const proto_message& ev)
{
    size_t size = uint_field_size(trace_packet::timestamp, ts) +
                  uint_field_size(trace_packet::timestamp_clock_id, builtin_clock_boottime) +
                  uint_field_size(trace_packet::trusted_packet_sequence_id, sequence_id) +
                  uint_field_size(trace_packet::sequence_flags, seq_needs_incremental_state) +
                  bytes_field_size(trace_packet::track_event, ev.size());
    out.begin_message(trace_packet_field, size);
    out.add_uint(trace_packet::timestamp, ts);
    out.add_uint(trace_packet::timestamp_clock_id, builtin_clock_boottime);
    out.add_uint(trace_packet::trusted_packet_sequence_id, sequence_id);
    out.add_uint(trace_packet::sequence_flags, seq_needs_incremental_state);
    out.add_message(trace_packet::track_event, ev);
}
} // namespace

void
perfetto_trace::emit(const proto_message& packet)
{
    frame_.clear();
    frame_.add_message(trace_packet_field, packet);
    file_.append(frame_.bytes.view());
}

bool
perfetto_trace::open(const std::string& path)
{
    if(!file_.open(path)) return false;
    proto_message data;
    {
        proto_message cat;
        cat.add_uint(interned::iid, 1);
        cat.add_string(interned::name, "kfd");
        data.add_message(interned::event_categories, cat);
    }
    const auto& names = interned_slice_names();
    for(size_t i = 0; i < names.size(); ++i)
    {
        proto_message n;
        n.add_uint(interned::iid, i + 1);
        n.add_string(interned::name, names[i]);
        data.add_message(interned::event_names, n);
    }
    for(size_t i = 0; i < sizeof(annotation_names) / sizeof(annotation_names[0]); ++i)
    {
        proto_message n;
        n.add_uint(interned::iid, i + 1);
        n.add_string(interned::name, annotation_names[i]);
        data.add_message(interned::debug_annotation_names, n);
    }
    proto_message first;
    first.add_uint(trace_packet::trusted_packet_sequence_id, sequence_id);
    first.add_uint(trace_packet::sequence_flags, seq_incremental_state_cleared);
    first.add_message(trace_packet::interned_data, data);
    emit(first);
    return file_.flush();
}

void
perfetto_trace::begin_process(const run_info& run, uint32_t display_pid)
{
    agents_ = run.agents;
    process_index_ += 1;
    process_uuid_ = next_uuid_++;
    proto_message process;
    process.add_uint(process_desc::pid, display_pid);
    process.add_string(process_desc::process_name, process_label(run));
    proto_message desc;
    desc.add_uint(track_desc::uuid, process_uuid_);
    desc.add_message(track_desc::process, process);
    proto_message p;
    p.add_uint(trace_packet::trusted_packet_sequence_id, sequence_id);
    p.add_message(trace_packet::track_descriptor, desc);
    emit(p);
}

uint64_t
perfetto_trace::lane_track(uint32_t gpu, int operation, size_t lane)
{
    auto key = std::make_tuple(process_index_, gpu, operation, lane);
    auto it  = tracks_.find(key);
    if(it != tracks_.end()) return it->second;
    uint64_t      uuid = next_uuid_++;
    proto_message desc;
    desc.add_uint(track_desc::uuid, uuid);
    desc.add_uint(track_desc::parent_uuid, process_uuid_);
    desc.add_string(track_desc::name, lane_track_name(agents_, gpu, operation, lane));
    proto_message p;
    p.add_uint(trace_packet::trusted_packet_sequence_id, sequence_id);
    p.add_message(trace_packet::track_descriptor, desc);
    emit(p);
    tracks_.emplace(key, uuid);
    return uuid;
}

uint64_t
perfetto_trace::counter_track(const std::string& name)
{
    uint64_t      uuid = next_uuid_++;
    proto_message desc;
    desc.add_uint(track_desc::uuid, uuid);
    desc.add_uint(track_desc::parent_uuid, process_uuid_);
    desc.add_string(track_desc::name, name);
    desc.add_message(track_desc::counter, proto_message{});
    proto_message p;
    p.add_uint(trace_packet::trusted_packet_sequence_id, sequence_id);
    p.add_message(trace_packet::track_descriptor, desc);
    emit(p);
    return uuid;
}

void
perfetto_trace::write(const record& r)
{
    if(r.operation < 1 || r.operation > operation_count || !file_.is_open()) return;
    if(process_uuid_ == 0) begin_process(run_info{}, 0);
    uint32_t gpu     = record_gpu(r);
    uint64_t start   = r.start_timestamp;
    uint64_t end     = r.end_timestamp < start ? start : r.end_timestamp;
    bool     instant = r.operation == ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU;
    size_t   lane    = instant ? 0 : lanes_.assign({process_index_, gpu, r.operation}, start, end);
    uint64_t track   = lane_track(gpu, r.operation, lane);

    proto_message& ev = event_;
    ev.clear();
    ev.add_uint(track_event::type,
                instant ? track_event::type_instant : track_event::type_slice_begin);
    ev.add_uint(track_event::track_uuid, track);
    ev.add_uint(track_event::category_iids, 1);
    if(uint64_t iid = slice_iid(r))
        ev.add_uint(track_event::name_iid, iid);
    else
        ev.add_string(track_event::name, slice_name(r));
    annotate(ev, scratch_, r);
    frame_.clear();
    append_timed_packet(frame_, start, ev);
    if(!instant)
    {
        // Begin and end in one unit: a file cut by a write error never holds half a slice.
        ev.clear();
        ev.add_uint(track_event::type, track_event::type_slice_end);
        ev.add_uint(track_event::track_uuid, track);
        append_timed_packet(frame_, end, ev);
    }
    file_.append(frame_.bytes.view());
}

void
perfetto_trace::write_counters(const summary_builder& s)
{
    if(!file_.is_open()) return;
    if(process_uuid_ == 0) begin_process(run_info{}, 0);
    const timeline& tl     = s.bins();
    double          bin    = static_cast<double>(tl.bin_ns());
    auto            series = [&](uint64_t track, const std::vector<uint64_t>& v, double scale)
    {
        for(size_t i = 0; i <= tl.bins(); ++i)
        {
            double value = i < tl.bins() && i < v.size() ? static_cast<double>(v[i]) * scale : 0.0;
            proto_message ev;
            ev.add_uint(track_event::type, track_event::type_counter);
            ev.add_uint(track_event::track_uuid, track);
            ev.add_double(track_event::double_counter_value, value);
            frame_.clear();
            append_timed_packet(frame_, tl.start_ns() + i * tl.bin_ns(), ev);
            file_.append(frame_.bytes.view());
        }
    };
    for(const auto& [dir, v] : tl.migration_bytes())
        series(counter_track("Migration bandwidth " + agent_name(agents_, dir.first) + " (" +
                             std::to_string(node_of(dir.first)) + ") -> " +
                             agent_name(agents_, dir.second) + " (" +
                             std::to_string(node_of(dir.second)) + ") GB/s"),
               v, 1.0 / bin);
    for(const auto& [gpu, rw] : tl.faults())
    {
        std::vector<uint64_t> total(tl.bins(), 0);
        for(size_t i = 0; i < tl.bins(); ++i)
            total[i] =
                (i < rw.first.size() ? rw.first[i] : 0) + (i < rw.second.size() ? rw.second[i] : 0);
        series(counter_track("Page-fault rate GPU " + agent_name(agents_, gpu) + " (" +
                             std::to_string(node_of(gpu)) + ") faults/s"),
               total, 1e9 / bin);
    }
}

namespace
{
class perfetto_writer final : public record_writer
{
public:
    bool open(const std::string& dir, const std::string& stem, const run_info& run) override
    {
        if(!trace_.open(output_path(dir, stem, "trace.pftrace"))) return false;
        trace_.begin_process(run, run.pid);
        return true;
    }
    void write(const record& r) override { trace_.write(r); }
    void end_batch() override { trace_.flush(); }
    void finish(const run_info&, const summary_builder& s) override
    {
        trace_.write_counters(s);
        trace_.close();
    }
    std::vector<std::string> files() const override
    {
        if(trace_.file().path().empty() || trace_.file().failed()) return {};
        return {trace_.file().path()};
    }

private:
    perfetto_trace trace_;
};
} // namespace

std::unique_ptr<record_writer>
make_perfetto_writer()
{
    return std::make_unique<perfetto_writer>();
}
} // namespace rocprof_kfd
