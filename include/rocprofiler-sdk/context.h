/* MIT License - see LICENSE. */
/**
 * @file context.h
 * @brief Contexts group services and buffers; starting or stopping one turns its tracing on
 *        or off as a unit.
 */
#ifndef ROCPROFILER_SDK_CONTEXT_H_
#define ROCPROFILER_SDK_CONTEXT_H_

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/**
 * @brief Creates a context (only while the tool initializes).
 * @return SUCCESS; INVALID_ARGUMENT (NULL); CONFIGURATION_LOCKED (outside initialization);
 *         FINALIZED; OUT_OF_RESOURCES (1024 contexts per process exist already).
 */
rocprofiler_status_t
rocprofiler_create_context(rocprofiler_context_id_t* context_id) ROCPROFILER_API;

/**
 * @brief Starts a context: its services begin producing records. Any thread, any time after
 *        creation. Starting an active context is a no-op returning SUCCESS.
 * @return SUCCESS; CONTEXT_NOT_FOUND; FINALIZED; or why a service could not start (e.g.
 *         NOT_AVAILABLE in a forked child, OUT_OF_RESOURCES when a thread cannot start).
 */
rocprofiler_status_t
rocprofiler_start_context(rocprofiler_context_id_t context_id) ROCPROFILER_API;

/**
 * @brief Stops a context. After it returns, no new record is written to its buffers.
 * @return SUCCESS; CONTEXT_NOT_FOUND; CONTEXT_NOT_STARTED when it was never started.
 */
rocprofiler_status_t
rocprofiler_stop_context(rocprofiler_context_id_t context_id) ROCPROFILER_API;

/**
 * @brief Whether a context is started.
 * @return SUCCESS with *status 0/1; CONTEXT_NOT_FOUND; INVALID_ARGUMENT (NULL).
 */
rocprofiler_status_t
rocprofiler_context_is_active(rocprofiler_context_id_t context_id, int* status) ROCPROFILER_API;

/**
 * @brief Whether a context id names a usable context.
 * @return SUCCESS with *status 0/1; INVALID_ARGUMENT (NULL).
 */
rocprofiler_status_t
rocprofiler_context_is_valid(rocprofiler_context_id_t context_id, int* status) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI

#endif /* ROCPROFILER_SDK_CONTEXT_H_ */
