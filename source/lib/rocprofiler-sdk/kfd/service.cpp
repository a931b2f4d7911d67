// MIT License - see LICENSE. (temporary: replaced by the real service)
#include "rocprofiler-sdk/kfd/service.hpp"

namespace rocprofiler::kfd::service
{
rocprofiler_status_t
check_available() noexcept
{
    return ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED;
}
rocprofiler_status_t
context_started(const context::context&) noexcept
{
    return ROCPROFILER_STATUS_SUCCESS;
}
void
context_stopped(const context::context&) noexcept
{
}
void
shutdown() noexcept
{
}
void
forget_after_fork() noexcept
{
}
rocprofiler_status_t
get_loss_stats(uint64_t, rocprofiler_kfd_loss_stats_t*) noexcept
{
    return ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED;
}
} // namespace rocprofiler::kfd::service
