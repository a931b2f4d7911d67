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
#include <initializer_list>

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
class csv_writer final : public record_writer
{
public:
    bool open(const std::string& dir, const std::string& stem, const run_info& run) override
    {
        names_   = csv_agent_names(run.agents);
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
        row_.clear(); // keeps its capacity: no allocation per record
        append_csv_row(row_, r, names_);
        files_[r.operation].append(row_.view());
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
    csv_agent_names            names_;
    byte_buffer                row_;
    std::array<output_file, 5> files_;
};
} // namespace

csv_agent_names::csv_agent_names(const std::vector<agent_info>& agents)
{
    for(const auto& a : agents)
        fields_.emplace_back(a.gpu_id, csv_field(a.name));
}

void
csv_agent_names::append(byte_buffer& out, uint64_t gpu_id) const
{
    for(const auto& [id, field] : fields_)
        if(id == gpu_id)
        {
            out += field;
            return;
        }
    // agent_name's fallbacks hold nothing csv_field would quote.
    if(gpu_id == 0)
    {
        out += "CPU";
        return;
    }
    out += "gpu_id ";
    append_decimal(out, gpu_id);
}

namespace
{
// "v," for each value.
void
append_fields(byte_buffer& out, std::initializer_list<uint64_t> values)
{
    for(uint64_t v : values)
    {
        append_decimal(out, v);
        out += ',';
    }
}

void
append_hex_field(byte_buffer& out, uint64_t v)
{
    append_hex(out, v);
    out += ',';
}

void
append_agent_field(byte_buffer& out, const csv_agent_names& names, uint64_t gpu_id)
{
    names.append(out, gpu_id);
    out += ',';
}

void
append_migrate(byte_buffer& out, const record& r, const csv_agent_names& names)
{
    const auto& m = r.page_migrate;
    append_hex_field(out, m.start_addr);
    append_hex_field(out, m.end_addr);
    append_fields(out,
                  {m.end_addr >= m.start_addr ? m.end_addr - m.start_addr + 1 : 0, m.from_node});
    append_agent_field(out, names, m.from_node);
    append_fields(out, {m.to_node});
    append_agent_field(out, names, m.to_node);
    append_fields(out, {m.prefetch_node, m.preferred_node});
    append_trigger_name(out, r.operation, m.trigger);
}

void
append_fault(byte_buffer& out, const record& r, const csv_agent_names& names)
{
    const auto& f = r.page_fault;
    append_fields(out, {f.node_id});
    append_agent_field(out, names, f.node_id);
    append_hex_field(out, f.address);
    out += f.read_fault ? "1," : "0,";
    out += f.migrated ? '1' : '0';
}

void
append_suspend(byte_buffer& out, const record& r, const csv_agent_names& names)
{
    const auto& q = r.queue_suspend;
    append_fields(out, {q.node_id});
    append_agent_field(out, names, q.node_id);
    append_trigger_name(out, r.operation, q.trigger);
    out += q.rescheduled ? ",1" : ",0";
}

void
append_unmap(byte_buffer& out, const record& r, const csv_agent_names& names)
{
    const auto& m = r.unmap_from_gpu;
    append_fields(out, {m.node_id});
    append_agent_field(out, names, m.node_id);
    append_hex_field(out, m.start_addr);
    append_hex_field(out, m.end_addr);
    append_trigger_name(out, r.operation, m.trigger);
}
} // namespace

void
append_csv_row(byte_buffer& out, const record& r, const csv_agent_names& names)
{
    uint64_t start = r.start_timestamp, end = r.end_timestamp;
    uint64_t duration = end >= start ? end - start : 0;
    switch(r.operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        append_fields(out, {r.pid, start, end, duration});
        append_migrate(out, r, names);
        break;
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
        append_fields(out, {r.pid, start, end, duration});
        append_fault(out, r, names);
        break;
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        append_fields(out, {r.pid, start, end, duration});
        append_suspend(out, r, names);
        break;
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        append_fields(out, {r.pid, start, end}); // an instant: no duration column
        append_unmap(out, r, names);
        break;
    default:
        return;
    }
    out += '\n';
}

std::string
csv_row(const record& r, const std::vector<agent_info>& agents)
{
    byte_buffer out;
    append_csv_row(out, r, csv_agent_names(agents));
    return out.str();
}

std::unique_ptr<record_writer>
make_csv_writer()
{
    return std::make_unique<csv_writer>();
}
} // namespace rocprof_kfd
