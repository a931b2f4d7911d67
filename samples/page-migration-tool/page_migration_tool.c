/* MIT License - see LICENSE.
 *
 * Sample tool: lists the agents, traces page migration and prints every record, then a
 * summary with the SDK's loss accounting at exit.
 *
 *   LD_PRELOAD=libpage-migration-sample-tool.so ./your-app
 *   ROCP_TOOL_LIBRARIES=libpage-migration-sample-tool.so ./your-app-linked-with-the-sdk
 *
 * PAGE_MIGRATION_SAMPLE_QUIET=1 prints only the summary.
 */
#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_STATUS(call)                                                                     \
    do                                                                                         \
    {                                                                                          \
        rocprofiler_status_t status_ = (call);                                                 \
        if(status_ != ROCPROFILER_STATUS_SUCCESS)                                              \
        {                                                                                      \
            fprintf(stderr, "page-migration-sample: %s failed: %s\n", #call,                   \
                    rocprofiler_get_status_string(status_));                                   \
            return -1;                                                                         \
        }                                                                                      \
    } while(0)

static rocprofiler_client_id_t* client        = NULL;
static rocprofiler_context_id_t context       = {0};
static rocprofiler_buffer_id_t  buffer        = {0};
static uint64_t                 counts[ROCPROFILER_PAGE_MIGRATION_LAST];
static uint64_t                 dropped       = 0;
static int                      quiet         = 0;

static rocprofiler_status_t
print_agents(rocprofiler_agent_version_t version, const void** agents, size_t count, void* data)
{
    size_t i;
    (void) version;
    (void) data;
    printf("agents: %zu\n", count);
    for(i = 0; i < count; ++i)
    {
        const rocprofiler_agent_v0_t* a = (const rocprofiler_agent_v0_t*) agents[i];
        printf("  node %u: %s %s gpu_id=%" PRIu64 " (0x%" PRIx64 ")\n", a->node_id,
               a->type == ROCPROFILER_AGENT_TYPE_GPU ? "GPU" : "CPU", a->name, a->gpu_id,
               a->gpu_id);
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

static void
print_record(const rocprofiler_buffer_tracing_page_migration_record_t* r)
{
    const char* op = NULL;
    rocprofiler_query_buffer_tracing_kind_operation_name(ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
                                                         r->operation, &op, NULL);
    printf("%s pid=%u start=%" PRIu64 " end=%" PRIu64 " ", op ? op : "?", r->pid,
           r->start_timestamp, r->end_timestamp);
    switch(r->operation)
    {
        case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
            printf("node=0x%x address=0x%" PRIx64 " %s %s\n", r->page_fault.node_id,
                   r->page_fault.address, r->page_fault.read_fault ? "read" : "write",
                   r->page_fault.migrated ? "migrated" : "updated");
            break;
        case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
            printf("0x%" PRIx64 "-0x%" PRIx64 " 0x%x->0x%x prefetch=0x%x preferred=0x%x trigger=%d\n",
                   r->page_migrate.start_addr, r->page_migrate.end_addr,
                   r->page_migrate.from_node, r->page_migrate.to_node,
                   r->page_migrate.prefetch_node, r->page_migrate.preferred_node,
                   (int) r->page_migrate.trigger);
            break;
        case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
            printf("node=0x%x trigger=%d rescheduled=%d\n", r->queue_suspend.node_id,
                   (int) r->queue_suspend.trigger, (int) r->queue_suspend.rescheduled);
            break;
        case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
            printf("node=0x%x 0x%" PRIx64 "-0x%" PRIx64 " trigger=%d\n", r->unmap_from_gpu.node_id,
                   r->unmap_from_gpu.start_addr, r->unmap_from_gpu.end_addr,
                   (int) r->unmap_from_gpu.trigger);
            break;
        default: printf("\n"); break;
    }
}

static void
on_records(rocprofiler_context_id_t ctx, rocprofiler_buffer_id_t buf,
           rocprofiler_record_header_t** headers, size_t count, void* data, uint64_t drops)
{
    size_t i;
    (void) ctx;
    (void) buf;
    (void) data;
    dropped += drops;
    for(i = 0; i < count; ++i)
    {
        const rocprofiler_buffer_tracing_page_migration_record_t* r;
        if(headers[i]->category != ROCPROFILER_BUFFER_CATEGORY_TRACING ||
           headers[i]->kind != ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION)
            continue;
        r = (const rocprofiler_buffer_tracing_page_migration_record_t*) headers[i]->payload;
        if(r->operation > 0 && r->operation < ROCPROFILER_PAGE_MIGRATION_LAST)
            counts[r->operation] += 1;
        if(!quiet) print_record(r);
    }
}

static int
tool_initialize(rocprofiler_client_finalize_t finalize, void* data)
{
    rocprofiler_status_t status;
    (void) finalize;
    (void) data;
    quiet = getenv("PAGE_MIGRATION_SAMPLE_QUIET") != NULL;
    CHECK_STATUS(rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, print_agents,
                                                    sizeof(rocprofiler_agent_v0_t), NULL));
    CHECK_STATUS(rocprofiler_create_context(&context));
    CHECK_STATUS(rocprofiler_create_buffer(context, 64 * 1024, 48 * 1024,
                                           ROCPROFILER_BUFFER_POLICY_LOSSLESS, on_records, NULL,
                                           &buffer));
    status = rocprofiler_configure_buffer_tracing_service(
        context, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, NULL, 0, buffer);
    if(status != ROCPROFILER_STATUS_SUCCESS)
    {
        /* No AMD GPU driver here, no permission, ...: the SDK logged why. The application
         * runs on untouched; this tool just has nothing to trace. */
        printf("page-migration tracing not available: %s\n", rocprofiler_get_status_string(status));
        return 0;
    }
    CHECK_STATUS(rocprofiler_start_context(context));
    return 0;
}

static void
tool_finalize(void* data)
{
    rocprofiler_kfd_loss_stats_t stats = {sizeof(rocprofiler_kfd_loss_stats_t)};
    int                          op;
    (void) data;
    printf("summary:");
    for(op = 1; op < ROCPROFILER_PAGE_MIGRATION_LAST; ++op)
    {
        const char* name = NULL;
        rocprofiler_query_buffer_tracing_kind_operation_name(ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
                                                             op, &name, NULL);
        printf(" %s=%" PRIu64, name, counts[op]);
    }
    printf(" buffer_drops=%" PRIu64 "\n", dropped);
    if(rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &stats) == ROCPROFILER_STATUS_SUCCESS)
        printf("loss: events=%" PRIu64 " records=%" PRIu64 " malformed=%" PRIu64
               " ends_without_start=%" PRIu64 " starts_never_ended=%" PRIu64
               " kernel_drops=%" PRIu64 " fifo_saturations=%" PRIu64 "\n",
               stats.events_received, stats.records_emitted, stats.lines_malformed,
               stats.ends_without_start, stats.starts_never_ended, stats.kernel_reported_drops,
               stats.fifo_saturations);
    fflush(stdout);
}

rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t version, const char* runtime_version, uint32_t priority,
                      rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), tool_initialize, tool_finalize, NULL};
    (void) version;
    (void) runtime_version;
    (void) priority;
    id->name = "page-migration-sample";
    client   = id;
    return &result;
}
