// MIT License - see LICENSE.
//
// Buffer-tracing kinds and operations: names, iteration, and configuration of the
// page-migration service (and of the raw KFD event extension) in a context.
#include "rocprofiler-sdk/api_guard.hpp"
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/context.hpp"
#include "rocprofiler-sdk/enum_arg.hpp"
#include "rocprofiler-sdk/fork_locks.hpp"
#include "rocprofiler-sdk/kfd/service.hpp"
#include "rocprofiler-sdk/registration.hpp"

#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/ext/kfd.h>

#include <cxxabi.h>

#include <cstring>

namespace rocprofiler::buffer_tracing
{
namespace
{
constexpr const char* kind_names[ROCPROFILER_BUFFER_TRACING_LAST] = {
    "NONE",
    "HSA_CORE_API",
    "HSA_AMD_EXT_API",
    "HSA_IMAGE_EXT_API",
    "HSA_FINALIZE_EXT_API",
    "HIP_RUNTIME_API",
    "HIP_COMPILER_API",
    "MARKER_CORE_API",
    "MARKER_CONTROL_API",
    "MARKER_NAME_API",
    "MEMORY_COPY",
    "KERNEL_DISPATCH",
    "PAGE_MIGRATION",
    "SCRATCH_MEMORY",
    "CORRELATION_ID_RETIREMENT",
    "RCCL_API",
};

constexpr const char* page_migration_operation_names[ROCPROFILER_PAGE_MIGRATION_LAST] = {
    "PAGE_MIGRATION_NONE",          "PAGE_MIGRATION_PAGE_MIGRATE",   "PAGE_MIGRATION_PAGE_FAULT",
    "PAGE_MIGRATION_QUEUE_SUSPEND", "PAGE_MIGRATION_UNMAP_FROM_GPU",
};

constexpr const char* kfd_event_kind_name = "KFD_EVENT";

constexpr const char* kfd_event_operation_names[ROCPROFILER_KFD_EVENT_LAST] = {
    "KFD_EVENT_NONE",
    "KFD_EVENT_VMFAULT",
    "KFD_EVENT_THERMAL_THROTTLE",
    "KFD_EVENT_GPU_PRE_RESET",
    "KFD_EVENT_GPU_POST_RESET",
    "KFD_EVENT_MIGRATE_START",
    "KFD_EVENT_MIGRATE_END",
    "KFD_EVENT_PAGE_FAULT_START",
    "KFD_EVENT_PAGE_FAULT_END",
    "KFD_EVENT_QUEUE_EVICTION",
    "KFD_EVENT_QUEUE_RESTORE",
    "KFD_EVENT_UNMAP_FROM_GPU",
    "KFD_EVENT_PROCESS_START",
    "KFD_EVENT_PROCESS_END",
    "KFD_EVENT_DROPPED_EVENTS",
    "KFD_EVENT_QUEUE_RESTORE_RESCHEDULED",
};

// Kinds are handled as the integers the caller passed (see enum_arg.hpp).
bool
is_kfd_event_kind(int64_t kind)
{
    return kind == ROCPROFILER_BUFFER_TRACING_KFD_EVENT;
}

// Operation table of a kind: names and count. Kinds this library does not implement have
// no operation table.
bool
operation_table(int64_t kind, const char* const** names, int* count)
{
    if(kind == ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION)
    {
        *names = page_migration_operation_names;
        *count = ROCPROFILER_PAGE_MIGRATION_LAST;
        return true;
    }
    if(is_kfd_event_kind(kind))
    {
        *names = kfd_event_operation_names;
        *count = ROCPROFILER_KFD_EVENT_LAST;
        return true;
    }
    return false;
}

bool
valid_kind(int64_t kind)
{
    return (kind > ROCPROFILER_BUFFER_TRACING_NONE && kind < ROCPROFILER_BUFFER_TRACING_LAST) ||
           is_kfd_event_kind(kind);
}

rocprofiler_status_t
configure(uint64_t context_id, int64_t kind, const rocprofiler_tracing_operation_t* operations,
          size_t operations_count, uint64_t buffer_id)
{
    if(auto locked = registration::check_configuration_open(); locked != ROCPROFILER_STATUS_SUCCESS)
        return locked;
    auto* ctx = context::find(context_id);
    if(ctx == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
    if(!valid_kind(kind)) return ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND;
    const char* const* names    = nullptr;
    int                op_count = 0;
    if(!operation_table(kind, &names, &op_count)) return ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED;
    if(operations == nullptr && operations_count > 0)
        return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
    if(!buffer::exists(buffer_id)) return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
    // Records are delivered with the buffer's context: a buffer of another context (maybe
    // another tool's) would receive records that are not its own.
    if(buffer::owner_context(buffer_id) != context_id)
        return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
    // The reader reads a context's configuration without locks once it may be active.
    if(ctx->active.load()) return ROCPROFILER_STATUS_ERROR_CONTEXT_ERROR;

    uint64_t mask = 0;
    for(size_t i = 0; i < operations_count; ++i)
    {
        auto op = operations[i];
        if(op < 0 || op >= op_count) return ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND;
        mask |= uint64_t{1} << op;
    }
    // No operation listed (or only NONE): every operation.
    if((mask & ~uint64_t{1}) == 0)
        mask = (op_count >= 64) ? ~uint64_t{0} : ((uint64_t{1} << op_count) - 1);
    mask &= ~uint64_t{1};

    auto& config = is_kfd_event_kind(kind) ? ctx->kfd_events : ctx->page_migration;
    if(config.configured) return ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED;
    if(auto available = kfd::service::check_available(); available != ROCPROFILER_STATUS_SUCCESS)
        return available;
    config.operations = mask;
    config.buffer_id  = buffer_id;
    config.configured = true;
    return ROCPROFILER_STATUS_SUCCESS;
}

// Calls a tool's iteration callback: an exception from it (a C++ tool) never unwinds through
// the C API; the iteration stops with one line. False when it threw. A thread cancelled or
// ending with pthread_exit in the callback unwinds on (glibc aborts if that is swallowed).
template <typename F>
ROCP_CATCHES_FORCED_UNWIND bool
call_tool(F&& call)
{
    try
    {
        call();
        return true;
    }
    catch(abi::__forced_unwind&)
    {
        throw;
    }
    catch(...)
    {
        try
        {
            ROCP_ERROR << "a tool's iteration callback threw; the iteration stopped";
        }
        catch(...) // nothing of ours reaches the C caller, even out of memory
        {
        }
        return false;
    }
}
} // namespace
} // namespace rocprofiler::buffer_tracing

extern "C"
{
    rocprofiler_status_t rocprofiler_configure_buffer_tracing_service(
        rocprofiler_context_id_t context_id, rocprofiler_buffer_tracing_kind_t kind,
        const rocprofiler_tracing_operation_t* operations, size_t operations_count,
        rocprofiler_buffer_id_t buffer_id)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            return buffer_tracing::configure(context_id.handle, enum_arg(kind),
                                                             operations, operations_count,
                                                             buffer_id.handle);
                        });
    }

    rocprofiler_status_t
    rocprofiler_query_buffer_tracing_kind_name(rocprofiler_buffer_tracing_kind_t kind_arg,
                                               const char** name, uint64_t* name_len)
    {
        using namespace rocprofiler::buffer_tracing;
        if(name == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
        auto        kind  = rocprofiler::enum_arg(kind_arg);
        const char* found = nullptr;
        if(is_kfd_event_kind(kind))
            found = kfd_event_kind_name;
        else if(kind > ROCPROFILER_BUFFER_TRACING_NONE && kind < ROCPROFILER_BUFFER_TRACING_LAST)
            found = kind_names[kind];
        if(found == nullptr) return ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND;
        *name = found;
        if(name_len) *name_len = std::strlen(found);
        return ROCPROFILER_STATUS_SUCCESS;
    }

    rocprofiler_status_t
    rocprofiler_query_buffer_tracing_kind_operation_name(rocprofiler_buffer_tracing_kind_t kind_arg,
                                                         rocprofiler_tracing_operation_t operation,
                                                         const char** name, uint64_t* name_len)
    {
        using namespace rocprofiler::buffer_tracing;
        if(name == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
        auto kind = rocprofiler::enum_arg(kind_arg);
        if(!valid_kind(kind)) return ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND;
        const char* const* names = nullptr;
        int                count = 0;
        if(!operation_table(kind, &names, &count) || operation < 0 || operation >= count)
            return ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND;
        *name = names[operation];
        if(name_len) *name_len = std::strlen(names[operation]);
        return ROCPROFILER_STATUS_SUCCESS;
    }

    rocprofiler_status_t
    rocprofiler_iterate_buffer_tracing_kinds(rocprofiler_buffer_tracing_kind_cb_t callback,
                                             void*                                data)
    {
        // Upstream kinds only: tools often index arrays by kind below
        // ROCPROFILER_BUFFER_TRACING_LAST, so the extension kind (256) is documented in ext/kfd.h
        // instead of being iterated.
        if(callback == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
        for(int kind = ROCPROFILER_BUFFER_TRACING_NONE + 1; kind < ROCPROFILER_BUFFER_TRACING_LAST;
            ++kind)
        {
            int stop = 0;
            if(!rocprofiler::buffer_tracing::call_tool(
                   [&] {
                       stop = callback(static_cast<rocprofiler_buffer_tracing_kind_t>(kind), data);
                   }))
                return ROCPROFILER_STATUS_ERROR;
            if(stop != 0) break;
        }
        return ROCPROFILER_STATUS_SUCCESS;
    }

    rocprofiler_status_t rocprofiler_iterate_buffer_tracing_kind_operations(
        rocprofiler_buffer_tracing_kind_t              kind_arg,
        rocprofiler_buffer_tracing_kind_operation_cb_t callback, void* data)
    {
        using namespace rocprofiler::buffer_tracing;
        if(callback == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
        auto kind = rocprofiler::enum_arg(kind_arg);
        if(!valid_kind(kind)) return ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND;
        const char* const* names = nullptr;
        int                count = 0;
        if(!operation_table(kind, &names, &count)) return ROCPROFILER_STATUS_SUCCESS;
        for(int op = 0; op < count; ++op)
        {
            int stop = 0;
            if(!call_tool(
                   [&] {
                       stop =
                           callback(static_cast<rocprofiler_buffer_tracing_kind_t>(kind), op, data);
                   }))
                return ROCPROFILER_STATUS_ERROR;
            if(stop != 0) break;
        }
        return ROCPROFILER_STATUS_SUCCESS;
    }

    rocprofiler_status_t rocprofiler_kfd_get_loss_stats(uint64_t                      gpu_id,
                                                        rocprofiler_kfd_loss_stats_t* stats)
    {
        // Not through api_call (no allocation, no exception), but its locks are held across a
        // fork: from a fork handler running inside the SDK's own, not available.
        if(rocprofiler::fork_locks::held_by_this_thread())
            return ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE;
        return rocprofiler::kfd::service::get_loss_stats(gpu_id, stats);
    }
}
