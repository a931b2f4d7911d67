// MIT License - see LICENSE.
//
// Contexts: created only while tools initialize, then fixed; started and stopped from any
// thread. The table is append-only and never freed, so the KFD reader can walk it without
// locks; `active` is the only field that changes after initialization.
#pragma once

#include <rocprofiler-sdk/fwd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rocprofiler::context
{
inline constexpr size_t max_contexts = 1024;

// A buffer-tracing service configured in a context.
struct service_config
{
    bool     configured = false;
    uint64_t buffer_id  = 0;
    uint64_t operations = 0; // bit N set: operation N is traced
};

struct context
{
    uint64_t          id     = 0;
    uint32_t          client = 0;
    std::atomic<bool> active{false};
    bool              ever_started = false;
    service_config    page_migration; // ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION
    service_config    kfd_events;     // ROCPROFILER_BUFFER_TRACING_KFD_EVENT (ext/kfd.h)
};

rocprofiler_status_t create(uint32_t client, uint64_t* context_id);

context* find(uint64_t context_id) noexcept;

// Contexts are ids 1..count(); at(i) for i < count() is never null.
size_t   count() noexcept;
context* at(size_t index) noexcept;

rocprofiler_status_t start(uint64_t context_id);
rocprofiler_status_t stop(uint64_t context_id);

// Stops every context of `client` (every context when client == UINT32_MAX).
void stop_all(uint32_t client) noexcept;

// fork() safety: hold / release the start/stop lock around fork (taken before the service's).
void lock_for_fork() noexcept;
void unlock_after_fork() noexcept;
} // namespace rocprofiler::context
