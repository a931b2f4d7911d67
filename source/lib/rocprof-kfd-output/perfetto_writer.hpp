// MIT License - see LICENSE.
//
// A native Perfetto trace (.pftrace) in protobuf wire format, field numbers from Perfetto's
// public protos (protos/perfetto/trace/trace_packet.proto, track_event/track_event.proto,
// track_descriptor.proto, counter_descriptor.proto, debug_annotation.proto,
// interned_data/interned_data.proto). One packet sequence:
//   - the first packet clears the incremental state and interns every slice name, the
//     category and every debug-annotation name;
//   - a process track per traced process (ProcessDescriptor pid + name); under it one track
//     per GPU, operation and lane, described before its first event;
//   - faults, migrations and queue suspensions: SLICE_BEGIN (with debug annotations) and
//     SLICE_END packets; unmaps: INSTANT packets;
//   - at the end of a process: counter tracks for migration bandwidth (GB/s per direction)
//     and the page-fault rate (faults/s per GPU), one value per summary timeline bin.
// Timestamps are CLOCK_BOOTTIME ns (timestamp_clock_id 6). The file only ever holds whole
// packets (output_file), so a killed run leaves a trace the UI opens.
#pragma once

#include "lanes.hpp"
#include "model.hpp"
#include "output_file.hpp"
#include "summary.hpp"

#include "protobuf.hpp"

#include <map>
#include <string>
#include <tuple>

namespace rocprof_kfd
{
class perfetto_trace
{
public:
    bool open(const std::string& path);
    // Starts a process group: records written after it belong to it. display_pid is the pid
    // shown (merge gives each input a distinct one).
    void begin_process(const run_info& run, uint32_t display_pid);
    void write(const record& r);
    // Counter tracks of the current process, from its summary's timeline.
    void write_counters(const summary_builder& s);
    void flush() { file_.flush(); }
    bool close() { return file_.close(); }

    const output_file& file() const { return file_; }

private:
    uint64_t lane_track(uint32_t gpu, int operation, size_t lane);
    uint64_t counter_track(const std::string& name);
    void     emit(const proto_message& packet);

    output_file                                                     file_;
    std::vector<agent_info>                                         agents_;
    uint32_t                                                        process_index_ = 0;
    uint64_t                                                        process_uuid_  = 0;
    uint64_t                                                        next_uuid_     = 1;
    lane_allocator                                                  lanes_;
    std::map<std::tuple<uint32_t, uint32_t, int, size_t>, uint64_t> tracks_;
    // Reused for every record (no allocation per record once grown): the track event, the
    // framed packets of one unit, the trigger's name.
    proto_message event_, frame_;
    byte_buffer   scratch_;
};
} // namespace rocprof_kfd
