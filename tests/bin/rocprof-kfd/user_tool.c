/* MIT License - see LICENSE. */
/* A user's own tool, listed in ROCP_TOOL_LIBRARIES: it writes every page-migration record
 * it receives to $CLI_TEST_USER_OUT as a line in the columns of rocprof-kfd-gen's --expect
 * CSV (pid "SELF" for this process), so the CLI tests compare it with the generator's
 * oracle. Plain C data only: its configure may run before any constructor. */
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static rocprofiler_context_id_t ctx;
static rocprofiler_buffer_id_t  buf;
static FILE*                    out;
static pthread_mutex_t          lock = PTHREAD_MUTEX_INITIALIZER;

static void
pid_text(char* text, size_t size, uint32_t pid)
{
    if(pid == (uint32_t)getpid())
        snprintf(text, size, "SELF");
    else
        snprintf(text, size, "%u", pid);
}

static void
write_record(const rocprofiler_buffer_tracing_page_migration_record_t* r)
{
    char pid[32];
    pid_text(pid, sizeof(pid), r->pid);
    switch(r->operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
        fprintf(out, "PAGE_FAULT,%s,%" PRIu64 ",%" PRIu64 ",%u,,,,,%" PRIu64 ",,%d,%d,\n", pid,
                r->start_timestamp, r->end_timestamp, r->page_fault.node_id, r->page_fault.address,
                (int)r->page_fault.read_fault, (int)r->page_fault.migrated);
        break;
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        fprintf(
            out,
            "PAGE_MIGRATE,%s,%" PRIu64 ",%" PRIu64 ",%u,%u,%u,%u,%d,%" PRIu64 ",%" PRIu64 ",,,\n",
            pid, r->start_timestamp, r->end_timestamp, r->page_migrate.from_node,
            r->page_migrate.to_node, r->page_migrate.prefetch_node, r->page_migrate.preferred_node,
            (int)r->page_migrate.trigger, r->page_migrate.start_addr, r->page_migrate.end_addr);
        break;
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        fprintf(out, "QUEUE_SUSPEND,%s,%" PRIu64 ",%" PRIu64 ",%u,,,,%d,,,,,%d\n", pid,
                r->start_timestamp, r->end_timestamp, r->queue_suspend.node_id,
                (int)r->queue_suspend.trigger, (int)r->queue_suspend.rescheduled);
        break;
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        fprintf(out,
                "UNMAP_FROM_GPU,%s,%" PRIu64 ",%" PRIu64 ",%u,,,,%d,%" PRIu64 ",%" PRIu64 ",,,\n",
                pid, r->start_timestamp, r->end_timestamp, r->unmap_from_gpu.node_id,
                (int)r->unmap_from_gpu.trigger, r->unmap_from_gpu.start_addr,
                r->unmap_from_gpu.end_addr);
        break;
    default:
        fprintf(out, "UNKNOWN_OPERATION,%d\n", (int)r->operation);
        break;
    }
}

static void
on_records(rocprofiler_context_id_t c, rocprofiler_buffer_id_t b,
           rocprofiler_record_header_t** headers, size_t n, void* data, uint64_t drops)
{
    pthread_mutex_lock(&lock);
    for(size_t i = 0; out && i < n; ++i)
        if(headers[i]->kind == ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION)
            write_record(headers[i]->payload);
    if(out && drops) fprintf(out, "DROPS,%" PRIu64 "\n", drops);
    pthread_mutex_unlock(&lock);
    (void)c;
    (void)b;
    (void)data;
}

static int
init(rocprofiler_client_finalize_t fini, void* data)
{
    const char* path = getenv("CLI_TEST_USER_OUT");
    out              = path ? fopen(path, "a") : NULL;
    rocprofiler_create_context(&ctx);
    rocprofiler_create_buffer(ctx, 65536, 32768, ROCPROFILER_BUFFER_POLICY_LOSSLESS, on_records,
                              NULL, &buf);
    int status = rocprofiler_configure_buffer_tracing_service(
        ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, NULL, 0, buf);
    if(out) fprintf(out, "CONFIGURED,%d\n", status);
    rocprofiler_start_context(ctx);
    (void)fini;
    (void)data;
    return 0;
}

static void
fini(void* data)
{
    pthread_mutex_lock(&lock);
    if(out) fprintf(out, "FINALIZED\n");
    if(out) fclose(out);
    out = NULL;
    pthread_mutex_unlock(&lock);
    (void)data;
}

rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t version, const char* rt, uint32_t priority,
                      rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {sizeof(result), init, fini, NULL};
    id->name                                          = "cli-test-user-tool";
    (void)version;
    (void)rt;
    (void)priority;
    return &result;
}
