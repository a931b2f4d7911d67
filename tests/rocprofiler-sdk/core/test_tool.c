/* MIT License - see LICENSE.
 * A minimal tool for registration tests, written in C against the public headers only.
 * Compiled several times with TOOL_NAME set; prints each life-cycle step on stdout with
 * write(2) so that the order of lines from several tools and the app is exact.
 * Behaviour switches (environment): TEST_TOOL_DECLINE=<name> returns NULL from configure;
 * TEST_TOOL_FAIL_INIT=<name> returns -1 from initialize; TEST_TOOL_EARLY_FINALIZE=<name>
 * calls the finalize function from initialize; TEST_TOOL_EXIT_IN_INIT=<name> calls exit(3) from
 * initialize; TEST_TOOL_EXIT_ON_THREAD_IN_INIT=<name> starts a thread that calls exit(4), and
 * its initialize never returns; TEST_TOOL_EXIT_IN_PRECREATE=<name> calls exit(5) from its
 * notification before the SDK creates a thread; TEST_TOOL_FORK_IN_INIT=<name> forks from a thread
 * of its own while its initialize waits for that thread, and the child prints what it sees.
 * Built with TOOL_FORCES_IN_CONSTRUCTOR, the tool
 * exports no rocprofiler_configure: its constructor passes its configure function to
 * rocprofiler_force_configure instead (a tool listed in ROCP_TOOL_LIBRARIES runs it while the
 * SDK loads it). */
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STR2(x) #x
#define STR(x) STR2(x)
static const char* tool_name = STR(TOOL_NAME);

static void
say(const char* fmt, int a, int b)
{
    char line[256];
    int  n = snprintf(line, sizeof(line), "%s: ", tool_name);
    n += snprintf(line + n, sizeof(line) - (size_t)n, fmt, a, b);
    line[n++] = '\n';
    (void)!write(1, line, (size_t)n);
}

static int
env_is_me(const char* var)
{
    const char* v = getenv(var);
    return v != NULL && strcmp(v, tool_name) == 0;
}

static rocprofiler_client_id_t* my_id = NULL;

static void
exit_5(rocprofiler_runtime_library_t lib, void* data)
{
    say("precreate exit(%d)", 5, 0);
    exit(5);
    (void)lib;
    (void)data;
}

static void*
fork_and_wait(void* unused)
{
    pid_t child = fork();
    if(child == 0)
    {
        int                      init = 0;
        rocprofiler_context_id_t ctx  = {0};
        rocprofiler_is_initialized(&init);
        say("fork child is_initialized=%d create_context=%d", init,
            (int)rocprofiler_create_context(&ctx));
        _exit(0);
    }
    int status = 0;
    if(child > 0) waitpid(child, &status, 0);
    return unused;
}

static void*
exit_4(void* unused)
{
    say("thread exit(%d)", 4, 0);
    exit(4);
    return unused;
}

static int
tool_init(rocprofiler_client_finalize_t fini, void* data)
{
    int init = 0, fin = 0;
    rocprofiler_is_initialized(&init);
    rocprofiler_is_finalized(&fin);
    say("initialize is_initialized=%d is_finalized=%d", init, fin);
    rocprofiler_context_id_t ctx = {0};
    say("create_context=%d data_ok=%d", (int)rocprofiler_create_context(&ctx),
        data == (void*)&tool_name);
    if(env_is_me("TEST_TOOL_FAIL_INIT")) return -1;
    if(env_is_me("TEST_TOOL_EARLY_FINALIZE")) fini(*my_id);
    if(env_is_me("TEST_TOOL_EXIT_IN_PRECREATE"))
        rocprofiler_at_internal_thread_create(exit_5, NULL, ROCPROFILER_LIBRARY, NULL);
    if(env_is_me("TEST_TOOL_FORK_IN_INIT"))
    {
        pthread_t thread;
        if(pthread_create(&thread, NULL, fork_and_wait, NULL) == 0) pthread_join(thread, NULL);
    }
    if(env_is_me("TEST_TOOL_EXIT_IN_INIT"))
    {
        say("initialize exit(%d)", 3, 0);
        exit(3);
    }
    if(env_is_me("TEST_TOOL_EXIT_ON_THREAD_IN_INIT"))
    {
        pthread_t thread;
        if(pthread_create(&thread, NULL, exit_4, NULL) == 0)
            for(;;)
                pause(); /* the exit ends it */
    }
    return 0;
}

static void
tool_fini(void* data)
{
    int init = 0, fin = 0;
    rocprofiler_is_initialized(&init);
    rocprofiler_is_finalized(&fin);
    rocprofiler_context_id_t ctx = {0};
    say("finalize is_finalized=%d create_context=%d", fin, (int)rocprofiler_create_context(&ctx));
    (void)data;
}

#ifdef TOOL_FORCES_IN_CONSTRUCTOR
#    define TOOL_CONFIGURE_LINKAGE static
#    define TOOL_CONFIGURE forced_configure
#else
#    define TOOL_CONFIGURE_LINKAGE
#    define TOOL_CONFIGURE rocprofiler_configure
#endif
TOOL_CONFIGURE_LINKAGE rocprofiler_tool_configure_result_t*
TOOL_CONFIGURE(uint32_t version, const char* runtime_version, uint32_t priority,
               rocprofiler_client_id_t* client_id)
{
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), tool_init, tool_fini, (void*)&tool_name};
    int init = 0;
    rocprofiler_is_initialized(&init);
    say("configure priority=%d version_ok=%d", (int)priority,
        version == ROCPROFILER_VERSION && runtime_version != NULL);
    say("configure client=%d is_initialized=%d", (int)client_id->handle, init);
    client_id->name = tool_name;
    my_id           = client_id;
    if(env_is_me("TEST_TOOL_DECLINE")) return NULL;
    return &result;
}

#ifdef TOOL_FORCES_IN_CONSTRUCTOR
__attribute__((constructor)) static void
force_in_constructor(void)
{
    say("constructor force_configure=%d", (int)rocprofiler_force_configure(forced_configure), 0);
}
#endif
