// MIT License - see LICENSE.
//
// The human-readable summary (summary.txt, and on stderr at the end of the run).
#include "loss.hpp"
#include "names.hpp"
#include "summary.hpp"
#include "text.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <set>

namespace rocprof_kfd
{
namespace
{
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

std::string
format(const char* fmt, ...)
{
    char    buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

// 950 ns, 12.3 us, 4.56 ms, 7.89 s
std::string
duration(uint64_t ns)
{
    if(ns < 1000) return format("%" PRIu64 " ns", ns);
    if(ns < 1000000) return format("%.1f us", static_cast<double>(ns) / 1e3);
    if(ns < 1000000000) return format("%.2f ms", static_cast<double>(ns) / 1e6);
    return format("%.3f s", static_cast<double>(ns) / 1e9);
}

std::string
size(uint64_t bytes)
{
    if(bytes < 1024) return format("%" PRIu64 " B", bytes);
    if(bytes < 1024 * 1024) return format("%.1f KiB", static_cast<double>(bytes) / 1024);
    if(bytes < 1024ull * 1024 * 1024)
        return format("%.1f MiB", static_cast<double>(bytes) / (1024 * 1024));
    return format("%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

// name(gpu_id), and "@ host" in a merge of several hosts.
std::string
agent_label(const run_info& run, node_key node)
{
    std::string label = agent_name(run.agents, node) + "(" + std::to_string(node_of(node)) + ")";
    if(run.hosts.size() > 1 && host_of(node) < run.hosts.size())
        label += " @ " + (run.hosts[host_of(node)].empty() ? std::string{"(unnamed host)"}
                                                           : run.hosts[host_of(node)]);
    return label;
}

// Whether range rows name their process: in a merge of several inputs, or when the rows are of
// more than one pid (a system-wide run). rocprof-kfd-report applies the same rule.
bool
pid_column(const run_info& run, const std::vector<heavy_entry>& faulted,
           const std::vector<heavy_entry>& moved, const std::vector<thrashing_range>& thrash)
{
    if(run.inputs.size() > 1) return true;
    std::set<uint32_t> pids;
    for(const auto* rows : {&faulted, &moved})
        for(const auto& e : *rows)
            pids.insert(e.key.pid);
    for(const auto& t : thrash)
        pids.insert(t.pid);
    return pids.size() > 1;
}

// with_pid: the rows are of several processes (pid_column), each range in one's address space.
void
ranges_table(std::string& out, const char* title, const std::vector<heavy_entry>& rows,
             bool with_pid)
{
    out += title;
    if(rows.empty())
    {
        out += " none\n";
        return;
    }
    out += "\n";
    out += format("  %s%-37s %8s %10s %11s %11s %11s\n", with_pid ? "     pid " : "", "range",
                  "faults", "migrations", "HtoD", "DtoH", "DtoD");
    for(const auto& e : rows)
    {
        uint64_t    start = e.key.block * range_bytes;
        std::string range = hex(start) + "-" + hex(start + range_bytes - 1);
        std::string pid   = with_pid ? format("%8" PRIu32 " ", e.key.pid) : "";
        out += format("  %s%-37s %8" PRIu64 " %10" PRIu64 " %11s %11s %11s\n", pid.c_str(),
                      range.c_str(), e.counters.faults, e.counters.migrations,
                      size(e.counters.htod_bytes).c_str(), size(e.counters.dtoh_bytes).c_str(),
                      size(e.counters.dtod_bytes).c_str());
    }
}
} // namespace

std::string
summary_text(const run_info& run, const summary_builder& s)
{
    std::string cmd;
    for(const auto& a : run.command)
        cmd += (cmd.empty() ? "" : " ") + a;
    std::string out = "rocprof-kfd summary: " + (cmd.empty() ? std::string("?") : cmd) + " (pid " +
                      std::to_string(run.pid) + " on " + run.hostname +
                      (run.rank ? ", rank " + *run.rank : std::string()) + "), wall " +
                      duration(wall_ns(run, s)) + ", " + std::to_string(s.records()) + " records\n";
    loss_verdict v = judge_loss(run.loss);
    if(v.lost || v.probably_lost) out += "WARNING: " + v.message + "\n";

    out += "\nOperations:\n";
    out += format("  %-15s %-19s %9s %11s %11s %11s %11s %11s %11s\n", "operation", "trigger",
                  "count", "total", "mean", "min", "p50", "p99", "max");
    for(const auto& [key, st] : s.operations())
        out += format(
            "  %-15s %-19s %9" PRIu64 " %11s %11s %11s %11s %11s %11s\n", operation_name(key.first),
            trigger_name(key.first, key.second).c_str(), st.count, duration(st.total_ns).c_str(),
            duration(st.count ? st.total_ns / st.count : 0).c_str(),
            duration(st.durations.min()).c_str(), duration(st.durations.quantile(0.5)).c_str(),
            duration(st.durations.quantile(0.99)).c_str(), duration(st.durations.max()).c_str());
    if(s.operations().empty()) out += "  (no records)\n";

    out += "\nMigrations by direction:\n";
    int direction_width = 30;
    for(const auto& [key, d] : s.directions())
        direction_width =
            std::max(direction_width, static_cast<int>(agent_label(run, key.first).size() + 4 +
                                                       agent_label(run, key.second).size()));
    for(const auto& [key, d] : s.directions())
    {
        double gbps =
            d.total_ns ? static_cast<double>(d.bytes) / static_cast<double>(d.total_ns) : 0.0;
        std::string dir = agent_label(run, key.first) + " -> " + agent_label(run, key.second);
        out += format("  %-*s %9" PRIu64 " migrations %11s %9.2f GB/s\n", direction_width,
                      dir.c_str(), d.count, size(d.bytes).c_str(), gbps);
    }
    if(s.directions().empty()) out += "  none\n";

    // The GPU column as wide as its longest label (a merge of several hosts adds "@ host").
    int gpu_width = 16;
    for(const auto& [gpu, f] : s.faults())
        gpu_width = std::max(gpu_width, static_cast<int>(agent_label(run, gpu).size()));
    for(const auto& [gpu, q] : s.suspensions())
        gpu_width = std::max(gpu_width, static_cast<int>(agent_label(run, gpu).size()));

    out += "\nPage faults by GPU:\n";
    for(const auto& [gpu, f] : s.faults())
        out += format("  %-*s read: %" PRIu64 " migrated, %" PRIu64 " updated; write: %" PRIu64
                      " migrated, %" PRIu64 " updated\n",
                      gpu_width, agent_label(run, gpu).c_str(), f.read_migrated, f.read_updated,
                      f.write_migrated, f.write_updated);
    if(s.faults().empty()) out += "  none\n";

    out += "\nQueue suspensions by GPU:\n";
    const uint64_t base = share_base_ns(run, s);
    const char*    of   = run.emulated ? "the records' time span" : "wall time";
    for(const auto& [gpu, q] : s.suspensions())
        out += format(
            "  %-*s %9" PRIu64 " suspensions, %s suspended (%.1f%% of %s)\n", gpu_width,
            agent_label(run, gpu).c_str(), q.count, duration(q.total_ns).c_str(),
            base ? 100.0 * static_cast<double>(q.total_ns) / static_cast<double>(base) : 0.0, of);
    if(s.suspensions().empty()) out += "  none\n";

    const char* approx  = s.top_ranges_approximate() ? " (approximate)" : "";
    const auto  faulted = s.top_by_faults();
    const auto  moved   = s.top_by_bytes();
    const auto  thrash  = s.thrashing();
    const bool  pids    = pid_column(run, faulted, moved, thrash);
    out += "\n";
    ranges_table(out, ("Top ranges by faults" + std::string(approx) + ":").c_str(), faulted, pids);
    out += "\n";
    ranges_table(out, ("Top ranges by bytes migrated" + std::string(approx) + ":").c_str(), moved,
                 pids);

    out += "\nThrashing (ranges migrated back and forth >= " +
           std::to_string(s.thrashing_threshold()) + " times between two locations)" +
           (s.thrashing_approximate() ? " (approximate)" : "") + ":";
    if(thrash.empty())
        out += " none\n";
    else
    {
        const uint64_t count = s.thrashing_count();
        out += count > thrash.size() ? " " + std::to_string(count) + ", the " +
                                           std::to_string(thrash.size()) + " heaviest:\n"
                                     : "\n";
        for(const auto& t : thrash)
        {
            std::string range = hex(t.start) + "-" + hex(t.end);
            std::string pair  = agent_label(run, make_node_key(t.host, t.a)) + " <-> " +
                               agent_label(run, make_node_key(t.host, t.b));
            std::string pid = pids ? format("pid %" PRIu32 " ", t.pid) : std::string();
            out += format("  %s%-37s %-30s %6" PRIu64 " migrations %11s\n", pid.c_str(),
                          range.c_str(), pair.c_str(), t.migrations, size(t.bytes).c_str());
        }
    }
    out += "\nLoss: " + v.message + "\n";
    return out;
}
} // namespace rocprof_kfd
