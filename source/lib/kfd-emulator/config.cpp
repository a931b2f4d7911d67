// MIT License - see LICENSE.
#include "config.hpp"

#include "common/kfd_abi.hpp"
#include "numbers.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kfd_emu
{
namespace abi = rocprofiler::kfd_abi;

namespace
{
struct errno_entry
{
    const char* name;
    int         value;
};

// The errno values a fault directive may name.
constexpr errno_entry errno_table[] = {
    {"eintr", EINTR},   {"efault", EFAULT}, {"einval", EINVAL}, {"eacces", EACCES},
    {"enoent", ENOENT}, {"eperm", EPERM},   {"enomem", ENOMEM}, {"ebusy", EBUSY},
    {"enodev", ENODEV}, {"eio", EIO},       {"eagain", EAGAIN}, {"ebadf", EBADF},
    {"enxio", ENXIO},   {"enotty", ENOTTY},
};

std::vector<std::string_view>
split_words(std::string_view text)
{
    std::vector<std::string_view> words;
    size_t                        pos = 0;
    while(pos < text.size())
    {
        while(pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r'))
            ++pos;
        size_t start = pos;
        while(pos < text.size() && text[pos] != ' ' && text[pos] != '\t' && text[pos] != '\r')
            ++pos;
        if(pos > start) words.push_back(text.substr(start, pos - start));
    }
    return words;
}

bool
parse_u64(std::string_view text, int base, uint64_t& value)
{
    if(base == 16 && text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        text.remove_prefix(2);
    return parse_number(text, base, UINT64_MAX, value);
}

bool
parse_gpu_id(std::string_view text, uint32_t& gpu_id)
{
    uint64_t v = 0;
    if(!parse_u64(text, 16, v) || v == 0 || v >= abi::node_undefined) return false;
    gpu_id = static_cast<uint32_t>(v);
    return true;
}

void
warn(config& cfg, uint64_t line_number, std::string_view line, const char* why)
{
    add_warning(cfg, "line " + std::to_string(line_number) + ": " + why + ": " + std::string(line));
}

// One handler per directive keyword; each returns the reason it was rejected, or null.
using directive_handler = const char* (*)(const std::vector<std::string_view>&, config&);

const char*
directive_gpu(const std::vector<std::string_view>& w, config& cfg)
{
    gpu_spec gpu;
    if(w.size() < 2 || w.size() > 3 || !parse_gpu_id(w[1], gpu.gpu_id))
        return "expected: gpu <gpu_id hex> [gfx name]";
    gpu.name = w.size() == 3 ? std::string(w[2]) : std::string("gfx90a");
    if(!cfg.gpus_from_directives) cfg.gpus.clear();
    cfg.gpus_from_directives = true;
    if(cfg.gpu_index(gpu.gpu_id) >= 0) return "GPU listed twice";
    if(cfg.gpus.size() >= max_gpus) return "too many GPUs";
    cfg.gpus.push_back(gpu);
    return nullptr;
}

const char*
directive_fifo(const std::vector<std::string_view>& w, config& cfg)
{
    uint64_t bytes = 0;
    if(w.size() != 2 || !parse_u64(w[1], 10, bytes) || bytes < min_fifo_bytes ||
       bytes > max_fifo_bytes)
        return "expected: fifo <bytes> (96 to 1048576)";
    cfg.fifo_bytes = bytes;
    return nullptr;
}

const char*
directive_version(const std::vector<std::string_view>& w, config& cfg)
{
    uint64_t major = 0;
    uint64_t minor = 0;
    size_t   dot   = w.size() == 2 ? w[1].find('.') : std::string_view::npos;
    if(dot == std::string_view::npos || !parse_u64(w[1].substr(0, dot), 10, major) ||
       !parse_u64(w[1].substr(dot + 1), 10, minor) || major > 0xffffffffull ||
       minor > 0xffffffffull)
        return "expected: version <major>.<minor>";
    cfg.version_major = static_cast<uint32_t>(major);
    cfg.version_minor = static_cast<uint32_t>(minor);
    return nullptr;
}

const char*
directive_superuser(const std::vector<std::string_view>& w, config& cfg)
{
    if(w.size() != 2 || (w[1] != "yes" && w[1] != "no")) return "expected: superuser yes|no";
    cfg.superuser = w[1] == "yes";
    return nullptr;
}

const char*
directive_all_process(const std::vector<std::string_view>& w, config& cfg)
{
    if(w.size() != 2 || (w[1] != "required" && w[1] != "implied"))
        return "expected: all-process required|implied";
    cfg.all_process_required = w[1] == "required";
    return nullptr;
}

const char*
directive_self(const std::vector<std::string_view>& w, config& cfg)
{
    uint64_t pid = 0;
    if(w.size() != 2 || !parse_u64(w[1], 10, pid) || pid == 0 || pid > 0x7fffffffull)
        return "expected: self <pid>";
    cfg.has_self            = true;
    cfg.self_from_directive = true;
    cfg.self_pid            = static_cast<uint32_t>(pid);
    return nullptr;
}

const char*
directive_timestamps(const std::vector<std::string_view>& w, config& cfg)
{
    if(w.size() != 2 || (w[1] != "keep" && w[1] != "rebase"))
        return "expected: timestamps keep|rebase";
    cfg.rebase = w[1] == "rebase";
    return nullptr;
}

const char*
directive_pace(const std::vector<std::string_view>& w, config& cfg)
{
    if(w.size() == 2 && w[1] == "lossless")
        cfg.pace = pace_kind::lossless;
    else if(w.size() == 2 && w[1] == "realtime")
        cfg.pace = pace_kind::realtime;
    else if(w.size() == 2 && w[1] == "max")
        cfg.pace = pace_kind::max;
    else if(w.size() == 3 && w[1] == "rate")
    {
        std::string copy(w[2]);
        char*       end  = nullptr;
        double      rate = std::strtod(copy.c_str(), &end);
        // From one event in 1000 s: any slower and 10 million events would outlast int64 ns.
        if(end != copy.c_str() + copy.size() || !(rate >= 1e-3) || rate > 1e9)
            return "expected: pace rate <events per second> (0.001 to 1e9)";
        cfg.pace = pace_kind::rate;
        cfg.rate = rate;
    }
    else
        return "expected: pace lossless|realtime|max|rate <events per second>";
    return nullptr;
}

const char*
directive_route(const std::vector<std::string_view>& w, config&)
{
    uint32_t gpu_id = 0;
    if(w.size() != 2 || !parse_gpu_id(w[1], gpu_id)) return "expected: route <gpu_id hex>";
    return nullptr; // positional: applied by classify_line
}

// `wait-mask <gpu_id hex> with|without <event id hex>`: the id as the log writes it (a = 10).
bool
parse_mask_wait(const std::vector<std::string_view>& w, const config& cfg, mask_wait& out)
{
    uint32_t gpu_id = 0, id = 0;
    if(w.size() != 4 || w[0] != "wait-mask" || !parse_gpu_id(w[1], gpu_id) ||
       (w[2] != "with" && w[2] != "without") || !parse_gpu_id(w[3], id) || id == 0 || id > 64)
        return false;
    out.active = true;
    out.gpu    = cfg.gpu_index(gpu_id);
    out.id     = id;
    out.with   = w[2] == "with";
    return true;
}

const char*
directive_wait_mask(const std::vector<std::string_view>& w, config& cfg)
{
    mask_wait wait;
    if(!parse_mask_wait(w, cfg, wait))
        return "expected: wait-mask <gpu_id hex> with|without <id hex>";
    return nullptr; // positional: applied by the producer
}

const char*
fault_open(const std::vector<std::string_view>& w, config& cfg)
{
    int error = w.size() == 3 ? errno_from_name(w[2]) : 0;
    if(error != ENOENT && error != EACCES) return "expected: fault open enoent|eacces";
    cfg.open_error = error;
    return nullptr;
}

const char*
fault_version(const std::vector<std::string_view>& w, config& cfg)
{
    int error = w.size() == 3 ? errno_from_name(w[2]) : 0;
    if(error == 0) return "expected: fault version <errno name>";
    cfg.version_error = error;
    return nullptr;
}

const char*
fault_smi(const std::vector<std::string_view>& w, config& cfg)
{
    smi_fault fault;
    fault.error = w.size() == 4 ? errno_from_name(w[3]) : EINVAL;
    if(w.size() < 3 || w.size() > 4 || !parse_gpu_id(w[2], fault.gpu_id) || fault.error == 0)
        return "expected: fault smi <gpu_id hex> [errno name]";
    cfg.smi_faults.push_back(fault);
    return nullptr;
}

const char*
fault_read(const std::vector<std::string_view>& w, config& cfg)
{
    if(w.size() == 4 && w[2] == "eagain" && w[3] == "until-replayed")
    {
        cfg.reads_wait_for_replay = true;
        return nullptr;
    }
    read_fault rule;
    rule.error = w.size() >= 4 ? errno_from_name(w[2]) : 0;
    if(rule.error != EINTR && rule.error != EFAULT)
        return "expected: fault read eintr|efault once|every <N>, or eagain until-replayed";
    if(w.size() == 4 && w[3] == "once")
        rule.once = true;
    else if(!(w.size() == 5 && w[3] == "every" && parse_u64(w[4], 10, rule.every) &&
              rule.every > 0))
        return "expected: fault read eintr|efault once|every <N>, or eagain until-replayed";
    cfg.read_fault_rule = rule;
    return nullptr;
}

const char*
fault_vanish(const std::vector<std::string_view>& w, config& cfg)
{
    vanish_fault fault;
    if(w.size() < 4 || w.size() > 5 || !parse_gpu_id(w[2], fault.gpu_id) ||
       !parse_u64(w[3], 10, fault.line) || fault.line == 0)
        return "expected: fault vanish <gpu_id hex> <line> [hup|err]";
    if(w.size() == 5 && w[4] != "hup" && w[4] != "err")
        return "expected: fault vanish <gpu_id hex> <line> [hup|err]";
    fault.pollerr = w.size() == 5 && w[4] == "err";
    cfg.vanish_faults.push_back(fault);
    return nullptr;
}

const char*
directive_fault(const std::vector<std::string_view>& w, config& cfg)
{
    if(w.size() < 2) return "expected: fault open|version|smi|read|vanish ...";
    if(w[1] == "open") return fault_open(w, cfg);
    if(w[1] == "version") return fault_version(w, cfg);
    if(w[1] == "smi") return fault_smi(w, cfg);
    if(w[1] == "read") return fault_read(w, cfg);
    if(w[1] == "vanish") return fault_vanish(w, cfg);
    return "unknown fault";
}

struct directive_entry
{
    const char*       keyword;
    directive_handler handler;
};

constexpr directive_entry directive_table[] = {
    {"gpu", directive_gpu},
    {"fifo", directive_fifo},
    {"version", directive_version},
    {"superuser", directive_superuser},
    {"all-process", directive_all_process},
    {"self", directive_self},
    {"timestamps", directive_timestamps},
    {"pace", directive_pace},
    {"route", directive_route},
    {"wait-mask", directive_wait_mask},
    {"fault", directive_fault},
};

bool
is_directive(std::string_view line)
{
    return line.size() >= 2 && line[0] == '#' && line[1] == '@';
}

bool
is_blank(std::string_view line)
{
    return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// The scan's first pass: directives, and the defaults that depend on the events.
struct first_pass
{
    std::vector<uint32_t> nodes; // distinct GPU node ids seen, for the default GPU list
    bool                  has_profiler_pid = false;
    uint32_t              profiler_pid     = 0;
};

void
note_event(const parsed_event& ev, config& cfg, first_pass& seen)
{
    if(!cfg.has_first_ns && ev.has_ns)
    {
        cfg.has_first_ns = true;
        cfg.first_ns     = ev.ns;
    }
    if(!seen.has_profiler_pid && is_profiler_event(ev.id))
    {
        seen.has_profiler_pid = true;
        seen.profiler_pid     = ev.text_pid;
    }
    for(size_t i = 0; i < ev.node_count; ++i)
    {
        uint32_t node = ev.nodes[i];
        if(node == 0 || node == abi::node_undefined) continue;
        if(std::find(seen.nodes.begin(), seen.nodes.end(), node) != seen.nodes.end()) continue;
        if(seen.nodes.size() < max_gpus) seen.nodes.push_back(node);
    }
}

// Where classify_line will send the scan's events, counted per destination while the GPU
// list may still change (a `#@ gpu` may follow the events): a gpu_id, the first GPU (no
// `#@ route` seen yet) or nowhere. The final list then turns these into lines per GPU, so the
// log is parsed once by the scan instead of twice. Bounded: a log naming more destinations
// than max_route_keys is counted by a second pass instead.
constexpr uint64_t key_first_gpu  = uint64_t{1} << 32;
constexpr uint64_t key_nowhere    = uint64_t{2} << 32;
constexpr size_t   max_route_keys = 1024;

struct route_counts
{
    std::vector<std::pair<uint64_t, uint64_t>> counts;       // key, lines
    size_t                                     last     = 0; // most lines repeat the last key
    bool                                       overflow = false;

    void add(uint64_t key)
    {
        if(last < counts.size() && counts[last].first == key)
        {
            ++counts[last].second;
            return;
        }
        for(last = 0; last < counts.size(); ++last)
            if(counts[last].first == key)
            {
                ++counts[last].second;
                return;
            }
        if(counts.size() >= max_route_keys)
        {
            overflow = true;
            return;
        }
        counts.emplace_back(key, 1);
    }
};

// The destination key of a `#@ route` line, as classify_line applies it; false for any
// other line.
bool
route_directive(std::string_view line, uint64_t& key)
{
    auto words = split_words(line.substr(2));
    if(words.size() != 2 || words[0] != "route") return false;
    uint32_t gpu_id = 0;
    key             = parse_gpu_id(words[1], gpu_id) ? gpu_id : key_nowhere;
    return true;
}

// The counts of the scan turned into lines per GPU of the final list (what the old second
// pass counted with classify_line).
void
assign_route_counts(const route_counts& routed, config& cfg)
{
    for(const auto& [key, lines] : routed.counts)
    {
        long gpu = key == key_first_gpu ? (cfg.gpus.empty() ? -1 : 0)
                   : key == key_nowhere ? -1
                                        : cfg.gpu_index(static_cast<uint32_t>(key));
        if(gpu >= 0)
            cfg.lines_per_gpu[static_cast<size_t>(gpu)] += lines;
        else
            cfg.unroutable += lines;
    }
}

template <typename Fn>
bool
for_each_line(const std::string& path, const file_io& io, std::string& error, Fn&& fn,
              file_identity* identity = nullptr)
{
    // O_NONBLOCK: opening a FIFO must not wait for a writer. The log is read by the scan (and
    // again by the producer), so it must be a regular file, not a FIFO or a pipe.
    int fd = io.open_fn(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if(fd < 0)
    {
        error = "cannot open the log " + path + ": " + std::strerror(errno);
        return false;
    }
    struct stat st
    {
    };
    if(fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    {
        io.close_fn(fd);
        error = "the log " + path +
                " is not a regular file (a FIFO or a pipe cannot be read more than once)";
        return false;
    }
    if(identity != nullptr) *identity = identity_of(fd);
    line_reader      reader(fd, io.read_fn);
    std::string_view line;
    bool             too_long = false;
    uint64_t         number   = 0;
    while(reader.next_view(line, too_long))
        fn(++number, line, too_long);
    io.close_fn(fd);
    if(reader.failed())
    {
        error = "error reading the log " + path;
        return false;
    }
    return true;
}
} // namespace

void
add_warning(config& cfg, std::string text)
{
    if(cfg.warnings.size() >= max_warnings)
    {
        ++cfg.warnings_omitted;
        return;
    }
    if(text.size() > max_warning_text) text = text.substr(0, max_warning_text) + "...";
    cfg.warnings.push_back(std::move(text));
}

long
config::gpu_index(uint32_t gpu_id) const
{
    for(size_t i = 0; i < gpus.size(); ++i)
        if(gpus[i].gpu_id == gpu_id) return static_cast<long>(i);
    return -1;
}

int
config::smi_error(uint32_t gpu_id) const
{
    for(const auto& fault : smi_faults)
        if(fault.gpu_id == gpu_id) return fault.error;
    return 0;
}

const char*
pace_name(pace_kind pace)
{
    switch(pace)
    {
    case pace_kind::lossless:
        return "lossless";
    case pace_kind::realtime:
        return "realtime";
    case pace_kind::max:
        return "max";
    case pace_kind::rate:
        return "rate";
    }
    return "?";
}

int
errno_from_name(std::string_view name)
{
    for(const auto& entry : errno_table)
    {
        std::string_view known(entry.name);
        if(known.size() != name.size()) continue;
        bool same = true;
        for(size_t i = 0; i < name.size() && same; ++i)
            same = known[i] == (name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
        if(same) return entry.value;
    }
    return 0;
}

const char*
errno_name(int error)
{
    for(const auto& entry : errno_table)
        if(entry.value == error) return entry.name;
    return "unknown";
}

void
apply_directive(std::string_view line, uint64_t line_number, config& cfg)
{
    auto words = split_words(line.substr(2));
    if(words.empty())
    {
        warn(cfg, line_number, line, "empty directive");
        return;
    }
    for(const auto& entry : directive_table)
    {
        if(words[0] != entry.keyword) continue;
        if(const char* why = entry.handler(words, cfg)) warn(cfg, line_number, line, why);
        return;
    }
    warn(cfg, line_number, line, "unknown directive");
}

file_identity
identity_of(int fd)
{
    struct stat st
    {
    };
    file_identity id;
    if(fstat(fd, &st) != 0) return id;
    id.dev      = st.st_dev;
    id.ino      = st.st_ino;
    id.size     = st.st_size;
    id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    return id;
}

classified_line
classify_line(std::string_view line, bool too_long, const config& cfg, route_state& route,
              bool trusted)
{
    classified_line out;
    if(is_blank(line)) return out;
    if(is_directive(line))
    {
        out.kind   = line_kind::directive;
        auto words = split_words(line.substr(2));
        if(words.size() == 2 && words[0] == "route")
        {
            uint32_t gpu_id = 0;
            route.gpu_index = parse_gpu_id(words[1], gpu_id) ? cfg.gpu_index(gpu_id) : -1;
        }
        if(!words.empty() && words[0] == "wait-mask") parse_mask_wait(words, cfg, out.wait);
        return out;
    }
    if(line[0] == '#') return out;

    out.kind = line_kind::unroutable;
    if(too_long ||
       !(trusted ? parse_routing_fields(line, out.event) : parse_event(line, out.event)))
        return out;
    out.gpu = out.event.has_route_node ? cfg.gpu_index(out.event.route_node) : route.gpu_index;
    if(out.gpu >= 0 && out.gpu < static_cast<long>(cfg.gpus.size())) out.kind = line_kind::event;
    return out;
}

bool
load_config(const std::string& path, const file_io& io, config& cfg, std::string& error)
{
    cfg          = config{};
    cfg.log_path = path;

    first_pass   seen;
    route_counts routed;
    uint64_t     route_key = key_first_gpu;
    bool         ok        = for_each_line(
                       path, io, error,
                       [&](uint64_t n, std::string_view line, bool too_long)
                       {
            cfg.line_count = n;
            // A line cut at max_line is neither a directive nor an event.
            if(too_long)
            {
                if(is_directive(line)) warn(cfg, n, line.substr(0, 60), "directive too long");
            }
            else if(is_directive(line))
                apply_directive(line, n, cfg);
            // From here on what classify_line does with the line during the
            // replay.
            if(is_blank(line)) return;
            if(is_directive(line))
            {
                route_directive(line, route_key);
                return;
            }
            if(line[0] == '#') return;
            ++cfg.event_lines;
            parsed_event ev;
            if(too_long || !parse_event(line, ev))
            {
                ++cfg.malformed;
                ++cfg.unroutable;
                return;
            }
            note_event(ev, cfg, seen);
            routed.add(ev.has_route_node ? ev.route_node : route_key);
        },
                       &cfg.log_file);
    if(!ok) return false;

    if(!cfg.gpus_from_directives)
    {
        // Without `#@ gpu`: the GPUs the log names, in ascending gpu_id order.
        std::sort(seen.nodes.begin(), seen.nodes.end());
        for(uint32_t node : seen.nodes)
            cfg.gpus.push_back(gpu_spec{node, "gfx90a"});
    }
    if(!cfg.has_self && seen.has_profiler_pid)
    {
        cfg.has_self = true;
        cfg.self_pid = seen.profiler_pid;
    }
    for(const auto& fault : cfg.vanish_faults)
        if(cfg.gpu_index(fault.gpu_id) < 0)
            add_warning(cfg, "fault vanish names a GPU that is not emulated");
    for(const auto& fault : cfg.smi_faults)
        if(cfg.gpu_index(fault.gpu_id) < 0)
            add_warning(cfg, "fault smi names a GPU that is not emulated");

    cfg.lines_per_gpu.assign(cfg.gpus.size(), 0);
    if(!routed.overflow)
    {
        assign_route_counts(routed, cfg);
        return true;
    }
    // Too many destinations to count in the scan: a second pass, with the final GPU list.
    cfg.event_lines = 0;
    cfg.unroutable  = 0;
    route_state route;
    return for_each_line(path, io, error,
                         [&](uint64_t, std::string_view line, bool too_long)
                         {
                             classified_line c = classify_line(line, too_long, cfg, route);
                             if(c.kind == line_kind::event)
                             {
                                 ++cfg.event_lines;
                                 ++cfg.lines_per_gpu[static_cast<size_t>(c.gpu)];
                             }
                             else if(c.kind == line_kind::unroutable)
                             {
                                 ++cfg.event_lines;
                                 ++cfg.unroutable;
                             }
                         });
}
} // namespace kfd_emu
