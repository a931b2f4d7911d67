// MIT License - see LICENSE.
//
// An ML-stack style program: glog linked statically (with -rdynamic), initialized with
// InitGoogleLogging and a stderrthreshold that hides everything below FATAL. The SDK (linked)
// must neither break the program at load (two glogs registering the same gflags) nor lose its
// own warnings. A tool whose initialize fails makes the SDK write one warning after main began.
#include <glog/logging.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <cstdio>

namespace
{
int
failing_init(rocprofiler_client_finalize_t, void*)
{
    return -1;
}

rocprofiler_tool_configure_result_t*
configure(uint32_t, const char*, uint32_t, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {sizeof(result), failing_init, nullptr,
                                                         nullptr};
    id->name                                          = "failing-tool";
    return &result;
}
} // namespace

int
main(int, char** argv)
{
    FLAGS_logtostderr     = false;
    FLAGS_stderrthreshold = google::GLOG_FATAL;
    google::InitGoogleLogging(argv[0]);
    std::printf("host-glog: main ran\n");
    std::fflush(stdout);
    int status = rocprofiler_force_configure(configure);
    std::printf("host-glog: force_configure=%d\n", status);
    return 0;
}
