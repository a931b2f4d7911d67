// MIT License - see LICENSE.
//
// results.json: {"schema":"rocprof-kfd-results","version":1,"metadata":{..},"agents":[..],
// "records":[ one record per line ],"end_ns":..,"wall_ns":..,"loss":{..},"truncated":false}
// The metadata is written as the run starts: its end_ns and wall_ns are null (not the start
// time and 0, as they once were); the tail gives them.
// Streamed: records go to disk as they arrive. After every flush the file ends with
// `],"truncated":true}`, overwritten by the next flush, so it is a closed document at any
// moment, including after the process was killed; finish() replaces it with the real end.
#include "csv_writer.hpp"
#include "names.hpp"
#include "output_file.hpp"
#include "text.hpp"

namespace rocprof_kfd
{
namespace
{
std::string
u(uint64_t v)
{
    return std::to_string(v);
}

const char* const streaming_tail = "\n],\"truncated\":true}\n";

class json_writer final : public record_writer
{
public:
    bool open(const std::string& dir, const std::string& stem, const run_info& run) override
    {
        if(!file_.open(output_path(dir, stem, "results.json"))) return false;
        summary_builder none;
        file_.append("{\"schema\":\"rocprof-kfd-results\",\"version\":1,\n\"metadata\":" +
                     metadata_json(run, none, false) +
                     ",\n\"agents\":" + agents_json(run.agents, run.hosts) + ",\n\"records\":[");
        file_.set_tail(streaming_tail);
        return file_.flush();
    }

    void write(const record& r) override
    {
        std::string line = record_json(r);
        if(line.empty()) return;
        file_.append((first_ ? "\n" : ",\n") + line);
        first_ = false;
    }

    void end_batch() override { file_.flush(); }

    void finish(const run_info& run, const summary_builder& s) override
    {
        file_.set_tail("\n],\"end_ns\":" + u(run.end_ns) + ",\"wall_ns\":" + u(wall_ns(run, s)) +
                       ",\"loss\":" + loss_json(run.loss) + ",\"truncated\":false}\n");
        file_.close();
    }

    std::vector<std::string> files() const override
    {
        if(file_.path().empty() || file_.failed()) return {};
        return {file_.path()};
    }

private:
    output_file file_;
    bool        first_ = true;
};
} // namespace

std::string
record_json(const record& r)
{
    std::string head = "{\"operation\":" + json_string(operation_name(r.operation)) +
                       ",\"pid\":" + u(r.pid) + ",\"start_timestamp\":" + u(r.start_timestamp) +
                       ",\"end_timestamp\":" + u(r.end_timestamp);
    switch(r.operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
    {
        const auto& m = r.page_migrate;
        return head + ",\"start_addr\":\"" + hex(m.start_addr) + "\",\"end_addr\":\"" +
               hex(m.end_addr) + "\",\"from_node\":" + u(m.from_node) +
               ",\"to_node\":" + u(m.to_node) + ",\"prefetch_node\":" + u(m.prefetch_node) +
               ",\"preferred_node\":" + u(m.preferred_node) + ",\"trigger\":\"" +
               trigger_name(r.operation, m.trigger) + "\"}";
    }
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
    {
        const auto& f = r.page_fault;
        return head + ",\"read_fault\":" + (f.read_fault ? "1" : "0") +
               ",\"migrated\":" + (f.migrated ? "1" : "0") + ",\"node_id\":" + u(f.node_id) +
               ",\"address\":\"" + hex(f.address) + "\"}";
    }
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
    {
        const auto& q = r.queue_suspend;
        return head + ",\"rescheduled\":" + (q.rescheduled ? "1" : "0") +
               ",\"node_id\":" + u(q.node_id) + ",\"trigger\":\"" +
               trigger_name(r.operation, q.trigger) + "\"}";
    }
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
    {
        const auto& m = r.unmap_from_gpu;
        return head + ",\"node_id\":" + u(m.node_id) + ",\"start_addr\":\"" + hex(m.start_addr) +
               "\",\"end_addr\":\"" + hex(m.end_addr) + "\",\"trigger\":\"" +
               trigger_name(r.operation, m.trigger) + "\"}";
    }
    default:
        return "";
    }
}

std::unique_ptr<record_writer>
make_json_writer()
{
    return std::make_unique<json_writer>();
}
} // namespace rocprof_kfd
