// MIT License - see LICENSE.
//
// CSV: one file per operation, a header row, one row per record (RFC 4180: CRLF-free LF
// lines are accepted by every reader we know; fields with , " CR LF are quoted).
// Columns are listed in docs/rocprof-kfd-outputs.md and in csv_columns below.
#include "csv_writer.hpp"

#include "names.hpp"
#include "output_file.hpp"
#include "text.hpp"

#include <array>

namespace rocprof_kfd
{
const char* const csv_file_names[5] = {"", "page_migrate.csv", "page_fault.csv",
                                       "queue_suspend.csv", "unmap_from_gpu.csv"};
const char* const csv_headers[5]    = {
       "",
       "pid,start_timestamp,end_timestamp,duration_ns,start_addr,end_addr,bytes,from_node,"
          "from_name,to_node,to_name,prefetch_node,preferred_node,trigger",
       "pid,start_timestamp,end_timestamp,duration_ns,node_id,node_name,address,read_fault,"
          "migrated",
       "pid,start_timestamp,end_timestamp,duration_ns,node_id,node_name,trigger,rescheduled",
       "pid,start_timestamp,end_timestamp,node_id,node_name,start_addr,end_addr,trigger"};

namespace
{
std::string
u(uint64_t v)
{
    return std::to_string(v);
}

class csv_writer final : public record_writer
{
public:
    bool open(const std::string& dir, const std::string& stem, const run_info& run) override
    {
        agents_  = run.agents;
        bool any = false;
        for(int op = 1; op <= operation_count; ++op)
        {
            if(!files_[op].open(output_path(dir, stem, csv_file_names[op]))) continue;
            files_[op].append(std::string(csv_headers[op]) + "\n");
            files_[op].flush(); // a file with its header even if the run is killed
            any = true;
        }
        return any;
    }

    void write(const record& r) override
    {
        if(r.operation < 1 || r.operation > operation_count) return;
        files_[r.operation].append(csv_row(r, agents_));
    }

    void end_batch() override
    {
        for(auto& f : files_)
            f.flush();
    }

    void finish(const run_info&, const summary_builder&) override
    {
        for(auto& f : files_)
            f.close();
    }

    std::vector<std::string> files() const override
    {
        std::vector<std::string> out;
        for(const auto& f : files_)
            if(!f.path().empty() && !f.failed()) out.push_back(f.path());
        return out;
    }

private:
    std::vector<agent_info>    agents_;
    std::array<output_file, 5> files_;
};
} // namespace

std::string
csv_row(const record& r, const std::vector<agent_info>& agents)
{
    uint64_t    start = r.start_timestamp, end = r.end_timestamp;
    std::string head = u(r.pid) + "," + u(start) + "," + u(end) + ",";
    std::string dur  = u(end >= start ? end - start : 0) + ",";
    switch(r.operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
    {
        const auto& m = r.page_migrate;
        return head + dur + hex(m.start_addr) + "," + hex(m.end_addr) + "," +
               u(m.end_addr >= m.start_addr ? m.end_addr - m.start_addr + 1 : 0) + "," +
               u(m.from_node) + "," + csv_field(agent_name(agents, m.from_node)) + "," +
               u(m.to_node) + "," + csv_field(agent_name(agents, m.to_node)) + "," +
               u(m.prefetch_node) + "," + u(m.preferred_node) + "," +
               trigger_name(r.operation, m.trigger) + "\n";
    }
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
    {
        const auto& f = r.page_fault;
        return head + dur + u(f.node_id) + "," + csv_field(agent_name(agents, f.node_id)) + "," +
               hex(f.address) + "," + (f.read_fault ? "1" : "0") + "," + (f.migrated ? "1" : "0") +
               "\n";
    }
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
    {
        const auto& q = r.queue_suspend;
        return head + dur + u(q.node_id) + "," + csv_field(agent_name(agents, q.node_id)) + "," +
               trigger_name(r.operation, q.trigger) + "," + (q.rescheduled ? "1" : "0") + "\n";
    }
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
    {
        const auto& m = r.unmap_from_gpu;
        return head + u(m.node_id) + "," + csv_field(agent_name(agents, m.node_id)) + "," +
               hex(m.start_addr) + "," + hex(m.end_addr) + "," +
               trigger_name(r.operation, m.trigger) + "\n";
    }
    default:
        return "";
    }
}

std::unique_ptr<record_writer>
make_csv_writer()
{
    return std::make_unique<csv_writer>();
}
} // namespace rocprof_kfd
