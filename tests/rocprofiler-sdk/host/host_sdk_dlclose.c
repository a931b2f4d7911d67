/* MIT License - see LICENSE.
 * A program that loads the SDK itself with dlopen (an optional profiler, as plugin hosts
 * offer), configures a tool of its own with rocprofiler_force_configure, and dlcloses the SDK
 * while a buffer callback still runs; the callback returns only after dlclose did. The SDK's
 * code must still be there to return into, and its finalization must wait for the exit.
 * argv[1]: the SDK library. */
#include <rocprofiler-sdk/buffer.h>
#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static int in_callback;  /* the first callback is running */
static int dlclose_done; /* main's dlclose returned */
static int callbacks;
static int callback_returning; /* the first callback is about to return into the SDK */

#define SDK_FUNCTION(name) static __typeof__(&name) sdk_##name
SDK_FUNCTION(rocprofiler_create_context);
SDK_FUNCTION(rocprofiler_create_buffer);
SDK_FUNCTION(rocprofiler_configure_buffer_tracing_service);
SDK_FUNCTION(rocprofiler_start_context);
SDK_FUNCTION(rocprofiler_force_configure);

static void
on_records(rocprofiler_context_id_t context, rocprofiler_buffer_id_t buffer,
           rocprofiler_record_header_t** headers, size_t count, void* data, uint64_t drops)
{
    (void)context, (void)buffer, (void)headers, (void)count, (void)data, (void)drops;
    if(__atomic_fetch_add(&callbacks, 1, __ATOMIC_SEQ_CST) != 0) return;
    __atomic_store_n(&in_callback, 1, __ATOMIC_SEQ_CST);
    /* Gate: return into the SDK only once the program has dlclosed it (bounded: 20 s). */
    for(int i = 0; i < 20000 && !__atomic_load_n(&dlclose_done, __ATOMIC_SEQ_CST); ++i)
        usleep(1000);
    printf("host-sdk-dlclose: callback returns after dlclose=%d\n",
           __atomic_load_n(&dlclose_done, __ATOMIC_SEQ_CST));
    fflush(stdout);
    __atomic_store_n(&callback_returning, 1, __ATOMIC_SEQ_CST);
}

static void
finalize(void* data)
{
    (void)data;
    printf("host-sdk-dlclose: finalize callbacks=%d\n",
           __atomic_load_n(&callbacks, __ATOMIC_SEQ_CST));
    fflush(stdout);
}

static int
initialize(rocprofiler_client_finalize_t fini, void* data)
{
    (void)fini, (void)data;
    rocprofiler_context_id_t context = {0};
    rocprofiler_buffer_id_t  buffer  = {0};
    int                      failed  = 0;
    failed |= sdk_rocprofiler_create_context(&context) != ROCPROFILER_STATUS_SUCCESS;
    failed |=
        sdk_rocprofiler_create_buffer(context, 4096, 64, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                      on_records, NULL, &buffer) != ROCPROFILER_STATUS_SUCCESS;
    failed |= sdk_rocprofiler_configure_buffer_tracing_service(
                  context, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, NULL, 0, buffer) !=
              ROCPROFILER_STATUS_SUCCESS;
    failed |= sdk_rocprofiler_start_context(context) != ROCPROFILER_STATUS_SUCCESS;
    return failed ? -1 : 0;
}

static rocprofiler_tool_configure_result_t*
configure(uint32_t version, const char* runtime, uint32_t priority, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {sizeof(result), initialize, finalize,
                                                         NULL};
    (void)version, (void)runtime, (void)priority;
    id->name = "host-sdk-dlclose";
    return &result;
}

int
main(int argc, char** argv)
{
    if(argc < 2) return 2;
    void* sdk = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if(sdk == NULL) return 3;
    sdk_rocprofiler_create_context = dlsym(sdk, "rocprofiler_create_context");
    sdk_rocprofiler_create_buffer  = dlsym(sdk, "rocprofiler_create_buffer");
    sdk_rocprofiler_configure_buffer_tracing_service =
        dlsym(sdk, "rocprofiler_configure_buffer_tracing_service");
    sdk_rocprofiler_start_context   = dlsym(sdk, "rocprofiler_start_context");
    sdk_rocprofiler_force_configure = dlsym(sdk, "rocprofiler_force_configure");
    int configured                  = (int)sdk_rocprofiler_force_configure(configure);
    for(int i = 0; i < 20000 && !__atomic_load_n(&in_callback, __ATOMIC_SEQ_CST); ++i)
        usleep(1000);
    int closed = dlclose(sdk);
    printf("host-sdk-dlclose: force_configure=%d in_callback=%d dlclose=%d\n", configured,
           __atomic_load_n(&in_callback, __ATOMIC_SEQ_CST), closed);
    fflush(stdout);
    __atomic_store_n(&dlclose_done, 1, __ATOMIC_SEQ_CST);
    /* Gate: the callback is returning into the SDK (bounded: 20 s); the exit follows it. */
    for(int i = 0; i < 20000 && !__atomic_load_n(&callback_returning, __ATOMIC_SEQ_CST); ++i)
        usleep(1000);
    return 0;
}
