/* MIT License - see LICENSE.
 * A program whose own fork handlers are registered before the SDK's (early in main, before
 * rocprofiler_force_configure initializes the SDK) and call the SDK: glibc runs them while
 * the SDK's prepare handler holds its locks (prepare handlers run in reverse order of
 * registration, child and parent handlers in order). The calls must return, not wait for
 * those locks. An alarm ends the program if one waits. argv[1]: "prepare" or "child". */
#include <rocprofiler-sdk/buffer.h>
#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static rocprofiler_context_id_t context;
static rocprofiler_buffer_id_t  buffer;
static const char*              mode = "";

static void
on_records(rocprofiler_context_id_t c, rocprofiler_buffer_id_t b,
           rocprofiler_record_header_t** headers, size_t count, void* data, uint64_t drops)
{
    (void)c, (void)b, (void)headers, (void)count, (void)data, (void)drops;
}

static void
prepare(void)
{
    if(strcmp(mode, "prepare") != 0) return;
    alarm(10);
    int flushed = rocprofiler_flush_buffer(buffer);
    alarm(0);
    dprintf(1, "host-atfork-first: prepare flush=%d\n", flushed);
}

static void
child(void)
{
    if(strcmp(mode, "child") != 0) return;
    alarm(10);
    int                          stopped = rocprofiler_stop_context(context);
    rocprofiler_kfd_loss_stats_t stats;
    memset(&stats, 0, sizeof(stats));
    stats.size = sizeof(stats);
    int read   = rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &stats);
    alarm(0);
    dprintf(1, "host-atfork-first: child stop_context=%d loss_stats=%d\n", stopped, read);
}

static int
initialize(rocprofiler_client_finalize_t fini, void* data)
{
    (void)fini, (void)data;
    int created =
        rocprofiler_create_context(&context) == ROCPROFILER_STATUS_SUCCESS &&
        rocprofiler_create_buffer(context, 4096, 64, ROCPROFILER_BUFFER_POLICY_DISCARD, on_records,
                                  NULL, &buffer) == ROCPROFILER_STATUS_SUCCESS;
    return created ? 0 : -1;
}

static rocprofiler_tool_configure_result_t*
configure(uint32_t version, const char* runtime, uint32_t priority, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {sizeof(result), initialize, NULL, NULL};
    (void)version, (void)runtime, (void)priority;
    id->name = "host-atfork-first";
    return &result;
}

int
main(int argc, char** argv)
{
    mode = argc > 1 ? argv[1] : "";
    pthread_atfork(prepare, NULL, child); /* before the SDK's */
    int   configured = (int)rocprofiler_force_configure(configure);
    pid_t pid        = fork();
    if(pid == 0) _exit(7);
    int status = 0;
    waitpid(pid, &status, 0);
    /* After the fork, outside any handler, the same calls work. */
    int flushed = rocprofiler_flush_buffer(buffer);
    dprintf(1, "host-atfork-first: force_configure=%d child=%s %d flush after=%d\n", configured,
            WIFSIGNALED(status) ? "signal" : "exit",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), flushed);
    return 0;
}
