// MIT License - see LICENSE.
#include "topology.hpp"

#include "common/kfd_abi.hpp"
#include "numbers.hpp"
#include "real_libc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace kfd_emu
{
namespace
{
// The real topology is reached through this symlink target too.
constexpr const char* topology_roots[] = {
    rocprofiler::kfd_abi::topology_root,
    "/sys/devices/virtual/kfd/kfd/topology",
};

// Plausible properties of a few GPU generations (MI100, MI250X GCD, MI300X, RX 7900 XTX).
struct gpu_model
{
    const char* name;
    unsigned    simd_count;
    unsigned    device_id;
    unsigned    num_xcc;
    unsigned    wave_front_size;
    uint64_t    local_mem_size;
    unsigned    max_engine_clk_fcompute;
};

constexpr gpu_model gpu_models[] = {
    {"gfx908", 480, 0x738c, 1, 64, 34359738368ull, 1502},
    {"gfx90a", 416, 0x7408, 1, 64, 68702699520ull, 1700},
    {"gfx942", 1216, 0x74a1, 8, 64, 206141652992ull, 2100},
    {"gfx1100", 192, 0x744c, 1, 32, 25753026560ull, 2500},
};

constexpr gpu_model default_model = {"", 256, 0x7400, 1, 64, 34359738368ull, 1800};

const gpu_model&
find_model(const std::string& name)
{
    for(const auto& model : gpu_models)
        if(name == model.name) return model;
    return default_model;
}

int
hex_digit(char c)
{
    if(c >= '0' && c <= '9') return c - '0';
    if(c >= 'a' && c <= 'f') return c - 'a' + 10;
    if(c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool
make_dir(topology_tree& tree, const std::string& path)
{
    if(mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return false;
    tree.files.push_back(path);
    return true;
}

bool
make_file(topology_tree& tree, const std::string& path, const std::string& text)
{
    int fd = libc().open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if(fd < 0) return false;
    tree.files.push_back(path);
    bool ok = write_all(fd, text.data(), text.size());
    return libc().close(fd) == 0 && ok;
}

// "key value\n" lines.
struct properties
{
    std::string text;
    properties& add(const char* key, uint64_t value)
    {
        text += key;
        text += ' ';
        text += std::to_string(value);
        text += '\n';
        return *this;
    }
};

std::string
cpu_properties(size_t gpu_count)
{
    long       cores = sysconf(_SC_NPROCESSORS_ONLN);
    properties p;
    p.add("cpu_cores_count", cores > 0 ? static_cast<uint64_t>(cores) : 64)
        .add("simd_count", 0)
        .add("mem_banks_count", 1)
        .add("caches_count", 0)
        .add("io_links_count", gpu_count)
        .add("p2p_links_count", 0)
        .add("cpu_core_id_base", 0)
        .add("simd_id_base", 0)
        .add("max_waves_per_simd", 0)
        .add("lds_size_in_kb", 0)
        .add("gds_size_in_kb", 0)
        .add("num_gws", 0)
        .add("wave_front_size", 0)
        .add("array_count", 0)
        .add("simd_arrays_per_engine", 0)
        .add("cu_per_simd_array", 0)
        .add("simd_per_cu", 0)
        .add("max_slots_scratch_cu", 0)
        .add("gfx_target_version", 0)
        .add("vendor_id", 0)
        .add("device_id", 0)
        .add("location_id", 0)
        .add("domain", 0)
        .add("drm_render_minor", 0)
        .add("hive_id", 0)
        .add("num_sdma_engines", 0)
        .add("num_sdma_xgmi_engines", 0)
        .add("num_sdma_queues_per_engine", 0)
        .add("num_cp_queues", 0)
        .add("max_engine_clk_ccompute", 3000)
        .add("local_mem_size", 0)
        .add("fw_version", 0)
        .add("capability", 0)
        .add("debug_prop", 0)
        .add("sdma_fw_version", 0)
        .add("unique_id", 0)
        .add("num_xcc", 0);
    return p.text;
}

std::string
gpu_properties(const gpu_spec& gpu, size_t index)
{
    const gpu_model& model = find_model(gpu.name);
    unsigned         bus   = 0x03 + 0x10 * static_cast<unsigned>(index);
    properties       p;
    p.add("cpu_cores_count", 0)
        .add("simd_count", model.simd_count)
        .add("mem_banks_count", 1)
        .add("caches_count", 0)
        .add("io_links_count", 1)
        .add("p2p_links_count", 0)
        .add("cpu_core_id_base", 0)
        .add("simd_id_base", 2147487744ull + 256 * index)
        .add("max_waves_per_simd", 8)
        .add("lds_size_in_kb", 64)
        .add("gds_size_in_kb", 0)
        .add("num_gws", 64)
        .add("wave_front_size", model.wave_front_size)
        .add("array_count", 8 * model.num_xcc)
        .add("simd_arrays_per_engine", 1)
        .add("cu_per_simd_array", model.simd_count / (4 * 8 * model.num_xcc))
        .add("simd_per_cu", 4)
        .add("max_slots_scratch_cu", 32)
        .add("gfx_target_version", gfx_target_version(gpu.name))
        .add("vendor_id", 4098)
        .add("device_id", model.device_id)
        .add("location_id", bus << 8)
        .add("domain", 0)
        .add("drm_render_minor", 128 + index)
        .add("hive_id", 0)
        .add("num_sdma_engines", 2)
        .add("num_sdma_xgmi_engines", 0)
        .add("num_sdma_queues_per_engine", 8)
        .add("num_cp_queues", 24)
        .add("max_engine_clk_fcompute", model.max_engine_clk_fcompute)
        .add("local_mem_size", model.local_mem_size)
        .add("fw_version", 78)
        .add("capability", 746039936)
        .add("debug_prop", 1495)
        .add("sdma_fw_version", 19)
        .add("unique_id", 0x4f6b000000000000ull + gpu.gpu_id)
        .add("num_xcc", model.num_xcc)
        .add("max_engine_clk_ccompute", 3000);
    return p.text;
}

std::string
mem_bank_properties(bool gpu, uint64_t size)
{
    properties p;
    // HSA_HEAPTYPE_SYSTEM = 0, HSA_HEAPTYPE_FRAME_BUFFER_PRIVATE = 1.
    p.add("heap_type", gpu ? 1 : 0)
        .add("size_in_bytes", size)
        .add("flags", 0)
        .add("width", gpu ? 4096 : 64)
        .add("mem_clk_max", gpu ? 1600 : 3200);
    return p.text;
}

std::string
io_link_properties(size_t from, size_t to)
{
    properties p;
    // HSA_IOLINKTYPE_PCIEXPRESS = 2.
    p.add("type", 2)
        .add("version_major", 0)
        .add("version_minor", 0)
        .add("node_from", from)
        .add("node_to", to)
        .add("weight", 20)
        .add("min_latency", 0)
        .add("max_latency", 0)
        .add("min_bandwidth", 312)
        .add("max_bandwidth", 64000)
        .add("recommended_transfer_size", 0)
        .add("recommended_sdma_engine_id_mask", 0)
        .add("flags", 1);
    return p.text;
}

bool
write_node(topology_tree& tree, const std::string& nodes, size_t node, const std::string& gpu_id,
           const std::string& name, const std::string& props, const std::string& bank,
           const std::vector<std::string>& links)
{
    std::string dir = nodes + "/" + std::to_string(node);
    bool        ok  = make_dir(tree, dir) && make_file(tree, dir + "/gpu_id", gpu_id) &&
              make_file(tree, dir + "/name", name) && make_file(tree, dir + "/properties", props) &&
              make_dir(tree, dir + "/mem_banks") && make_dir(tree, dir + "/mem_banks/0") &&
              make_file(tree, dir + "/mem_banks/0/properties", bank) &&
              make_dir(tree, dir + "/caches") && make_dir(tree, dir + "/io_links");
    for(size_t i = 0; ok && i < links.size(); ++i)
    {
        std::string link = dir + "/io_links/" + std::to_string(i);
        ok               = make_dir(tree, link) && make_file(tree, link + "/properties", links[i]);
    }
    return ok;
}
// Removes a folder with everything in it, never following a symbolic link (our trees are
// a few levels deep; depth bounds the recursion).
void
remove_tree(const std::string& path, int depth)
{
    if(depth > 0)
        if(DIR* dir = opendir(path.c_str()))
        {
            while(dirent* entry = readdir(dir))
            {
                std::string name = entry->d_name;
                if(name == "." || name == "..") continue;
                std::string child = path + "/" + name;
                struct stat st
                {
                };
                if(lstat(child.c_str(), &st) != 0) continue;
                if(S_ISDIR(st.st_mode))
                    remove_tree(child, depth - 1);
                else
                    unlink(child.c_str());
            }
            closedir(dir);
        }
    rmdir(path.c_str());
}

// Folders "kfd-emulator-<pid>-XXXXXX" of ours whose process died without removing them
// (killed by a signal, _exit): removed when the user's next emulated process starts.
void
remove_stale_topologies(const std::string& base)
{
    DIR* dir = opendir(base.c_str());
    if(dir == nullptr) return;
    const std::string prefix = "kfd-emulator-";
    while(dirent* entry = readdir(dir))
    {
        std::string name = entry->d_name;
        if(name.compare(0, prefix.size(), prefix) != 0) continue;
        std::string_view rest(name.c_str() + prefix.size());
        uint64_t         pid    = 0;
        size_t           digits = 0;
        if(!parse_number_prefix(rest, INT32_MAX, pid, digits) || pid == 0 ||
           rest.substr(digits, 1) != "-")
            continue;
        std::string path = base + "/" + name;
        struct stat st
        {
        };
        if(lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
        if(kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue; // alive, or unknown
        remove_tree(path, 8);
    }
    closedir(dir);
}
} // namespace

unsigned
gfx_target_version(const std::string& name)
{
    // gfx<major><minor hex><stepping hex>: the last two characters are minor and stepping.
    if(name.size() < 6 || name.compare(0, 3, "gfx") != 0) return 0;
    std::string digits = name.substr(3);
    int         minor  = hex_digit(digits[digits.size() - 2]);
    int         step   = hex_digit(digits[digits.size() - 1]);
    std::string major  = digits.substr(0, digits.size() - 2);
    uint64_t    value  = 0;
    if(minor < 0 || step < 0 || !parse_number(major, 10, 99999, value)) return 0;
    return static_cast<unsigned>(value) * 10000 + static_cast<unsigned>(minor) * 100 +
           static_cast<unsigned>(step);
}

bool
write_topology(const config& cfg, topology_tree& tree, std::string& error)
{
    const char* tmp = std::getenv("TMPDIR");
    std::string base(tmp && *tmp ? tmp : "/tmp");
    remove_stale_topologies(base);
    // The pid in the name lets a later process remove the folder if this one dies first.
    std::string templ = base + "/kfd-emulator-" + std::to_string(getpid()) + "-XXXXXX";
    if(mkdtemp(templ.data()) == nullptr)
    {
        error = "cannot create a topology folder under " + base + ": " + std::strerror(errno);
        return false;
    }
    tree.root = templ;
    tree.files.clear();

    std::string nodes = tree.root + "/nodes";
    bool        ok    = make_file(tree, tree.root + "/generation_id", "1\n") &&
              make_file(tree, tree.root + "/system_properties",
                        "platform_oem 0\nplatform_id 0\nplatform_rev 0\n") &&
              make_dir(tree, nodes);

    std::vector<std::string> cpu_links;
    for(size_t i = 0; i < cfg.gpus.size(); ++i)
        cpu_links.push_back(io_link_properties(0, i + 1));
    ok = ok && write_node(tree, nodes, 0, "0\n", "", cpu_properties(cfg.gpus.size()),
                          mem_bank_properties(false, 270049185792ull), cpu_links);

    for(size_t i = 0; ok && i < cfg.gpus.size(); ++i)
    {
        const gpu_spec& gpu = cfg.gpus[i];
        ok = write_node(tree, nodes, i + 1, std::to_string(gpu.gpu_id) + "\n", gpu.name + "\n",
                        gpu_properties(gpu, i),
                        mem_bank_properties(true, find_model(gpu.name).local_mem_size),
                        {io_link_properties(i + 1, 0)});
    }
    if(!ok)
    {
        error = "cannot write the topology under " + tree.root + ": " + std::strerror(errno);
        remove_topology(tree);
        return false;
    }
    return true;
}

void
remove_topology(const topology_tree& tree)
{
    if(tree.root.empty()) return;
    for(auto it = tree.files.rbegin(); it != tree.files.rend(); ++it)
        if(unlink(it->c_str()) != 0) rmdir(it->c_str());
    rmdir(tree.root.c_str());
}

bool
redirect_topology_path(const char* path, const std::string& root, std::string& redirected)
{
    if(path == nullptr || root.empty()) return false;
    for(const char* prefix : topology_roots)
    {
        size_t n = std::strlen(prefix);
        if(std::strncmp(path, prefix, n) != 0 || (path[n] != '\0' && path[n] != '/')) continue;
        redirected = root + (path + n);
        return true;
    }
    return false;
}
} // namespace kfd_emu
