/* MIT License - see LICENSE.
 * The reader thread's creation fails (this program's pthread_create refuses it once) while a
 * second context is started from the tools' pre-create notification of that very start. The
 * first start returns OUT_OF_RESOURCES and is undone; the kernel's events must then stay
 * disabled, since no thread reads them (they would fill the FIFO and be dropped unseen).
 * The emulator's statistics say what the kernel did. Started again, the first context starts
 * the reader, and every event arrives (the second context's too). */
#define _GNU_SOURCE
#include <rocprofiler-sdk/buffer.h>
#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/internal_threading.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fail_next_thread; /* the next pthread_create fails */

int
pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg)
{
    typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    static create_fn real = NULL;
    if(real == NULL) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if(__atomic_exchange_n(&fail_next_thread, 0, __ATOMIC_SEQ_CST)) return EAGAIN;
    return real(thread, attr, start, arg);
}

static rocprofiler_context_id_t first, second;
static int                      armed;
static int                      second_started = -1;
static int                      records;

static void
precreate(rocprofiler_runtime_library_t library, void* data)
{
    (void)library, (void)data;
    if(!__atomic_exchange_n(&armed, 0, __ATOMIC_SEQ_CST)) return;
    second_started = rocprofiler_start_context(second); /* nested in the first start */
    __atomic_store_n(&fail_next_thread, 1, __ATOMIC_SEQ_CST);
}

static void
on_records(rocprofiler_context_id_t c, rocprofiler_buffer_id_t b,
           rocprofiler_record_header_t** headers, size_t count, void* data, uint64_t drops)
{
    (void)c, (void)b, (void)headers, (void)data, (void)drops;
    __atomic_fetch_add(&records, (int)count, __ATOMIC_SEQ_CST);
}

static int
make_context(rocprofiler_context_id_t* context)
{
    rocprofiler_buffer_id_t buffer = {0};
    return rocprofiler_create_context(context) == ROCPROFILER_STATUS_SUCCESS &&
           rocprofiler_create_buffer(*context, 65536, 0, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                     on_records, NULL, &buffer) == ROCPROFILER_STATUS_SUCCESS &&
           rocprofiler_configure_buffer_tracing_service(
               *context, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, NULL, 0, buffer) ==
               ROCPROFILER_STATUS_SUCCESS;
}

static int
initialize(rocprofiler_client_finalize_t fini, void* data)
{
    (void)fini, (void)data;
    int ok = rocprofiler_at_internal_thread_create(precreate, NULL, ROCPROFILER_LIBRARY, NULL) ==
                 ROCPROFILER_STATUS_SUCCESS &&
             make_context(&first) && make_context(&second);
    return ok ? 0 : -1;
}

static rocprofiler_tool_configure_result_t*
configure(uint32_t version, const char* runtime, uint32_t priority, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {sizeof(result), initialize, NULL, NULL};
    (void)version, (void)runtime, (void)priority;
    id->name = "host-reader-start-fails";
    return &result;
}

int
main(int argc, char** argv)
{
    /* argv[1]: "exit" (exit right after the failed start) or the number of page-fault records
     * to wait for after the first context is started again. */
    if(argc < 2) return 2;
    int expected = atoi(argv[1]);
    if(rocprofiler_force_configure(configure) != ROCPROFILER_STATUS_SUCCESS) return 3;
    __atomic_store_n(&armed, 1, __ATOMIC_SEQ_CST);
    int failed = rocprofiler_start_context(first);
    int again  = -1;
    if(expected > 0)
    {
        again = rocprofiler_start_context(first);
        for(int i = 0; i < 20000 && __atomic_load_n(&records, __ATOMIC_SEQ_CST) < expected; ++i)
            usleep(1000);
    }
    printf("host-reader-start-fails: first=%d second=%d again=%d records=%d\n", failed,
           second_started, again, __atomic_load_n(&records, __ATOMIC_SEQ_CST));
    fflush(stdout);
    return 0;
}
