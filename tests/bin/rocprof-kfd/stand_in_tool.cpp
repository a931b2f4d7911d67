// MIT License - see LICENSE.
//
// Stands in for the bundled tool (ROCPROF_KFD_TOOL_LIBRARY) in the CLI tests: when the SDK
// configures it, it appends "tool <pid> NAME=VALUE" lines for the ROCPROF_KFD_* variables it
// sees to $CLI_TEST_TOOL_OUT. With a fixed output directory (no '%') it also writes an empty
// summary.json there and lists the folder in $ROCPROF_KFD_RUN_LIST, as the real tool would, so
// the command's html and repair steps have input.
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace
{
int
tool_init(rocprofiler_client_finalize_t, void*)
{
    return 0;
}

void
tool_fini(void*)
{
}

void
record_environment()
{
    const char* out = getenv("CLI_TEST_TOOL_OUT");
    if(out == nullptr) return;
    FILE* f = fopen(out, "a");
    if(f == nullptr) return;
    for(char** e = environ; *e; ++e)
        if(strncmp(*e, "ROCPROF_KFD_", 12) == 0) fprintf(f, "tool %d %s\n", getpid(), *e);
    fprintf(f, "tool %d configured\n", getpid());
    fclose(f);
    const char* dir = getenv("ROCPROF_KFD_OUTPUT_DIRECTORY");
    if(dir != nullptr && strchr(dir, '%') == nullptr)
    {
        mkdir(dir, 0755);
        std::string path = std::string{dir} + "/summary.json";
        if(FILE* s = fopen(path.c_str(), "w"))
        {
            fputs("{}\n", s);
            fclose(s);
        }
        const char* list     = getenv("ROCPROF_KFD_RUN_LIST");
        char*       absolute = realpath(dir, nullptr);
        if(list != nullptr && absolute != nullptr)
            if(FILE* l = fopen(list, "a"))
            {
                fprintf(l, "%d\t\t%s\n", getpid(), absolute);
                fclose(l);
            }
        free(absolute);
    }
}
} // namespace

extern "C" rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t, const char*, uint32_t, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {sizeof(result), tool_init, tool_fini,
                                                         nullptr};
    id->name                                          = "rocprof-kfd-stand-in";
    record_environment();
    return &result;
}
