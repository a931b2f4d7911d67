// MIT License - see LICENSE.
//
// KFD topology reader. What is read and what is derived:
//
// Read from nodes/<N>/properties (kernel key -> rocprofiler_agent_v0_t field, same names):
//   cpu_cores_count simd_count cpu_core_id_base simd_id_base max_waves_per_simd
//   lds_size_in_kb gds_size_in_kb num_gws wave_front_size array_count
//   simd_arrays_per_engine cu_per_simd_array simd_per_cu max_slots_scratch_cu
//   gfx_target_version vendor_id(u16) device_id(u16) location_id domain drm_render_minor
//   hive_id(u64) num_sdma_engines num_sdma_xgmi_engines num_sdma_queues_per_engine
//   num_cp_queues max_engine_clk_fcompute max_engine_clk_ccompute local_mem_size(u64)
//   num_xcc, fw_version -> fw_version.Value, sdma_fw_version -> sdma_fw_version.Value,
//   capability -> capability.Value.
// Kernel keys without a v0 field are ignored: mem_banks_count caches_count io_links_count
//   (the counts are what was actually read, see below), p2p_links_count debug_prop unique_id.
// Read from nodes/<N>/gpu_id -> gpu_id; nodes/<N>/name -> names (see make_names()).
// Sub-entries, same key names as the fields:
//   mem_banks/<i>: heap_type flags(->flags.MemoryProperty) width mem_clk_max size_in_bytes(u64)
//   caches/<i>:    processor_id_low level size cache_line_size cache_lines_per_tag
//                  association latency type(->type.Value); `size` is stored as the kernel
//                  prints it (KiB), as the reference SDK does.
//   io_links/<i>:  type version_major version_minor node_from node_to weight min_latency
//                  max_latency min_bandwidth max_bandwidth recommended_transfer_size
//                  flags(->flags.LinkProperty)
//
// Derived (as the reference SDK / the HSA runtime report them):
//   size, id.handle (node_id + 1), type, node_id (folder index), logical_node_id,
//   logical_node_type_id, mem_banks_count/caches_count/io_links_count and their pointers,
//   num_xcc = 1 when the key is absent,
//   fw_version.Value and sdma_fw_version.Value masked to their 10-bit ucode field,
//   cu_count = simd_count / simd_per_cu (GPU), cpu_cores_count (CPU),
//   max_waves_per_cu = simd_per_cu * max_waves_per_simd,
//   num_shader_banks = array_count / simd_arrays_per_engine,
//   cu_per_engine = cu_count / num_shader_banks (GPU),
//   family_id from gfx_target_version (GPU; 0 for CPUs and unknown targets),
//   GPU only: workgroup_max_size 1024, workgroup_max_dim {1024,1024,1024},
//   grid_max_size UINT32_MAX, grid_max_dim {UINT32_MAX,UINT16_MAX,UINT16_MAX}.
#include "rocprofiler-sdk/topology.hpp"
#include "rocprofiler-sdk/logging.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

namespace rocprofiler::topology
{
namespace
{
// The tables below write enums and unions through their 32-bit value.
static_assert(sizeof(HSA_HEAPTYPE) == 4 && sizeof(HSA_IOLINKTYPE) == 4);
static_assert(sizeof(HSA_MEMORYPROPERTY) == 4 && sizeof(HSA_LINKPROPERTY) == 4);
static_assert(sizeof(HsaCacheType) == 4 && sizeof(HSA_ENGINE_ID) == 4);
static_assert(sizeof(HSA_ENGINE_VERSION) == 4 && sizeof(HSA_CAPABILITY) == 4);
static_assert(std::is_standard_layout_v<rocprofiler_agent_v0_t>);

using agent_t = rocprofiler_agent_v0_t;
using fw      = field_width;

#define ROCP_AGENT_FIELD(KEY, FIELD, WIDTH)                                                        \
    {                                                                                              \
        KEY, offsetof(agent_t, FIELD), fw::WIDTH                                                   \
    }
constexpr property_field node_fields[] = {
    ROCP_AGENT_FIELD("cpu_cores_count", cpu_cores_count, u32),
    ROCP_AGENT_FIELD("simd_count", simd_count, u32),
    ROCP_AGENT_FIELD("cpu_core_id_base", cpu_core_id_base, u32),
    ROCP_AGENT_FIELD("simd_id_base", simd_id_base, u32),
    ROCP_AGENT_FIELD("max_waves_per_simd", max_waves_per_simd, u32),
    ROCP_AGENT_FIELD("lds_size_in_kb", lds_size_in_kb, u32),
    ROCP_AGENT_FIELD("gds_size_in_kb", gds_size_in_kb, u32),
    ROCP_AGENT_FIELD("num_gws", num_gws, u32),
    ROCP_AGENT_FIELD("wave_front_size", wave_front_size, u32),
    ROCP_AGENT_FIELD("num_xcc", num_xcc, u32),
    ROCP_AGENT_FIELD("array_count", array_count, u32),
    ROCP_AGENT_FIELD("simd_arrays_per_engine", simd_arrays_per_engine, u32),
    ROCP_AGENT_FIELD("cu_per_simd_array", cu_per_simd_array, u32),
    ROCP_AGENT_FIELD("simd_per_cu", simd_per_cu, u32),
    ROCP_AGENT_FIELD("max_slots_scratch_cu", max_slots_scratch_cu, u32),
    ROCP_AGENT_FIELD("gfx_target_version", gfx_target_version, u32),
    ROCP_AGENT_FIELD("vendor_id", vendor_id, u16),
    ROCP_AGENT_FIELD("device_id", device_id, u16),
    ROCP_AGENT_FIELD("location_id", location_id, u32),
    ROCP_AGENT_FIELD("domain", domain, u32),
    ROCP_AGENT_FIELD("drm_render_minor", drm_render_minor, u32),
    ROCP_AGENT_FIELD("num_sdma_engines", num_sdma_engines, u32),
    ROCP_AGENT_FIELD("num_sdma_xgmi_engines", num_sdma_xgmi_engines, u32),
    ROCP_AGENT_FIELD("num_sdma_queues_per_engine", num_sdma_queues_per_engine, u32),
    ROCP_AGENT_FIELD("num_cp_queues", num_cp_queues, u32),
    ROCP_AGENT_FIELD("max_engine_clk_ccompute", max_engine_clk_ccompute, u32),
    ROCP_AGENT_FIELD("max_engine_clk_fcompute", max_engine_clk_fcompute, u32),
    ROCP_AGENT_FIELD("sdma_fw_version", sdma_fw_version, u32),
    ROCP_AGENT_FIELD("fw_version", fw_version, u32),
    ROCP_AGENT_FIELD("capability", capability, u32),
    ROCP_AGENT_FIELD("local_mem_size", local_mem_size, u64),
    ROCP_AGENT_FIELD("hive_id", hive_id, u64),
};
#undef ROCP_AGENT_FIELD

#define ROCP_SUB_FIELD(TYPE, KEY, FIELD, WIDTH)                                                    \
    {                                                                                              \
        KEY, offsetof(TYPE, FIELD), fw::WIDTH                                                      \
    }
constexpr property_field mem_bank_fields[] = {
    ROCP_SUB_FIELD(rocprofiler_agent_mem_bank_t, "heap_type", heap_type, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_mem_bank_t, "flags", flags, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_mem_bank_t, "width", width, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_mem_bank_t, "mem_clk_max", mem_clk_max, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_mem_bank_t, "size_in_bytes", size_in_bytes, u64),
};

constexpr property_field cache_fields[] = {
    ROCP_SUB_FIELD(rocprofiler_agent_cache_t, "processor_id_low", processor_id_low, u64),
    ROCP_SUB_FIELD(rocprofiler_agent_cache_t, "size", size, u64),
    ROCP_SUB_FIELD(rocprofiler_agent_cache_t, "level", level, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_cache_t, "cache_line_size", cache_line_size, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_cache_t, "cache_lines_per_tag", cache_lines_per_tag, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_cache_t, "association", association, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_cache_t, "latency", latency, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_cache_t, "type", type, u32),
};

constexpr property_field io_link_fields[] = {
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "type", type, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "version_major", version_major, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "version_minor", version_minor, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "node_from", node_from, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "node_to", node_to, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "weight", weight, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "min_latency", min_latency, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "max_latency", max_latency, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "min_bandwidth", min_bandwidth, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "max_bandwidth", max_bandwidth, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "recommended_transfer_size",
                   recommended_transfer_size, u32),
    ROCP_SUB_FIELD(rocprofiler_agent_io_link_t, "flags", flags, u32),
};
#undef ROCP_SUB_FIELD

// AMDGPU_FAMILY_* values (include/uapi/drm/amdgpu_drm.h).
enum amdgpu_family : uint32_t
{
    family_ci        = 120,
    family_kv        = 125,
    family_vi        = 130,
    family_cz        = 135,
    family_ai        = 141,
    family_rv        = 142,
    family_nv        = 143,
    family_vgh       = 144,
    family_gc_11_0_0 = 145,
    family_yc        = 146,
    family_gc_11_0_1 = 148,
    family_gc_10_3_6 = 149,
    family_gc_11_5_0 = 150,
    family_gc_10_3_7 = 151,
    family_gc_12_0_0 = 152,
};

// gfx_target_version ranges (inclusive) -> family; the first match wins, so the APUs that
// share a major version with discrete parts come before their major's catch-all range.
struct family_range
{
    uint32_t first;
    uint32_t last;
    uint32_t family;
};
constexpr family_range family_ranges[] = {
    {70000, 70000, family_kv},          // gfx700 Kaveri
    {70003, 70003, family_kv},          // gfx703 Kabini/Mullins
    {70000, 79999, family_ci},          // gfx7
    {80001, 80001, family_cz},          // gfx801 Carrizo
    {80100, 80100, family_cz},          // gfx810 Stoney
    {80000, 89999, family_vi},          // gfx8
    {90002, 90002, family_rv},          // gfx902 Raven
    {90009, 90009, family_rv},          // gfx909 Raven2
    {90012, 90012, family_rv},          // gfx90c Renoir
    {90000, 99999, family_ai},          // gfx9 (Vega, MI100/200/300)
    {100303, 100303, family_vgh},       // gfx1033 Van Gogh
    {100305, 100305, family_yc},        // gfx1035 Yellow Carp
    {100306, 100306, family_gc_10_3_6}, // gfx1036
    {100307, 100307, family_gc_10_3_7}, // gfx1037
    {100000, 109999, family_nv},        // gfx10
    {110003, 110003, family_gc_11_0_1}, // gfx1103
    {110500, 110599, family_gc_11_5_0}, // gfx115x
    {110000, 119999, family_gc_11_0_0}, // gfx11
    {120000, 129999, family_gc_12_0_0}, // gfx12
};

// ---- files ----

int
open_read_only(const std::string& path)
{
    // O_NONBLOCK: a FIFO planted in the tree must not block open(); reads then see EOF.
    int fd = -1;
    do
    {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    } while(fd < 0 && errno == EINTR);
    return fd;
}

// Reads up to `max_bytes` (plus one byte to learn whether there is more). -1 on error.
ssize_t
read_bounded(int fd, std::string& out, size_t max_bytes)
{
    out.resize(max_bytes + 1);
    size_t used = 0;
    while(used < out.size())
    {
        ssize_t n = ::read(fd, out.data() + used, out.size() - used);
        if(n < 0 && errno == EINTR) continue;
        if(n < 0) return -1;
        if(n == 0) break;
        used += static_cast<size_t>(n);
    }
    out.resize(used);
    return static_cast<ssize_t>(used);
}

bool
can_open(const std::string& path)
{
    int fd = open_read_only(path);
    if(fd < 0) return false;
    ::close(fd);
    return true;
}

std::string
path_join(const std::string& dir, std::string_view name)
{
    auto joined = dir;
    joined += '/';
    joined += name;
    return joined;
}

std::string
indexed_path(const std::string& dir, uint32_t index, std::string_view leaf)
{
    return path_join(path_join(dir, std::to_string(index)), leaf);
}

// ---- parsing ----

bool
is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// Splits a line into at most three whitespace-separated tokens; `extra` is non-empty when
// the line has a third token.
struct line_tokens
{
    std::string_view key;
    std::string_view value;
    std::string_view extra;
};

std::string_view
next_token(std::string_view& rest)
{
    size_t begin = 0;
    while(begin < rest.size() && is_blank(rest[begin]))
        ++begin;
    size_t end = begin;
    while(end < rest.size() && !is_blank(rest[end]))
        ++end;
    auto token = rest.substr(begin, end - begin);
    rest.remove_prefix(end);
    return token;
}

line_tokens
split_line(std::string_view line)
{
    auto tokens  = line_tokens{};
    tokens.key   = next_token(line);
    tokens.value = next_token(line);
    tokens.extra = next_token(line);
    return tokens;
}

const property_field*
find_field(const property_field* fields, size_t count, std::string_view key)
{
    for(size_t i = 0; i < count; ++i)
        if(fields[i].key == key) return &fields[i];
    return nullptr;
}

uint64_t
max_value_of(field_width width)
{
    switch(width)
    {
    case field_width::u16:
        return std::numeric_limits<uint16_t>::max();
    case field_width::u32:
        return std::numeric_limits<uint32_t>::max();
    case field_width::u64:
        return std::numeric_limits<uint64_t>::max();
    }
    return 0;
}

void
store_value(void* object, const property_field& field, uint64_t value)
{
    auto* dest = static_cast<unsigned char*>(object) + field.offset;
    switch(field.width)
    {
    case field_width::u16:
    {
        auto narrow = static_cast<uint16_t>(value);
        std::memcpy(dest, &narrow, sizeof(narrow));
        break;
    }
    case field_width::u32:
    {
        auto narrow = static_cast<uint32_t>(value);
        std::memcpy(dest, &narrow, sizeof(narrow));
        break;
    }
    case field_width::u64:
        std::memcpy(dest, &value, sizeof(value));
        break;
    }
}

// Parses one properties file into `object`, logging one warning when it had bad lines.
// Returns false when the file cannot be opened.
bool
read_properties_file(const std::string& path, const property_field* fields, size_t field_count,
                     void* object)
{
    auto text = read_file(path);
    if(!text) return false;
    auto result = parse_properties(*text, fields, field_count, object);
    if(result.bad_lines > 0)
    {
        ROCP_WARNING << "topology: " << path << ": skipped " << result.bad_lines
                     << " line(s) with a bad value (first at line " << result.first_bad_line << ")";
    }
    return true;
}

std::string
trimmed(std::string_view text)
{
    while(!text.empty() && (is_blank(text.front()) || text.front() == '\n'))
        text.remove_prefix(1);
    while(!text.empty() && (is_blank(text.back()) || text.back() == '\n' || text.back() == '\0'))
        text.remove_suffix(1);
    return std::string{text};
}

// The first line of a small text file such as `name`, trimmed; empty when missing.
std::string
read_first_line(const std::string& path)
{
    auto text = read_file(path, 4096);
    if(!text) return {};
    auto line = std::string_view{*text};
    line      = line.substr(0, line.find('\n'));
    return trimmed(line);
}

uint64_t
read_gpu_id(const std::string& node_dir)
{
    auto path = path_join(node_dir, "gpu_id");
    auto text = read_file(path, 4096);
    if(!text) return 0; // CPU nodes of some fake trees have no gpu_id file: 0, as for CPUs
    auto value = parse_decimal(trimmed(*text), std::numeric_limits<uint64_t>::max());
    if(!value)
    {
        ROCP_WARNING << "topology: " << path << ": not a 64-bit decimal number; gpu_id read as 0";
        return 0;
    }
    return *value;
}

// Reads <node_dir>/<sub>/0/properties, 1/properties, ... until one cannot be opened.
template <typename EntryT>
std::vector<EntryT>
read_sub_entries(const std::string& node_dir, std::string_view sub, const property_field* fields,
                 size_t field_count)
{
    auto entries = std::vector<EntryT>{};
    auto dir     = path_join(node_dir, sub);
    for(uint32_t i = 0; i < max_sub_entries; ++i)
    {
        auto entry = EntryT{};
        if(!read_properties_file(indexed_path(dir, i, "properties"), fields, field_count, &entry))
            return entries;
        entries.push_back(entry);
    }
    if(can_open(indexed_path(dir, max_sub_entries, "properties")))
        ROCP_WARNING << "topology: " << dir << ": more than " << max_sub_entries
                     << " entries; the rest are ignored";
    return entries;
}

rocprofiler_agent_type_t
classify(const agent_t& agent)
{
    if(agent.cpu_cores_count > 0) return ROCPROFILER_AGENT_TYPE_CPU;
    if(agent.simd_count > 0) return ROCPROFILER_AGENT_TYPE_GPU;
    return ROCPROFILER_AGENT_TYPE_NONE;
}

void
derive_compute_fields(agent_t& agent)
{
    // The fw_version/sdma_fw_version unions keep the ucode version in their low 10 bits; the
    // reference SDK and libhsakmt mask the kernel's value the same way.
    agent.fw_version.Value &= 0x3ffu;
    agent.sdma_fw_version.Value &= 0x3ffu;
    agent.max_waves_per_cu = agent.simd_per_cu * agent.max_waves_per_simd;
    if(agent.simd_arrays_per_engine > 0)
        agent.num_shader_banks = agent.array_count / agent.simd_arrays_per_engine;

    if(agent.type == ROCPROFILER_AGENT_TYPE_CPU)
    {
        agent.cu_count = agent.cpu_cores_count;
        return;
    }
    if(agent.simd_per_cu > 0) agent.cu_count = agent.simd_count / agent.simd_per_cu;
    if(agent.num_shader_banks > 0) agent.cu_per_engine = agent.cu_count / agent.num_shader_banks;
    agent.family_id = family_id_from_target_version(agent.gfx_target_version);

    // Limits the HSA runtime reports for every AMD GPU (not in sysfs).
    constexpr uint32_t workgroup_max = 1024;
    agent.workgroup_max_size         = workgroup_max;
    agent.workgroup_max_dim          = {workgroup_max, workgroup_max, workgroup_max};
    agent.grid_max_size              = std::numeric_limits<uint32_t>::max();
    agent.grid_max_dim               = {std::numeric_limits<uint32_t>::max(),
                                        std::numeric_limits<uint16_t>::max(),
                                        std::numeric_limits<uint16_t>::max()};
}

// Names. GPU: `name` is the gfx target ("gfx90a"): the name file when it holds one, else
// built from gfx_target_version (recent kernels write "ip discovery" there), else the
// name file, else "GPU"; vendor "AMD". CPU: the kernel leaves the name file empty, so
// "CPU" then; vendor "CPU" (as the HSA runtime reports). product_name and model_name:
// the name file's text when not empty, else `name`. Never NULL.
void
make_names(agent_storage& storage, const std::string& name_file_text)
{
    auto& agent = storage.agent;
    if(agent.type == ROCPROFILER_AGENT_TYPE_GPU)
    {
        storage.vendor_name = "AMD";
        if(name_file_text.rfind("gfx", 0) == 0)
            storage.name = name_file_text;
        else
            storage.name = gfx_name_from_target_version(agent.gfx_target_version);
        if(storage.name.empty()) storage.name = name_file_text;
        if(storage.name.empty()) storage.name = "GPU";
    }
    else
    {
        storage.vendor_name = "CPU";
        storage.name        = name_file_text.empty() ? std::string{"CPU"} : name_file_text;
    }
    storage.product_name = name_file_text.empty() ? storage.name : name_file_text;
    storage.model_name   = storage.product_name;
}

// Points the agent at the storage next to it and fills the counts.
void
link_storage(agent_storage& storage)
{
    auto& agent           = storage.agent;
    agent.mem_banks_count = static_cast<uint32_t>(storage.mem_banks.size());
    agent.caches_count    = static_cast<uint32_t>(storage.caches.size());
    agent.io_links_count  = static_cast<uint32_t>(storage.io_links.size());
    agent.mem_banks       = storage.mem_banks.empty() ? nullptr : storage.mem_banks.data();
    agent.caches          = storage.caches.empty() ? nullptr : storage.caches.data();
    agent.io_links        = storage.io_links.empty() ? nullptr : storage.io_links.data();
    agent.name            = storage.name.c_str();
    agent.vendor_name     = storage.vendor_name.c_str();
    agent.product_name    = storage.product_name.c_str();
    agent.model_name      = storage.model_name.c_str();
}

// Reads node N. Returns nullptr (and sets node_exists) when the node is not an agent.
std::unique_ptr<agent_storage>
read_node(const std::string& nodes_dir, uint32_t node_index, bool& node_exists)
{
    auto  node_dir = path_join(nodes_dir, std::to_string(node_index));
    auto  storage  = std::make_unique<agent_storage>();
    auto& agent    = storage->agent;
    agent.num_xcc  = 1; // older kernels do not print num_xcc: one XCC

    node_exists = read_properties_file(path_join(node_dir, "properties"), std::data(node_fields),
                                       std::size(node_fields), &agent);
    if(!node_exists) return nullptr;

    agent.type = classify(agent);
    if(agent.type == ROCPROFILER_AGENT_TYPE_NONE)
    {
        ROCP_INFO << "topology: node " << node_index << " is neither a CPU nor a GPU; skipped";
        return nullptr;
    }

    agent.size      = sizeof(agent_t);
    agent.node_id   = node_index;
    agent.id.handle = uint64_t{node_index} + 1; // stable, unique and never 0
    agent.gpu_id    = read_gpu_id(node_dir);
    derive_compute_fields(agent);

    storage->mem_banks = read_sub_entries<rocprofiler_agent_mem_bank_t>(
        node_dir, "mem_banks", std::data(mem_bank_fields), std::size(mem_bank_fields));
    storage->caches = read_sub_entries<rocprofiler_agent_cache_t>(
        node_dir, "caches", std::data(cache_fields), std::size(cache_fields));
    storage->io_links = read_sub_entries<rocprofiler_agent_io_link_t>(
        node_dir, "io_links", std::data(io_link_fields), std::size(io_link_fields));
    make_names(*storage, read_first_line(path_join(node_dir, "name")));
    link_storage(*storage);
    return storage;
}

void
assign_logical_ids(topology& topo)
{
    int32_t cpu_count = 0;
    int32_t gpu_count = 0;
    int32_t index     = 0;
    for(auto& storage : topo.agents)
    {
        auto& agent           = storage->agent;
        agent.logical_node_id = index++;
        auto& type_count      = (agent.type == ROCPROFILER_AGENT_TYPE_CPU) ? cpu_count : gpu_count;
        agent.logical_node_type_id = type_count++;
    }
}
} // namespace

std::vector<const rocprofiler_agent_v0_t*>
topology::agent_pointers() const
{
    auto pointers = std::vector<const rocprofiler_agent_v0_t*>{};
    pointers.reserve(agents.size());
    for(const auto& storage : agents)
        pointers.push_back(&storage->agent);
    return pointers;
}

std::optional<std::string>
read_file(const std::string& path, size_t max_bytes)
{
    int fd = open_read_only(path);
    if(fd < 0) return std::nullopt;

    auto    text = std::string{};
    ssize_t used = read_bounded(fd, text, max_bytes);
    ::close(fd);
    if(used < 0) return std::nullopt; // e.g. EISDIR: a directory where a file should be

    if(text.size() > max_bytes)
    {
        // Keep complete lines only, so that a cut never turns "size 4096" into "size 40".
        text.resize(max_bytes);
        auto last_newline = text.rfind('\n');
        text.resize(last_newline == std::string::npos ? 0 : last_newline + 1);
        ROCP_WARNING << "topology: " << path << ": longer than " << max_bytes
                     << " bytes; the rest is ignored";
    }
    return text;
}

std::optional<uint64_t>
parse_decimal(std::string_view text, uint64_t max_value)
{
    if(text.empty()) return std::nullopt;
    uint64_t value = 0;
    for(char c : text)
    {
        if(c < '0' || c > '9') return std::nullopt;
        auto digit = static_cast<uint64_t>(c - '0');
        if(value > (max_value - digit) / 10) return std::nullopt; // value * 10 + digit > max
        value = value * 10 + digit;
    }
    return value;
}

parse_result
parse_properties(std::string_view text, const property_field* fields, size_t field_count,
                 void* object)
{
    auto   result      = parse_result{};
    size_t line_number = 0;
    while(!text.empty())
    {
        auto line_end = text.find('\n');
        auto line     = text.substr(0, line_end);
        text.remove_prefix(line_end == std::string_view::npos ? text.size() : line_end + 1);
        ++line_number;

        auto tokens = split_line(line);
        // Blank lines and keys we do not map are not errors: kernels add keys (and some,
        // like sibling_map, are not numbers).
        const auto* field = find_field(fields, field_count, tokens.key);
        if(tokens.key.empty() || field == nullptr) continue;

        auto value = parse_decimal(tokens.value, max_value_of(field->width));
        if(!value || !tokens.extra.empty())
        {
            if(result.bad_lines++ == 0) result.first_bad_line = line_number;
            continue;
        }
        store_value(object, *field, *value); // a later duplicate overwrites: last one wins
        ++result.good_lines;
    }
    return result;
}

std::string
gfx_name_from_target_version(uint32_t gfx_target_version)
{
    if(gfx_target_version == 0) return {};
    auto           major        = gfx_target_version / 10000;
    auto           minor        = (gfx_target_version / 100) % 100;
    auto           stepping     = gfx_target_version % 100;
    auto           name         = "gfx" + std::to_string(major) + std::to_string(minor);
    constexpr char hex_digits[] = "0123456789abcdef";
    if(stepping >= 16) name += hex_digits[stepping / 16];
    name += hex_digits[stepping % 16];
    return name;
}

uint32_t
family_id_from_target_version(uint32_t gfx_target_version)
{
    for(const auto& range : family_ranges)
        if(gfx_target_version >= range.first && gfx_target_version <= range.last)
            return range.family;
    return 0;
}

topology
read(const std::string& root)
{
    auto topo      = topology{};
    auto nodes_dir = path_join(root, "nodes");
    for(uint32_t node_index = 0; node_index < max_nodes; ++node_index)
    {
        bool node_exists = false;
        auto storage     = read_node(nodes_dir, node_index, node_exists);
        if(!node_exists) break; // nodes are numbered densely: the first gap ends the list
        if(storage) topo.agents.push_back(std::move(storage));
        if(node_index + 1 == max_nodes &&
           can_open(path_join(path_join(nodes_dir, std::to_string(max_nodes)), "properties")))
            ROCP_WARNING << "topology: more than " << max_nodes << " nodes; the rest are ignored";
    }
    assign_logical_ids(topo);
    ROCP_INFO << "topology: " << topo.agents.size() << " agent(s) under " << root;
    return topo;
}
} // namespace rocprofiler::topology
