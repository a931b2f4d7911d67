// MIT License - see LICENSE.
//
// Status names and descriptions, version, clock and thread id: the small C API of
// rocprofiler.h. Plain tables indexed by the enum value.
#include "rocprofiler-sdk/api_guard.hpp"
#include "rocprofiler-sdk/enum_arg.hpp"

#include <rocprofiler-sdk/rocprofiler.h>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace
{
struct status_text
{
    const char* name;
    const char* description;
};

#define ROCP_STATUS_ENTRY(NAME, TEXT)                                                              \
    {                                                                                              \
        "ROCPROFILER_STATUS_" #NAME, TEXT                                                          \
    }
constexpr status_text status_table[] = {
    ROCP_STATUS_ENTRY(SUCCESS, "Success"),
    ROCP_STATUS_ENTRY(ERROR, "General error"),
    ROCP_STATUS_ENTRY(ERROR_CONTEXT_NOT_FOUND, "Context not found"),
    ROCP_STATUS_ENTRY(ERROR_BUFFER_NOT_FOUND, "Buffer not found"),
    ROCP_STATUS_ENTRY(ERROR_KIND_NOT_FOUND, "Tracing kind not found"),
    ROCP_STATUS_ENTRY(ERROR_OPERATION_NOT_FOUND, "Operation not found for this kind"),
    ROCP_STATUS_ENTRY(ERROR_THREAD_NOT_FOUND, "Callback thread not found"),
    ROCP_STATUS_ENTRY(ERROR_AGENT_NOT_FOUND, "Agent not found"),
    ROCP_STATUS_ENTRY(ERROR_COUNTER_NOT_FOUND, "Counter not found"),
    ROCP_STATUS_ENTRY(ERROR_CONTEXT_ERROR, "Context cannot be used"),
    ROCP_STATUS_ENTRY(ERROR_CONTEXT_INVALID, "Context configuration is invalid"),
    ROCP_STATUS_ENTRY(ERROR_CONTEXT_NOT_STARTED, "Context was not started"),
    ROCP_STATUS_ENTRY(ERROR_CONTEXT_CONFLICT, "Context conflicts with another context"),
    ROCP_STATUS_ENTRY(ERROR_BUFFER_BUSY, "Buffer is busy"),
    ROCP_STATUS_ENTRY(ERROR_SERVICE_ALREADY_CONFIGURED, "Service already configured"),
    ROCP_STATUS_ENTRY(ERROR_CONFIGURATION_LOCKED,
                      "Configuration is only allowed while the tool initializes"),
    ROCP_STATUS_ENTRY(ERROR_NOT_IMPLEMENTED, "Not implemented by this library"),
    ROCP_STATUS_ENTRY(ERROR_INCOMPATIBLE_ABI, "Incompatible ABI (struct size or version)"),
    ROCP_STATUS_ENTRY(ERROR_INVALID_ARGUMENT, "Invalid argument"),
    ROCP_STATUS_ENTRY(ERROR_METRIC_NOT_VALID_FOR_AGENT, "Metric not valid for this agent"),
    ROCP_STATUS_ENTRY(ERROR_FINALIZED, "Library already finalized"),
    ROCP_STATUS_ENTRY(ERROR_HSA_NOT_LOADED, "HSA runtime not loaded"),
    ROCP_STATUS_ENTRY(ERROR_DIM_NOT_FOUND, "Dimension not found"),
    ROCP_STATUS_ENTRY(ERROR_PROFILE_COUNTER_NOT_FOUND, "Counter not found in profile"),
    ROCP_STATUS_ENTRY(ERROR_AST_GENERATION_FAILED, "Counter expression could not be built"),
    ROCP_STATUS_ENTRY(ERROR_AST_NOT_FOUND, "Counter expression not found"),
    ROCP_STATUS_ENTRY(ERROR_AQL_NO_EVENT_COORD, "AQL event coordinate not found"),
    ROCP_STATUS_ENTRY(ERROR_INCOMPATIBLE_KERNEL, "Kernel driver is too old for this feature"),
    ROCP_STATUS_ENTRY(ERROR_OUT_OF_RESOURCES, "Out of resources"),
    ROCP_STATUS_ENTRY(ERROR_PROFILE_NOT_FOUND, "Profile not found"),
    ROCP_STATUS_ENTRY(ERROR_AGENT_DISPATCH_CONFLICT, "Agent and dispatch profiling conflict"),
    ROCP_STATUS_ENTRY(INTERNAL_NO_AGENT_CONTEXT, "Internal: no agent context"),
    ROCP_STATUS_ENTRY(ERROR_SAMPLE_RATE_EXCEEDED, "Sample rate exceeded"),
    ROCP_STATUS_ENTRY(ERROR_NO_PROFILE_QUEUE, "No profile queue"),
    ROCP_STATUS_ENTRY(ERROR_NO_HARDWARE_COUNTERS, "No hardware counters"),
    ROCP_STATUS_ENTRY(ERROR_AGENT_MISMATCH, "Agent mismatch"),
    ROCP_STATUS_ENTRY(ERROR_NOT_AVAILABLE, "Not available on this system"),
    ROCP_STATUS_ENTRY(ERROR_EXCEEDS_HW_LIMIT, "Exceeds a hardware limit"),
    ROCP_STATUS_ENTRY(ERROR_AGENT_ARCH_NOT_SUPPORTED, "Agent architecture not supported"),
};
#undef ROCP_STATUS_ENTRY
static_assert(sizeof(status_table) / sizeof(status_table[0]) == ROCPROFILER_STATUS_LAST,
              "one entry per status");

const status_text*
find_status(const rocprofiler_status_t& status)
{
    auto index = rocprofiler::enum_arg(status); // any integer a C caller passed
    if(index < 0 || index >= ROCPROFILER_STATUS_LAST) return nullptr;
    return &status_table[index];
}
} // namespace

extern "C"
{
    rocprofiler_status_t rocprofiler_get_version(uint32_t* major, uint32_t* minor, uint32_t* patch)
    {
        if(major) *major = ROCPROFILER_VERSION_MAJOR;
        if(minor) *minor = ROCPROFILER_VERSION_MINOR;
        if(patch) *patch = ROCPROFILER_VERSION_PATCH;
        return ROCPROFILER_STATUS_SUCCESS;
    }

    rocprofiler_status_t rocprofiler_get_timestamp(rocprofiler_timestamp_t* ts)
    {
        if(ts == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
        struct timespec now = {};
        if(clock_gettime(CLOCK_BOOTTIME, &now) != 0) return ROCPROFILER_STATUS_ERROR;
        *ts =
            static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
        return ROCPROFILER_STATUS_SUCCESS;
    }

    rocprofiler_status_t rocprofiler_get_thread_id(rocprofiler_thread_id_t* tid)
    {
        if(tid == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
        *tid = static_cast<rocprofiler_thread_id_t>(::syscall(SYS_gettid));
        return ROCPROFILER_STATUS_SUCCESS;
    }

    const char* rocprofiler_get_status_name(rocprofiler_status_t status)
    {
        const auto* entry = find_status(status);
        return entry ? entry->name : nullptr;
    }

    const char* rocprofiler_get_status_string(rocprofiler_status_t status)
    {
        const auto* entry = find_status(status);
        return entry ? entry->description : nullptr;
    }
}
