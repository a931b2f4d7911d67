/* MIT License - see LICENSE. */
/**
 * @file rocprofiler.h
 * @brief Umbrella header: includes the whole public API, plus version, clock and status
 *        helpers.
 */
#ifndef ROCPROFILER_SDK_ROCPROFILER_H_
#define ROCPROFILER_SDK_ROCPROFILER_H_

#include <rocprofiler-sdk/agent.h>
#include <rocprofiler-sdk/buffer.h>
#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/context.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>
#include <rocprofiler-sdk/internal_threading.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/version.h>

ROCPROFILER_EXTERN_C_INIT

/** @brief The library's version numbers. Any pointer may be NULL. */
rocprofiler_status_t
rocprofiler_get_version(uint32_t* major, uint32_t* minor, uint32_t* patch) ROCPROFILER_API;

/** @brief Now, in ns on CLOCK_BOOTTIME (the clock of KFD events). */
rocprofiler_status_t
rocprofiler_get_timestamp(rocprofiler_timestamp_t* ts) ROCPROFILER_API;

/** @brief The calling thread's OS thread id (gettid). */
rocprofiler_status_t
rocprofiler_get_thread_id(rocprofiler_thread_id_t* tid) ROCPROFILER_API;

/** @brief The enumerator's own name, e.g. "ROCPROFILER_STATUS_SUCCESS"; NULL if unknown. */
const char*
rocprofiler_get_status_name(rocprofiler_status_t status) ROCPROFILER_API;

/** @brief A short sentence describing the status; NULL if unknown. */
const char*
rocprofiler_get_status_string(rocprofiler_status_t status) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI

#endif /* ROCPROFILER_SDK_ROCPROFILER_H_ */
