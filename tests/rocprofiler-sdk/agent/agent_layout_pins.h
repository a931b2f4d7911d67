/* MIT License - see LICENSE. */
/*
 * The x86-64 layout of the agent structs (api-contract.md), as one X-macro list so that the
 * C99 test and the C++17 test assert exactly the same facts.
 *   SIZE(type, bytes)           sizeof(type) == bytes
 *   OFFSET(type, field, bytes)  offsetof(type, field) == bytes
 */
#ifndef ROCPROFILER_TESTS_AGENT_LAYOUT_PINS_H_
#define ROCPROFILER_TESTS_AGENT_LAYOUT_PINS_H_

#define ROCP_AGENT_LAYOUT_PINS(SIZE, OFFSET)                                                       \
    SIZE(rocprofiler_agent_id_t, 8)                                                                \
    SIZE(rocprofiler_dim3_t, 12)                                                                   \
    SIZE(rocprofiler_agent_type_t, 4)                                                              \
    SIZE(rocprofiler_agent_version_t, 4)                                                           \
    SIZE(rocprofiler_agent_mem_bank_t, 24)                                                         \
    OFFSET(rocprofiler_agent_mem_bank_t, heap_type, 0)                                             \
    OFFSET(rocprofiler_agent_mem_bank_t, flags, 4)                                                 \
    OFFSET(rocprofiler_agent_mem_bank_t, width, 8)                                                 \
    OFFSET(rocprofiler_agent_mem_bank_t, mem_clk_max, 12)                                          \
    OFFSET(rocprofiler_agent_mem_bank_t, size_in_bytes, 16)                                        \
    SIZE(rocprofiler_agent_cache_t, 40)                                                            \
    OFFSET(rocprofiler_agent_cache_t, processor_id_low, 0)                                         \
    OFFSET(rocprofiler_agent_cache_t, size, 8)                                                     \
    OFFSET(rocprofiler_agent_cache_t, level, 16)                                                   \
    OFFSET(rocprofiler_agent_cache_t, cache_line_size, 20)                                         \
    OFFSET(rocprofiler_agent_cache_t, cache_lines_per_tag, 24)                                     \
    OFFSET(rocprofiler_agent_cache_t, association, 28)                                             \
    OFFSET(rocprofiler_agent_cache_t, latency, 32)                                                 \
    OFFSET(rocprofiler_agent_cache_t, type, 36)                                                    \
    SIZE(rocprofiler_agent_io_link_t, 48)                                                          \
    OFFSET(rocprofiler_agent_io_link_t, type, 0)                                                   \
    OFFSET(rocprofiler_agent_io_link_t, version_major, 4)                                          \
    OFFSET(rocprofiler_agent_io_link_t, version_minor, 8)                                          \
    OFFSET(rocprofiler_agent_io_link_t, node_from, 12)                                             \
    OFFSET(rocprofiler_agent_io_link_t, node_to, 16)                                               \
    OFFSET(rocprofiler_agent_io_link_t, weight, 20)                                                \
    OFFSET(rocprofiler_agent_io_link_t, min_latency, 24)                                           \
    OFFSET(rocprofiler_agent_io_link_t, max_latency, 28)                                           \
    OFFSET(rocprofiler_agent_io_link_t, min_bandwidth, 32)                                         \
    OFFSET(rocprofiler_agent_io_link_t, max_bandwidth, 36)                                         \
    OFFSET(rocprofiler_agent_io_link_t, recommended_transfer_size, 40)                             \
    OFFSET(rocprofiler_agent_io_link_t, flags, 44)                                                 \
    SIZE(rocprofiler_agent_v0_t, 296)                                                              \
    OFFSET(rocprofiler_agent_v0_t, size, 0)                                                        \
    OFFSET(rocprofiler_agent_v0_t, id, 8)                                                          \
    OFFSET(rocprofiler_agent_v0_t, type, 16)                                                       \
    OFFSET(rocprofiler_agent_v0_t, cpu_cores_count, 20)                                            \
    OFFSET(rocprofiler_agent_v0_t, simd_count, 24)                                                 \
    OFFSET(rocprofiler_agent_v0_t, mem_banks_count, 28)                                            \
    OFFSET(rocprofiler_agent_v0_t, caches_count, 32)                                               \
    OFFSET(rocprofiler_agent_v0_t, io_links_count, 36)                                             \
    OFFSET(rocprofiler_agent_v0_t, cpu_core_id_base, 40)                                           \
    OFFSET(rocprofiler_agent_v0_t, simd_id_base, 44)                                               \
    OFFSET(rocprofiler_agent_v0_t, max_waves_per_simd, 48)                                         \
    OFFSET(rocprofiler_agent_v0_t, lds_size_in_kb, 52)                                             \
    OFFSET(rocprofiler_agent_v0_t, gds_size_in_kb, 56)                                             \
    OFFSET(rocprofiler_agent_v0_t, num_gws, 60)                                                    \
    OFFSET(rocprofiler_agent_v0_t, wave_front_size, 64)                                            \
    OFFSET(rocprofiler_agent_v0_t, num_xcc, 68)                                                    \
    OFFSET(rocprofiler_agent_v0_t, cu_count, 72)                                                   \
    OFFSET(rocprofiler_agent_v0_t, array_count, 76)                                                \
    OFFSET(rocprofiler_agent_v0_t, num_shader_banks, 80)                                           \
    OFFSET(rocprofiler_agent_v0_t, simd_arrays_per_engine, 84)                                     \
    OFFSET(rocprofiler_agent_v0_t, cu_per_simd_array, 88)                                          \
    OFFSET(rocprofiler_agent_v0_t, simd_per_cu, 92)                                                \
    OFFSET(rocprofiler_agent_v0_t, max_slots_scratch_cu, 96)                                       \
    OFFSET(rocprofiler_agent_v0_t, gfx_target_version, 100)                                        \
    OFFSET(rocprofiler_agent_v0_t, vendor_id, 104)                                                 \
    OFFSET(rocprofiler_agent_v0_t, device_id, 106)                                                 \
    OFFSET(rocprofiler_agent_v0_t, location_id, 108)                                               \
    OFFSET(rocprofiler_agent_v0_t, domain, 112)                                                    \
    OFFSET(rocprofiler_agent_v0_t, drm_render_minor, 116)                                          \
    OFFSET(rocprofiler_agent_v0_t, num_sdma_engines, 120)                                          \
    OFFSET(rocprofiler_agent_v0_t, num_sdma_xgmi_engines, 124)                                     \
    OFFSET(rocprofiler_agent_v0_t, num_sdma_queues_per_engine, 128)                                \
    OFFSET(rocprofiler_agent_v0_t, num_cp_queues, 132)                                             \
    OFFSET(rocprofiler_agent_v0_t, max_engine_clk_ccompute, 136)                                   \
    OFFSET(rocprofiler_agent_v0_t, max_engine_clk_fcompute, 140)                                   \
    OFFSET(rocprofiler_agent_v0_t, sdma_fw_version, 144)                                           \
    OFFSET(rocprofiler_agent_v0_t, fw_version, 148)                                                \
    OFFSET(rocprofiler_agent_v0_t, capability, 152)                                                \
    OFFSET(rocprofiler_agent_v0_t, cu_per_engine, 156)                                             \
    OFFSET(rocprofiler_agent_v0_t, max_waves_per_cu, 160)                                          \
    OFFSET(rocprofiler_agent_v0_t, family_id, 164)                                                 \
    OFFSET(rocprofiler_agent_v0_t, workgroup_max_size, 168)                                        \
    OFFSET(rocprofiler_agent_v0_t, grid_max_size, 172)                                             \
    OFFSET(rocprofiler_agent_v0_t, local_mem_size, 176)                                            \
    OFFSET(rocprofiler_agent_v0_t, hive_id, 184)                                                   \
    OFFSET(rocprofiler_agent_v0_t, gpu_id, 192)                                                    \
    OFFSET(rocprofiler_agent_v0_t, workgroup_max_dim, 200)                                         \
    OFFSET(rocprofiler_agent_v0_t, grid_max_dim, 212)                                              \
    OFFSET(rocprofiler_agent_v0_t, mem_banks, 224)                                                 \
    OFFSET(rocprofiler_agent_v0_t, caches, 232)                                                    \
    OFFSET(rocprofiler_agent_v0_t, io_links, 240)                                                  \
    OFFSET(rocprofiler_agent_v0_t, name, 248)                                                      \
    OFFSET(rocprofiler_agent_v0_t, vendor_name, 256)                                               \
    OFFSET(rocprofiler_agent_v0_t, product_name, 264)                                              \
    OFFSET(rocprofiler_agent_v0_t, model_name, 272)                                                \
    OFFSET(rocprofiler_agent_v0_t, node_id, 280)                                                   \
    OFFSET(rocprofiler_agent_v0_t, logical_node_id, 284)                                           \
    OFFSET(rocprofiler_agent_v0_t, logical_node_type_id, 288)                                      \
    OFFSET(rocprofiler_agent_v0_t, reserved_padding0, 292)

#endif /* ROCPROFILER_TESTS_AGENT_LAYOUT_PINS_H_ */
