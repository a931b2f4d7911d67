// MIT License - see LICENSE.
#include "rocprofiler-sdk/context.hpp"
#include "common/never_destroyed.hpp"
#include "rocprofiler-sdk/api_guard.hpp"
#include "rocprofiler-sdk/kfd/service.hpp"
#include "rocprofiler-sdk/logging.hpp"
#include "rocprofiler-sdk/registration.hpp"

#include <rocprofiler-sdk/context.h>

#include <array>
#include <mutex>

namespace rocprofiler::context
{
namespace
{
std::array<std::atomic<context*>, max_contexts>&
table()
{
    static common::never_destroyed<std::array<std::atomic<context*>, max_contexts>> t;
    return t.get();
}
std::atomic<size_t> context_count{0};

// Serializes create/start/stop; never taken by the reader thread.
std::mutex&
state_mutex()
{
    static common::never_destroyed<std::mutex> m;
    return m.get();
}

bool
uses_kfd(const context& ctx)
{
    return ctx.page_migration.configured || ctx.kfd_events.configured;
}
} // namespace

rocprofiler_status_t
create(uint32_t client, uint64_t* context_id)
{
    std::lock_guard<std::mutex> lock{state_mutex()};
    auto                        index = context_count.load();
    if(index >= max_contexts)
    {
        ROCP_WARNING << "rocprofiler_create_context: the limit of " << max_contexts
                     << " contexts per process is reached";
        return ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    auto* ctx   = new context{};
    ctx->id     = index + 1;
    ctx->client = client;
    table()[index].store(ctx, std::memory_order_release);
    context_count.store(index + 1, std::memory_order_release);
    *context_id = ctx->id;
    return ROCPROFILER_STATUS_SUCCESS;
}

context*
find(uint64_t context_id) noexcept
{
    if(context_id == 0 || context_id > context_count.load(std::memory_order_acquire))
        return nullptr;
    return table()[context_id - 1].load(std::memory_order_acquire);
}

size_t
count() noexcept
{
    return context_count.load(std::memory_order_acquire);
}

context*
at(size_t index) noexcept
{
    return index < count() ? table()[index].load(std::memory_order_acquire) : nullptr;
}

rocprofiler_status_t
start(uint64_t context_id)
{
    // A forked child does not trace (see README) and must not take locks another thread of
    // the parent may have held at fork time.
    if(registration::in_forked_child())
        return find(context_id) ? ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE
                                : ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
    bool needs_reader = false;
    {
        std::lock_guard<std::mutex> lock{state_mutex()};
        auto*                       ctx = find(context_id);
        if(ctx == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
        if(registration::is_client_finalized(ctx->client))
            return ROCPROFILER_STATUS_ERROR_FINALIZED;
        if(ctx->active.load()) return ROCPROFILER_STATUS_SUCCESS;
        ctx->active.store(true);
        ctx->ever_started = true;
        if(uses_kfd(*ctx))
        {
            auto status = kfd::service::context_started(*ctx);
            if(status != ROCPROFILER_STATUS_SUCCESS)
            {
                ctx->active.store(false);
                return status;
            }
            needs_reader = true;
        }
    }
    // Outside every lock: starting the reader runs the tools' thread notifications.
    if(needs_reader)
    {
        auto status = kfd::service::start_reader_if_needed();
        if(status != ROCPROFILER_STATUS_SUCCESS)
        {
            stop(context_id);
            return status;
        }
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

rocprofiler_status_t
stop(uint64_t context_id)
{
    if(registration::in_forked_child())
    {
        auto* ctx = find(context_id);
        if(ctx == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
        ctx->active.store(false); // already inactive in the child
        return ROCPROFILER_STATUS_SUCCESS;
    }
    std::lock_guard<std::mutex> lock{state_mutex()};
    auto*                       ctx = find(context_id);
    if(ctx == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
    if(!ctx->ever_started) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_STARTED;
    if(!ctx->active.load()) return ROCPROFILER_STATUS_SUCCESS;
    ctx->active.store(false);
    // Returns once the reader finished any delivery that saw the context active.
    if(uses_kfd(*ctx)) kfd::service::context_stopped(*ctx);
    return ROCPROFILER_STATUS_SUCCESS;
}

void
stop_all(uint32_t client) noexcept
{
    // Every context of the client, active or not: stop() reads `active` under the lock that
    // start() sets it under. Skipping those that read inactive here, unlocked, could leave
    // running a context whose start() had checked "not finalized" just before the caller
    // marked the client finalized, and set it active just after this loop looked.
    for(size_t i = 0; i < count(); ++i)
    {
        auto* ctx = at(i);
        if(ctx == nullptr) continue;
        if(client != UINT32_MAX && ctx->client != client) continue;
        try
        {
            stop(ctx->id);
        }
        catch(...)
        {
        }
    }
}
void
lock_for_fork() noexcept
{
    state_mutex().lock();
}

void
unlock_after_fork() noexcept
{
    state_mutex().unlock();
}
} // namespace rocprofiler::context

extern "C"
{
    rocprofiler_status_t rocprofiler_create_context(rocprofiler_context_id_t* context_id)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            if(context_id == nullptr)
                                return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
                            uint32_t client = UINT32_MAX;
                            if(auto locked = registration::check_configuration_open(client);
                               locked != ROCPROFILER_STATUS_SUCCESS)
                                return locked;
                            return context::create(client, &context_id->handle);
                        });
    }

    rocprofiler_status_t rocprofiler_start_context(rocprofiler_context_id_t context_id)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            if(registration::is_finalized_or_finalizing())
                                return ROCPROFILER_STATUS_ERROR_FINALIZED;
                            return context::start(context_id.handle);
                        });
    }

    rocprofiler_status_t rocprofiler_stop_context(rocprofiler_context_id_t context_id)
    {
        using namespace rocprofiler;
        return api_call(__func__, [&]() { return context::stop(context_id.handle); });
    }

    rocprofiler_status_t rocprofiler_context_is_active(rocprofiler_context_id_t context_id,
                                                       int*                     status)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            if(status == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
                            auto* ctx = context::find(context_id.handle);
                            if(ctx == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
                            *status = ctx->active.load() ? 1 : 0;
                            return ROCPROFILER_STATUS_SUCCESS;
                        });
    }

    rocprofiler_status_t rocprofiler_context_is_valid(rocprofiler_context_id_t context_id,
                                                      int*                     status)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            if(status == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
                            *status = context::find(context_id.handle) != nullptr ? 1 : 0;
                            return ROCPROFILER_STATUS_SUCCESS;
                        });
    }
}
