/* MIT License - see LICENSE.
 *
 * Sample tool: the loss-accounting extension (rocprofiler-sdk/ext/kfd.h). It traces page
 * migration into a deliberately small DISCARD buffer (so that a busy workload overflows
 * it), and at exit prints, per GPU and in total, what the SDK received from the kernel and
 * everything it could not turn into records, then one verdict line:
 *   complete           nothing was lost
 *   LOST               records are missing (counted exactly)
 *   PROBABLY LOST      the kernel's event FIFO was seen nearly full: the kernel may have
 *                      dropped events silently (mainline kernels do not count them)
 *
 *   LD_PRELOAD=libloss-accounting-sample-tool.so ./your-app
 *   LOSS_SAMPLE_BUFFER_BYTES=N   buffer size (default 4096)
 */
#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ROCPROFILER_KFD_EXT_VERSION
#    error "this sample needs the ext/kfd.h loss-accounting extension"
#endif

#define MAX_GPUS 64

static rocprofiler_context_id_t context;
static rocprofiler_buffer_id_t  buffer;
static uint64_t                 gpu_ids[MAX_GPUS];
static size_t                   gpu_count;
static uint64_t                 delivered;
static uint64_t                 buffer_drops;

static rocprofiler_status_t
collect_gpus(rocprofiler_agent_version_t version, const void** agents, size_t count, void* data)
{
    size_t i;
    (void)version;
    (void)data;
    for(i = 0; i < count && gpu_count < MAX_GPUS; ++i)
    {
        const rocprofiler_agent_v0_t* a = (const rocprofiler_agent_v0_t*)agents[i];
        if(a->type == ROCPROFILER_AGENT_TYPE_GPU) gpu_ids[gpu_count++] = a->gpu_id;
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

static void
on_records(rocprofiler_context_id_t ctx, rocprofiler_buffer_id_t buf,
           rocprofiler_record_header_t** headers, size_t count, void* data, uint64_t drops)
{
    (void)ctx;
    (void)buf;
    (void)headers;
    (void)data;
    delivered += count;    /* callbacks of one buffer never run concurrently */
    buffer_drops += drops; /* what the DISCARD buffer could not hold since the last call */
}

/* Everything that was lost, from one set of counters. */
static uint64_t
lost_records(const rocprofiler_kfd_loss_stats_t* s)
{
    uint64_t lost = s->lines_malformed + s->ends_without_start + s->starts_aged_out +
                    s->starts_never_ended + s->records_dropped + s->kernel_reported_drops;
#if ROCPROFILER_KFD_EXT_VERSION >= 2
    lost += s->starts_lost_in_gap + s->starts_timed_out + s->lines_overlong;
#endif
    return lost;
}

static void
print_stats(const char* label, const rocprofiler_kfd_loss_stats_t* s)
{
    printf("%-10s received=%" PRIu64 " records=%" PRIu64 " other_process=%" PRIu64
           " malformed=%" PRIu64 " ends_without_start=%" PRIu64 " aged_out=%" PRIu64
           " never_ended=%" PRIu64 " buffer_dropped=%" PRIu64 " kernel_dropped=%" PRIu64
           " fifo_saturations=%" PRIu64,
           label, s->events_received, s->records_emitted, s->events_other_process,
           s->lines_malformed, s->ends_without_start, s->starts_aged_out, s->starts_never_ended,
           s->records_dropped, s->kernel_reported_drops, s->fifo_saturations);
#if ROCPROFILER_KFD_EXT_VERSION >= 2
    printf(" lost_in_gap=%" PRIu64 " timed_out=%" PRIu64 " trigger_mismatches=%" PRIu64
           " overlong=%" PRIu64 " out_of_range=%" PRIu64,
           s->starts_lost_in_gap, s->starts_timed_out, s->migrate_trigger_mismatches,
           s->lines_overlong, s->fields_out_of_range);
#endif
    printf("\n");
}

static int
tool_initialize(rocprofiler_client_finalize_t finalize, void* data)
{
    const char*          size_text = getenv("LOSS_SAMPLE_BUFFER_BYTES");
    size_t               bytes     = size_text ? strtoull(size_text, NULL, 10) : 4096;
    rocprofiler_status_t status;
    (void)finalize;
    (void)data;
    rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, collect_gpus,
                                       sizeof(rocprofiler_agent_v0_t), NULL);
    rocprofiler_create_context(&context);
    rocprofiler_create_buffer(context, bytes, bytes / 2, ROCPROFILER_BUFFER_POLICY_DISCARD,
                              on_records, NULL, &buffer);
    status = rocprofiler_configure_buffer_tracing_service(
        context, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, NULL, 0, buffer);
    if(status != ROCPROFILER_STATUS_SUCCESS)
    {
        printf("loss-accounting-sample: tracing not available: %s\n",
               rocprofiler_get_status_string(status));
        return 0;
    }
    rocprofiler_start_context(context);
    return 0;
}

static void
tool_finalize(void* data)
{
    rocprofiler_kfd_loss_stats_t total;
    size_t                       i;
    (void)data;
    memset(&total, 0, sizeof(total));
    total.size = sizeof(total); /* the size this tool was built with: older SDKs fill a prefix */
    /* In finalize the counters are final: every buffered record was delivered. */
    for(i = 0; i < gpu_count; ++i)
    {
        rocprofiler_kfd_loss_stats_t s;
        char                         label[32];
        memset(&s, 0, sizeof(s));
        s.size = sizeof(s);
        if(rocprofiler_kfd_get_loss_stats(gpu_ids[i], &s) != ROCPROFILER_STATUS_SUCCESS) continue;
        snprintf(label, sizeof(label), "gpu 0x%" PRIx64, gpu_ids[i]);
        print_stats(label, &s);
    }
    if(rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &total) !=
       ROCPROFILER_STATUS_SUCCESS)
    {
        printf("loss-accounting-sample: no loss counters (tracing was not available)\n");
        return;
    }
    print_stats("all gpus", &total);
    printf("delivered=%" PRIu64 " buffer_drops_reported=%" PRIu64 "\n", delivered, buffer_drops);
    if(lost_records(&total) > 0)
        printf("verdict: LOST %" PRIu64 " (see the counters above)\n", lost_records(&total));
    else if(total.fifo_saturations > 0)
        printf("verdict: PROBABLY LOST (the kernel's event FIFO was nearly full %" PRIu64
               " times)\n",
               total.fifo_saturations);
    else
        printf("verdict: complete\n");
    fflush(stdout);
}

rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t version, const char* runtime_version, uint32_t priority,
                      rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), tool_initialize, tool_finalize, NULL};
    (void)version;
    (void)runtime_version;
    (void)priority;
    id->name = "loss-accounting-sample";
    return &result;
}
