// MIT License - see LICENSE.
#include "tables.hpp"

#include "plots.hpp"
#include "svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace rocprof_kfd_report
{
namespace
{
std::string
address(uint64_t a)
{
    return fmt::format("0x{:x}", a);
}

// A table cell with a number and a bar proportional to value / max.
std::string
bar_cell(double value, double max, const std::string& text, const char* colour)
{
    const double w = max > 0 ? 120.0 * value / max : 0;
    return fmt::format("<td class=\"num bar-cell\" data-value=\"{}\"><svg class=\"cell-bar\" "
                       "width=\"120\" height=\"10\" viewBox=\"0 0 120 10\" aria-hidden=\"true\">"
                       "<rect width=\"{:.1f}\" height=\"10\" fill=\"{}\"/></svg> {}</td>",
                       format_number(value, 15), w, colour, escape(text));
}

// The agent's label when the summary lists the agent (it tells same-named GPUs apart), else
// the name the direction row carries.
std::string
node_name(const Summary& s, uint64_t node, const std::string& name)
{
    for(const Agent& a : s.agents)
        if(a.gpu_id == node) return device_label(s, node);
    return gpu_id_of(node) == 0 || name.empty() ? device_label(s, node) : name;
}

std::string
num_cell(uint64_t v)
{
    return fmt::format("<td class=\"num\" data-value=\"{}\">{}</td>", v, v);
}

std::string
row(const std::vector<std::string>& cells)
{
    std::string out = "<tr>";
    for(const std::string& c : cells)
        out += c;
    return out + "</tr>";
}

std::string
th(const char* text)
{
    return fmt::format("<th>{}</th>", text);
}

std::string
td(const std::string& text)
{
    return "<td>" + escape(text) + "</td>";
}
} // namespace

std::string
input_label(const Input& in)
{
    const Metadata& m = in.summary.metadata;
    std::string     out;
    if(!in.summary.inputs.empty())
        return fmt::format("merged: {} processes · {}", in.summary.inputs.size(), in.path);
    if(m.rank && !m.rank->empty()) out = "rank " + *m.rank + " · ";
    return out + (m.hostname.empty() ? "?" : m.hostname) + " · pid " + std::to_string(m.pid);
}

std::string
loss_banner(const std::vector<Input>& inputs)
{
    std::string lines;
    size_t      bad = 0;
    for(const Input& in : inputs)
    {
        const Loss& l = in.summary.loss;
        if(!in.summary.complete)
        {
            ++bad;
            lines += fmt::format("<li>{}: the summary is incomplete: the run did not finish "
                                 "normally (killed?), the figures cover what was recorded "
                                 "before it stopped</li>",
                                 escape(input_label(in)));
        }
        for(const MergedInput& m : in.summary.inputs)
            if(!m.complete)
            {
                ++bad;
                lines += fmt::format("<li>{}: input {} is incomplete</li>", escape(input_label(in)),
                                     escape(m.directory));
            }
        if(!l.lost && !l.probably_lost) continue;
        ++bad;
        lines += fmt::format("<li>{}: {}{}</li>", escape(input_label(in)),
                             l.lost ? "events were lost" : "events were probably lost",
                             l.message.empty() ? "" : " — " + escape(l.message));
    }
    if(bad == 0)
        return "<div class=\"banner banner-ok\" data-lost=\"false\">No events were lost: every "
               "event the kernel sent became a record.</div>";
    return fmt::format("<div class=\"banner banner-lost\" role=\"alert\" data-lost=\"true\">"
                       "<strong>Warning: the figures below are incomplete.</strong><ul>{}</ul>"
                       "See the loss accounting table for the counters.</div>",
                       lines);
}

std::string
metadata_table(const Input& in)
{
    const Metadata& m = in.summary.metadata;
    std::string     command;
    for(const std::string& a : m.command)
        command += (command.empty() ? "" : " ") + a;
    std::string out = "<table class=\"meta\" data-table=\"metadata\"><tbody>";
    auto        add = [&](const char* k, const std::string& v)
    { out += fmt::format("<tr><th>{}</th><td>{}</td></tr>", k, escape(v)); };
    add("command", command.empty() ? "(unknown)" : command);
    add("host", m.hostname);
    add("pid / ppid", fmt::format("{} / {}", m.pid, m.ppid));
    add("rank", m.rank.value_or("(none)"));
    add("wall time", format_duration(static_cast<double>(m.wall_ns)));
    add("start / end (ns)", fmt::format("{} / {}", m.start_ns, m.end_ns));
    add("SDK", m.sdk_version);
    add("kernel", m.kernel_release);
    add("KFD ioctl version", m.kfd_version.value_or("(unknown)"));
    add("emulated", m.emulated ? "yes (KFD emulator)" : "no");
    std::string agents;
    for(const Agent& a : in.summary.agents)
    {
        const std::string& host = host_of(in.summary, a.gpu_id);
        agents += fmt::format("{}{} ({}, node {}, gpu_id {}{})", agents.empty() ? "" : "; ", a.name,
                              a.type, a.node_id, gpu_id_of(a.gpu_id),
                              host.empty() ? "" : ", host " + host);
    }
    add("agents", agents);
    add("summary file", in.path);
    return out + "</tbody></table>";
}

std::string
merged_inputs_table(const Summary& s)
{
    std::string out =
        "<table data-table=\"merged-inputs\"><thead>" +
        row({th("directory"), th("host"), th("rank"), th("pid"), th("records"), th("complete")}) +
        "</thead><tbody>";
    for(const MergedInput& m : s.inputs)
        out += row({td(m.directory), td(m.hostname), td(m.rank.value_or("")),
                    td(std::to_string(m.pid)), num_cell(m.records),
                    m.complete ? td("yes") : "<td class=\"lost\">no</td>"});
    return out + "</tbody></table>";
}

std::string
loss_table(const Summary& s)
{
    std::string out = "<table data-table=\"loss\"><thead><tr><th>counter</th><th>value</th>"
                      "</tr></thead><tbody>";
    for(const auto& [name, value] : s.loss.counters)
        out += fmt::format("<tr{}><td>{}</td>{}</tr>",
                           value != 0 && name != "events_received" && name != "records_emitted"
                               ? " class=\"nonzero\""
                               : "",
                           escape(name), num_cell(value));
    for(const auto& [name, value] : s.loss.flags)
        out += fmt::format("<tr{}><td>{}</td><td class=\"num\" data-value=\"{}\">{}</td></tr>",
                           name == "available" && !value ? " class=\"nonzero\"" : "", escape(name),
                           value ? "true" : "false", value ? "yes" : "no");
    return out + "</tbody></table>";
}

std::string
operations_table(const Summary& s)
{
    std::string out = "<table data-table=\"operations\"><thead>" +
                      row({th("operation"), th("trigger"), th("count"), th("total"), th("mean"),
                           th("min"), th("p50"), th("p99"), th("max")}) +
                      "</thead><tbody>";
    for(const OperationStats& o : s.operations)
    {
        auto d = [](uint64_t ns)
        {
            return fmt::format("<td class=\"num\" data-value=\"{}\">{}</td>", ns,
                               format_duration(static_cast<double>(ns)));
        };
        out += row({td(o.operation), td(o.trigger), num_cell(o.count), d(o.total_ns), d(o.mean_ns),
                    d(o.min_ns), d(o.p50_ns), d(o.p99_ns), d(o.max_ns)});
    }
    return out + "</tbody></table>";
}

std::string
directions_table(const Summary& s)
{
    double max = 0;
    for(const Direction& d : s.migrations_by_direction)
        max = std::max(max, static_cast<double>(d.bytes));
    std::string out =
        "<table data-table=\"directions\"><thead>" +
        row({th("from"), th("to"), th("migrations"), th("bytes"), th("time"), th("GB/s")}) +
        "</thead><tbody>";
    for(const Direction& d : s.migrations_by_direction)
        out += row({td(node_name(s, d.from_node, d.from_name)),
                    td(node_name(s, d.to_node, d.to_name)), num_cell(d.count),
                    bar_cell(static_cast<double>(d.bytes), max,
                             format_bytes(static_cast<double>(d.bytes)), series_colour(0)),
                    td(format_duration(static_cast<double>(d.total_ns))),
                    fmt::format("<td class=\"num\" data-value=\"{}\">{}</td>",
                                format_number(d.gb_per_s, 6), format_number(d.gb_per_s, 4))});
    return out + "</tbody></table>";
}

std::string
faults_table(const Summary& s)
{
    std::string out = "<table data-table=\"faults\"><thead>" +
                      row({th("GPU"), th("read, migrated"), th("read, updated"),
                           th("write, migrated"), th("write, updated")}) +
                      "</thead><tbody>";
    for(const GpuFaults& f : s.faults_by_gpu)
        out +=
            row({td(device_label(s, f.gpu_id)), num_cell(f.read_migrated), num_cell(f.read_updated),
                 num_cell(f.write_migrated), num_cell(f.write_updated)});
    return out + "</tbody></table>";
}

// Whether range rows name their process, as summary.txt decides (summary_text.cpp): in a merge
// of several inputs, or when the rows are of more than one pid; never for rows without a pid
// (summaries written before 2026-12-07).
bool
pid_column(const Summary& s)
{
    std::set<uint64_t> pids;
    bool               all_have = true;
    for(const auto* rows : {&s.top_ranges_by_faults, &s.top_ranges_by_bytes})
        for(const AddressRange& r : *rows)
            pids.insert(r.pid), all_have = all_have && r.has_pid;
    for(const ThrashingRange& t : s.thrashing)
        pids.insert(t.pid), all_have = all_have && t.has_pid;
    return all_have && (s.inputs.size() > 1 || pids.size() > 1);
}

std::string
ranges_table(const Summary& s, bool by_bytes)
{
    const std::vector<AddressRange>& ranges =
        by_bytes ? s.top_ranges_by_bytes : s.top_ranges_by_faults;
    auto bytes_of = [](const AddressRange& r)
    { return static_cast<double>(r.htod_bytes + r.dtoh_bytes + r.dtod_bytes); };
    double max = 0;
    for(const AddressRange& r : ranges)
        max = std::max(max, by_bytes ? bytes_of(r) : static_cast<double>(r.faults));
    std::string              out      = fmt::format("<table data-table=\"{}\"><thead>",
                                  by_bytes ? "top-ranges-by-bytes" : "top-ranges-by-faults");
    const bool               with_pid = pid_column(s);
    std::vector<std::string> head     = {th("range"),
                                         th("faults"),
                                         th("migrations"),
                                         th("HtoD"),
                                         th("DtoH"),
                                         th("DtoD"),
                                         th(by_bytes ? "bytes migrated" : "faults")};
    if(with_pid) head.insert(head.begin(), th("pid"));
    out += row(head);
    out += "</thead><tbody>";
    for(const AddressRange& r : ranges)
    {
        const double             v     = by_bytes ? bytes_of(r) : static_cast<double>(r.faults);
        std::vector<std::string> cells = {td(address(r.start) + " – " + address(r.end)),
                                          num_cell(r.faults),
                                          num_cell(r.migrations),
                                          td(format_bytes(static_cast<double>(r.htod_bytes))),
                                          td(format_bytes(static_cast<double>(r.dtoh_bytes))),
                                          td(format_bytes(static_cast<double>(r.dtod_bytes))),
                                          bar_cell(v, max,
                                                   by_bytes ? format_bytes(v) : format_number(v),
                                                   by_bytes ? series_colour(1) : kReadColour)};
        if(with_pid) cells.insert(cells.begin(), num_cell(r.pid));
        out += row(cells);
    }
    if(ranges.empty())
        out += fmt::format("<tr><td colspan=\"{}\">none recorded</td></tr>", with_pid ? 8 : 7);
    out += "</tbody></table>";
    if(s.top_ranges_approximate)
        out += "<p class=\"note\">Approximate: more ranges were touched than the tool tracks "
               "exactly; counts of the ranges shown may be overestimated.</p>";
    return out;
}

std::string
thrashing_table(const Summary& s)
{
    std::string out = fmt::format(
        "<p>Ranges that migrated back and forth between the same two locations at least {} "
        "times ({} range{}{}).</p>",
        s.thrashing_threshold, s.thrashing_count, s.thrashing_count == 1 ? "" : "s",
        s.thrashing_count > s.thrashing.size()
            ? fmt::format("; the {} heaviest below", s.thrashing.size())
            : "");
    double max = 0;
    for(const ThrashingRange& t : s.thrashing)
        max = std::max(max, static_cast<double>(t.migrations));
    const bool               with_pid = pid_column(s);
    std::vector<std::string> head     = {th("range"), th("between"), th("migrations"), th("bytes")};
    if(with_pid) head.insert(head.begin(), th("pid"));
    out += "<table data-table=\"thrashing\"><thead>" + row(head) + "</thead><tbody>";
    for(const ThrashingRange& t : s.thrashing)
    {
        std::vector<std::string> cells = {
            td(address(t.start) + " – " + address(t.end)),
            td(device_label(s, t.between[0]) + " ⇄ " + device_label(s, t.between[1])),
            bar_cell(static_cast<double>(t.migrations), max, std::to_string(t.migrations),
                     kWriteColour),
            fmt::format("<td class=\"num\" data-value=\"{}\">{}</td>", t.bytes,
                        format_bytes(static_cast<double>(t.bytes)))};
        if(with_pid) cells.insert(cells.begin(), num_cell(t.pid));
        out += row(cells);
    }
    if(s.thrashing.empty())
        out += fmt::format("<tr><td colspan=\"{}\">no thrashing range</td></tr>", with_pid ? 5 : 4);
    out += "</tbody></table>";
    if(s.thrashing_approximate)
        out += "<p class=\"note\">Approximate: more ranges moved than the tool tracks exactly; "
               "some thrashing ranges may be missing.</p>";
    return out;
}

std::string
highlights(const Summary& s)
{
    const Timeline& t    = s.timeline;
    std::string     out  = "<ul class=\"highlights\" data-section=\"highlights\">";
    auto            item = [&](const char* id, const std::string& value, const std::string& attrs,
                    const std::string& text)
    {
        out += fmt::format("<li data-highlight=\"{}\" data-value=\"{}\"{}>{}</li>", id, value,
                           attrs, text);
    };
    const RankTotals totals = rank_totals(s);
    item("bytes-migrated",
         format_number(totals.htod_bytes + totals.dtoh_bytes + totals.dtod_bytes, 15), "",
         fmt::format("<b>{}</b> migrated: {} HtoD, {} DtoH, {} DtoD",
                     format_bytes(totals.htod_bytes + totals.dtoh_bytes + totals.dtod_bytes),
                     format_bytes(totals.htod_bytes), format_bytes(totals.dtoh_bytes),
                     format_bytes(totals.dtod_bytes)));
    // Peaks over the bins, all directions (GPUs) together.
    std::vector<double> bandwidth(t.bins, 0.0), faults(t.bins, 0.0);
    for(const BandwidthSeries& b : bandwidth_series(s))
        for(size_t i = 0; i < t.bins; ++i)
            bandwidth[i] += b.gb_per_s[i];
    for(const FaultSeries& f : t.faults)
        for(size_t i = 0; i < t.bins; ++i)
            faults[i] += (f.read[i] + f.write[i]) * 1e9 / static_cast<double>(t.bin_ns);
    auto peak =
        [&](const std::vector<double>& v, const char* id, const char* unit, const char* what)
    {
        if(v.empty()) return;
        const size_t k  = static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
        const double at = static_cast<double>(t.start_ns) - static_cast<double>(time_domain(s).t0) +
                          static_cast<double>(k * t.bin_ns);
        item(id, format_number(v[k], 6), fmt::format(" data-bin=\"{}\"", k),
             fmt::format("peak {}: <b>{} {}</b> in bin {} ({} after the start)", what,
                         format_number(v[k], 4), unit, k, format_duration(at)));
    };
    peak(bandwidth, "peak-bandwidth", "GB/s", "migration bandwidth");
    peak(faults, "peak-fault-rate", "faults/s", "page-fault rate");
    const GpuQueueSuspend* worst = nullptr;
    for(const GpuQueueSuspend& q : s.queue_suspend_by_gpu)
        if(worst == nullptr || q.share_of_wall > worst->share_of_wall) worst = &q;
    if(worst != nullptr)
        item("worst-queue-share", format_number(worst->share_of_wall, 6),
             gpu_data_attributes(s, worst->gpu_id),
             fmt::format("queues of <b>{}</b> suspended <b>{} %</b> of {} ({})",
                         escape(device_label(s, worst->gpu_id)),
                         format_number(worst->share_of_wall * 100, 3), share_base(s),
                         format_duration(static_cast<double>(worst->total_ns))));
    const auto h = s.histograms.find("page_fault");
    if(h != s.histograms.end())
        item("fault-p99", std::to_string(h->second.p99_ns), "",
             fmt::format("page-fault latency p50 {}, <b>p99 {}</b>",
                         format_duration(static_cast<double>(h->second.p50_ns)),
                         format_duration(static_cast<double>(h->second.p99_ns))));
    item("thrashing", std::to_string(s.thrashing_count), "",
         fmt::format("<b>{}</b> thrashing range{} (at least {} migrations back and forth)",
                     s.thrashing_count, s.thrashing_count == 1 ? "" : "s", s.thrashing_threshold));
    return out + "</ul>";
}

RankTotals
rank_totals(const Summary& s)
{
    RankTotals t;
    for(const Direction& d : s.migrations_by_direction)
    {
        const double b        = static_cast<double>(d.bytes);
        const bool   from_cpu = gpu_id_of(d.from_node) == 0, to_cpu = gpu_id_of(d.to_node) == 0;
        if(from_cpu && !to_cpu)
            t.htod_bytes += b;
        else if(!from_cpu && to_cpu)
            t.dtoh_bytes += b;
        else if(!from_cpu)
            t.dtod_bytes += b;
    }
    for(const GpuFaults& f : s.faults_by_gpu)
    {
        t.read_faults += static_cast<double>(f.read_migrated + f.read_updated);
        t.write_faults += static_cast<double>(f.write_migrated + f.write_updated);
    }
    for(const GpuQueueSuspend& q : s.queue_suspend_by_gpu)
        t.max_queue_share = std::max(t.max_queue_share, q.share_of_wall);
    return t;
}

std::string
rank_table(const std::vector<Input>& inputs)
{
    std::string out =
        "<table data-table=\"ranks\"><thead>" +
        row({th("process"), th("wall time"), th("HtoD"), th("DtoH"), th("DtoD"), th("read faults"),
             th("write faults"), th("largest queue suspension share"), th("loss")}) +
        "</thead><tbody>";
    for(const Input& in : inputs)
    {
        const RankTotals t     = rank_totals(in.summary);
        const Loss&      l     = in.summary.loss;
        auto             bytes = [](double b)
        {
            return fmt::format("<td class=\"num\" data-value=\"{}\">{}</td>", format_number(b, 15),
                               format_bytes(b));
        };
        out += row({td(input_label(in)),
                    td(format_duration(static_cast<double>(in.summary.metadata.wall_ns))),
                    bytes(t.htod_bytes), bytes(t.dtoh_bytes), bytes(t.dtod_bytes),
                    num_cell(static_cast<uint64_t>(t.read_faults)),
                    num_cell(static_cast<uint64_t>(t.write_faults)),
                    fmt::format("<td class=\"num\" data-value=\"{}\">{} %</td>",
                                format_number(t.max_queue_share, 6),
                                format_number(t.max_queue_share * 100, 3)),
                    l.lost ? "<td class=\"lost\">lost</td>"
                           : (l.probably_lost ? "<td class=\"lost\">probably lost</td>"
                                              : "<td>none</td>")});
    }
    return out + "</tbody></table>";
}
} // namespace rocprof_kfd_report
