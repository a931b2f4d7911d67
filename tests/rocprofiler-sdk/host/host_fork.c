/* MIT License - see LICENSE.
 * fork() under contention: two threads start/stop the traced context and read the loss
 * counters in a loop while main forks 40 children. Each child calls the SDK (loss stats,
 * start, stop) and exits; every child must exit promptly, whatever lock another thread of
 * the parent held at the moment of fork. The program is its own tool (-rdynamic). */
#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static rocprofiler_context_id_t ctx;
static rocprofiler_buffer_id_t  buf;
static volatile int             stop_threads;

static void
on_records(rocprofiler_context_id_t c, rocprofiler_buffer_id_t b, rocprofiler_record_header_t** h,
           size_t n, void* d, uint64_t drops)
{
    (void)c, (void)b, (void)h, (void)n, (void)d, (void)drops;
}

static int
init(rocprofiler_client_finalize_t fini, void* data)
{
    (void)fini, (void)data;
    rocprofiler_create_context(&ctx);
    rocprofiler_create_buffer(ctx, 65536, 32768, ROCPROFILER_BUFFER_POLICY_LOSSLESS, on_records,
                              NULL, &buf);
    int s = (int)rocprofiler_configure_buffer_tracing_service(
        ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, NULL, 0, buf);
    printf("host-fork: configure=%d start=%d\n", s, (int)rocprofiler_start_context(ctx));
    fflush(stdout);
    return 0;
}

rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t v, const char* rt, uint32_t p, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {sizeof(result), init, NULL, NULL};
    (void)v, (void)rt, (void)p;
    id->name = "host-fork";
    return &result;
}

static void*
churn(void* arg)
{
    (void)arg;
    while(!__atomic_load_n(&stop_threads, __ATOMIC_SEQ_CST))
    {
        rocprofiler_kfd_loss_stats_t s = {0};
        s.size                         = sizeof(s);
        rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &s);
        rocprofiler_stop_context(ctx);
        rocprofiler_start_context(ctx);
    }
    return NULL;
}

int
main(void)
{
    pthread_t threads[2];
    for(int i = 0; i < 2; ++i)
        pthread_create(&threads[i], NULL, churn, NULL);
    int ok = 0;
    for(int i = 0; i < 40; ++i)
    {
        pid_t pid = fork();
        if(pid == 0)
        {
            rocprofiler_kfd_loss_stats_t s = {0};
            s.size                         = sizeof(s);
            rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &s);
            rocprofiler_start_context(ctx);
            rocprofiler_stop_context(ctx);
            _exit(7);
        }
        int status = 0;
        if(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 7)
            ++ok;
    }
    __atomic_store_n(&stop_threads, 1, __ATOMIC_SEQ_CST);
    for(int i = 0; i < 2; ++i)
        pthread_join(threads[i], NULL);
    printf("host-fork: children_exited=%d of 40\n", ok);
    return 0;
}
