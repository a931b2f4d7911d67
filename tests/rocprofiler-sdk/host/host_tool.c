/* MIT License - see LICENSE.
 * The tool of the host-process tests: traces page migration into one LOSSLESS buffer and
 * prints each step on stdout with write(2) ("host-tool: ..."). HOST_TOOL_MODE selects what
 * else it does, each a way real tools call back into the SDK:
 *   precreate-calls-api  its rocprofiler_at_internal_thread_create pre-callback reads the loss
 *                        stats and stops/starts its context ("any time, from any thread")
 *   finalize-in-init     calls its finalize function from initialize, then tries to go on
 *   exit-in-callback     calls exit(42) from its first buffer callback
 *   end-thread-in-callback ends the callback thread with pthread_exit in its first buffer
 *                        callback (after counting its records)
 *   end-thread-in-every-callback  every callback ends its thread (pthread_exit); a second
 *                        buffer, never full, is first delivered at exit
 *   finalize-then-end-thread  the first callback waits until all 100 events were read,
 *                        then calls its finalize function (deferred to after the callback);
 *                        the second buffer's callback, first run by that finalization on the
 *                        callback thread, ends the thread (pthread_exit); once that thread
 *                        is gone, a thread of the tool's calls exit(0) (for a program that
 *                        never exits on its own: its exit cannot overtake the finalization)
 *   evil                 prints EVIL-CODE-RAN from configure (tool loading that must not happen)
 *   init-joins-thread    initialize waits for a thread of its own that calls
 *                        rocprofiler_force_configure and the loss stats
 *   finalize-in-inline-callback  initialize waits until records are emitted, then flushes:
 *                        no callback thread runs yet, so the callback runs inline there; it
 *                        calls the tool's finalize function (which must run after it returns)
 *   init-thread-makes-buffer  initialize waits (at most 20 s) for a thread of its own that
 *                        creates a context and a buffer (the SDK pins the callback's library)
 *   init-thread-finalizes initialize waits for a thread of its own that calls the tool's
 *                        finalize function, then goes on configuring
 *   fini-joins-thread    finalize (at exit) waits for a thread of its own that calls
 *                        rocprofiler_force_configure and the tool's finalize function
 * (the last three hang if the SDK holds a lock while it runs initialize or finalize)
 * At finalize it prints the records it received and the SDK's loss counters. */
#define _GNU_SOURCE /* gettid */
#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#include <stdarg.h>
static void
say(const char* fmt, ...)
{
    char    line[512];
    va_list args;
    va_start(args, fmt);
    int n = snprintf(line, sizeof(line), "host-tool: ");
    n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, args);
    va_end(args);
    if(n > (int)sizeof(line) - 2) n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    (void)!write(1, line, (size_t)n);
}

static const char*              mode = "";
static rocprofiler_context_id_t ctx  = {0};
/* precreate-calls-api: a second context, started only after the restart in the pre-callback;
 * the log waits for its mask bit (unmap, id b) so no event flows before the restart ends */
static rocprofiler_context_id_t marker_ctx = {0};
static rocprofiler_buffer_id_t  buf        = {0};
/* end-thread-in-every-callback, finalize-then-end-thread: a second context into a buffer
 * that no watermark delivers (only a flush does). Started first, it sees every event; the
 * first context misses those that come before its own start. */
static rocprofiler_context_id_t late_ctx = {0};
static rocprofiler_buffer_id_t  late_buf = {0};
static rocprofiler_client_id_t* my_id;
static volatile int             records;
static volatile int             finalized;
static volatile int             precreate_done;
static volatile int             precreate_armed; /* set just before start_context(ctx) */

static int
is_mode(const char* m)
{
    return strcmp(mode, m) == 0;
}

static rocprofiler_client_finalize_t my_fini;

static rocprofiler_tool_configure_result_t*
second_tool_configure(uint32_t v, const char* rt, uint32_t p, rocprofiler_client_id_t* id)
{
    (void)v, (void)rt, (void)p, (void)id;
    say("SECOND TOOL CONFIGURED"); /* tools are configured already: must not happen */
    return NULL;
}

static void on_records(rocprofiler_context_id_t c, rocprofiler_buffer_id_t b,
                       rocprofiler_record_header_t** headers, size_t n, void* data, uint64_t drops);

/* The tool's own worker: what it calls depends on the mode; it reports the statuses. */
static void*
worker(void* arg)
{
    const char* where = (const char*)arg;
    if(is_mode("init-thread-makes-buffer"))
    {
        rocprofiler_context_id_t other     = {0};
        rocprofiler_buffer_id_t  other_buf = {0};
        int                      s1        = (int)rocprofiler_create_context(&other);
        int s2 = (int)rocprofiler_create_buffer(other, 4096, 0, ROCPROFILER_BUFFER_POLICY_DISCARD,
                                                on_records, NULL, &other_buf);
        say("%s thread: create_context=%d create_buffer=%d", where, s1, s2);
        return NULL;
    }
    if(is_mode("init-thread-finalizes"))
    {
        my_fini(*my_id);
        say("%s thread: finalize function returned", where);
        return NULL;
    }
    rocprofiler_kfd_loss_stats_t stats = {0};
    stats.size                         = sizeof(stats);
    int s1                             = (int)rocprofiler_force_configure(second_tool_configure);
    int s2 = (int)rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &stats);
    if(my_fini != NULL && is_mode("fini-joins-thread")) my_fini(*my_id); /* already finalizing */
    say("%s thread: force_configure=%d loss_stats=%d", where, s1, s2);
    return NULL;
}

static void
run_worker_and_join(const char* where)
{
    pthread_t t;
    if(pthread_create(&t, NULL, worker, (void*)where) != 0)
    {
        say("%s: pthread_create failed", where);
        return;
    }
    if(is_mode("init-thread-makes-buffer"))
    {
        /* bounded: a hang shows as a line, not as the test's timeout */
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 20;
        if(pthread_timedjoin_np(t, NULL, &deadline) != 0) say("%s: THREAD NEVER RETURNED", where);
        return;
    }
    pthread_join(t, NULL);
}

/* end-thread-in-every-callback: records handed to the second buffer's callback (at exit) */
static int late_records;

/* finalize-then-end-thread: the thread that the second buffer's callback ended */
static long ended_tid;

/* Ends the program once the thread ended_tid is gone (bounded: 10 s, then status 3). */
static void*
exit_after_thread_end(void* arg)
{
    (void)arg;
    for(int i = 0; i < 10000; ++i)
    {
        long tid = __atomic_load_n(&ended_tid, __ATOMIC_SEQ_CST);
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/task/%ld", tid);
        if(tid != 0 && access(path, F_OK) != 0) exit(0);
        usleep(1000);
    }
    say("the callback thread never ended");
    exit(3);
}

/* finalize-in-inline-callback: set while the callback runs */
static volatile int inside_callback;

/* A gate on the SDK's own count, bounded: 10 s without the events fails the test. */
static void
wait_until_received(unsigned long n)
{
    for(int i = 0; i < 10000; ++i)
    {
        rocprofiler_kfd_loss_stats_t s = {0};
        s.size                         = sizeof(s);
        rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &s);
        if(s.events_received >= n) return;
        usleep(1000);
    }
    say("events_received never reached %lu", n);
}

static void
on_records(rocprofiler_context_id_t c, rocprofiler_buffer_id_t b,
           rocprofiler_record_header_t** headers, size_t n, void* data, uint64_t drops)
{
    (void)c;
    (void)b;
    (void)headers;
    (void)data;
    (void)drops;
    if(finalized) say("CALLBACK AFTER FINALIZE");
    __atomic_add_fetch(&records, (int)n, __ATOMIC_SEQ_CST);
    if(is_mode("finalize-in-inline-callback"))
    {
        inside_callback = 1;
        my_fini(*my_id);
        say("inline callback: finalize function returned");
        inside_callback = 0;
    }
    if(is_mode("exit-in-callback")) exit(42);
    static int ended;
    if(is_mode("end-thread-in-callback") && !__atomic_exchange_n(&ended, 1, __ATOMIC_SEQ_CST))
        pthread_exit(NULL);
    if(is_mode("end-thread-in-every-callback"))
    {
        if(b.handle == late_buf.handle) __atomic_add_fetch(&late_records, (int)n, __ATOMIC_SEQ_CST);
        if(gettid() == getpid()) say("CALLBACK ON THE MAIN THREAD");
        pthread_exit(NULL);
    }
    if(is_mode("finalize-then-end-thread"))
    {
        static int asked;
        if(b.handle == late_buf.handle)
        {
            __atomic_store_n(&ended_tid, (long)gettid(), __ATOMIC_SEQ_CST);
            pthread_exit(NULL);
        }
        if(!__atomic_exchange_n(&asked, 1, __ATOMIC_SEQ_CST))
        {
            wait_until_received(100);
            my_fini(*my_id);
        }
    }
}

static void
precreate(rocprofiler_runtime_library_t lib, void* data)
{
    (void)lib;
    (void)data;
    if(!is_mode("precreate-calls-api") || !precreate_armed || precreate_done) return;
    precreate_done                     = 1;
    rocprofiler_kfd_loss_stats_t stats = {0};
    stats.size                         = sizeof(stats);
    int s1 = (int)rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &stats);
    int s2 = (int)rocprofiler_stop_context(ctx);
    int s3 = (int)rocprofiler_start_context(ctx);
    int s4 = (int)rocprofiler_start_context(marker_ctx);
    say("precreate loss_stats=%d stop=%d start=%d marker_start=%d", s1, s2, s3, s4);
}

static int
tool_init(rocprofiler_client_finalize_t fini, void* data)
{
    (void)data;
    my_fini = fini;
    rocprofiler_at_internal_thread_create(precreate, NULL, ROCPROFILER_LIBRARY, NULL);
    rocprofiler_create_context(&ctx);
    if(is_mode("init-joins-thread") || is_mode("init-thread-finalizes") ||
       is_mode("init-thread-makes-buffer"))
        run_worker_and_join("initialize");
    if(is_mode("finalize-in-init"))
    {
        /* the context exists; the tool then finalizes itself and tries to go on */
        fini(*my_id);
        rocprofiler_context_id_t another = {0};
        say("after own finalize: create_context=%d", (int)rocprofiler_create_context(&another));
    }
    /* exit-in-callback, end-thread-in-callback: a watermark of one byte delivers at once,
     * while main still runs */
    size_t watermark = is_mode("exit-in-callback") || is_mode("end-thread-in-callback") ||
                               is_mode("end-thread-in-every-callback") ||
                               is_mode("finalize-then-end-thread")
                           ? 1
                           : 32768;
    int    s2        = (int)rocprofiler_create_buffer(
                  ctx, 65536, watermark, ROCPROFILER_BUFFER_POLICY_LOSSLESS, on_records, NULL, &buf);
    /* precreate-calls-api: ctx traces every operation but unmaps, which only the marker
     * context enables: if ctx enabled them, its own first start would open the log's wait-mask
     * gate before the pre-callback's stop, and the events replayed while it is stopped would
     * be filtered out by the (emulated) kernel */
    rocprofiler_tracing_operation_t not_unmap[] = {ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE,
                                                   ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT,
                                                   ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND};
    int                             gated       = is_mode("precreate-calls-api");
    size_t                          n_ops = gated ? sizeof(not_unmap) / sizeof(not_unmap[0]) : 0;

    int s3 = (int)rocprofiler_configure_buffer_tracing_service(
        ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, gated ? not_unmap : NULL, n_ops, buf);
    if(gated)
    {
        /* its own buffer: a context's services may only use its own buffers */
        rocprofiler_tracing_operation_t unmap      = ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU;
        rocprofiler_buffer_id_t         marker_buf = {0};
        rocprofiler_create_context(&marker_ctx);
        int m1 = (int)rocprofiler_create_buffer(marker_ctx, 4096, 2048,
                                                ROCPROFILER_BUFFER_POLICY_LOSSLESS, on_records,
                                                NULL, &marker_buf);
        int m2 = (int)rocprofiler_configure_buffer_tracing_service(
            marker_ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, &unmap, 1, marker_buf);
        say("marker create_buffer=%d configure=%d", m1, m2);
        precreate_armed = 1; /* the reader thread is created by this first start */
    }
    if(is_mode("end-thread-in-every-callback") || is_mode("finalize-then-end-thread"))
    {
        rocprofiler_create_context(&late_ctx);
        int l1 = (int)rocprofiler_create_buffer(late_ctx, 65536, 65536,
                                                ROCPROFILER_BUFFER_POLICY_LOSSLESS, on_records,
                                                NULL, &late_buf);
        int l2 = (int)rocprofiler_configure_buffer_tracing_service(
            late_ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, NULL, 0, late_buf);
        int l3 = (int)rocprofiler_start_context(late_ctx);
        say("late create_buffer=%d configure=%d start=%d", l1, l2, l3);
        pthread_t t;
        if(is_mode("finalize-then-end-thread") &&
           pthread_create(&t, NULL, exit_after_thread_end, NULL) == 0)
            pthread_detach(t);
    }
    int s4 = (int)rocprofiler_start_context(ctx);
    say("initialize create_buffer=%d configure=%d start=%d", s2, s3, s4);
    if(is_mode("finalize-in-inline-callback"))
    {
        wait_until_received(100); /* the log's 50 pairs: 50 records */
        for(int i = 0; i < 10000; ++i)
        {
            rocprofiler_kfd_loss_stats_t st = {0};
            st.size                         = sizeof(st);
            rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &st);
            if(st.records_emitted >= 50) break;
            usleep(1000);
        }
        say("initialize flush=%d", (int)rocprofiler_flush_buffer(buf));
    }
    return 0;
}

static void
tool_fini(void* data)
{
    (void)data;
    if(inside_callback) say("FINALIZE INSIDE ITS OWN CALLBACK");
    if(is_mode("fini-joins-thread")) run_worker_and_join("finalize");
    rocprofiler_kfd_loss_stats_t s = {0};
    s.size                         = sizeof(s);
    rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &s);
    say("finalize records=%d emitted=%lu dropped=%lu saturations=%lu overlong=%lu "
        "malformed=%lu received=%lu gap=%lu orphan_ends=%lu late_records=%d",
        records, (unsigned long)s.records_emitted, (unsigned long)s.records_dropped,
        (unsigned long)s.fifo_saturations, (unsigned long)s.lines_overlong,
        (unsigned long)s.lines_malformed, (unsigned long)s.events_received,
        (unsigned long)s.starts_lost_in_gap, (unsigned long)s.ends_without_start,
        __atomic_load_n(&late_records, __ATOMIC_SEQ_CST));
    finalized = 1;
}

rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t version, const char* rt, uint32_t priority,
                      rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), tool_init, tool_fini, NULL};
    (void)version;
    (void)rt;
    (void)priority;
    mode = getenv("HOST_TOOL_MODE") ? getenv("HOST_TOOL_MODE") : "";
    if(is_mode("evil")) say("EVIL-CODE-RAN");
    id->name = "host-tool";
    my_id    = id;
    return &result;
}
