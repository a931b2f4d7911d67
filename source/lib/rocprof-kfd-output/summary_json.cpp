// MIT License - see LICENSE.
//
// summary.json: the schema of docs/rocprof-kfd-design.md, written with plain string
// building (small and bounded). Keys appear in the schema's order.
#include "loss.hpp"
#include "names.hpp"
#include "summary.hpp"
#include "text.hpp"

#include <rocprofiler-sdk/fwd.h>

#include <algorithm>

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
values(const std::vector<uint64_t>& v, size_t n)
{
    std::string out = "[";
    for(size_t i = 0; i < n; ++i)
        out += (i ? "," : "") + u(i < v.size() ? v[i] : 0);
    return out + "]";
}

} // namespace

std::string
metadata_json(const run_info& run, const summary_builder& s, bool end_known)
{
    std::string out = "{\"command\":[";
    for(size_t i = 0; i < run.command.size(); ++i)
        out += (i ? "," : "") + json_string(run.command[i]);
    out += "],\"pid\":" + u(run.pid) + ",\"ppid\":" + u(run.ppid) +
           ",\"hostname\":" + json_string(run.hostname) +
           ",\"rank\":" + (run.rank ? json_string(*run.rank) : "null") +
           ",\"sdk_version\":" + json_string(run.sdk_version) +
           ",\"kernel_release\":" + json_string(run.kernel_release) +
           ",\"kfd_version\":" + (run.kfd_version ? json_string(*run.kfd_version) : "null") +
           ",\"emulated\":" + (run.emulated ? "true" : "false") +
           ",\"run_id\":" + (run.run_id ? json_string(*run.run_id) : "null");
    uint64_t start = run.start_ns ? run.start_ns : (s.records() ? s.first_ns() : 0);
    uint64_t end   = run.end_ns ? run.end_ns : (s.records() ? s.last_ns() : start);
    out += ",\"start_ns\":" + u(start) +
           ",\"boot_time_unix_ns\":" + (run.boot_time_unix_ns ? u(*run.boot_time_unix_ns) : "null");
    if(!end_known) return out + ",\"end_ns\":null,\"wall_ns\":null}";
    out += ",\"end_ns\":" + u(end) + ",\"wall_ns\":" + u(wall_ns(run, s)) + "}";
    return out;
}

std::string
host_field(const std::vector<std::string>& hosts, node_key node)
{
    if(hosts.size() < 2) return "";
    const uint32_t host = host_of(node);
    return ",\"host\":" + json_string(host < hosts.size() ? hosts[host] : std::string{});
}

std::string
agents_json(const std::vector<agent_info>& agents, const std::vector<std::string>& hosts)
{
    std::string out = "[";
    for(size_t i = 0; i < agents.size(); ++i)
    {
        const auto& a = agents[i];
        out += std::string(i ? "," : "") + "{\"gpu_id\":" + u(a.gpu_id) +
               ",\"node_id\":" + u(a.node_id) + ",\"name\":" + json_string(a.name) +
               ",\"type\":" + (a.is_gpu ? "\"gpu\"" : "\"cpu\"") +
               host_field(hosts, make_node_key(a.host, a.gpu_id)) + "}";
    }
    return out + "]";
}

namespace
{
std::string
range_json(const heavy_entry& e)
{
    uint64_t start = e.key.block * range_bytes;
    return "{\"start\":" + json_string(hex(start)) +
           ",\"end\":" + json_string(hex(start + range_bytes - 1)) + ",\"pid\":" + u(e.key.pid) +
           ",\"faults\":" + u(e.counters.faults) + ",\"migrations\":" + u(e.counters.migrations) +
           ",\"htod_bytes\":" + u(e.counters.htod_bytes) +
           ",\"dtoh_bytes\":" + u(e.counters.dtoh_bytes) +
           ",\"dtod_bytes\":" + u(e.counters.dtod_bytes) + "}";
}

std::string
ranges_json(const std::vector<heavy_entry>& v)
{
    std::string out = "[";
    for(size_t i = 0; i < v.size(); ++i)
        out += (i ? "," : "") + range_json(v[i]);
    return out + "]";
}

std::string
histogram_json(const summary_builder& s, int op)
{
    const log2_histogram& h     = s.log2_durations(op);
    std::string           upper = "[", counts = "[";
    for(size_t i = 0; i < h.used(); ++i)
    {
        upper += (i ? "," : "") + u(log2_histogram::upper_bound_of(i));
        counts += (i ? "," : "") + u(h.counts[i]);
    }
    return "{\"bucket_upper_ns\":" + upper + "],\"counts\":" + counts +
           "],\"p50_ns\":" + u(s.durations(op).quantile(0.5)) +
           ",\"p99_ns\":" + u(s.durations(op).quantile(0.99)) + "}";
}
} // namespace

std::string
loss_json(const loss_info& loss)
{
    std::string out = "{";
    for(size_t i = 0; i < loss_field_count; ++i)
        out += std::string(i ? "," : "") + "\"" + loss_fields[i].name +
               "\":" + u(loss.stats.*loss_fields[i].member);
    loss_verdict v = judge_loss(loss);
    out += ",\"buffer_drops\":" + u(loss.buffer_drops) +
           ",\"records_not_received\":" + u(loss.records_not_received) +
           ",\"available\":" + (loss.valid ? "true" : "false") +
           ",\"lost\":" + (v.lost ? "true" : "false") +
           ",\"probably_lost\":" + (v.probably_lost ? "true" : "false") +
           ",\"message\":" + json_string(v.message) + "}";
    return out;
}

std::string
summary_json(const run_info& run, const summary_builder& s, bool complete)
{
    const auto& agents = run.agents;
    std::string out    = "{\"schema\":\"rocprof-kfd-summary\",\"version\":1,\"complete\":";
    out += complete ? "true" : "false";
    out += ",\n\"metadata\":" + metadata_json(run, s);
    out += ",\n\"agents\":" + agents_json(agents, run.hosts);
    if(!run.inputs.empty())
    {
        out += ",\n\"inputs\":[";
        for(size_t i = 0; i < run.inputs.size(); ++i)
        {
            const auto& in = run.inputs[i];
            out += std::string(i ? "," : "") + "{\"directory\":" + json_string(in.directory) +
                   ",\"stem\":" + json_string(in.stem) +
                   ",\"hostname\":" + json_string(in.hostname) +
                   ",\"rank\":" + (in.rank ? json_string(*in.rank) : "null") +
                   ",\"pid\":" + u(in.pid) + ",\"records\":" + u(in.records) +
                   ",\"complete\":" + (in.complete ? "true" : "false") + "}";
        }
        out += "]";
    }
    out += ",\n\"loss\":" + loss_json(run.loss);

    out += ",\n\"operations\":[";
    bool first = true;
    for(const auto& [key, st] : s.operations())
    {
        out += std::string(first ? "" : ",\n ") +
               "{\"operation\":" + json_string(operation_name(key.first)) +
               ",\"trigger\":" + json_string(trigger_name(key.first, key.second)) +
               ",\"count\":" + u(st.count) + ",\"total_ns\":" + u(st.total_ns) +
               ",\"mean_ns\":" + u(st.count ? st.total_ns / st.count : 0) +
               ",\"min_ns\":" + u(st.durations.min()) +
               ",\"p50_ns\":" + u(st.durations.quantile(0.5)) +
               ",\"p99_ns\":" + u(st.durations.quantile(0.99)) +
               ",\"max_ns\":" + u(st.durations.max()) + "}";
        first = false;
    }
    out += "],\n\"migrations_by_direction\":[";
    first = true;
    for(const auto& [key, d] : s.directions())
    {
        double gbps =
            d.total_ns ? static_cast<double>(d.bytes) / static_cast<double>(d.total_ns) : 0.0;
        out += std::string(first ? "" : ",\n ") + "{\"from_node\":" + u(node_of(key.first)) +
               ",\"to_node\":" + u(node_of(key.second)) + host_field(run.hosts, key.first) +
               ",\"from_name\":" + json_string(agent_name(agents, key.first)) +
               ",\"to_name\":" + json_string(agent_name(agents, key.second)) +
               ",\"count\":" + u(d.count) + ",\"bytes\":" + u(d.bytes) +
               ",\"total_ns\":" + u(d.total_ns) + ",\"gb_per_s\":" + decimal(gbps) + "}";
        first = false;
    }
    out += "],\n\"faults_by_gpu\":[";
    first = true;
    for(const auto& [gpu, f] : s.faults())
    {
        out += std::string(first ? "" : ",\n ") + "{\"gpu_id\":" + u(node_of(gpu)) +
               host_field(run.hosts, gpu) + ",\"name\":" + json_string(agent_name(agents, gpu)) +
               ",\"read_migrated\":" + u(f.read_migrated) +
               ",\"read_updated\":" + u(f.read_updated) +
               ",\"write_migrated\":" + u(f.write_migrated) +
               ",\"write_updated\":" + u(f.write_updated) + "}";
        first = false;
    }
    out += "],\n\"queue_suspend_by_gpu\":[";
    first         = true;
    uint64_t wall = share_base_ns(run, s);
    for(const auto& [gpu, q] : s.suspensions())
    {
        double share = wall ? static_cast<double>(q.total_ns) / static_cast<double>(wall) : 0.0;
        out += std::string(first ? "" : ",\n ") + "{\"gpu_id\":" + u(node_of(gpu)) +
               host_field(run.hosts, gpu) + ",\"name\":" + json_string(agent_name(agents, gpu)) +
               ",\"count\":" + u(q.count) + ",\"total_ns\":" + u(q.total_ns) +
               ",\"share_of_wall\":" + decimal(share) + "}";
        first = false;
    }
    out += "],\n\"range_bytes\":" + u(range_bytes);
    out += ",\n\"top_ranges_by_faults\":" + ranges_json(s.top_by_faults());
    out += ",\n\"top_ranges_by_bytes\":" + ranges_json(s.top_by_bytes());
    out += ",\n\"top_ranges_approximate\":";
    out += s.top_ranges_approximate() ? "true" : "false";

    out += ",\n\"thrashing\":{\"threshold\":" + u(s.thrashing_threshold()) +
           ",\"approximate\":" + (s.thrashing_approximate() ? "true" : "false") +
           ",\"count\":" + u(s.thrashing_count()) + ",\"ranges\":[";
    first = true;
    for(const auto& t : s.thrashing())
    {
        out += std::string(first ? "" : ",") + "{\"start\":" + json_string(hex(t.start)) +
               ",\"end\":" + json_string(hex(t.end)) + ",\"pid\":" + u(t.pid) + ",\"between\":[" +
               u(t.a) + "," + u(t.b) + "]" + host_field(run.hosts, make_node_key(t.host, t.a)) +
               ",\"migrations\":" + u(t.migrations) + ",\"bytes\":" + u(t.bytes) + "}";
        first = false;
    }
    out += "]}";

    const timeline& tl = s.bins();
    out += ",\n\"timeline\":{\"start_ns\":" + u(tl.start_ns()) + ",\"bin_ns\":" + u(tl.bin_ns()) +
           ",\"bins\":" + u(tl.bins()) + ",\"migration_bytes\":[";
    first = true;
    for(const auto& [key, v] : tl.migration_bytes())
    {
        out += std::string(first ? "" : ",") + "{\"from_node\":" + u(node_of(key.first)) +
               ",\"to_node\":" + u(node_of(key.second)) + host_field(run.hosts, key.first) +
               ",\"values\":" + values(v, tl.bins()) + "}";
        first = false;
    }
    out += "],\"faults\":[";
    first = true;
    for(const auto& [gpu, rw] : tl.faults())
    {
        out += std::string(first ? "" : ",") + "{\"gpu_id\":" + u(node_of(gpu)) +
               host_field(run.hosts, gpu) + ",\"read\":" + values(rw.first, tl.bins()) +
               ",\"write\":" + values(rw.second, tl.bins()) + "}";
        first = false;
    }
    out += "]}";

    out += ",\n\"histograms\":{";
    for(int op = 1; op <= operation_count; ++op)
        out += std::string(op > 1 ? "," : "") + json_string(operation_name(op)) + ":" +
               histogram_json(s, op);
    out += "}";

    out += ",\n\"queue_suspensions\":[";
    first = true;
    for(const auto& [gpu, q] : s.suspensions())
    {
        auto intervals = q.intervals;
        std::sort(intervals.begin(), intervals.end());
        std::string list = "[";
        for(size_t i = 0; i < intervals.size(); ++i)
            list += (i ? ",[" : "[") + u(intervals[i].first) + "," + u(intervals[i].second) + "]";
        out += std::string(first ? "" : ",") + "{\"gpu_id\":" + u(node_of(gpu)) +
               host_field(run.hosts, gpu) + ",\"intervals\":" + list +
               "],\"intervals_merged\":" + (q.intervals_merged ? "true" : "false") + "}";
        first = false;
    }
    out += "]}\n";
    return out;
}
} // namespace rocprof_kfd
