/* MIT License - see LICENSE. */
/**
 * @file fwd.h
 * @brief Scalar types, handles, enumerations and small structs used across the API.
 *
 * Values and layouts match rocprofiler-sdk 0.x so that tools built against it compile and
 * run unchanged.
 */
#ifndef ROCPROFILER_SDK_FWD_H_
#define ROCPROFILER_SDK_FWD_H_

#include <rocprofiler-sdk/defines.h>

#include <stddef.h>
#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

/** Status code returned by every API function. */
typedef enum rocprofiler_status_t /* NOLINT */
{
    ROCPROFILER_STATUS_SUCCESS = 0,                      /**< no error */
    ROCPROFILER_STATUS_ERROR,                            /**< generic failure */
    ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND,          /**< unknown context id */
    ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND,           /**< unknown buffer id */
    ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND,             /**< unknown tracing kind */
    ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND,        /**< unknown operation of a kind */
    ROCPROFILER_STATUS_ERROR_THREAD_NOT_FOUND,           /**< unknown callback thread */
    ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND,            /**< unknown agent */
    ROCPROFILER_STATUS_ERROR_COUNTER_NOT_FOUND,          /**< unknown counter */
    ROCPROFILER_STATUS_ERROR_CONTEXT_ERROR,              /**< context cannot be used */
    ROCPROFILER_STATUS_ERROR_CONTEXT_INVALID,            /**< context configuration invalid */
    ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_STARTED,        /**< context was never started */
    ROCPROFILER_STATUS_ERROR_CONTEXT_CONFLICT,           /**< context conflicts with another */
    ROCPROFILER_STATUS_ERROR_BUFFER_BUSY,                /**< buffer is in use */
    ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED, /**< service configured twice */
    ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED,       /**< only allowed while initializing */
    ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED,            /**< not supported by this library */
    ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI,           /**< struct size/version mismatch */
    ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT,           /**< bad argument */
    ROCPROFILER_STATUS_ERROR_METRIC_NOT_VALID_FOR_AGENT, /**< metric not valid for agent */
    ROCPROFILER_STATUS_ERROR_FINALIZED,                  /**< library already finalized */
    ROCPROFILER_STATUS_ERROR_HSA_NOT_LOADED,             /**< HSA runtime not loaded */
    ROCPROFILER_STATUS_ERROR_DIM_NOT_FOUND,              /**< unknown dimension */
    ROCPROFILER_STATUS_ERROR_PROFILE_COUNTER_NOT_FOUND,  /**< counter not in profile */
    ROCPROFILER_STATUS_ERROR_AST_GENERATION_FAILED,      /**< counter expression failed */
    ROCPROFILER_STATUS_ERROR_AST_NOT_FOUND,              /**< counter expression missing */
    ROCPROFILER_STATUS_ERROR_AQL_NO_EVENT_COORD,         /**< AQL event coordinate missing */
    ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_KERNEL,        /**< kernel driver too old */
    ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES,           /**< resources exhausted */
    ROCPROFILER_STATUS_ERROR_PROFILE_NOT_FOUND,          /**< unknown profile */
    ROCPROFILER_STATUS_ERROR_AGENT_DISPATCH_CONFLICT,    /**< agent/dispatch profiling clash */
    ROCPROFILER_STATUS_INTERNAL_NO_AGENT_CONTEXT,        /**< internal: no agent context */
    ROCPROFILER_STATUS_ERROR_SAMPLE_RATE_EXCEEDED,       /**< sample rate too high */
    ROCPROFILER_STATUS_ERROR_NO_PROFILE_QUEUE,           /**< no profile queue */
    ROCPROFILER_STATUS_ERROR_NO_HARDWARE_COUNTERS,       /**< no hardware counters */
    ROCPROFILER_STATUS_ERROR_AGENT_MISMATCH,             /**< agent mismatch */
    ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE,              /**< service unavailable here */
    ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT,           /**< exceeds a hardware limit */
    ROCPROFILER_STATUS_ERROR_AGENT_ARCH_NOT_SUPPORTED,   /**< agent architecture unsupported */
    ROCPROFILER_STATUS_LAST
} rocprofiler_status_t;

/** Category of the records a buffer holds. */
typedef enum rocprofiler_buffer_category_t /* NOLINT */
{
    ROCPROFILER_BUFFER_CATEGORY_NONE = 0,
    ROCPROFILER_BUFFER_CATEGORY_TRACING,
    ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING,
    ROCPROFILER_BUFFER_CATEGORY_COUNTERS,
    ROCPROFILER_BUFFER_CATEGORY_LAST,
} rocprofiler_buffer_category_t;

/** Kind of processor an agent is. */
typedef enum rocprofiler_agent_type_t /* NOLINT */
{
    ROCPROFILER_AGENT_TYPE_NONE = 0,
    ROCPROFILER_AGENT_TYPE_CPU,
    ROCPROFILER_AGENT_TYPE_GPU,
    ROCPROFILER_AGENT_TYPE_LAST,
} rocprofiler_agent_type_t;

/** Buffer-tracing kinds. Only PAGE_MIGRATION is provided by this library; the others exist
 *  for source compatibility and configuring them returns ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED. */
typedef enum rocprofiler_buffer_tracing_kind_t /* NOLINT */
{
    ROCPROFILER_BUFFER_TRACING_NONE = 0,
    ROCPROFILER_BUFFER_TRACING_HSA_CORE_API,
    ROCPROFILER_BUFFER_TRACING_HSA_AMD_EXT_API,
    ROCPROFILER_BUFFER_TRACING_HSA_IMAGE_EXT_API,
    ROCPROFILER_BUFFER_TRACING_HSA_FINALIZE_EXT_API,
    ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API,
    ROCPROFILER_BUFFER_TRACING_HIP_COMPILER_API,
    ROCPROFILER_BUFFER_TRACING_MARKER_CORE_API,
    ROCPROFILER_BUFFER_TRACING_MARKER_CONTROL_API,
    ROCPROFILER_BUFFER_TRACING_MARKER_NAME_API,
    ROCPROFILER_BUFFER_TRACING_MEMORY_COPY,
    ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH,
    ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
    ROCPROFILER_BUFFER_TRACING_SCRATCH_MEMORY,
    ROCPROFILER_BUFFER_TRACING_CORRELATION_ID_RETIREMENT,
    ROCPROFILER_BUFFER_TRACING_RCCL_API,
    ROCPROFILER_BUFFER_TRACING_LAST,
} rocprofiler_buffer_tracing_kind_t;

/** Operations of the PAGE_MIGRATION buffer-tracing kind. */
typedef enum rocprofiler_page_migration_operation_t /* NOLINT */
{
    ROCPROFILER_PAGE_MIGRATION_NONE = 0,       /**< unknown or unset */
    ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE,   /**< a range moved between memories */
    ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT,     /**< a GPU page fault was handled */
    ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND,  /**< a process's queues were evicted then restored */
    ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU, /**< a range was unmapped from a GPU (instant) */
    ROCPROFILER_PAGE_MIGRATION_LAST,
} rocprofiler_page_migration_operation_t;

/** How a buffer behaves when it is full. */
typedef enum rocprofiler_buffer_policy_t /* NOLINT */
{
    ROCPROFILER_BUFFER_POLICY_NONE = 0,
    ROCPROFILER_BUFFER_POLICY_DISCARD,  /**< records that do not fit are dropped and counted */
    ROCPROFILER_BUFFER_POLICY_LOSSLESS, /**< the buffer grows (up to a cap) instead of dropping */
    ROCPROFILER_BUFFER_POLICY_LAST,
} rocprofiler_buffer_policy_t;

/** Runtime libraries, as a bit set, for internal-thread notifications. */
typedef enum rocprofiler_runtime_library_t /* NOLINT */
{
    ROCPROFILER_LIBRARY        = (1 << 0),
    ROCPROFILER_HSA_LIBRARY    = (1 << 1),
    ROCPROFILER_HIP_LIBRARY    = (1 << 2),
    ROCPROFILER_MARKER_LIBRARY = (1 << 3),
    ROCPROFILER_RCCL_LIBRARY   = (1 << 4),
    ROCPROFILER_LIBRARY_LAST   = ROCPROFILER_RCCL_LIBRARY,
} rocprofiler_runtime_library_t;

/** What caused a page migration. */
typedef enum rocprofiler_page_migration_trigger_t /* NOLINT */
{
    ROCPROFILER_PAGE_MIGRATION_TRIGGER_NONE = -1,
    ROCPROFILER_PAGE_MIGRATION_TRIGGER_PREFETCH,
    ROCPROFILER_PAGE_MIGRATION_TRIGGER_PAGEFAULT_GPU,
    ROCPROFILER_PAGE_MIGRATION_TRIGGER_PAGEFAULT_CPU,
    ROCPROFILER_PAGE_MIGRATION_TRIGGER_TTM_EVICTION,
    ROCPROFILER_PAGE_MIGRATION_TRIGGER_LAST,
} rocprofiler_page_migration_trigger_t;

/** What caused a queue suspension (eviction). */
typedef enum rocprofiler_page_migration_queue_suspend_trigger_t /* NOLINT */
{
    ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_NONE = -1,
    ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_SVM,
    ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_USERPTR,
    ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_TTM,
    ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_SUSPEND,
    ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_CRIU_CHECKPOINT,
    ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_CRIU_RESTORE,
    ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_LAST,
} rocprofiler_page_migration_queue_suspend_trigger_t;

/** What caused an unmap from a GPU. */
typedef enum rocprofiler_page_migration_unmap_from_gpu_trigger_t /* NOLINT */
{
    ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU_TRIGGER_NONE = -1,
    ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU_TRIGGER_MMU_NOTIFY,
    ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU_TRIGGER_MMU_NOTIFY_MIGRATE,
    ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU_TRIGGER_UNMAP_FROM_CPU,
    ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU_TRIGGER_LAST,
} rocprofiler_page_migration_unmap_from_gpu_trigger_t;

/** Version of the agent structure requested from rocprofiler_query_available_agents. */
typedef enum rocprofiler_agent_version_t /* NOLINT */
{
    ROCPROFILER_AGENT_INFO_VERSION_NONE = 0,
    ROCPROFILER_AGENT_INFO_VERSION_0,
    ROCPROFILER_AGENT_INFO_VERSION_LAST,
} rocprofiler_agent_version_t;

/** Nanoseconds on CLOCK_BOOTTIME, the clock of KFD event timestamps. */
typedef uint64_t rocprofiler_timestamp_t;
/** Operating-system thread id. */
typedef uint64_t rocprofiler_thread_id_t;
/** A virtual address. */
typedef uint64_t rocprofiler_address_t;
/** Operation of a tracing kind (for PAGE_MIGRATION: rocprofiler_page_migration_operation_t). */
typedef int32_t rocprofiler_tracing_operation_t;

/** Three-dimensional size. */
typedef struct rocprofiler_dim3_t
{
    uint32_t x;
    uint32_t y;
    uint32_t z;
} rocprofiler_dim3_t;

/** Identifies a context. */
typedef struct rocprofiler_context_id_t
{
    uint64_t handle;
} rocprofiler_context_id_t;

/** Identifies a buffer. */
typedef struct rocprofiler_buffer_id_t
{
    uint64_t handle;
} rocprofiler_buffer_id_t;

/** Identifies an agent (a CPU or GPU node of the KFD topology). */
typedef struct rocprofiler_agent_id_t
{
    uint64_t handle;
} rocprofiler_agent_id_t;

/** Identifies an internal thread that runs buffer callbacks. */
typedef struct rocprofiler_callback_thread_t
{
    uint64_t handle;
} rocprofiler_callback_thread_t;

/** Header of each record handed to a buffer callback. */
typedef struct rocprofiler_record_header_t
{
    union
    {
        struct
        {
            uint32_t category; /**< a rocprofiler_buffer_category_t */
            uint32_t kind;     /**< e.g. a rocprofiler_buffer_tracing_kind_t */
        };
        uint64_t hash; /**< category | (kind << 32) */
    };
    void* payload; /**< the record; valid only during the callback */
} rocprofiler_record_header_t;

/** Identity the SDK gives a tool. The tool may set `name` in rocprofiler_configure. */
typedef struct rocprofiler_client_id_t
{
    const char*    name;   /**< tool name (owned by the tool) */
    const uint32_t handle; /**< assigned by the SDK */
} rocprofiler_client_id_t;

/** A context id that names no context. */
#define ROCPROFILER_CONTEXT_NONE ROCPROFILER_HANDLE_LITERAL(rocprofiler_context_id_t, UINT64_MAX)
/** A buffer id that names no buffer. */
#define ROCPROFILER_BUFFER_ID_NONE ROCPROFILER_HANDLE_LITERAL(rocprofiler_buffer_id_t, UINT64_MAX)

/** Combines a record's category and kind into the header hash. */
static inline uint64_t
rocprofiler_record_header_compute_hash(uint32_t category, uint32_t kind)
{
    return (uint64_t) category | ((uint64_t) kind << 32);
}

ROCPROFILER_EXTERN_C_FINI

#endif /* ROCPROFILER_SDK_FWD_H_ */
