// MIT License - see LICENSE.
#include "summary.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace rocprof_kfd_report
{
namespace
{
using Json = nlohmann::ordered_json;

// "metadata" + "pid" -> "metadata.pid"; at the top level just the key.
std::string
join(const std::string& path, const std::string& key)
{
    return path.empty() ? key : path + "." + key;
}

[[noreturn]] void
fail(const std::string& path, const char* expected)
{
    throw InputError(path + ": expected " + expected);
}

// Each getter reads member `key` of object `obj` (whose path is `path`); an absent member
// or null reads as the default, a member of another type is an error.
const Json*
member(const Json& obj, const std::string& path, const char* key)
{
    if(!obj.is_object()) fail(path, "an object");
    auto it = obj.find(key);
    if(it == obj.end() || it->is_null()) return nullptr;
    return &*it;
}

// A non-negative integer that fits 64 bits. Some writers print large integers as floats:
// those are accepted (truncated) when they are in range.
bool
as_u64(const Json& v, uint64_t& out)
{
    if(v.is_number_unsigned())
        out = v.get<uint64_t>();
    else if(v.is_number_integer() && v.get<int64_t>() >= 0)
        out = v.get<uint64_t>();
    else if(v.is_number_float() && v.get<double>() >= 0 && v.get<double>() < 18446744073709551616.0)
        out = static_cast<uint64_t>(v.get<double>());
    else
        return false;
    return true;
}

uint64_t
get_u64(const Json& obj, const std::string& path, const char* key)
{
    const Json* v   = member(obj, path, key);
    uint64_t    out = 0;
    if(v != nullptr && !as_u64(*v, out)) fail(join(path, key), "a non-negative integer");
    return out;
}

int64_t
get_i64(const Json& obj, const std::string& path, const char* key)
{
    const Json* v = member(obj, path, key);
    if(v == nullptr) return 0;
    if(!v->is_number_integer()) fail(join(path, key), "an integer");
    return v->get<int64_t>();
}

double
get_double(const Json& obj, const std::string& path, const char* key)
{
    const Json* v = member(obj, path, key);
    if(v == nullptr) return 0;
    if(!v->is_number()) fail(join(path, key), "a number");
    return v->get<double>();
}

bool
get_bool(const Json& obj, const std::string& path, const char* key)
{
    const Json* v = member(obj, path, key);
    if(v == nullptr) return false;
    if(!v->is_boolean()) fail(join(path, key), "true or false");
    return v->get<bool>();
}

std::optional<std::string>
get_optional_string(const Json& obj, const std::string& path, const char* key)
{
    const Json* v = member(obj, path, key);
    if(v == nullptr) return std::nullopt;
    if(v->is_string()) return v->get<std::string>();
    if(v->is_number_integer()) return std::to_string(v->get<int64_t>());
    fail(join(path, key), "a string");
}

std::string
get_string(const Json& obj, const std::string& path, const char* key)
{
    return get_optional_string(obj, path, key).value_or("");
}

uint64_t
get_address(const Json& obj, const std::string& path, const char* key)
{
    const Json* v = member(obj, path, key);
    if(v == nullptr) return 0;
    if(v->is_number_unsigned()) return v->get<uint64_t>();
    if(!v->is_string()) fail(join(path, key), "an address string \"0x...\"");
    return parse_address(v->get<std::string>(), join(path, key));
}

// Calls fn(element, element_path) for each element of array member `key` (absent: none).
template <typename Fn>
void
for_each(const Json& obj, const std::string& path, const char* key, Fn fn)
{
    const Json* v = member(obj, path, key);
    if(v == nullptr) return;
    const std::string array_path = join(path, key);
    if(!v->is_array()) fail(array_path, "an array");
    for(size_t i = 0; i < v->size(); ++i)
        fn((*v)[i], array_path + "[" + std::to_string(i) + "]");
}

std::vector<double>
get_numbers(const Json& obj, const std::string& path, const char* key)
{
    std::vector<double> out;
    for_each(obj, path, key,
             [&](const Json& e, const std::string& p)
             {
                 if(!e.is_number() || e.get<double>() < 0) fail(p, "a non-negative number");
                 out.push_back(e.get<double>());
             });
    return out;
}

std::vector<uint64_t>
get_counts(const Json& obj, const std::string& path, const char* key)
{
    std::vector<uint64_t> out;
    for_each(obj, path, key,
             [&](const Json& e, const std::string& p)
             {
                 uint64_t v = 0;
                 if(!as_u64(e, v)) fail(p, "a non-negative integer");
                 out.push_back(v);
             });
    return out;
}

Metadata
read_metadata(const Json& m, const std::string& p)
{
    Metadata out;
    for_each(m, p, "command",
             [&](const Json& e, const std::string& ep)
             {
                 if(!e.is_string()) fail(ep, "a string");
                 out.command.push_back(e.get<std::string>());
             });
    out.pid            = get_i64(m, p, "pid");
    out.ppid           = get_i64(m, p, "ppid");
    out.hostname       = get_string(m, p, "hostname");
    out.rank           = get_optional_string(m, p, "rank");
    out.sdk_version    = get_string(m, p, "sdk_version");
    out.kernel_release = get_string(m, p, "kernel_release");
    out.kfd_version    = get_optional_string(m, p, "kfd_version");
    out.emulated       = get_bool(m, p, "emulated");
    out.start_ns       = get_u64(m, p, "start_ns");
    out.end_ns         = get_u64(m, p, "end_ns");
    out.wall_ns        = get_u64(m, p, "wall_ns");
    out.run_id         = get_optional_string(m, p, "run_id");
    if(member(m, p, "boot_time_unix_ns") != nullptr)
        out.boot_time_unix_ns = get_u64(m, p, "boot_time_unix_ns");
    return out;
}

Loss
read_loss(const Json& l, const std::string& p)
{
    Loss out;
    if(!l.is_object()) fail(p, "an object");
    // Numbers are counters and other booleans flags, whatever their names, so counters
    // added to the loss extension later show up without a change here.
    for(auto it = l.begin(); it != l.end(); ++it)
    {
        if(it.key() == "lost" || it.key() == "probably_lost") continue;
        if(it->is_number())
            out.counters.emplace_back(it.key(), get_u64(l, p, it.key().c_str()));
        else if(it->is_boolean())
            out.flags.emplace_back(it.key(), it->get<bool>());
    }
    out.lost          = get_bool(l, p, "lost");
    out.probably_lost = get_bool(l, p, "probably_lost");
    out.message       = get_string(l, p, "message");
    return out;
}

AddressRange
read_range(const Json& r, const std::string& p)
{
    AddressRange out;
    out.start      = get_address(r, p, "start");
    out.end        = get_address(r, p, "end");
    out.faults     = get_u64(r, p, "faults");
    out.migrations = get_u64(r, p, "migrations");
    out.htod_bytes = get_u64(r, p, "htod_bytes");
    out.dtoh_bytes = get_u64(r, p, "dtoh_bytes");
    out.dtod_bytes = get_u64(r, p, "dtod_bytes");
    out.has_pid    = member(r, p, "pid") != nullptr;
    if(out.has_pid) out.pid = get_u64(r, p, "pid");
    return out;
}

// A node's key (Summary::hosts): its gpu_id `id`, with its host's number above bit 32 when
// entry `e` names a host (a merged summary of several hosts).
uint64_t
node_key(const Json& e, const std::string& p, const std::string& field, uint64_t id, Summary& s)
{
    const Json* host = member(e, p, "host");
    if(host == nullptr) return id;
    if(!host->is_string()) fail(p + ".host", "a string");
    if(id > 0xffffffffu) fail(p + "." + field, "a 32-bit gpu_id where a host is named");
    const std::string name = host->get<std::string>();
    auto              it   = std::find(s.hosts.begin() + 1, s.hosts.end(), name);
    if(it == s.hosts.end()) it = s.hosts.insert(s.hosts.end(), name);
    return id | static_cast<uint64_t>(it - s.hosts.begin()) << 32;
}

uint64_t
read_node(const Json& e, const std::string& p, const char* field, Summary& s)
{
    return node_key(e, p, field, get_u64(e, p, field), s);
}

void
read_thrashing(const Json& t, const std::string& p, Summary& s)
{
    s.thrashing_threshold   = get_u64(t, p, "threshold");
    s.thrashing_approximate = get_bool(t, p, "approximate");
    for_each(t, p, "ranges",
             [&](const Json& r, const std::string& rp)
             {
                 ThrashingRange out;
                 out.start      = get_address(r, rp, "start");
                 out.end        = get_address(r, rp, "end");
                 out.migrations = get_u64(r, rp, "migrations");
                 out.bytes      = get_u64(r, rp, "bytes");
                 out.has_pid    = member(r, rp, "pid") != nullptr;
                 if(out.has_pid) out.pid = get_u64(r, rp, "pid");
                 const std::vector<uint64_t> between = get_counts(r, rp, "between");
                 if(between.size() != 2) fail(rp + ".between", "two node ids");
                 out.between[0] = node_key(r, rp, "between", between[0], s);
                 out.between[1] = node_key(r, rp, "between", between[1], s);
                 s.thrashing.push_back(out);
             });
    // Written since 2026-12-07; before, only the rows were known.
    s.thrashing_count = member(t, p, "count") != nullptr
                            ? get_u64(t, p, "count")
                            : static_cast<uint64_t>(s.thrashing.size());
    if(s.thrashing_count < s.thrashing.size()) fail(join(p, "count"), "at least as many as ranges");
}

void
check_bins(const std::vector<double>& values, uint64_t bins, const std::string& path)
{
    if(values.size() != bins) fail(path, "as many values as timeline.bins");
}

Timeline
read_timeline(const Json& t, const std::string& p, Summary& summary)
{
    Timeline out;
    out.start_ns = get_u64(t, p, "start_ns");
    out.bin_ns   = get_u64(t, p, "bin_ns");
    out.bins     = get_u64(t, p, "bins");
    if(out.bins > 0 && out.bin_ns == 0) fail(p + ".bin_ns", "a positive bin width");
    if(out.bins > 100000) fail(p + ".bins", "at most 100000 bins");
    if(out.bins > 0 && out.bin_ns > (UINT64_MAX - out.start_ns) / out.bins)
        fail(p + ".bin_ns", "start_ns + bins x bin_ns within 64 bits");
    for_each(t, p, "migration_bytes",
             [&](const Json& e, const std::string& ep)
             {
                 MigrationSeries s;
                 s.from_node = read_node(e, ep, "from_node", summary);
                 s.to_node   = read_node(e, ep, "to_node", summary);
                 s.values    = get_numbers(e, ep, "values");
                 check_bins(s.values, out.bins, ep + ".values");
                 out.migration_bytes.push_back(std::move(s));
             });
    for_each(t, p, "faults",
             [&](const Json& e, const std::string& ep)
             {
                 FaultSeries s;
                 s.gpu_id = read_node(e, ep, "gpu_id", summary);
                 s.read   = get_numbers(e, ep, "read");
                 s.write  = get_numbers(e, ep, "write");
                 check_bins(s.read, out.bins, ep + ".read");
                 check_bins(s.write, out.bins, ep + ".write");
                 out.faults.push_back(std::move(s));
             });
    return out;
}

Histogram
read_histogram(const Json& h, const std::string& p)
{
    Histogram out;
    out.bucket_upper_ns = get_counts(h, p, "bucket_upper_ns");
    out.counts          = get_counts(h, p, "counts");
    out.p50_ns          = get_u64(h, p, "p50_ns");
    out.p99_ns          = get_u64(h, p, "p99_ns");
    if(out.bucket_upper_ns.size() != out.counts.size())
        fail(p + ".counts", "as many counts as bucket_upper_ns");
    return out;
}

QueueIntervals
read_queue_intervals(const Json& q, const std::string& p, Summary& summary)
{
    QueueIntervals out;
    out.gpu_id           = read_node(q, p, "gpu_id", summary);
    out.intervals_merged = get_bool(q, p, "intervals_merged");
    for_each(q, p, "intervals",
             [&](const Json& e, const std::string& ep)
             {
                 uint64_t a = 0, b = 0;
                 if(!e.is_array() || e.size() != 2 || !as_u64(e[0], a) || !as_u64(e[1], b))
                     fail(ep, "[start_ns, end_ns]");
                 if(b < a) fail(ep, "end_ns >= start_ns");
                 out.intervals.emplace_back(a, b);
             });
    return out;
}

void
read_sections(const Json& j, Summary& s)
{
    const std::string r;
    // Written by the tool and rocprof-kfd-merge beyond the design note's schema: "complete"
    // and, in a merged summary, "inputs".
    s.complete = member(j, r, "complete") == nullptr || get_bool(j, r, "complete");
    if(const Json* m = member(j, r, "metadata")) s.metadata = read_metadata(*m, "metadata");
    for_each(j, r, "inputs",
             [&](const Json& e, const std::string& p)
             {
                 MergedInput in;
                 in.directory = get_string(e, p, "directory");
                 in.hostname  = get_string(e, p, "hostname");
                 in.rank      = get_optional_string(e, p, "rank");
                 in.pid       = get_i64(e, p, "pid");
                 in.records   = get_u64(e, p, "records");
                 in.complete  = member(e, p, "complete") == nullptr || get_bool(e, p, "complete");
                 s.inputs.push_back(in);
             });
    for_each(j, r, "agents",
             [&](const Json& a, const std::string& p)
             {
                 s.agents.push_back({read_node(a, p, "gpu_id", s), get_u64(a, p, "node_id"),
                                     get_string(a, p, "name"), get_string(a, p, "type")});
             });
    if(const Json* l = member(j, r, "loss")) s.loss = read_loss(*l, "loss");
    for_each(j, r, "operations",
             [&](const Json& o, const std::string& p)
             {
                 OperationStats op;
                 op.operation = get_string(o, p, "operation");
                 op.trigger   = get_string(o, p, "trigger");
                 op.count     = get_u64(o, p, "count");
                 op.total_ns  = get_u64(o, p, "total_ns");
                 op.mean_ns   = get_u64(o, p, "mean_ns");
                 op.min_ns    = get_u64(o, p, "min_ns");
                 op.p50_ns    = get_u64(o, p, "p50_ns");
                 op.p99_ns    = get_u64(o, p, "p99_ns");
                 op.max_ns    = get_u64(o, p, "max_ns");
                 s.operations.push_back(op);
             });
    for_each(j, r, "migrations_by_direction",
             [&](const Json& d, const std::string& p)
             {
                 s.migrations_by_direction.push_back(
                     {read_node(d, p, "from_node", s), read_node(d, p, "to_node", s),
                      get_string(d, p, "from_name"), get_string(d, p, "to_name"),
                      get_u64(d, p, "count"), get_u64(d, p, "bytes"), get_u64(d, p, "total_ns"),
                      get_double(d, p, "gb_per_s")});
             });
    for_each(j, r, "faults_by_gpu",
             [&](const Json& f, const std::string& p)
             {
                 s.faults_by_gpu.push_back(
                     {read_node(f, p, "gpu_id", s), get_string(f, p, "name"),
                      get_u64(f, p, "read_migrated"), get_u64(f, p, "read_updated"),
                      get_u64(f, p, "write_migrated"), get_u64(f, p, "write_updated")});
             });
    for_each(j, r, "queue_suspend_by_gpu",
             [&](const Json& q, const std::string& p)
             {
                 s.queue_suspend_by_gpu.push_back({read_node(q, p, "gpu_id", s),
                                                   get_string(q, p, "name"), get_u64(q, p, "count"),
                                                   get_u64(q, p, "total_ns"),
                                                   get_double(q, p, "share_of_wall")});
             });
    s.range_bytes = get_u64(j, r, "range_bytes");
    for_each(j, r, "top_ranges_by_faults",
             [&](const Json& e, const std::string& p)
             { s.top_ranges_by_faults.push_back(read_range(e, p)); });
    for_each(j, r, "top_ranges_by_bytes",
             [&](const Json& e, const std::string& p)
             { s.top_ranges_by_bytes.push_back(read_range(e, p)); });
    s.top_ranges_approximate = get_bool(j, r, "top_ranges_approximate");
    if(const Json* t = member(j, r, "thrashing")) read_thrashing(*t, "thrashing", s);
    if(const Json* t = member(j, r, "timeline")) s.timeline = read_timeline(*t, "timeline", s);
    if(const Json* h = member(j, r, "histograms"))
    {
        if(!h->is_object()) fail("histograms", "an object");
        for(auto it = h->begin(); it != h->end(); ++it)
            s.histograms[it.key()] = read_histogram(it.value(), "histograms." + it.key());
    }
    for_each(j, r, "queue_suspensions",
             [&](const Json& q, const std::string& p)
             { s.queue_suspensions.push_back(read_queue_intervals(q, p, s)); });
}
} // namespace

uint64_t
parse_address(const std::string& text, const std::string& field)
{
    if(text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
        fail(field, "an address string \"0x...\"");
    char* end                  = nullptr;
    errno                      = 0;
    const unsigned long long v = std::strtoull(text.c_str() + 2, &end, 16);
    if(errno != 0 || end == nullptr || *end != '\0') fail(field, "an address string \"0x...\"");
    return v;
}

Summary
parse_summary(const std::string& text)
{
    Json j;
    try
    {
        j = Json::parse(text);
    }
    catch(const Json::parse_error& e)
    {
        throw InputError(std::string("invalid JSON: ") + e.what());
    }
    if(!j.is_object()) throw InputError("not a rocprof-kfd summary (expected a JSON object)");
    const Json* schema = member(j, "", "schema");
    if(schema == nullptr || !schema->is_string() || *schema != "rocprof-kfd-summary")
        throw InputError("not a rocprof-kfd summary (schema is not \"rocprof-kfd-summary\")");
    const Json* version = member(j, "", "version");
    if(version == nullptr || !version->is_number_integer() || version->get<int64_t>() != 1)
        throw InputError("unsupported summary version " +
                         (version == nullptr ? std::string("(none)") : version->dump()) +
                         " (this report reads version 1)");
    Summary s;
    try
    {
        read_sections(j, s);
    }
    catch(const Json::exception& e)
    {
        throw InputError(std::string("malformed summary: ") + e.what());
    }
    return s;
}
} // namespace rocprof_kfd_report
