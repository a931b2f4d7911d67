// MIT License - see LICENSE.
//
// Reads the KFD topology (/sys/class/kfd/kfd/topology, or a fake tree with the same layout)
// into agent descriptions that own everything they point at.
//
// Layout read, under `root`:
//   nodes/<N>/properties             "key value" lines, values decimal
//   nodes/<N>/gpu_id                 decimal; 0 or missing for CPU nodes
//   nodes/<N>/name                   e.g. "gfx90a"; empty for CPU nodes
//   nodes/<N>/mem_banks/<i>/properties
//   nodes/<N>/caches/<i>/properties
//   nodes/<N>/io_links/<i>/properties
//
// Files are read only with ::open/::read/::close: the KFD emulator interposes open() to
// redirect the sysfs tree, and any other way of reading (stdio, streams, stat, opendir)
// would bypass it. Everything is bounded (node and sub-entry counts, file sizes) so that a
// hostile or broken tree cannot cause unbounded work.
#pragma once

#include <rocprofiler-sdk/agent.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocprofiler::topology
{
// Bounds on the work done for one tree.
constexpr uint32_t max_nodes            = 1024;      // nodes/0 .. nodes/1023
constexpr uint32_t max_sub_entries      = 256;       // per mem_banks/, caches/, io_links/
constexpr size_t   max_file_bytes       = 64 * 1024; // bytes read from one file
constexpr char     default_sysfs_root[] = "/sys/class/kfd/kfd/topology";

// One agent and everything its pointers refer to. Neither copyable nor movable: `agent`
// points into the vectors and strings next to it.
struct agent_storage
{
    rocprofiler_agent_v0_t                    agent = {};
    std::vector<rocprofiler_agent_mem_bank_t> mem_banks;
    std::vector<rocprofiler_agent_cache_t>    caches;
    std::vector<rocprofiler_agent_io_link_t>  io_links;
    std::string                               name;
    std::string                               vendor_name;
    std::string                               product_name;
    std::string                               model_name;

    agent_storage()                                = default;
    agent_storage(const agent_storage&)            = delete;
    agent_storage(agent_storage&&)                 = delete;
    agent_storage& operator=(const agent_storage&) = delete;
    agent_storage& operator=(agent_storage&&)      = delete;
};

// Owning storage of the CPU and GPU agents of one tree, in node order. Moving a topology
// keeps every agent (and the pointers inside it) where it is.
struct topology
{
    std::vector<std::unique_ptr<agent_storage>> agents;

    // Pointers to the agents, in node order; valid while this topology lives.
    std::vector<const rocprofiler_agent_v0_t*> agent_pointers() const;
};

// Reads nodes/0, nodes/1, ... under `root` until a node's properties file cannot be opened
// (at most max_nodes). A missing root gives an empty topology: no driver is not an error.
//
// A node with cpu_cores_count > 0 is a CPU, else with simd_count > 0 a GPU; any other node
// is not an agent but keeps its number (node_id is always the folder index N).
// Property lines: unknown keys are ignored (the kernel adds keys over time). A line with a
// known key but a bad value (missing, not decimal, too large for the field, extra tokens)
// is skipped, so the field keeps its default or an earlier good line's value; each file
// with bad lines logs one warning. Duplicate keys: the last good line wins.
topology read(const std::string& root);

// ---- the pieces of read(), exposed for the tests ----

// Whole file (at most max_bytes; a longer file is cut after its last complete line within
// the limit, with a warning). nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::string& path, size_t max_bytes = max_file_bytes);

// How a property value is stored in its struct.
enum class field_width : uint8_t
{
    u16 = 2,
    u32 = 4,
    u64 = 8,
};

// One known property: its key and where its value goes in the struct being filled.
struct property_field
{
    std::string_view key;
    size_t           offset;
    field_width      width;
};

struct parse_result
{
    size_t good_lines     = 0; // lines with a known key and a valid value
    size_t bad_lines      = 0; // lines with a known key and a bad value (skipped)
    size_t first_bad_line = 0; // 1-based; 0 when there is none
};

// Parses "key value" lines of `text` into the struct at `object`, using `fields`.
parse_result parse_properties(std::string_view text, const property_field* fields,
                              size_t field_count, void* object);

// A decimal unsigned number that fits in `max_value`: digits only, at least one.
std::optional<uint64_t> parse_decimal(std::string_view text, uint64_t max_value);

// "gfx" + major + minor + stepping in hex, from a gfx_target_version such as 90010 ->
// "gfx90a"; empty for 0.
std::string gfx_name_from_target_version(uint32_t gfx_target_version);

// amdgpu family id (AMDGPU_FAMILY_* of amdgpu_drm.h) from a gfx_target_version; 0 when
// unknown.
uint32_t family_id_from_target_version(uint32_t gfx_target_version);
} // namespace rocprofiler::topology
