// MIT License - see LICENSE.
#include "merge.hpp"

#include <rocprof-kfd-output/earlier_run.hpp>
#include <rocprof-kfd-output/loss.hpp>
#include <rocprof-kfd-output/output_file.hpp>
#include <rocprof-kfd-output/perfetto_writer.hpp>
#include <rocprof-kfd-output/record_source.hpp>
#include <rocprof-kfd-output/summary.hpp>
#include <rocprof-kfd-output/writer.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace rocprof_kfd
{
namespace
{
void
add_loss(loss_info& total, const loss_info& one)
{
    total.valid = total.valid && one.valid;
    for(size_t i = 0; i < loss_field_count; ++i)
        total.stats.*loss_fields[i].member += one.stats.*loss_fields[i].member;
    total.buffer_drops += one.buffer_drops;
    total.records_not_received += one.records_not_received;
}

// The agents of one input, of host number `host` (model.hpp's node_key).
void
add_agents(std::vector<agent_info>& all, const std::vector<agent_info>& more, uint32_t host)
{
    for(auto a : more)
    {
        a.host = host;
        if(!find_agent(all, make_node_key(host, a.gpu_id))) all.push_back(a);
    }
}

// A pid no earlier input showed (pids of different hosts may collide).
uint32_t
distinct_pid(std::set<uint32_t>& used, uint32_t pid)
{
    while(pid == 0 || used.count(pid))
        pid = pid == 0 ? 1 : pid + 1000000;
    used.insert(pid);
    return pid;
}

// Each input's boot clock moved onto one time axis. A host's processes share its boot clock,
// so their timestamps stay as they are relative to each other: one shift per host, from the
// first of its inputs that has an anchor. The axis is the boot clock of the host that booted
// first (every shift is then >= 0). A merge of one host's inputs moves nothing.
struct clock_alignment
{
    std::vector<uint64_t>    shift_ns;          // per input, added to each timestamp
    std::optional<uint64_t>  boot_time_unix_ns; // of the merged axis
    std::vector<std::string> hosts_without_anchor;
    // Hosts whose inputs' boot times differ by more than a second: one host boots once, so
    // these are probably several machines with one name (containers called "localhost").
    std::vector<std::string> hosts_booted_twice;
};

// What an input's outputs say of it before its records (read_output_metadata); `readable`
// false when it has no record file: the merge fails on it, and it takes no part in the rest.
struct input_header
{
    run_info run;
    bool     readable = false;
};

clock_alignment
align_clocks(const std::vector<input_header>& headers)
{
    std::map<std::string, std::optional<uint64_t>> anchor_of; // host -> its anchor
    clock_alignment                                al;
    for(const auto& h : headers)
    {
        if(!h.readable) continue;
        auto& anchor = anchor_of[h.run.hostname];
        if(!anchor) anchor = h.run.boot_time_unix_ns;
        const auto&        other  = h.run.boot_time_unix_ns;
        constexpr uint64_t second = 1000000000;
        if(anchor && other && (*other > *anchor + second || *anchor > *other + second) &&
           std::find(al.hosts_booted_twice.begin(), al.hosts_booted_twice.end(), h.run.hostname) ==
               al.hosts_booted_twice.end())
            al.hosts_booted_twice.push_back(h.run.hostname);
    }
    al.shift_ns.assign(headers.size(), 0);
    std::optional<uint64_t> earliest;
    for(const auto& [host, anchor] : anchor_of)
    {
        if(!anchor)
            al.hosts_without_anchor.push_back(host);
        else if(!earliest || *anchor < *earliest)
            earliest = anchor;
    }
    if(anchor_of.size() <= 1)
    {
        if(!anchor_of.empty()) al.boot_time_unix_ns = anchor_of.begin()->second;
        al.hosts_without_anchor.clear();
        return al;
    }
    if(!al.hosts_without_anchor.empty()) return al; // no common axis: left as they are
    al.boot_time_unix_ns = earliest;
    for(size_t i = 0; i < headers.size(); ++i)
        if(headers[i].readable) al.shift_ns[i] = *anchor_of[headers[i].run.hostname] - *earliest;
    return al;
}

// What earlier_run.hpp's rule needs of an input's metadata.
run_span
span_of(const run_info& run)
{
    return {run.pid, run.hostname, run.run_id, run.start_ns, run.end_ns, run.boot_time_unix_ns};
}

// Drops the outputs that left_by_earlier_run finds, saying so on stderr (one line each).
void
drop_earlier_runs(std::vector<std::pair<std::string, std::string>>& outputs,
                  std::vector<input_header>&                        headers)
{
    std::vector<bool> dropped(outputs.size(), false);
    for(size_t i = 0; i < outputs.size(); ++i)
        for(size_t j = 0; j < outputs.size(); ++j)
        {
            if(i == j || outputs[i].first != outputs[j].first) continue;
            const auto own = span_of(headers[i].run), base = span_of(headers[j].run);
            if(maybe_left_by_earlier_run(outputs[i].second, own, outputs[j].second, base))
                std::fprintf(stderr,
                             "rocprof-kfd-merge: %s: kept the %s_* files of pid %u: their run (%s) "
                             "did not finish and started before the one of the folder's %s "
                             "files (%s); if it is an earlier run's, remove them\n",
                             outputs[i].first.c_str(), outputs[i].second.c_str(),
                             headers[i].run.pid, headers[i].run.run_id->c_str(),
                             outputs[j].second.empty() ? "plain"
                                                       : (outputs[j].second + "_*").c_str(),
                             headers[j].run.run_id->c_str());
            if(!left_by_earlier_run(outputs[i].second, own, outputs[j].second, base)) continue;
            std::fprintf(stderr,
                         "rocprof-kfd-merge: %s: skipped the %s_* files of pid %u: an earlier run "
                         "(%s) left them there; the folder's %s files are of a later one (%s)\n",
                         outputs[i].first.c_str(), outputs[i].second.c_str(), headers[i].run.pid,
                         headers[i].run.run_id->c_str(),
                         outputs[j].second.empty() ? "plain" : (outputs[j].second + "_*").c_str(),
                         headers[j].run.run_id->c_str());
            dropped[i] = true;
            break;
        }
    size_t kept = 0;
    for(size_t i = 0; i < outputs.size(); ++i)
        if(!dropped[i])
        {
            if(kept != i) // a self-move would empty them
            {
                outputs[kept] = std::move(outputs[i]);
                headers[kept] = std::move(headers[i]);
            }
            ++kept;
        }
    outputs.resize(kept);
    headers.resize(kept);
}

void
shift_record(record& r, uint64_t shift)
{
    r.start_timestamp += shift;
    r.end_timestamp += shift;
}

void
progress_line(bool enabled, size_t index, size_t total, const std::string& dir, uint64_t records,
              bool done)
{
    if(!enabled) return;
    std::fprintf(stderr, "\rrocprof-kfd-merge: [%zu/%zu] %s: %llu records%s", index, total,
                 dir.c_str(), static_cast<unsigned long long>(records), done ? "\n" : "");
    std::fflush(stderr);
}
} // namespace

int
merge_outputs(const merge_options& options)
{
    // One input per process's outputs: a folder that processes shared holds several stems.
    std::vector<std::pair<std::string, std::string>> outputs; // directory, stem
    int                                              status = 0;
    for(const auto& input : options.inputs)
    {
        auto found = find_output_dirs(input);
        if(found.empty())
        {
            std::fprintf(stderr, "rocprof-kfd-merge: %s: no rocprof-kfd output found\n",
                         input.c_str());
            status = 1;
        }
        for(const auto& dir : found)
            for(const auto& stem : find_stems(dir))
            {
                if(is_merge_output(dir, stem))
                {
                    // An earlier merge's folder among the inputs (often OUT itself, inside
                    // the folder merged): its inputs are merged from their own folders.
                    std::fprintf(stderr,
                                 "rocprof-kfd-merge: %s: skipped: the output of a merge (no "
                                 "records of its own)\n",
                                 output_path(dir, stem, "summary.json").c_str());
                    continue;
                }
                outputs.emplace_back(dir, stem);
            }
    }
    if(outputs.empty()) return 1;
    if(!make_directories(options.output))
    {
        std::fprintf(stderr, "rocprof-kfd-merge: cannot create %s: %s\n", options.output.c_str(),
                     std::strerror(errno));
        return 1;
    }

    // The metadata of every input first: the clock shifts must be known before any record.
    std::vector<input_header> headers(outputs.size());
    for(size_t i = 0; i < outputs.size(); ++i)
        headers[i].readable =
            read_output_metadata(outputs[i].first, outputs[i].second, headers[i].run);
    drop_earlier_runs(outputs, headers);
    const clock_alignment clocks = align_clocks(headers);
    for(const auto& host : clocks.hosts_booted_twice)
        std::fprintf(stderr,
                     "rocprof-kfd-merge: the outputs of host %s have boot times more than a "
                     "second apart: several machines with that name, or a reboot between runs? "
                     "They are aligned as one host, by the first one's\n",
                     host.c_str());
    if(!clocks.hosts_without_anchor.empty())
    {
        std::string hosts;
        for(const auto& h : clocks.hosts_without_anchor)
            hosts += (hosts.empty() ? "" : ", ") + (h.empty() ? std::string{"(unnamed)"} : h);
        std::fprintf(stderr,
                     "rocprof-kfd-merge: the outputs of %s have no boot_time_unix_ns (written "
                     "by an older rocprof-kfd, or no summary.json): each host's timestamps stay "
                     "on its own boot clock, not aligned with the others'\n",
                     hosts.c_str());
    }

    perfetto_trace trace;
    std::string    trace_path = output_path(options.output, "", "trace.pftrace");
    if(!trace.open(trace_path)) return 1;

    summary_builder       merged(options.thrashing_threshold);
    run_info              all;
    std::set<uint32_t>    pids;
    std::set<std::string> hosts;
    // Each host's number (node_key), in the order the inputs show them: equal gpu_ids of two
    // hosts are two GPUs.
    std::map<std::string, uint32_t> host_numbers;
    auto                            number_of_host = [&](const std::string& name) {
        return host_numbers.emplace(name, static_cast<uint32_t>(host_numbers.size())).first->second;
    };
    all.loss.valid = true;
    std::string inputs_json;
    for(size_t i = 0; i < outputs.size(); ++i)
    {
        const std::string& dir  = outputs[i].first;
        const std::string& stem = outputs[i].second;
        // First pass: metadata only (the process track needs it before the records).
        run_info       run;
        auto           own   = std::make_unique<summary_builder>(options.thrashing_threshold);
        bool           began = false;
        uint64_t       count = 0;
        const uint64_t shift = clocks.shift_ns[i];
        uint32_t       host  = 0;
        source_result  r     = read_output(dir, stem, run,
                                           [&](const record& original)
                                           {
                                          record rec = original;
                                          shift_record(rec, shift);
                                          if(!began)
                                          {
                                              trace.begin_process(run, distinct_pid(pids, run.pid));
                                              host  = number_of_host(run.hostname);
                                              began = true;
                                          }
                                          trace.write(rec);
                                          own->add(rec);
                                          merged.add(rec, static_cast<uint32_t>(i + 1), host);
                                          if(++count % 100000 == 0)
                                              progress_line(options.progress, i + 1, outputs.size(),
                                                                 dir, count, false);
                                      });
        if(!r.ok)
        {
            std::fprintf(stderr, "rocprof-kfd-merge: %s: %s\n",
                         r.source.empty() ? dir.c_str() : r.source.c_str(), r.error.c_str());
            status = 1;
            continue;
        }
        if(!began)
        {
            trace.begin_process(run, distinct_pid(pids, run.pid));
            host = number_of_host(run.hostname);
        }
        trace.write_counters(*own);
        trace.flush();
        progress_line(options.progress, i + 1, outputs.size(), dir, count, true);

        if(run.start_ns) run.start_ns += shift;
        if(run.end_ns) run.end_ns += shift;
        if(all.command.empty()) all.command = run.command;
        if(all.sdk_version.empty()) all.sdk_version = run.sdk_version;
        if(all.kernel_release.empty()) all.kernel_release = run.kernel_release;
        all.emulated = all.emulated || run.emulated;
        if(run.start_ns && (all.start_ns == 0 || run.start_ns < all.start_ns))
            all.start_ns = run.start_ns;
        if(run.end_ns > all.end_ns) all.end_ns = run.end_ns;
        if(all.pid == 0) all.pid = run.pid;
        hosts.insert(run.hostname);
        add_agents(all.agents, run.agents, host);
        if(!r.complete) run.loss.valid = false;
        add_loss(all.loss, run.loss);
        all.inputs.push_back({dir, run.hostname, run.rank, run.pid, r.records, r.complete, stem});
    }
    for(const auto& h : hosts)
        all.hostname += (all.hostname.empty() ? "" : ",") + h;
    all.boot_time_unix_ns = clocks.boot_time_unix_ns;
    if(host_numbers.size() > 1)
    {
        all.hosts.resize(host_numbers.size());
        for(const auto& [name, number] : host_numbers)
            all.hosts[number] = name;
    }

    bool                     ok = trace.close();
    std::vector<std::string> written;
    if(ok) written.push_back(trace_path);
    auto summaries = write_summary_files(options.output, "", all, merged, true, true);
    written.insert(written.end(), summaries.begin(), summaries.end());
    if(!ok || summaries.size() != 2) status = 1;
    for(const auto& w : written)
        std::fprintf(stderr, "rocprof-kfd-merge: wrote %s\n", w.c_str());
    return status;
}
} // namespace rocprof_kfd
