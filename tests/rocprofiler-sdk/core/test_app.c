/* MIT License - see LICENSE.
 * Host applications for registration tests. APP_FORCE: registers a configure function with
 * rocprofiler_force_configure from main. APP_USES_SDK: calls the SDK from main (linked). */
#include <rocprofiler-sdk/rocprofiler.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void
say(const char* what, int value)
{
    char line[128];
    int  n = snprintf(line, sizeof(line), "app: %s=%d\n", what, value);
    (void)!write(1, line, (size_t)n);
}

#ifdef APP_FORCE
static int
forced_init(rocprofiler_client_finalize_t fini, void* data)
{
    rocprofiler_context_id_t ctx = {0};
    say("forced initialize create_context", (int)rocprofiler_create_context(&ctx));
    (void)fini;
    (void)data;
    return 0;
}

static void
forced_fini(void* data)
{
    (void)data;
    say("forced finalize", 1);
}

static rocprofiler_tool_configure_result_t*
forced_configure(uint32_t version, const char* rt, uint32_t priority, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), forced_init, forced_fini, NULL};
    (void)version;
    (void)rt;
    (void)id;
    say("forced configure priority", (int)priority);
    return &result;
}
#endif

int
main(void)
{
#ifdef APP_FORCE
    say("force_configure", (int)rocprofiler_force_configure(forced_configure));
    say("force_configure again", (int)rocprofiler_force_configure(forced_configure));
#endif
#ifdef APP_USES_SDK
    int init = 0;
    rocprofiler_is_initialized(&init);
    say("main is_initialized", init);
    rocprofiler_context_id_t ctx = {0};
    say("main create_context", (int)rocprofiler_create_context(&ctx));
#endif
#ifdef APP_FORK
    /* The child lives while the parent's reader is busy, then exits normally (running the
     * SDK's exit handler in the child). */
    {
        pid_t child = fork();
        if(child == 0)
        {
            usleep(200 * 1000);
            say("child done", 0);
            exit(0);
        }
        int status = -1;
        waitpid(child, &status, 0);
        say("child exit", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
#endif
#ifdef APP_WAIT
    /* Waits until a tool ends the process from a callback (or the test kills it). */
    for(;;)
        pause();
#endif
    say("main done", 0);
    return 0;
}
