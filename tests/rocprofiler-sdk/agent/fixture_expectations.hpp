// MIT License - see LICENSE.
//
// What the committed fixture trees (fixtures/one_cpu_two_gpus, fixtures/cpu_only) must read
// as: every mapped field, checked against the values written in the fixture files.
#pragma once

#include <rocprofiler-sdk/agent.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rocprofiler::test
{
using agent_list = std::vector<const rocprofiler_agent_v0_t*>;

constexpr uint64_t fixture_gpu1_id = 45382;
constexpr uint64_t fixture_gpu2_id = 59054;

inline void
expect_fixture_cpu(const rocprofiler_agent_v0_t& cpu)
{
    EXPECT_EQ(cpu.size, sizeof(rocprofiler_agent_v0_t));
    EXPECT_EQ(cpu.type, ROCPROFILER_AGENT_TYPE_CPU);
    EXPECT_EQ(cpu.id.handle, 1u);
    EXPECT_EQ(cpu.node_id, 0u);
    EXPECT_EQ(cpu.logical_node_id, 0);
    EXPECT_EQ(cpu.logical_node_type_id, 0);
    EXPECT_EQ(cpu.gpu_id, 0u);
    EXPECT_EQ(cpu.cpu_cores_count, 64u);
    EXPECT_EQ(cpu.simd_count, 0u);
    EXPECT_EQ(cpu.cu_count, 64u); // CPU: one "compute unit" per core
    EXPECT_EQ(cpu.max_engine_clk_ccompute, 3700u);
    EXPECT_EQ(cpu.num_xcc, 1u); // absent in the file: one
    EXPECT_EQ(cpu.family_id, 0u);
    EXPECT_EQ(cpu.workgroup_max_size, 0u);
    EXPECT_EQ(cpu.grid_max_size, 0u);
    EXPECT_EQ(cpu.workgroup_max_dim.x, 0u);
    EXPECT_EQ(cpu.grid_max_dim.x, 0u);
    EXPECT_STREQ(cpu.name, "CPU"); // the kernel leaves a CPU's name file empty
    EXPECT_STREQ(cpu.vendor_name, "CPU");
    EXPECT_STREQ(cpu.product_name, "CPU");
    EXPECT_STREQ(cpu.model_name, "CPU");
    EXPECT_EQ(cpu.caches_count, 0u);
    EXPECT_EQ(cpu.caches, nullptr);

    ASSERT_EQ(cpu.mem_banks_count, 1u);
    ASSERT_NE(cpu.mem_banks, nullptr);
    EXPECT_EQ(cpu.mem_banks[0].heap_type, HSA_HEAPTYPE_SYSTEM);
    EXPECT_EQ(cpu.mem_banks[0].size_in_bytes, 540881428480u);
    EXPECT_EQ(cpu.mem_banks[0].flags.MemoryProperty, 0u);
    EXPECT_EQ(cpu.mem_banks[0].width, 72u);
    EXPECT_EQ(cpu.mem_banks[0].mem_clk_max, 3200u);
}

inline void
expect_io_link(const rocprofiler_agent_io_link_t& link, HSA_IOLINKTYPE type, uint32_t node_from,
               uint32_t node_to, uint32_t weight, uint32_t min_bandwidth, uint32_t max_bandwidth,
               uint32_t flags)
{
    EXPECT_EQ(link.type, type);
    EXPECT_EQ(link.version_major, 0u);
    EXPECT_EQ(link.version_minor, 0u);
    EXPECT_EQ(link.node_from, node_from);
    EXPECT_EQ(link.node_to, node_to);
    EXPECT_EQ(link.weight, weight);
    EXPECT_EQ(link.min_latency, 0u);
    EXPECT_EQ(link.max_latency, 0u);
    EXPECT_EQ(link.min_bandwidth, min_bandwidth);
    EXPECT_EQ(link.max_bandwidth, max_bandwidth);
    EXPECT_EQ(link.recommended_transfer_size, 0u);
    EXPECT_EQ(link.flags.LinkProperty, flags);
}

inline void
expect_gpu_limits(const rocprofiler_agent_v0_t& gpu)
{
    EXPECT_EQ(gpu.workgroup_max_size, 1024u);
    EXPECT_EQ(gpu.workgroup_max_dim.x, 1024u);
    EXPECT_EQ(gpu.workgroup_max_dim.y, 1024u);
    EXPECT_EQ(gpu.workgroup_max_dim.z, 1024u);
    EXPECT_EQ(gpu.grid_max_size, std::numeric_limits<uint32_t>::max());
    EXPECT_EQ(gpu.grid_max_dim.x, std::numeric_limits<uint32_t>::max());
    EXPECT_EQ(gpu.grid_max_dim.y, std::numeric_limits<uint16_t>::max());
    EXPECT_EQ(gpu.grid_max_dim.z, std::numeric_limits<uint16_t>::max());
}

// fixtures/one_cpu_two_gpus/nodes/1: gfx90a (MI210-like).
inline void
expect_fixture_gpu1(const rocprofiler_agent_v0_t& gpu)
{
    EXPECT_EQ(gpu.size, sizeof(rocprofiler_agent_v0_t));
    EXPECT_EQ(gpu.type, ROCPROFILER_AGENT_TYPE_GPU);
    EXPECT_EQ(gpu.id.handle, 2u);
    EXPECT_EQ(gpu.node_id, 1u);
    EXPECT_EQ(gpu.logical_node_id, 1);
    EXPECT_EQ(gpu.logical_node_type_id, 0);
    EXPECT_EQ(gpu.gpu_id, fixture_gpu1_id);
    EXPECT_EQ(gpu.cpu_cores_count, 0u);
    EXPECT_EQ(gpu.simd_count, 416u);
    EXPECT_EQ(gpu.cpu_core_id_base, 0u);
    EXPECT_EQ(gpu.simd_id_base, 2147487744u);
    EXPECT_EQ(gpu.max_waves_per_simd, 8u);
    EXPECT_EQ(gpu.lds_size_in_kb, 64u);
    EXPECT_EQ(gpu.gds_size_in_kb, 0u);
    EXPECT_EQ(gpu.num_gws, 64u);
    EXPECT_EQ(gpu.wave_front_size, 64u);
    EXPECT_EQ(gpu.num_xcc, 1u);
    EXPECT_EQ(gpu.array_count, 8u);
    EXPECT_EQ(gpu.simd_arrays_per_engine, 1u);
    EXPECT_EQ(gpu.cu_per_simd_array, 13u);
    EXPECT_EQ(gpu.simd_per_cu, 4u);
    EXPECT_EQ(gpu.max_slots_scratch_cu, 32u);
    EXPECT_EQ(gpu.gfx_target_version, 90010u);
    EXPECT_EQ(gpu.vendor_id, 4098u);
    EXPECT_EQ(gpu.device_id, 29711u);
    EXPECT_EQ(gpu.location_id, 768u);
    EXPECT_EQ(gpu.domain, 0u);
    EXPECT_EQ(gpu.drm_render_minor, 128u);
    EXPECT_EQ(gpu.hive_id, 0u);
    EXPECT_EQ(gpu.num_sdma_engines, 2u);
    EXPECT_EQ(gpu.num_sdma_xgmi_engines, 6u);
    EXPECT_EQ(gpu.num_sdma_queues_per_engine, 8u);
    EXPECT_EQ(gpu.num_cp_queues, 30u);
    EXPECT_EQ(gpu.max_engine_clk_fcompute, 1700u);
    EXPECT_EQ(gpu.max_engine_clk_ccompute, 3700u);
    EXPECT_EQ(gpu.local_mem_size, 0u);
    EXPECT_EQ(gpu.fw_version.Value, 78u);
    EXPECT_EQ(gpu.sdma_fw_version.Value, 8u);
    EXPECT_EQ(gpu.capability.Value, 746039936u);
    // Derived.
    EXPECT_EQ(gpu.cu_count, 104u);        // 416 / 4
    EXPECT_EQ(gpu.num_shader_banks, 8u);  // 8 / 1
    EXPECT_EQ(gpu.cu_per_engine, 13u);    // 104 / 8
    EXPECT_EQ(gpu.max_waves_per_cu, 32u); // 4 * 8
    EXPECT_EQ(gpu.family_id, 141u);       // AMDGPU_FAMILY_AI
    expect_gpu_limits(gpu);
    EXPECT_STREQ(gpu.name, "gfx90a");
    EXPECT_STREQ(gpu.vendor_name, "AMD");
    EXPECT_STREQ(gpu.product_name, "gfx90a");
    EXPECT_STREQ(gpu.model_name, "gfx90a");

    ASSERT_EQ(gpu.mem_banks_count, 1u);
    ASSERT_NE(gpu.mem_banks, nullptr);
    EXPECT_EQ(gpu.mem_banks[0].heap_type, HSA_HEAPTYPE_FRAME_BUFFER_PUBLIC);
    EXPECT_EQ(gpu.mem_banks[0].size_in_bytes, 68702699520u);
    EXPECT_EQ(gpu.mem_banks[0].flags.MemoryProperty, 0u);
    EXPECT_EQ(gpu.mem_banks[0].width, 4096u);
    EXPECT_EQ(gpu.mem_banks[0].mem_clk_max, 1600u);

    ASSERT_EQ(gpu.caches_count, 2u);
    ASSERT_NE(gpu.caches, nullptr);
    EXPECT_EQ(gpu.caches[0].processor_id_low, 2147487744u);
    EXPECT_EQ(gpu.caches[0].level, 1u);
    EXPECT_EQ(gpu.caches[0].size, 16u); // KiB, as the kernel prints it
    EXPECT_EQ(gpu.caches[0].cache_line_size, 64u);
    EXPECT_EQ(gpu.caches[0].cache_lines_per_tag, 1u);
    EXPECT_EQ(gpu.caches[0].association, 4u);
    EXPECT_EQ(gpu.caches[0].latency, 1u);
    EXPECT_EQ(gpu.caches[0].type.Value, 5u);
    EXPECT_EQ(gpu.caches[0].type.ui32.Data, 1u);
    EXPECT_EQ(gpu.caches[0].type.ui32.HSACU, 0u);
    EXPECT_EQ(gpu.caches[1].level, 2u);
    EXPECT_EQ(gpu.caches[1].size, 8192u);
    EXPECT_EQ(gpu.caches[1].cache_line_size, 128u);
    EXPECT_EQ(gpu.caches[1].association, 16u);

    ASSERT_EQ(gpu.io_links_count, 1u);
    ASSERT_NE(gpu.io_links, nullptr);
    expect_io_link(gpu.io_links[0], HSA_IOLINKTYPE_PCIEXPRESS, 1, 0, 20, 312, 64000, 1);
}

// fixtures/one_cpu_two_gpus/nodes/2: gfx942 (MI300X-like) whose name file says
// "ip discovery", as recent kernels write.
inline void
expect_fixture_gpu2(const rocprofiler_agent_v0_t& gpu)
{
    EXPECT_EQ(gpu.type, ROCPROFILER_AGENT_TYPE_GPU);
    EXPECT_EQ(gpu.id.handle, 3u);
    EXPECT_EQ(gpu.node_id, 2u);
    EXPECT_EQ(gpu.logical_node_id, 2);
    EXPECT_EQ(gpu.logical_node_type_id, 1);
    EXPECT_EQ(gpu.gpu_id, fixture_gpu2_id);
    EXPECT_EQ(gpu.simd_count, 1216u);
    EXPECT_EQ(gpu.simd_id_base, 2147491840u);
    EXPECT_EQ(gpu.array_count, 32u);
    EXPECT_EQ(gpu.cu_per_simd_array, 10u);
    EXPECT_EQ(gpu.gfx_target_version, 90402u);
    EXPECT_EQ(gpu.device_id, 29857u);
    EXPECT_EQ(gpu.location_id, 4352u);
    EXPECT_EQ(gpu.domain, 1u);
    EXPECT_EQ(gpu.drm_render_minor, 136u);
    EXPECT_EQ(gpu.hive_id, 5555123412341234u);
    EXPECT_EQ(gpu.num_sdma_xgmi_engines, 14u);
    EXPECT_EQ(gpu.num_cp_queues, 120u);
    EXPECT_EQ(gpu.num_xcc, 8u);
    EXPECT_EQ(gpu.max_engine_clk_fcompute, 2100u);
    EXPECT_EQ(gpu.fw_version.Value, 151u);
    EXPECT_EQ(gpu.sdma_fw_version.Value, 19u);
    EXPECT_EQ(gpu.capability.Value, 1009272448u);
    EXPECT_EQ(gpu.cu_count, 304u);
    EXPECT_EQ(gpu.num_shader_banks, 32u);
    EXPECT_EQ(gpu.cu_per_engine, 9u); // 304 / 32, rounded down
    EXPECT_EQ(gpu.family_id, 141u);
    expect_gpu_limits(gpu);
    EXPECT_STREQ(gpu.name, "gfx942"); // from gfx_target_version
    EXPECT_STREQ(gpu.vendor_name, "AMD");
    EXPECT_STREQ(gpu.product_name, "ip discovery");
    EXPECT_STREQ(gpu.model_name, "ip discovery");
    EXPECT_EQ(gpu.caches_count, 0u);
    EXPECT_EQ(gpu.caches, nullptr);

    ASSERT_EQ(gpu.mem_banks_count, 1u);
    EXPECT_EQ(gpu.mem_banks[0].size_in_bytes, 205822885888u);
    EXPECT_EQ(gpu.mem_banks[0].width, 8192u);
    EXPECT_EQ(gpu.mem_banks[0].mem_clk_max, 1300u);

    ASSERT_EQ(gpu.io_links_count, 2u);
    expect_io_link(gpu.io_links[0], HSA_IOLINKTYPE_PCIEXPRESS, 2, 0, 20, 312, 64000, 1);
    expect_io_link(gpu.io_links[1], HSA_IOLINK_TYPE_XGMI, 2, 1, 15, 50000, 50000, 1);
}

inline void
expect_one_cpu_two_gpus(const agent_list& agents)
{
    ASSERT_EQ(agents.size(), 3u);
    expect_fixture_cpu(*agents[0]);
    ASSERT_EQ(agents[0]->io_links_count, 2u);
    expect_io_link(agents[0]->io_links[0], HSA_IOLINKTYPE_PCIEXPRESS, 0, 1, 20, 312, 64000, 3);
    expect_io_link(agents[0]->io_links[1], HSA_IOLINKTYPE_PCIEXPRESS, 0, 2, 20, 312, 64000, 3);
    expect_fixture_gpu1(*agents[1]);
    expect_fixture_gpu2(*agents[2]);
}

inline void
expect_cpu_only(const agent_list& agents)
{
    ASSERT_EQ(agents.size(), 1u);
    expect_fixture_cpu(*agents[0]);
    EXPECT_EQ(agents[0]->io_links_count, 0u);
    EXPECT_EQ(agents[0]->io_links, nullptr);
}
} // namespace rocprofiler::test
