/* MIT License - see LICENSE.
 * A program that loads a tool with dlopen, lets the SDK find it (rocprofiler_force_configure
 * makes the SDK initialize and discover loaded tools), then dlcloses it, as plugin hosts do.
 * The SDK keeps calling that tool (buffer callbacks, finalize at exit), so it must have
 * pinned it. argv[1]: the tool library. */
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <dlfcn.h>
#include <stdio.h>

static rocprofiler_tool_configure_result_t*
no_tool(uint32_t version, const char* rt, uint32_t priority, rocprofiler_client_id_t* id)
{
    (void)version;
    (void)rt;
    (void)priority;
    (void)id;
    return NULL;
}

int
main(int argc, char** argv)
{
    if(argc < 2) return 2;
    void* tool = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if(tool == NULL) return 3;
    int status = (int)rocprofiler_force_configure(no_tool);
    int closed = dlclose(tool);
    printf("host-dlclose: force_configure=%d dlclose=%d\n", status, closed);
    fflush(stdout);
    return 0;
}
