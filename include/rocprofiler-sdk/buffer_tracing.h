/* MIT License - see LICENSE. */
/**
 * @file buffer_tracing.h
 * @brief Buffer-tracing services and the page-migration records they produce.
 */
#ifndef ROCPROFILER_SDK_BUFFER_TRACING_H_
#define ROCPROFILER_SDK_BUFFER_TRACING_H_

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/** A GPU page fault, from PAGE_FAULT_START to PAGE_FAULT_END. */
typedef struct rocprofiler_buffer_tracing_page_migration_page_fault_record_t
{
    uint8_t  read_fault : 1; /**< 1: read fault ('R'), 0: write fault ('W') */
    uint8_t  migrated   : 1; /**< 1: the page was migrated ('M'), 0: updated in place ('U') */
    uint32_t node_id;        /**< KFD gpu_id of the faulting GPU */
    uint64_t address;        /**< faulting address in bytes */
} rocprofiler_buffer_tracing_page_migration_page_fault_record_t;

/** A range migration, from MIGRATE_START to MIGRATE_END. */
typedef struct rocprofiler_buffer_tracing_page_migration_page_migrate_record_t
{
    uint64_t start_addr;     /**< first byte */
    uint64_t end_addr;       /**< last byte (inclusive) */
    uint32_t from_node;      /**< source gpu_id; 0 = system memory */
    uint32_t to_node;        /**< destination gpu_id; 0 = system memory */
    uint32_t prefetch_node;  /**< prefetch location; 0xffffffff = undefined */
    uint32_t preferred_node; /**< preferred location; 0xffffffff = undefined */
    rocprofiler_page_migration_trigger_t trigger;
} rocprofiler_buffer_tracing_page_migration_page_migrate_record_t;

/**
 * A suspension of a process's queues on one GPU, as the kernel counts it: evictions nest
 * (each QUEUE_EVICTION increments the driver's eviction count, each QUEUE_RESTORE
 * decrements it), so the record runs from the eviction that stopped the queues (count 0 -> 1)
 * to the restore that runs them again (count back to 0), and `trigger` is that first
 * eviction's. A rescheduled restore ('R', or the proposed id-14 event) is a failed attempt
 * after which the queues stay evicted: it does not end the record.
 *
 * This differs from rocprofiler-sdk 0.x, which paired each eviction with the next restore and
 * ended the record at an 'R' restore (cutting the suspension short and leaving the real
 * restore unpaired). Triggers outside the enum's range are reported as ..._TRIGGER_NONE.
 */
typedef struct rocprofiler_buffer_tracing_page_migration_queue_suspend_record_t
{
    uint8_t  rescheduled : 1; /**< 1: at least one restore attempt during the suspension was
                                   rescheduled ('R' or id 14) */
    uint32_t node_id;         /**< gpu_id */
    rocprofiler_page_migration_queue_suspend_trigger_t trigger; /**< the first eviction's */
} rocprofiler_buffer_tracing_page_migration_queue_suspend_record_t;

/** A range unmapped from a GPU: an instant (start == end timestamp). */
typedef struct rocprofiler_buffer_tracing_page_migration_unmap_from_gpu_record_t
{
    uint32_t node_id;    /**< gpu_id */
    uint64_t start_addr; /**< first byte */
    uint64_t end_addr;   /**< one past the last byte (exclusive) */
    rocprofiler_page_migration_unmap_from_gpu_trigger_t trigger;
} rocprofiler_buffer_tracing_page_migration_unmap_from_gpu_record_t;

/** Record of the PAGE_MIGRATION kind (136 bytes). */
typedef struct rocprofiler_buffer_tracing_page_migration_record_t
{
    uint64_t                          size;      /**< sizeof this struct */
    rocprofiler_buffer_tracing_kind_t kind;      /**< ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION */
    rocprofiler_tracing_operation_t   operation; /**< a rocprofiler_page_migration_operation_t */
    rocprofiler_timestamp_t           start_timestamp; /**< CLOCK_BOOTTIME ns */
    rocprofiler_timestamp_t           end_timestamp;   /**< CLOCK_BOOTTIME ns */
    uint32_t                          pid;             /**< process the event belongs to */
    union
    {
        rocprofiler_buffer_tracing_page_migration_page_fault_record_t     page_fault;
        rocprofiler_buffer_tracing_page_migration_page_migrate_record_t   page_migrate;
        rocprofiler_buffer_tracing_page_migration_queue_suspend_record_t  queue_suspend;
        rocprofiler_buffer_tracing_page_migration_unmap_from_gpu_record_t unmap_from_gpu;
        struct
        {
            uint64_t reserved[12];
        };
    };
} rocprofiler_buffer_tracing_page_migration_record_t;

/** Called once per kind by rocprofiler_iterate_buffer_tracing_kinds; non-zero stops. */
typedef int (*rocprofiler_buffer_tracing_kind_cb_t)(rocprofiler_buffer_tracing_kind_t kind,
                                                    void*                             data);

/** Called once per operation; non-zero stops the iteration. */
typedef int (*rocprofiler_buffer_tracing_kind_operation_cb_t)(
    rocprofiler_buffer_tracing_kind_t kind,
    rocprofiler_tracing_operation_t   operation,
    void*                             data);

/**
 * @brief Enables a buffer-tracing kind in a context, writing records into @p buffer_id.
 *
 * @param operations       operations to trace; NULL/0 means all of them.
 * @param buffer_id        a buffer created for the same context.
 * @return SUCCESS; CONTEXT_NOT_FOUND; BUFFER_NOT_FOUND; KIND_NOT_FOUND (out of range);
 *         INVALID_ARGUMENT (NULL operations with a count, or a buffer of another context);
 *         CONTEXT_ERROR (the context is already started);
 *         OPERATION_NOT_FOUND; NOT_IMPLEMENTED (a kind other than PAGE_MIGRATION);
 *         SERVICE_ALREADY_CONFIGURED; CONFIGURATION_LOCKED; NOT_AVAILABLE (no usable
 *         /dev/kfd or GPU); INCOMPATIBLE_KERNEL (KFD ioctl < 1.10).
 */
rocprofiler_status_t
rocprofiler_configure_buffer_tracing_service(rocprofiler_context_id_t               context_id,
                                             rocprofiler_buffer_tracing_kind_t      kind,
                                             const rocprofiler_tracing_operation_t* operations,
                                             size_t                  operations_count,
                                             rocprofiler_buffer_id_t buffer_id) ROCPROFILER_API;

/** @brief Name of a kind (e.g. "PAGE_MIGRATION"); @p name_len may be NULL. */
rocprofiler_status_t
rocprofiler_query_buffer_tracing_kind_name(rocprofiler_buffer_tracing_kind_t kind,
                                           const char**                      name,
                                           uint64_t* name_len) ROCPROFILER_API;

/** @brief Name of an operation (e.g. "PAGE_MIGRATION_PAGE_FAULT"); @p name_len may be NULL. */
rocprofiler_status_t
rocprofiler_query_buffer_tracing_kind_operation_name(rocprofiler_buffer_tracing_kind_t kind,
                                                     rocprofiler_tracing_operation_t operation,
                                                     const char**                    name,
                                                     uint64_t* name_len) ROCPROFILER_API;

/** @brief Calls @p callback for every kind this library knows. */
rocprofiler_status_t
rocprofiler_iterate_buffer_tracing_kinds(rocprofiler_buffer_tracing_kind_cb_t callback,
                                         void*                                data) ROCPROFILER_API;

/** @brief Calls @p callback for every operation of @p kind (PAGE_MIGRATION: all five). */
rocprofiler_status_t
rocprofiler_iterate_buffer_tracing_kind_operations(
    rocprofiler_buffer_tracing_kind_t              kind,
    rocprofiler_buffer_tracing_kind_operation_cb_t callback,
    void*                                          data) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI

#endif /* ROCPROFILER_SDK_BUFFER_TRACING_H_ */
