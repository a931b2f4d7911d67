// MIT License - see LICENSE.
#include "record_source.hpp"

#include "csv_writer.hpp"
#include "loss.hpp"
#include "names.hpp"
#include "writer.hpp"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>

#include <dirent.h>
#include <sys/stat.h>

namespace rocprof_kfd
{
namespace
{
using json = nlohmann::json;

bool
exists(const std::string& path)
{
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool
is_dir(const std::string& path)
{
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string>
entries(const std::string& dir)
{
    std::vector<std::string> out;
    DIR*                     d = ::opendir(dir.c_str());
    if(!d) return out;
    while(dirent* e = ::readdir(d))
        if(std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            out.push_back(e->d_name);
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

uint64_t
address(const json& v)
{
    if(v.is_string()) return std::stoull(v.get<std::string>(), nullptr, 0);
    if(v.is_number_unsigned()) return v.get<uint64_t>();
    return 0;
}

uint64_t
number(const json& o, const char* key)
{
    auto it = o.find(key);
    if(it == o.end()) return 0;
    if(it->is_number_unsigned() || it->is_number_integer()) return it->get<uint64_t>();
    if(it->is_boolean()) return it->get<bool>() ? 1 : 0;
    if(it->is_string()) return address(*it);
    return 0;
}

void
read_metadata(const json& m, run_info& run)
{
    if(!m.is_object()) return;
    run.command.clear();
    if(m.contains("command") && m["command"].is_array())
        for(const auto& a : m["command"])
            if(a.is_string()) run.command.push_back(a.get<std::string>());
    run.pid  = static_cast<uint32_t>(number(m, "pid"));
    run.ppid = static_cast<uint32_t>(number(m, "ppid"));
    if(m.contains("hostname") && m["hostname"].is_string()) run.hostname = m["hostname"];
    if(m.contains("rank") && m["rank"].is_string()) run.rank = m["rank"].get<std::string>();
    if(m.contains("sdk_version") && m["sdk_version"].is_string())
        run.sdk_version = m["sdk_version"];
    if(m.contains("kernel_release") && m["kernel_release"].is_string())
        run.kernel_release = m["kernel_release"];
    if(m.contains("kfd_version") && m["kfd_version"].is_string())
        run.kfd_version = m["kfd_version"].get<std::string>();
    if(m.contains("emulated") && m["emulated"].is_boolean()) run.emulated = m["emulated"];
    if(m.contains("run_id") && m["run_id"].is_string()) run.run_id = m["run_id"].get<std::string>();
    run.start_ns = number(m, "start_ns");
    run.end_ns   = number(m, "end_ns");
    if(auto it = m.find("boot_time_unix_ns"); it != m.end() && it->is_number_unsigned())
        run.boot_time_unix_ns = it->get<uint64_t>();
}

void
read_agents(const json& a, run_info& run)
{
    if(!a.is_array()) return;
    run.agents.clear();
    for(const auto& e : a)
    {
        agent_info info;
        info.gpu_id  = number(e, "gpu_id");
        info.node_id = static_cast<uint32_t>(number(e, "node_id"));
        if(e.contains("name") && e["name"].is_string()) info.name = e["name"];
        info.is_gpu = e.contains("type") && e["type"] == "gpu";
        run.agents.push_back(info);
    }
}

void
read_loss(const json& l, run_info& run)
{
    if(!l.is_object()) return;
    run.loss.valid = !l.contains("available") || l["available"] == true;
    for(size_t i = 0; i < loss_field_count; ++i)
        run.loss.stats.*loss_fields[i].member = number(l, loss_fields[i].name);
    run.loss.buffer_drops         = number(l, "buffer_drops");
    run.loss.records_not_received = number(l, "records_not_received");
}

// Metadata, agents and loss of a summary.json (complete or the placeholder).
bool
read_summary_header(const std::string& path, run_info& run, bool& complete)
{
    std::ifstream in(path);
    if(!in) return false;
    json doc = json::parse(in, nullptr, false);
    if(doc.is_discarded() || !doc.is_object()) return false;
    read_metadata(doc.value("metadata", json::object()), run);
    read_agents(doc.value("agents", json::array()), run);
    complete = doc.value("complete", false);
    if(complete) read_loss(doc.value("loss", json::object()), run);
    return true;
}

// with_records false: the metadata, agents and loss only (what precedes the records).
source_result
read_json_records(const std::string& path, run_info& run, const record_callback& fn,
                  bool with_records = true)
{
    source_result result;
    result.source = path;
    std::ifstream in(path);
    if(!in)
    {
        result.error = "cannot open";
        return result;
    }
    std::string line;
    bool        in_records = false;
    while(std::getline(in, line))
    {
        if(!in_records)
        {
            if(line.rfind("\"metadata\":", 0) == 0 || line.rfind("\"agents\":", 0) == 0)
            {
                std::string text = "{" + line;
                if(!text.empty() && text.back() == ',') text.pop_back();
                json doc = json::parse(text + "}", nullptr, false);
                if(!doc.is_discarded())
                {
                    if(doc.contains("metadata")) read_metadata(doc["metadata"], run);
                    if(doc.contains("agents")) read_agents(doc["agents"], run);
                }
            }
            else if(line.rfind("\"records\":[", 0) == 0)
            {
                if(!with_records) break;
                in_records = true;
            }
            continue;
        }
        if(!line.empty() && line[0] == ']')
        {
            json tail = json::parse("{" + line.substr(2), nullptr, false);
            if(!tail.is_discarded() && tail.is_object())
            {
                result.complete = !tail.value("truncated", true);
                if(tail.contains("loss")) read_loss(tail["loss"], run);
                if(tail.contains("end_ns")) run.end_ns = number(tail, "end_ns");
            }
            break;
        }
        record r;
        if(!line.empty() && line.back() == ',') line.pop_back();
        if(parse_record_json(line, r))
        {
            fn(r);
            result.records += 1;
        }
    }
    result.ok = true;
    return result;
}

std::vector<std::string>
split_csv_line(const std::string& line)
{
    std::vector<std::string> out;
    std::string              field;
    bool                     quoted = false;
    for(size_t i = 0; i < line.size(); ++i)
    {
        char c = line[i];
        if(quoted)
        {
            if(c == '"' && i + 1 < line.size() && line[i + 1] == '"')
                field += '"', ++i;
            else if(c == '"')
                quoted = false;
            else
                field += c;
        }
        else if(c == '"')
            quoted = true;
        else if(c == ',')
            out.push_back(field), field.clear();
        else
            field += c;
    }
    out.push_back(field);
    return out;
}

source_result
read_csv_records(const std::string& dir, const std::string& stem, const record_callback& fn)
{
    source_result result;
    result.source = output_path(dir, stem, "page_fault.csv");
    for(int op = 1; op <= operation_count; ++op)
    {
        std::ifstream in(output_path(dir, stem, csv_file_names[op]));
        if(!in) continue;
        std::string line;
        std::getline(in, line); // header
        while(std::getline(in, line))
        {
            if(in.eof()) break; // a last line without '\n' is incomplete
            auto   f    = split_csv_line(line);
            record r    = {};
            r.size      = sizeof(r);
            r.kind      = ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION;
            r.operation = op;
            auto num    = [&](size_t i) -> uint64_t
            { return i < f.size() && !f[i].empty() ? std::stoull(f[i], nullptr, 0) : 0; };
            auto text         = [&](size_t i) { return i < f.size() ? f[i] : std::string(); };
            r.pid             = static_cast<uint32_t>(num(0));
            r.start_timestamp = num(1);
            r.end_timestamp   = num(2);
            switch(op)
            {
            case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
                r.page_migrate.start_addr     = num(4);
                r.page_migrate.end_addr       = num(5);
                r.page_migrate.from_node      = static_cast<uint32_t>(num(7));
                r.page_migrate.to_node        = static_cast<uint32_t>(num(9));
                r.page_migrate.prefetch_node  = static_cast<uint32_t>(num(11));
                r.page_migrate.preferred_node = static_cast<uint32_t>(num(12));
                r.page_migrate.trigger        = static_cast<rocprofiler_page_migration_trigger_t>(
                    trigger_from_name(op, text(13)));
                break;
            case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
                r.page_fault.node_id    = static_cast<uint32_t>(num(4));
                r.page_fault.address    = num(6);
                r.page_fault.read_fault = num(7) != 0;
                r.page_fault.migrated   = num(8) != 0;
                break;
            case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
                r.queue_suspend.node_id = static_cast<uint32_t>(num(4));
                r.queue_suspend.trigger =
                    static_cast<rocprofiler_page_migration_queue_suspend_trigger_t>(
                        trigger_from_name(op, text(6)));
                r.queue_suspend.rescheduled = num(7) != 0;
                break;
            case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
                r.unmap_from_gpu.node_id    = static_cast<uint32_t>(num(3));
                r.unmap_from_gpu.start_addr = num(5);
                r.unmap_from_gpu.end_addr   = num(6);
                r.unmap_from_gpu.trigger =
                    static_cast<rocprofiler_page_migration_unmap_from_gpu_trigger_t>(
                        trigger_from_name(op, text(7)));
                break;
            }
            fn(r);
            result.records += 1;
        }
    }
    result.ok = true;
    return result;
}

source_result
read_sqlite_records(const std::string& path, run_info& run, const record_callback& fn,
                    bool with_records = true)
{
    source_result result;
    result.source = path;
    sqlite3* db   = nullptr;
    if(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, nullptr) !=
       SQLITE_OK)
    {
        result.error = db ? sqlite3_errmsg(db) : "cannot open";
        sqlite3_close(db);
        return result;
    }
    auto query = [&](const char* sql, const std::function<void(sqlite3_stmt*)>& row)
    {
        sqlite3_stmt* st = nullptr;
        if(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) return false;
        while(sqlite3_step(st) == SQLITE_ROW)
            row(st);
        sqlite3_finalize(st);
        return true;
    };
    auto text = [](sqlite3_stmt* st, int i)
    {
        const unsigned char* t = sqlite3_column_text(st, i);
        return std::string(t ? reinterpret_cast<const char*>(t) : "");
    };
    auto u = [](sqlite3_stmt* st, int i)
    { return static_cast<uint64_t>(sqlite3_column_int64(st, i)); };
    query("SELECT key, value FROM metadata",
          [&](sqlite3_stmt* st)
          {
              std::string k = text(st, 0), v = text(st, 1);
              if(k == "pid") run.pid = static_cast<uint32_t>(std::stoul(v));
              if(k == "ppid") run.ppid = static_cast<uint32_t>(std::stoul(v));
              if(k == "hostname") run.hostname = v;
              if(k == "rank" && !v.empty()) run.rank = v;
              if(k == "sdk_version") run.sdk_version = v;
              if(k == "kernel_release") run.kernel_release = v;
              if(k == "kfd_version" && !v.empty()) run.kfd_version = v;
              if(k == "emulated") run.emulated = v == "1";
              if(k == "run_id" && !v.empty()) run.run_id = v;
              if(k == "start_ns") run.start_ns = std::stoull(v);
              if(k == "boot_time_unix_ns" && !v.empty()) run.boot_time_unix_ns = std::stoull(v);
              if(k == "end_ns") run.end_ns = std::stoull(v);
              if(k == "complete") result.complete = v == "1";
              if(k == "command" && run.command.empty())
              {
                  std::string word;
                  for(char c : v + " ")
                  {
                      if(c == ' ')
                      {
                          if(!word.empty()) run.command.push_back(word);
                          word.clear();
                      }
                      else
                          word += c;
                  }
              }
          });
    run.agents.clear();
    query("SELECT gpu_id, node_id, name, type FROM agents ORDER BY node_id",
          [&](sqlite3_stmt* st)
          {
              run.agents.push_back(
                  {u(st, 0), static_cast<uint32_t>(u(st, 1)), text(st, 2), text(st, 3) == "gpu"});
          });
    query("SELECT name, value FROM loss",
          [&](sqlite3_stmt* st)
          {
              std::string name = text(st, 0);
              run.loss.valid   = true;
              for(size_t i = 0; i < loss_field_count; ++i)
                  if(name == loss_fields[i].name) run.loss.stats.*loss_fields[i].member = u(st, 1);
              if(name == "buffer_drops") run.loss.buffer_drops = u(st, 1);
              if(name == "records_not_received") run.loss.records_not_received = u(st, 1);
          });
    if(!with_records)
    {
        sqlite3_close(db);
        result.ok = true;
        return result;
    }
    auto base = [&](sqlite3_stmt* st, int op)
    {
        record r          = {};
        r.size            = sizeof(r);
        r.kind            = ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION;
        r.operation       = op;
        r.pid             = static_cast<uint32_t>(u(st, 0));
        r.start_timestamp = u(st, 1);
        r.end_timestamp   = u(st, 2);
        return r;
    };
    auto emit = [&](const record& r)
    {
        fn(r);
        result.records += 1;
    };
    query("SELECT pid, start_timestamp, end_timestamp, start_addr, end_addr, from_node, to_node, "
          "prefetch_node, preferred_node, trigger FROM page_migrate ORDER BY id",
          [&](sqlite3_stmt* st)
          {
              record r                      = base(st, 1);
              r.page_migrate.start_addr     = u(st, 3);
              r.page_migrate.end_addr       = u(st, 4);
              r.page_migrate.from_node      = static_cast<uint32_t>(u(st, 5));
              r.page_migrate.to_node        = static_cast<uint32_t>(u(st, 6));
              r.page_migrate.prefetch_node  = static_cast<uint32_t>(u(st, 7));
              r.page_migrate.preferred_node = static_cast<uint32_t>(u(st, 8));
              r.page_migrate.trigger        = static_cast<rocprofiler_page_migration_trigger_t>(
                  trigger_from_name(1, text(st, 9)));
              emit(r);
          });
    query("SELECT pid, start_timestamp, end_timestamp, node_id, address, read_fault, migrated "
          "FROM page_fault ORDER BY id",
          [&](sqlite3_stmt* st)
          {
              record r                = base(st, 2);
              r.page_fault.node_id    = static_cast<uint32_t>(u(st, 3));
              r.page_fault.address    = u(st, 4);
              r.page_fault.read_fault = u(st, 5) != 0;
              r.page_fault.migrated   = u(st, 6) != 0;
              emit(r);
          });
    query("SELECT pid, start_timestamp, end_timestamp, node_id, trigger, rescheduled "
          "FROM queue_suspend ORDER BY id",
          [&](sqlite3_stmt* st)
          {
              record r                = base(st, 3);
              r.queue_suspend.node_id = static_cast<uint32_t>(u(st, 3));
              r.queue_suspend.trigger =
                  static_cast<rocprofiler_page_migration_queue_suspend_trigger_t>(
                      trigger_from_name(3, text(st, 4)));
              r.queue_suspend.rescheduled = u(st, 5) != 0;
              emit(r);
          });
    query("SELECT pid, start_timestamp, end_timestamp, node_id, start_addr, end_addr, trigger "
          "FROM unmap_from_gpu ORDER BY id",
          [&](sqlite3_stmt* st)
          {
              record r                    = base(st, 4);
              r.unmap_from_gpu.node_id    = static_cast<uint32_t>(u(st, 3));
              r.unmap_from_gpu.start_addr = u(st, 4);
              r.unmap_from_gpu.end_addr   = u(st, 5);
              r.unmap_from_gpu.trigger =
                  static_cast<rocprofiler_page_migration_unmap_from_gpu_trigger_t>(
                      trigger_from_name(4, text(st, 6)));
              emit(r);
          });
    sqlite3_close(db);
    result.ok = true;
    return result;
}
} // namespace

bool
parse_record_json(const std::string& line, record& r)
{
    json o = json::parse(line, nullptr, false);
    if(o.is_discarded() || !o.is_object() || !o.contains("operation")) return false;
    r      = {};
    r.size = sizeof(r);
    r.kind = ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION;
    int op =
        operation_from_name(o["operation"].is_string() ? o["operation"].get<std::string>() : "");
    if(op == 0) return false;
    r.operation       = op;
    r.pid             = static_cast<uint32_t>(number(o, "pid"));
    r.start_timestamp = number(o, "start_timestamp");
    r.end_timestamp   = number(o, "end_timestamp");
    std::string trig  = o.contains("trigger") && o["trigger"].is_string()
                            ? o["trigger"].get<std::string>()
                            : "none";
    switch(op)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        r.page_migrate.start_addr     = number(o, "start_addr");
        r.page_migrate.end_addr       = number(o, "end_addr");
        r.page_migrate.from_node      = static_cast<uint32_t>(number(o, "from_node"));
        r.page_migrate.to_node        = static_cast<uint32_t>(number(o, "to_node"));
        r.page_migrate.prefetch_node  = static_cast<uint32_t>(number(o, "prefetch_node"));
        r.page_migrate.preferred_node = static_cast<uint32_t>(number(o, "preferred_node"));
        r.page_migrate.trigger =
            static_cast<rocprofiler_page_migration_trigger_t>(trigger_from_name(op, trig));
        break;
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
        r.page_fault.node_id    = static_cast<uint32_t>(number(o, "node_id"));
        r.page_fault.address    = number(o, "address");
        r.page_fault.read_fault = number(o, "read_fault") != 0;
        r.page_fault.migrated   = number(o, "migrated") != 0;
        break;
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        r.queue_suspend.node_id = static_cast<uint32_t>(number(o, "node_id"));
        r.queue_suspend.trigger = static_cast<rocprofiler_page_migration_queue_suspend_trigger_t>(
            trigger_from_name(op, trig));
        r.queue_suspend.rescheduled = number(o, "rescheduled") != 0;
        break;
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        r.unmap_from_gpu.node_id    = static_cast<uint32_t>(number(o, "node_id"));
        r.unmap_from_gpu.start_addr = number(o, "start_addr");
        r.unmap_from_gpu.end_addr   = number(o, "end_addr");
        r.unmap_from_gpu.trigger = static_cast<rocprofiler_page_migration_unmap_from_gpu_trigger_t>(
            trigger_from_name(op, trig));
        break;
    }
    return true;
}

std::vector<std::string>
find_stems(const std::string& dir)
{
    std::set<std::string> stems;
    for(const char* name :
        {"summary.json", "results.json", "kfd.db", "page_fault.csv", "trace.pftrace"})
        if(exists(dir + "/" + name)) stems.insert(std::string());
    for(const auto& e : entries(dir))
        for(const char* name : {"_summary.json", "_results.json", "_kfd.db", "_page_fault.csv"})
        {
            size_t n = std::strlen(name);
            if(e.size() > n && e.compare(e.size() - n, n, name) == 0 && exists(dir + "/" + e))
                stems.insert(e.substr(0, e.size() - n));
        }
    return {stems.begin(), stems.end()};
}

std::optional<std::string>
find_stem(const std::string& dir)
{
    auto stems = find_stems(dir);
    if(stems.empty()) return std::nullopt;
    return stems.front();
}

std::vector<std::string>
find_output_dirs(const std::string& root)
{
    std::vector<std::string>                     out;
    std::function<void(const std::string&, int)> walk = [&](const std::string& dir, int depth)
    {
        if(find_stem(dir))
        {
            out.push_back(dir);
            return;
        }
        if(depth >= 4) return;
        for(const auto& e : entries(dir))
            if(is_dir(dir + "/" + e)) walk(dir + "/" + e, depth + 1);
    };
    walk(root, 0);
    return out;
}

namespace
{
// Whether two outputs' metadata are one process's run: same pid, and same run id and start
// where both have them.
bool
same_run(const run_info& a, const run_info& b)
{
    return a.pid == b.pid && (!a.run_id || !b.run_id || *a.run_id == *b.run_id) &&
           (a.start_ns == 0 || b.start_ns == 0 || a.start_ns == b.start_ns);
}

// What the record file leaves unsaid (results.json's end comes after its records) or what a
// file of an older version lacks, from summary.json.
void
fill_from_summary(run_info& run, const run_info& summary)
{
    if(run.end_ns == 0) run.end_ns = summary.end_ns;
    if(!run.boot_time_unix_ns) run.boot_time_unix_ns = summary.boot_time_unix_ns;
    if(!run.run_id) run.run_id = summary.run_id;
}

// Whether file `path` was last written more than a second (a margin for the clocks) before
// `run` started; false where that cannot be told.
bool
written_before_start_of(const std::string& path, const run_info& run)
{
    struct stat st
    {
    };
    if(!run.boot_time_unix_ns || run.start_ns == 0 || ::stat(path.c_str(), &st) != 0) return false;
    const auto written = static_cast<unsigned __int128>(st.st_mtim.tv_sec) * 1'000'000'000u +
                         static_cast<unsigned __int128>(st.st_mtim.tv_nsec);
    return written + 1'000'000'000u <
           static_cast<unsigned __int128>(*run.boot_time_unix_ns) + run.start_ns;
}

// The record file of one output to read: the best `prefer` allows (kfd.db, results.json, the
// CSV files) and, with summary.json (`summary` read), of its run: a folder reused with other
// --output-format values keeps the earlier run's files beside the new ones. Those passed over
// are named in `skipped`. Kind "" when there is none.
std::pair<std::string, std::string>
record_file(const std::string& dir, const std::string& stem, const std::string& prefer,
            const run_info* summary, std::string& skipped)
{
    const auto skip = [&](const std::string& path)
    { skipped += (skipped.empty() ? "" : ", ") + path; };
    const record_callback none;
    for(const auto& [kind, name] : {std::pair<std::string, const char*>{"sqlite", "kfd.db"},
                                    std::pair<std::string, const char*>{"json", "results.json"}})
    {
        const std::string path = output_path(dir, stem, name);
        if((!prefer.empty() && prefer != kind) || !exists(path)) continue;
        if(summary == nullptr) return {kind, path};
        run_info file_run;
        auto     header = kind == "sqlite" ? read_sqlite_records(path, file_run, none, false)
                                           : read_json_records(path, file_run, none, false);
        // A file whose metadata cannot be read (pid 0) is not known to be another run's: it is
        // read, and fails with its own error if its records cannot be read either.
        if(header.ok && file_run.pid != 0 && !same_run(*summary, file_run))
            skip(path);
        else
            return {kind, path};
    }
    // CSV files carry no metadata: written before summary.json's run started, they are an
    // earlier run's.
    const std::string csv = output_path(dir, stem, "page_fault.csv");
    if((prefer.empty() || prefer == "csv") && exists(csv))
    {
        if(summary == nullptr || !written_before_start_of(csv, *summary)) return {"csv", csv};
        skip(csv);
    }
    return {};
}
} // namespace

bool
is_merge_output(const std::string& dir, const std::string& stem)
{
    // A run's records beside it (`merge -o` into a run's own folder replaced its summary):
    // those are merged.
    for(const char* name : {"kfd.db", "results.json", "page_fault.csv"})
        if(exists(output_path(dir, stem, name))) return false;
    std::ifstream in(output_path(dir, stem, "summary.json"));
    if(!in) return false;
    json doc = json::parse(in, nullptr, false);
    return !doc.is_discarded() && doc.is_object() && doc.contains("inputs");
}

bool
read_output_metadata(const std::string& dir, const std::string& stem, run_info& run)
{
    bool       complete = false;
    run_info   summary  = run;
    const bool has_summary =
        read_summary_header(output_path(dir, stem, "summary.json"), summary, complete);
    std::string skipped;
    const auto [kind, path] = record_file(dir, stem, "", has_summary ? &summary : nullptr, skipped);
    // Without records the output is not merged, but its metadata still counts (a later run's
    // summary-only output shows that the `<pid>_` files beside it are an earlier run's).
    if(has_summary) run = summary;
    if(kind.empty()) return false;
    const record_callback none;
    if(has_summary || kind == "csv") return true;
    return kind == "sqlite" ? read_sqlite_records(path, run, none, false).ok
                            : read_json_records(path, run, none, false).ok;
}

source_result
read_output(const std::string& dir, const std::string& stem, run_info& run,
            const record_callback& fn, const std::string& prefer)
{
    bool       complete = false;
    const bool has_summary =
        read_summary_header(output_path(dir, stem, "summary.json"), run, complete);
    const run_info summary = run;
    std::string    skipped;
    const auto [kind, path] =
        record_file(dir, stem, prefer, has_summary ? &summary : nullptr, skipped);
    source_result r;
    if(kind.empty())
        r.error = skipped.empty() ? "no kfd.db, results.json or CSV files"
                                  : "its record files are another run's than its summary.json (" +
                                        skipped + ")";
    else if(kind == "sqlite")
        r = read_sqlite_records(path, run, fn);
    else if(kind == "json")
        r = read_json_records(path, run, fn);
    else
        r = read_csv_records(dir, stem, fn);
    if(has_summary) fill_from_summary(run, summary);
    if(complete) r.complete = true;
    return r;
}
} // namespace rocprof_kfd
