/* MIT License - see LICENSE. */
/**
 * @file agent.h
 * @brief Agents: the CPU and GPU nodes of the KFD topology
 *        (/sys/class/kfd/kfd/topology, or $ROCPROFILER_KFD_TOPOLOGY_ROOT).
 */
#ifndef ROCPROFILER_SDK_AGENT_H_
#define ROCPROFILER_SDK_AGENT_H_

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

#include <hsakmttypes.h>

ROCPROFILER_EXTERN_C_INIT

/** A cache of an agent (from caches/<i>/properties). */
typedef struct rocprofiler_agent_cache_t
{
    uint64_t     processor_id_low;
    uint64_t     size; /**< KiB, as the kernel reports it */
    uint32_t     level;
    uint32_t     cache_line_size;
    uint32_t     cache_lines_per_tag;
    uint32_t     association;
    uint32_t     latency;
    HsaCacheType type;
} rocprofiler_agent_cache_t;

/** A link between two nodes (from io_links/<i>/properties). */
typedef struct rocprofiler_agent_io_link_t
{
    HSA_IOLINKTYPE   type;
    uint32_t         version_major;
    uint32_t         version_minor;
    uint32_t         node_from;
    uint32_t         node_to;
    uint32_t         weight;
    uint32_t         min_latency;
    uint32_t         max_latency;
    uint32_t         min_bandwidth;
    uint32_t         max_bandwidth;
    uint32_t         recommended_transfer_size;
    HSA_LINKPROPERTY flags;
} rocprofiler_agent_io_link_t;

/** A memory bank of an agent (from mem_banks/<i>/properties). */
typedef struct rocprofiler_agent_mem_bank_t
{
    HSA_HEAPTYPE       heap_type;
    HSA_MEMORYPROPERTY flags;
    uint32_t           width;
    uint32_t           mem_clk_max;
    uint64_t           size_in_bytes;
} rocprofiler_agent_mem_bank_t;

/** Version 0 of the agent description (296 bytes). */
typedef struct rocprofiler_agent_v0_t
{
    uint64_t                 size; /**< sizeof(rocprofiler_agent_v0_t) */
    rocprofiler_agent_id_t   id;
    rocprofiler_agent_type_t type;
    uint32_t                 cpu_cores_count;
    uint32_t                 simd_count;
    uint32_t                 mem_banks_count;
    uint32_t                 caches_count;
    uint32_t                 io_links_count;
    uint32_t                 cpu_core_id_base;
    uint32_t                 simd_id_base;
    uint32_t                 max_waves_per_simd;
    uint32_t                 lds_size_in_kb;
    uint32_t                 gds_size_in_kb;
    uint32_t                 num_gws;
    uint32_t                 wave_front_size;
    uint32_t                 num_xcc;
    uint32_t                 cu_count;
    uint32_t                 array_count;
    uint32_t                 num_shader_banks;
    uint32_t                 simd_arrays_per_engine;
    uint32_t                 cu_per_simd_array;
    uint32_t                 simd_per_cu;
    uint32_t                 max_slots_scratch_cu;
    uint32_t                 gfx_target_version;
    uint16_t                 vendor_id;
    uint16_t                 device_id;
    uint32_t                 location_id;
    uint32_t                 domain;
    uint32_t                 drm_render_minor;
    uint32_t                 num_sdma_engines;
    uint32_t                 num_sdma_xgmi_engines;
    uint32_t                 num_sdma_queues_per_engine;
    uint32_t                 num_cp_queues;
    uint32_t                 max_engine_clk_ccompute;
    uint32_t                 max_engine_clk_fcompute;
    HSA_ENGINE_VERSION       sdma_fw_version;
    HSA_ENGINE_ID            fw_version;
    HSA_CAPABILITY           capability;
    uint32_t                 cu_per_engine;
    uint32_t                 max_waves_per_cu;
    uint32_t                 family_id;
    uint32_t                 workgroup_max_size;
    uint32_t                 grid_max_size;
    uint64_t                 local_mem_size;
    uint64_t                 hive_id;
    uint64_t                 gpu_id; /**< KFD gpu_id: the node id used in page-migration records */
    rocprofiler_dim3_t       workgroup_max_dim;
    rocprofiler_dim3_t       grid_max_dim;
    const rocprofiler_agent_mem_bank_t* mem_banks;
    const rocprofiler_agent_cache_t*    caches;
    const rocprofiler_agent_io_link_t*  io_links;
    const char*                         name;         /**< e.g. "gfx90a"; never NULL */
    const char*                         vendor_name;  /**< never NULL */
    const char*                         product_name; /**< never NULL */
    const char*                         model_name;   /**< never NULL */
    uint32_t                            node_id;      /**< topology node index */
    int32_t logical_node_id;      /**< index among all agents, in node order */
    int32_t logical_node_type_id; /**< index among agents of the same type */
    int32_t reserved_padding0;
} rocprofiler_agent_v0_t;

/** The current agent description. */
typedef rocprofiler_agent_v0_t rocprofiler_agent_t;

/** Receives the agents: @p agents is an array of @p num_agents pointers to structs of the
 *  requested version, valid until finalization. */
typedef rocprofiler_status_t (*rocprofiler_query_available_agents_cb_t)(
    rocprofiler_agent_version_t version,
    const void**                agents,
    size_t                      num_agents,
    void*                       user_data);

/**
 * @brief Calls @p callback once with every CPU and GPU agent (possibly none).
 * @param agent_size sizeof the struct the caller expects.
 * @return the callback's status; INVALID_ARGUMENT (NULL callback, version other than
 *         VERSION_0); INCOMPATIBLE_ABI (@p agent_size larger than this library's struct).
 */
rocprofiler_status_t
rocprofiler_query_available_agents(rocprofiler_agent_version_t             version,
                                   rocprofiler_query_available_agents_cb_t callback,
                                   size_t                                  agent_size,
                                   void* user_data) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI

#endif /* ROCPROFILER_SDK_AGENT_H_ */
