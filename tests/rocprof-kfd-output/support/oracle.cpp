// MIT License - see LICENSE.
#include "oracle.hpp"
#include "sanitizer.hpp"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kfd_out_test
{
using json = nlohmann::json;

const char*
emulator_library()
{
    return KFD_OUT_TEST_EMULATOR;
}
const char*
tool_library()
{
    return KFD_OUT_TEST_TOOL;
}
const char*
generator_program()
{
    return KFD_OUT_TEST_GENERATOR;
}
const char*
merge_program()
{
    return KFD_OUT_TEST_MERGE;
}
const char*
logs_dir()
{
    return KFD_OUT_TEST_LOGS;
}

std::string
slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void
spit(const std::string& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
}

std::vector<std::string>
split(const std::string& text, char sep)
{
    std::vector<std::string> out;
    std::string              field;
    for(char c : text)
    {
        if(c == sep)
            out.push_back(field), field.clear();
        else
            field += c;
    }
    out.push_back(field);
    return out;
}

std::string
hex_of(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

scratch::scratch()
{
    const char*       tmp     = std::getenv("TMPDIR");
    std::string       pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kfd-out-test-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if(mkdtemp(buf.data())) path = buf.data();
}

scratch::~scratch()
{
    // KFD_OUT_TEST_KEEP=1 keeps the folder for diagnosis.
    if(!path.empty() && !std::getenv("KFD_OUT_TEST_KEEP"))
        (void)!std::system(("rm -rf '" + path + "'").c_str());
}

std::string
keep_times_copy(const std::string& log, const std::string& dir)
{
    std::string copy = dir + "/events.log";
    spit(copy, "#@ timestamps keep\n" + slurp(log));
    return copy;
}

// ---------------------------------------------------------------------------- the oracle
namespace
{
const std::map<std::string, std::vector<std::string>>&
trigger_tables()
{
    // From include/rocprofiler-sdk/fwd.h, value 0 first.
    static const std::map<std::string, std::vector<std::string>> t = {
        {"PAGE_MIGRATE", {"prefetch", "pagefault_gpu", "pagefault_cpu", "ttm_eviction"}},
        {"QUEUE_SUSPEND", {"svm", "userptr", "ttm", "suspend", "criu_checkpoint", "criu_restore"}},
        {"UNMAP_FROM_GPU", {"mmu_notify", "mmu_notify_migrate", "unmap_from_cpu"}},
    };
    return t;
}

uint64_t
u64(const std::string& s)
{
    return s.empty() ? 0 : std::stoull(s, nullptr, 0);
}
} // namespace

std::string
trigger_name_of(const std::string& op, int trigger)
{
    auto it = trigger_tables().find(op);
    if(trigger < 0 || it == trigger_tables().end()) return "none";
    if(static_cast<size_t>(trigger) < it->second.size()) return it->second[trigger];
    return "unknown_" + std::to_string(trigger);
}

int
trigger_value_of(const std::string& op, const std::string& name)
{
    auto it = trigger_tables().find(op);
    if(it != trigger_tables().end())
        for(size_t i = 0; i < it->second.size(); ++i)
            if(it->second[i] == name) return static_cast<int>(i);
    return -1;
}

std::string
self_pid_of_log(const std::string& log_path)
{
    std::istringstream in(slurp(log_path));
    std::string        line;
    while(std::getline(in, line))
        if(line.rfind("#@ self ", 0) == 0) return line.substr(8);
    return "";
}

std::vector<oracle_record>
read_expect(const std::string& path, const std::string& self_pid, uint64_t new_pid)
{
    std::vector<oracle_record> out;
    std::istringstream         in(slurp(path));
    std::string                line;
    std::getline(in, line); // header
    while(std::getline(in, line))
    {
        if(line.empty()) continue;
        auto f = split(line, ',');
        if(f.size() != 14) continue;
        if(!self_pid.empty() && f[1] != self_pid) continue;
        oracle_record r;
        r.op          = f[0];
        r.pid         = new_pid ? new_pid : u64(f[1]);
        r.start       = u64(f[2]);
        r.end         = u64(f[3]);
        r.node        = u64(f[4]);
        r.to          = u64(f[5]);
        r.prefetch    = u64(f[6]);
        r.preferred   = u64(f[7]);
        r.trigger     = f[8].empty() ? -1 : std::stoi(f[8]);
        r.addr_start  = u64(f[9]);
        r.addr_end    = u64(f[10]);
        r.read_fault  = f[11] == "1";
        r.migrated    = f[12] == "1";
        r.rescheduled = f[13] == "1";
        out.push_back(r);
    }
    return out;
}

std::string
canonical(const oracle_record& r)
{
    auto        n = [](uint64_t v) { return std::to_string(v); };
    std::string c[14];
    c[0] = r.op;
    c[1] = n(r.pid);
    c[2] = n(r.start);
    c[3] = n(r.end);
    c[4] = n(r.node);
    if(r.op == "PAGE_MIGRATE")
    {
        c[5]  = n(r.to);
        c[6]  = n(r.prefetch);
        c[7]  = n(r.preferred);
        c[8]  = std::to_string(r.trigger);
        c[9]  = n(r.addr_start);
        c[10] = n(r.addr_end);
    }
    else if(r.op == "PAGE_FAULT")
    {
        c[9]  = n(r.addr_start);
        c[11] = r.read_fault ? "1" : "0";
        c[12] = r.migrated ? "1" : "0";
    }
    else if(r.op == "QUEUE_SUSPEND")
    {
        c[8]  = std::to_string(r.trigger);
        c[13] = r.rescheduled ? "1" : "0";
    }
    else
    {
        c[8]  = std::to_string(r.trigger);
        c[9]  = n(r.addr_start);
        c[10] = n(r.addr_end);
    }
    std::string line = c[0];
    for(int i = 1; i < 14; ++i)
        line += "," + c[i];
    return line;
}

std::vector<std::string>
canonical_sorted(const std::vector<oracle_record>& v)
{
    std::vector<std::string> out;
    for(const auto& r : v)
        out.push_back(canonical(r));
    std::sort(out.begin(), out.end());
    return out;
}

// ------------------------------------------------------------------------------- readers
namespace
{
// RFC 4180 fields of one line (no embedded newlines in our data).
std::vector<std::string>
csv_fields(const std::string& line)
{
    std::vector<std::string> out;
    std::string              f;
    bool                     q = false;
    for(size_t i = 0; i < line.size(); ++i)
    {
        char c = line[i];
        if(q)
        {
            if(c == '"' && i + 1 < line.size() && line[i + 1] == '"')
                f += '"', ++i;
            else if(c == '"')
                q = false;
            else
                f += c;
        }
        else if(c == '"')
            q = true;
        else if(c == ',')
            out.push_back(f), f.clear();
        else
            f += c;
    }
    out.push_back(f);
    return out;
}

// Builds a canonical record from named values (strings).
std::string
from_named(const std::string& op, const std::map<std::string, std::string>& v)
{
    auto get = [&](const char* k)
    {
        auto it = v.find(k);
        return it == v.end() ? std::string() : it->second;
    };
    oracle_record r;
    r.op    = op;
    r.pid   = u64(get("pid"));
    r.start = u64(get("start"));
    r.end   = u64(get("end"));
    if(op == "PAGE_MIGRATE")
    {
        r.node       = u64(get("from_node"));
        r.to         = u64(get("to_node"));
        r.prefetch   = u64(get("prefetch_node"));
        r.preferred  = u64(get("preferred_node"));
        r.trigger    = trigger_value_of(op, get("trigger"));
        r.addr_start = u64(get("start_addr"));
        r.addr_end   = u64(get("end_addr"));
    }
    else if(op == "PAGE_FAULT")
    {
        r.node       = u64(get("node_id"));
        r.addr_start = u64(get("address"));
        r.read_fault = u64(get("read_fault")) != 0;
        r.migrated   = u64(get("migrated")) != 0;
    }
    else if(op == "QUEUE_SUSPEND")
    {
        r.node        = u64(get("node_id"));
        r.trigger     = trigger_value_of(op, get("trigger"));
        r.rescheduled = u64(get("rescheduled")) != 0;
    }
    else
    {
        r.node       = u64(get("node_id"));
        r.addr_start = u64(get("start_addr"));
        r.addr_end   = u64(get("end_addr"));
        r.trigger    = trigger_value_of(op, get("trigger"));
    }
    return canonical(r);
}

std::string
op_of_lower(const std::string& lower)
{
    std::string up = lower;
    for(char& c : up)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return up;
}

std::string
json_text(const json& v)
{
    if(v.is_string()) return v.get<std::string>();
    if(v.is_boolean()) return v.get<bool>() ? "1" : "0";
    if(v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
    if(v.is_number_integer()) return std::to_string(v.get<int64_t>());
    return v.dump();
}
} // namespace

std::vector<std::string>
records_from_csv(const std::string& dir, std::string& error)
{
    std::vector<std::string>                  out;
    const std::pair<const char*, const char*> files[] = {{"page_fault.csv", "PAGE_FAULT"},
                                                         {"page_migrate.csv", "PAGE_MIGRATE"},
                                                         {"queue_suspend.csv", "QUEUE_SUSPEND"},
                                                         {"unmap_from_gpu.csv", "UNMAP_FROM_GPU"}};
    for(const auto& [name, op] : files)
    {
        std::string text = slurp(dir + "/" + name);
        if(text.empty())
        {
            error += std::string(name) + " missing; ";
            continue;
        }
        if(text.back() != '\n') error += std::string(name) + " does not end with a newline; ";
        auto lines = split(text, '\n');
        lines.pop_back();
        auto header = csv_fields(lines.at(0));
        for(size_t i = 1; i < lines.size(); ++i)
        {
            auto f = csv_fields(lines[i]);
            if(f.size() != header.size())
            {
                error += std::string(name) + ": row " + std::to_string(i) + " has " +
                         std::to_string(f.size()) + " fields; ";
                continue;
            }
            std::map<std::string, std::string> v;
            for(size_t k = 0; k < f.size(); ++k)
                v[header[k]] = f[k];
            v["start"] = v["start_timestamp"];
            v["end"]   = v["end_timestamp"];
            out.push_back(from_named(op, v));
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string>
records_from_json(const std::string& path, std::string& error)
{
    std::vector<std::string> out;
    std::ifstream            in(path);
    json                     doc = json::parse(in, nullptr, false);
    if(doc.is_discarded())
    {
        error = "results.json is not valid JSON";
        return out;
    }
    for(const auto& r : doc.at("records"))
    {
        std::map<std::string, std::string> v;
        for(auto it = r.begin(); it != r.end(); ++it)
            v[it.key()] = json_text(it.value());
        v["start"] = v["start_timestamp"];
        v["end"]   = v["end_timestamp"];
        out.push_back(from_named(op_of_lower(v["operation"]), v));
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string>
records_from_sqlite(const std::string& path, std::string& error)
{
    std::vector<std::string> out;
    sqlite3*                 db = nullptr;
    if(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    {
        error = "cannot open " + path;
        sqlite3_close(db);
        return out;
    }
    for(const char* table : {"page_fault", "page_migrate", "queue_suspend", "unmap_from_gpu"})
    {
        sqlite3_stmt* st  = nullptr;
        std::string   sql = std::string("SELECT * FROM ") + table;
        if(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
        {
            error += sqlite3_errmsg(db);
            continue;
        }
        while(sqlite3_step(st) == SQLITE_ROW)
        {
            std::map<std::string, std::string> v;
            for(int i = 0; i < sqlite3_column_count(st); ++i)
            {
                std::string name = sqlite3_column_name(st, i);
                if(sqlite3_column_type(st, i) == SQLITE_INTEGER)
                    v[name] = std::to_string(static_cast<uint64_t>(sqlite3_column_int64(st, i)));
                else if(sqlite3_column_type(st, i) == SQLITE_TEXT)
                    v[name] = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
                else
                    error += std::string(table) + "." + name + " is not INTEGER or TEXT; ";
            }
            v["start"] = v["start_timestamp"];
            v["end"]   = v["end_timestamp"];
            out.push_back(from_named(op_of_lower(table), v));
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string>
sqlite_indexes(const std::string& path)
{
    std::vector<std::string> out;
    sqlite3*                 db = nullptr;
    sqlite3_stmt*            st = nullptr;
    if(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
       sqlite3_prepare_v2(db,
                          "SELECT name FROM sqlite_master WHERE type='index' AND name NOT LIKE "
                          "'sqlite_%' ORDER BY name",
                          -1, &st, nullptr) == SQLITE_OK)
        while(sqlite3_step(st) == SQLITE_ROW)
            out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

// ---------------------------------------------------------------------- trace checks
namespace
{
std::string
op_of_slice(const std::string& name)
{
    if(name.rfind("read fault", 0) == 0 || name.rfind("write fault", 0) == 0) return "PAGE_FAULT";
    if(name.rfind("migrate", 0) == 0) return "PAGE_MIGRATE";
    if(name.rfind("queue suspend", 0) == 0) return "QUEUE_SUSPEND";
    if(name.rfind("unmap", 0) == 0) return "UNMAP_FROM_GPU";
    return "?";
}

struct slice
{
    uint64_t                           start = 0, end = 0;
    std::string                        op;
    std::map<std::string, std::string> args;
};

// Slices of one track must nest: sorted by (start, -end), each either inside the top of
// the stack or after it.
void
check_nesting(std::vector<std::pair<uint64_t, uint64_t>> v, const std::string& track,
              std::vector<std::string>& problems)
{
    std::sort(v.begin(), v.end(),
              [](auto a, auto b)
              { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<uint64_t> stack;
    for(const auto& [s, e] : v)
    {
        while(!stack.empty() && stack.back() <= s)
            stack.pop_back();
        if(!stack.empty() && e > stack.back())
        {
            problems.push_back("track " + track + ": slice [" + std::to_string(s) + "," +
                               std::to_string(e) + "] overlaps its parent without nesting");
            return;
        }
        stack.push_back(e);
    }
}
} // namespace

trace_check
check_chrome_trace(const std::string& path)
{
    trace_check   c;
    std::ifstream in(path);
    json          doc = json::parse(in, nullptr, false);
    if(doc.is_discarded() || !doc.contains("traceEvents"))
    {
        c.problems.push_back("not a trace-event JSON document");
        return c;
    }
    std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> tracks;
    for(const auto& e : doc["traceEvents"])
    {
        c.packets += 1;
        for(const char* k : {"ph", "ts", "pid", "tid"})
            if(!e.contains(k))
                c.problems.push_back(std::string("event without ") + k + ": " + e.dump());
        if(!e.contains("ph")) continue;
        std::string ph = e["ph"];
        if(ph == "M")
        {
            if(e.value("name", "") == "process_name")
            {
                c.process_names.push_back(e["args"]["name"]);
                c.process_pids.push_back(e["pid"]);
                c.process_tracks += 1;
            }
            else
                c.track_descriptors += 1;
            continue;
        }
        if(ph == "C")
        {
            c.counters += 1;
            continue;
        }
        // Microseconds with 3 decimals -> ns.
        auto ns = [](const json& v)
        { return static_cast<uint64_t>(std::llround(v.get<double>() * 1000.0)); };
        uint64_t ts = ns(e["ts"]);
        slice    s;
        s.start = ts;
        s.end   = ph == "X" ? ts + ns(e["dur"]) : ts;
        s.op    = op_of_slice(e.value("name", ""));
        for(auto it = e["args"].begin(); it != e["args"].end(); ++it)
            s.args[it.key()] = json_text(it.value());
        s.args["start"] = std::to_string(s.start);
        s.args["end"]   = std::to_string(s.end);
        if(ph == "X")
        {
            c.slice_begins += 1;
            c.slice_ends += 1;
            tracks[json_text(e["pid"]) + "/" + json_text(e["tid"])].push_back({s.start, s.end});
        }
        else if(ph == "i")
            c.instants += 1;
        else
            c.problems.push_back("unexpected phase " + ph);
        c.records.push_back(from_named(s.op, s.args));
    }
    for(const auto& [t, v] : tracks)
        check_nesting(v, t, c.problems);
    std::sort(c.records.begin(), c.records.end());
    return c;
}

namespace
{
// protoc --decode_raw output as a tree.
struct pb_node
{
    std::vector<std::pair<int, pb_node>> children;
    std::string                          value; // leaves
    std::vector<const pb_node*>          all(int field) const
    {
        std::vector<const pb_node*> out;
        for(const auto& [f, n] : children)
            if(f == field) out.push_back(&n);
        return out;
    }
    const pb_node* one(int field) const
    {
        for(const auto& [f, n] : children)
            if(f == field) return &n;
        return nullptr;
    }
    uint64_t num(int field) const
    {
        const pb_node* n = one(field);
        return n ? std::stoull(n->value, nullptr, 0) : 0;
    }
    std::string str(int field) const
    {
        const pb_node* n = one(field);
        if(!n) return "";
        std::string v = n->value;
        if(v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
        return v;
    }
};

pb_node
parse_decode_raw(const std::string& text)
{
    pb_node               root;
    std::vector<pb_node*> stack{&root};
    std::istringstream    in(text);
    std::string           line;
    while(std::getline(in, line))
    {
        size_t b = line.find_first_not_of(' ');
        if(b == std::string::npos) continue;
        line = line.substr(b);
        if(line == "}")
        {
            if(stack.size() > 1) stack.pop_back();
            continue;
        }
        size_t sp    = line.find_first_of(":{ ");
        int    field = std::atoi(line.substr(0, sp).c_str());
        if(line.back() == '{')
        {
            stack.back()->children.push_back({field, pb_node{}});
            stack.push_back(&stack.back()->children.back().second);
        }
        else
        {
            pb_node leaf;
            leaf.value = line.substr(line.find(':') + 2);
            stack.back()->children.push_back({field, leaf});
        }
    }
    return root;
}
} // namespace

trace_check
check_pftrace(const std::string& path)
{
    trace_check c;
    std::string out_path = path + ".decoded";
    std::string cmd      = "protoc --decode_raw < '" + path + "' > '" + out_path + "' 2>&1";
    if(std::system(cmd.c_str()) != 0)
    {
        c.problems.push_back("protoc --decode_raw failed: " + slurp(out_path).substr(0, 300));
        return c;
    }
    pb_node                         root = parse_decode_raw(slurp(out_path));
    std::map<uint64_t, std::string> names, annotation_names;
    std::set<uint64_t>              known_tracks;
    // Open slices per track (begin events, in timestamp order after sorting).
    struct event
    {
        uint64_t       ts;
        uint64_t       type;
        const pb_node* te;
    };
    std::map<uint64_t, std::vector<event>> per_track;
    for(const pb_node* p : root.all(1))
    {
        c.packets += 1;
        if(const pb_node* interned = p->one(12))
        {
            for(const pb_node* n : interned->all(2))
                names[n->num(1)] = n->str(2);
            for(const pb_node* n : interned->all(3))
                annotation_names[n->num(1)] = n->str(2);
        }
        if(const pb_node* td = p->one(60))
        {
            c.track_descriptors += 1;
            known_tracks.insert(td->num(1));
            if(const pb_node* proc = td->one(3))
            {
                c.process_tracks += 1;
                c.process_pids.push_back(proc->num(1));
                c.process_names.push_back(proc->str(6));
            }
            if(td->one(8)) c.counter_tracks += 1;
        }
        if(const pb_node* te = p->one(11))
        {
            if(p->num(58) != 6) c.problems.push_back("event packet without clock id 6 (boottime)");
            if(!p->one(10)) c.problems.push_back("event packet without a sequence id");
            uint64_t track = te->num(11);
            if(!known_tracks.count(track))
                c.problems.push_back("event on undescribed track " + std::to_string(track));
            uint64_t type = te->num(9);
            if(type == 1) c.slice_begins += 1;
            if(type == 2) c.slice_ends += 1;
            if(type == 3) c.instants += 1;
            if(type == 4) c.counters += 1;
            if(type != 4) per_track[track].push_back({p->num(8), type, te});
        }
    }
    for(auto& [track, events] : per_track)
    {
        std::stable_sort(events.begin(), events.end(),
                         [](const event& a, const event& b)
                         {
                             // At equal times an end closes before a begin opens (slices touching).
                             if(a.ts != b.ts) return a.ts < b.ts;
                             return a.type == 2 && b.type != 2;
                         });
        std::vector<std::pair<uint64_t, const pb_node*>> open;
        std::vector<std::pair<uint64_t, uint64_t>>       spans;
        for(const auto& e : events)
        {
            auto record_of = [&](const pb_node* te, uint64_t start, uint64_t end)
            {
                std::map<std::string, std::string> args;
                for(const pb_node* a : te->all(4))
                {
                    std::string key = annotation_names[a->num(1)];
                    for(int f : {2, 3, 4, 7})
                        if(a->one(f)) args[key] = std::to_string(a->num(f));
                    if(a->one(6)) args[key] = a->str(6);
                }
                args["start"]    = std::to_string(start);
                args["end"]      = std::to_string(end);
                std::string name = te->one(10) ? names[te->num(10)] : te->str(23);
                c.records.push_back(from_named(op_of_slice(name), args));
            };
            if(e.type == 3)
                record_of(e.te, e.ts, e.ts);
            else if(e.type == 1)
                open.push_back({e.ts, e.te});
            else if(e.type == 2)
            {
                if(open.empty())
                {
                    c.problems.push_back("slice end without begin on track " +
                                         std::to_string(track));
                    continue;
                }
                record_of(open.back().second, open.back().first, e.ts);
                spans.push_back({open.back().first, e.ts});
                open.pop_back();
            }
        }
        if(!open.empty()) c.problems.push_back("unclosed slice on track " + std::to_string(track));
        check_nesting(spans, std::to_string(track), c.problems);
    }
    std::sort(c.records.begin(), c.records.end());
    return c;
}

// ---------------------------------------------------------------- summary from the oracle
uint64_t
nearest_rank(std::vector<uint64_t> values, double q)
{
    if(values.empty()) return 0;
    std::sort(values.begin(), values.end());
    auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
    rank      = std::max<size_t>(1, std::min(rank, values.size()));
    return values[rank - 1];
}

summary_expect
expect_summary(const std::vector<oracle_record>& records, uint64_t threshold)
{
    summary_expect                                        e;
    std::map<std::pair<uint64_t, uint64_t>, range_expect> ranges; // pid, block
    std::map<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>, thrash_expect> thrash;
    constexpr uint64_t block_bytes = 2 * 1024 * 1024;
    for(const auto& r : records)
    {
        std::string lower = r.op;
        for(char& ch : lower)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        uint64_t dur = r.end - r.start;
        for(op_expect* o : {&e.ops[{lower, trigger_name_of(r.op, r.trigger)}], &e.by_op[lower]})
        {
            o->count += 1;
            o->total += dur;
            o->min = std::min(o->min, dur);
            o->max = std::max(o->max, dur);
            o->durations.push_back(dur);
        }
        if(r.op == "PAGE_FAULT")
        {
            auto& f = e.faults[{r.host, r.node}];
            if(r.read_fault)
                (r.migrated ? std::get<0>(f) : std::get<1>(f)) += 1;
            else
                (r.migrated ? std::get<2>(f) : std::get<3>(f)) += 1;
            auto& rg = ranges[{r.pid, r.addr_start / block_bytes}];
            rg.pid   = r.pid;
            rg.block = r.addr_start / block_bytes;
            rg.faults += 1;
        }
        else if(r.op == "PAGE_MIGRATE")
        {
            uint64_t bytes = r.addr_end - r.addr_start + 1;
            auto&    d     = e.directions[{r.host, r.node, r.to}];
            std::get<0>(d) += 1;
            std::get<1>(d) += bytes;
            std::get<2>(d) += dur;
            // Byte by block: walk the blocks, overlap computed from the block's bounds.
            for(uint64_t b = r.addr_start / block_bytes; b <= r.addr_end / block_bytes; ++b)
            {
                uint64_t lo = std::max(r.addr_start, b * block_bytes);
                uint64_t hi = std::min(r.addr_end, (b + 1) * block_bytes - 1);
                uint64_t ov = hi - lo + 1;
                auto&    rg = ranges[{r.pid, b}];
                rg.pid      = r.pid;
                rg.block    = b;
                rg.migrations += 1;
                rg.bytes += ov;
                if(r.node == 0 && r.to != 0) rg.htod += ov;
                if(r.node != 0 && r.to == 0) rg.dtoh += ov;
                if(r.node != 0 && r.to != 0) rg.dtod += ov;
                if(r.node != r.to)
                {
                    uint64_t a = std::min(r.node, r.to), c = std::max(r.node, r.to);
                    auto&    t = thrash[{r.pid, b, a, c}];
                    t.pid      = r.pid;
                    t.host     = r.host;
                    t.block    = b;
                    t.a        = a;
                    t.b        = c;
                    t.migrations += 1;
                    t.bytes += ov;
                    (r.node == a ? t.forth : t.back) = true;
                }
            }
        }
        else if(r.op == "QUEUE_SUSPEND")
        {
            auto& q = e.suspends[{r.host, r.node}];
            q.first += 1;
            q.second += dur;
        }
    }
    e.distinct_ranges = ranges.size();
    std::vector<range_expect> all;
    for(const auto& [b, rg] : ranges)
        all.push_back(rg);
    auto top = [&](auto key)
    {
        std::vector<range_expect> v;
        for(const auto& rg : all)
            if(key(rg) > 0) v.push_back(rg);
        std::sort(v.begin(), v.end(),
                  [&](const range_expect& x, const range_expect& y)
                  {
                      if(key(x) != key(y)) return key(x) > key(y);
                      return std::make_pair(x.block, x.pid) < std::make_pair(y.block, y.pid);
                  });
        if(v.size() > 10) v.resize(10);
        return v;
    };
    e.top_by_faults = top([](const range_expect& r) { return r.faults; });
    e.top_by_bytes  = top([](const range_expect& r) { return r.bytes; });
    for(const auto& [k, t] : thrash)
        if(t.migrations >= threshold && t.forth && t.back) e.thrashing.push_back(t);
    std::sort(e.thrashing.begin(), e.thrashing.end(),
              [](const thrash_expect& x, const thrash_expect& y)
              {
                  if(x.migrations != y.migrations) return x.migrations > y.migrations;
                  if(x.block != y.block) return x.block < y.block;
                  return std::make_tuple(x.a, x.b, x.pid) < std::make_tuple(y.a, y.b, y.pid);
              });
    e.thrashing_count = e.thrashing.size();
    if(e.thrashing.size() > 10) e.thrashing.resize(10);
    return e;
}

// ---------------------------------------------------------------------------- running
run_result
run_program(const std::vector<std::string>&                         argv,
            const std::vector<std::pair<std::string, std::string>>& env, int timeout_s)
{
    run_result result;
    int        pipefd[2];
    if(pipe(pipefd) != 0) return result;
    pid_t pid = fork();
    if(pid == 0)
    {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        close(pipefd[1]);
        for(const auto& [k, v] : env)
            setenv(k.c_str(), v.c_str(), 1);
        alarm(static_cast<unsigned>(timeout_s)); // a hung child dies of SIGALRM
        std::vector<char*> args;
        for(const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    close(pipefd[1]);
    char    buf[4096];
    ssize_t n;
    while((n = read(pipefd[0], buf, sizeof(buf))) > 0)
        result.out.append(buf, static_cast<size_t>(n));
    close(pipefd[0]);
    int           status = 0;
    struct rusage usage  = {};
    wait4(pid, &status, 0, &usage);
    result.max_rss_kb = usage.ru_maxrss;
    if(WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if(WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    return result;
}

std::string
tool_preload()
{
    return test_sanitizer::preload(std::string(emulator_library()) + " " + tool_library());
}

run_result
replay_with_tool(const std::string&                                      log,
                 const std::vector<std::pair<std::string, std::string>>& env,
                 const std::string&                                      program)
{
    auto all = env;
    all.emplace_back("LD_PRELOAD", tool_preload());
    all.emplace_back("KFD_EMULATOR_LOG", log);
    return run_program({program}, all);
}
} // namespace kfd_out_test
