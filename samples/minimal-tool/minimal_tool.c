#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>
#include <stdio.h>

static rocprofiler_context_id_t ctx;
static rocprofiler_buffer_id_t  buf;

static void on_records(rocprofiler_context_id_t c, rocprofiler_buffer_id_t b,
                       rocprofiler_record_header_t** headers, size_t n, void* data, uint64_t drops)
{
    for(size_t i = 0; i < n; ++i) {
        const rocprofiler_buffer_tracing_page_migration_record_t* r = headers[i]->payload;
        if(r->operation == ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT)
            printf("fault on GPU 0x%x at 0x%lx: %lu ns\n", r->page_fault.node_id,
                   (unsigned long) r->page_fault.address,
                   (unsigned long) (r->end_timestamp - r->start_timestamp));
    }
    (void) c; (void) b; (void) data; (void) drops;
}

static int init(rocprofiler_client_finalize_t fini, void* data)
{
    rocprofiler_create_context(&ctx);
    rocprofiler_create_buffer(ctx, 65536, 32768, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                              on_records, NULL, &buf);
    if(rocprofiler_configure_buffer_tracing_service(
           ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, NULL, 0, buf) != ROCPROFILER_STATUS_SUCCESS)
        return 0;  /* no driver or no permission: the SDK logged why; the app runs on */
    rocprofiler_start_context(ctx);
    (void) fini; (void) data;
    return 0;
}

static void fini(void* data) { (void) data; }

rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t version, const char* rt, uint32_t priority, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {sizeof(result), init, fini, NULL};
    id->name = "my-tool";
    (void) version; (void) rt; (void) priority;
    return &result;
}
