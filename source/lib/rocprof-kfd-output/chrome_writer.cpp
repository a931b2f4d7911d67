// MIT License - see LICENSE.
//
// trace.chrome.json: Chrome trace-event JSON ({"traceEvents":[...]}), for chrome://tracing
// and tools that read only JSON. One event per line: process_name/thread_name metadata
// ("M"), complete slices ("X", ts and dur in microseconds with ns precision), instants for
// unmaps ("i", scope thread), counters ("C") from the summary timeline at the end. pid is
// the traced process, tid a lane track (lanes.hpp), so slices on one tid always nest.
// Streamed with a closing tail after each flush (see output_file.hpp): `],"truncated":true}`
// until finish() writes the real end.
#include "csv_writer.hpp"
#include "lanes.hpp"
#include "names.hpp"
#include "output_file.hpp"
#include "text.hpp"
#include "trace_names.hpp"

#include <map>
#include <tuple>

namespace rocprof_kfd
{
namespace
{
std::string
u(uint64_t v)
{
    return std::to_string(v);
}

std::string
args_json(const record& r)
{
    std::string a = "{\"pid\":" + u(r.pid);
    switch(r.operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
        a += ",\"address\":\"" + hex(r.page_fault.address) +
             "\",\"read_fault\":" + (r.page_fault.read_fault ? "1" : "0") +
             ",\"migrated\":" + (r.page_fault.migrated ? "1" : "0") +
             ",\"node_id\":" + u(r.page_fault.node_id);
        break;
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
    {
        const auto& m = r.page_migrate;
        a += ",\"start_addr\":\"" + hex(m.start_addr) + "\",\"end_addr\":\"" + hex(m.end_addr) +
             "\",\"bytes\":" + u(m.end_addr >= m.start_addr ? m.end_addr - m.start_addr + 1 : 0) +
             ",\"from_node\":" + u(m.from_node) + ",\"to_node\":" + u(m.to_node) +
             ",\"prefetch_node\":" + u(m.prefetch_node) +
             ",\"preferred_node\":" + u(m.preferred_node) + ",\"trigger\":\"" +
             trigger_name(r.operation, m.trigger) + "\"";
        break;
    }
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        a += ",\"node_id\":" + u(r.queue_suspend.node_id) + ",\"trigger\":\"" +
             trigger_name(r.operation, r.queue_suspend.trigger) +
             "\",\"rescheduled\":" + (r.queue_suspend.rescheduled ? "1" : "0");
        break;
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        a += ",\"node_id\":" + u(r.unmap_from_gpu.node_id) + ",\"start_addr\":\"" +
             hex(r.unmap_from_gpu.start_addr) + "\",\"end_addr\":\"" +
             hex(r.unmap_from_gpu.end_addr) + "\",\"trigger\":\"" +
             trigger_name(r.operation, r.unmap_from_gpu.trigger) + "\"";
        break;
    default:
        break;
    }
    return a + "}";
}

class chrome_writer final : public record_writer
{
public:
    bool open(const std::string& dir, const std::string& stem, const run_info& run) override
    {
        if(!file_.open(output_path(dir, stem, "trace.chrome.json"))) return false;
        agents_ = run.agents;
        pid_    = run.pid;
        file_.append("{\"traceEvents\":[");
        event("{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":" + u(pid_) +
              ",\"tid\":0,\"args\":{\"name\":" + json_string(process_label(run)) + "}}");
        file_.set_tail("\n],\"truncated\":true}\n");
        return file_.flush();
    }

    void write(const record& r) override
    {
        if(r.operation < 1 || r.operation > operation_count || !file_.is_open()) return;
        uint32_t    gpu     = record_gpu(r);
        uint64_t    start   = r.start_timestamp;
        uint64_t    end     = r.end_timestamp < start ? start : r.end_timestamp;
        bool        instant = r.operation == ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU;
        size_t      lane    = instant ? 0 : lanes_.assign({0, gpu, r.operation}, start, end);
        uint64_t    tid     = thread_of(gpu, r.operation, lane);
        std::string common  = "{\"name\":" + json_string(slice_name(r)) +
                             ",\"cat\":\"kfd\",\"ts\":" + micros(start) + ",\"pid\":" + u(pid_) +
                             ",\"tid\":" + u(tid);
        if(instant)
            event(common + ",\"ph\":\"i\",\"s\":\"t\",\"args\":" + args_json(r) + "}");
        else
            event(common + ",\"ph\":\"X\",\"dur\":" + micros(end - start) +
                  ",\"args\":" + args_json(r) + "}");
    }

    void end_batch() override { file_.flush(); }

    void finish(const run_info& run, const summary_builder& s) override
    {
        counters(s);
        file_.set_tail("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"pid\":" + u(run.pid) +
                       ",\"hostname\":" + json_string(run.hostname) +
                       ",\"clock\":\"boottime\"},\"truncated\":false}\n");
        file_.close();
    }

    std::vector<std::string> files() const override
    {
        if(file_.path().empty() || file_.failed()) return {};
        return {file_.path()};
    }

private:
    void event(const std::string& text)
    {
        file_.append((first_ ? "\n" : ",\n") + text);
        first_ = false;
    }

    uint64_t thread_of(uint32_t gpu, int op, size_t lane)
    {
        auto key = std::make_tuple(gpu, op, lane);
        auto it  = threads_.find(key);
        if(it != threads_.end()) return it->second;
        uint64_t tid = threads_.size() + 1;
        threads_.emplace(key, tid);
        event("{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":" + u(pid_) +
              ",\"tid\":" + u(tid) +
              ",\"args\":{\"name\":" + json_string(lane_track_name(agents_, gpu, op, lane)) + "}}");
        return tid;
    }

    void counters(const summary_builder& s)
    {
        const timeline& tl     = s.bins();
        double          bin    = static_cast<double>(tl.bin_ns());
        auto            series = [&](const std::string& name, const std::string& unit,
                          const std::vector<uint64_t>& v, double scale)
        {
            for(size_t i = 0; i <= tl.bins(); ++i)
            {
                double value =
                    i < tl.bins() && i < v.size() ? static_cast<double>(v[i]) * scale : 0.0;
                event("{\"name\":" + json_string(name) + ",\"ph\":\"C\",\"ts\":" +
                      micros(tl.start_ns() + i * tl.bin_ns()) + ",\"pid\":" + u(pid_) +
                      ",\"tid\":0,\"args\":{" + json_string(unit) + ":" + decimal(value) + "}}");
            }
        };
        for(const auto& [dir, v] : tl.migration_bytes())
            series("Migration bandwidth " + agent_name(agents_, dir.first) + " (" +
                       std::to_string(node_of(dir.first)) + ") -> " +
                       agent_name(agents_, dir.second) + " (" +
                       std::to_string(node_of(dir.second)) + ")",
                   "GB/s", v, 1.0 / bin);
        for(const auto& [gpu, rw] : tl.faults())
        {
            std::vector<uint64_t> total(tl.bins(), 0);
            for(size_t i = 0; i < tl.bins(); ++i)
                total[i] = (i < rw.first.size() ? rw.first[i] : 0) +
                           (i < rw.second.size() ? rw.second[i] : 0);
            series("Page-fault rate GPU " + agent_name(agents_, gpu) + " (" +
                       std::to_string(node_of(gpu)) + ")",
                   "faults/s", total, 1e9 / bin);
        }
    }

    output_file                                           file_;
    std::vector<agent_info>                               agents_;
    uint32_t                                              pid_   = 0;
    bool                                                  first_ = true;
    lane_allocator                                        lanes_;
    std::map<std::tuple<uint32_t, int, size_t>, uint64_t> threads_;
};
} // namespace

std::unique_ptr<record_writer>
make_chrome_writer()
{
    return std::make_unique<chrome_writer>();
}
} // namespace rocprof_kfd
