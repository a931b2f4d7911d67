// MIT License - see LICENSE.
//
// Tool registration and the SDK's life cycle: discovery of tools (force-configured, listed
// in ROCP_TOOL_LIBRARIES, preloaded or linked), their configure/initialize calls, and
// finalization at exit (drain, deliver, then each tool's finalize exactly once).
#pragma once

#include <rocprofiler-sdk/fwd.h>
#include <rocprofiler-sdk/registration.h>

#include <cstdint>

namespace rocprofiler::registration
{
enum class phase : int
{
    uninitialized = 0,
    initializing,
    initialized,
    finalizing,
    finalized,
};

phase current_phase() noexcept;

// SUCCESS while tools initialize; CONFIGURATION_LOCKED before or after; FINALIZED after.
rocprofiler_status_t check_configuration_open() noexcept;
// The same, with the client it checked in `client`. A call that configures something for the
// configuring client takes it from here: reading configuring_client() again after the check
// could find the next tool's id, or none, if the initialize ended in between (a call made on
// a tool's own thread).
rocprofiler_status_t check_configuration_open(uint32_t& client) noexcept;

bool is_finalized_or_finalizing() noexcept;

// True once the tool with this client id was finalized (or withdrawn): its later
// configuration and start calls return ROCPROFILER_STATUS_ERROR_FINALIZED.
bool is_client_finalized(uint32_t client_id) noexcept;

// Client id of the tool being configured/initialized right now (UINT32_MAX if none).
uint32_t configuring_client() noexcept;

// Runs at library load: initializes when any tool is found, else waits for
// rocprofiler_force_configure.
void on_library_load() noexcept;

// Discovers and initializes tools; idempotent.
void initialize() noexcept;

// Drains, delivers and finalizes every tool; idempotent. Registered with atexit.
void finalize() noexcept;

// Pins the shared object holding `code` (a tool's function the SDK will call later) so that
// a dlclose by the program never unmaps it. The main program and unknown addresses: no-op.
void pin_library_of(const void* code) noexcept;

// True in a child created by fork() after the SDK initialized in the parent.
bool in_forked_child() noexcept;
} // namespace rocprofiler::registration
