/* MIT License - see LICENSE. */
/**
 * @file registration.h
 * @brief How a tool joins the SDK.
 *
 * A tool exports rocprofiler_configure(). The SDK finds it (linked into the application,
 * preloaded, listed in ROCP_TOOL_LIBRARIES, or passed to rocprofiler_force_configure), calls
 * it once, then calls the returned initialize() during which the tool creates its contexts,
 * buffers and services, and finally calls finalize() once at shutdown.
 */
#ifndef ROCPROFILER_SDK_REGISTRATION_H_
#define ROCPROFILER_SDK_REGISTRATION_H_

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/** Function a tool may call to ask for its own early finalization. */
typedef void (*rocprofiler_client_finalize_t)(rocprofiler_client_id_t);

/** Tool's initialization: returns 0 on success; non-zero withdraws the tool. */
typedef int (*rocprofiler_tool_initialize_t)(rocprofiler_client_finalize_t finalize_func,
                                             void*                         tool_data);

/** Tool's finalization, called exactly once. */
typedef void (*rocprofiler_tool_finalize_t)(void* tool_data);

/** What a tool's rocprofiler_configure returns. */
typedef struct rocprofiler_tool_configure_result_t
{
    size_t                        size;       /**< sizeof(rocprofiler_tool_configure_result_t) */
    rocprofiler_tool_initialize_t initialize; /**< may be NULL */
    rocprofiler_tool_finalize_t   finalize;   /**< may be NULL */
    void*                         tool_data;  /**< passed back to initialize and finalize */
} rocprofiler_tool_configure_result_t;

/** Signature of rocprofiler_configure, for rocprofiler_force_configure. */
typedef rocprofiler_tool_configure_result_t* (*rocprofiler_configure_func_t)(
    uint32_t                 version,
    const char*              runtime_version,
    uint32_t                 priority,
    rocprofiler_client_id_t* client_id);

/**
 * @brief Whether the SDK is initialized.
 * @param[out] status 0: not yet, 1: done, -1: in progress.
 * @return SUCCESS, or INVALID_ARGUMENT when @p status is NULL.
 */
rocprofiler_status_t
rocprofiler_is_initialized(int* status) ROCPROFILER_API;

/**
 * @brief Whether the SDK is finalized.
 * @param[out] status 0: not yet, 1: done, -1: in progress.
 * @return SUCCESS, or INVALID_ARGUMENT when @p status is NULL.
 */
rocprofiler_status_t
rocprofiler_is_finalized(int* status) ROCPROFILER_API;

/**
 * @brief The entry point a tool defines and exports (the SDK does not define it).
 *
 * @param version         ROCPROFILER_VERSION of the SDK.
 * @param runtime_version the SDK's version as a string.
 * @param priority        0 for the first tool found, 1 for the next, ...
 * @param client_id       the tool's identity; the tool may set its name.
 * @return the tool's callbacks, or NULL to decline.
 */
rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t                 version,
                      const char*              runtime_version,
                      uint32_t                 priority,
                      rocprofiler_client_id_t* client_id) ROCPROFILER_PUBLIC_API;

/**
 * @brief Registers a configure function from within the application.
 *
 * Call it before the SDK initializes (e.g. early in main, or from a static constructor).
 * @return SUCCESS; INVALID_ARGUMENT for NULL; CONFIGURATION_LOCKED once initialization ran.
 */
rocprofiler_status_t
rocprofiler_force_configure(rocprofiler_configure_func_t configure_func) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI

#endif /* ROCPROFILER_SDK_REGISTRATION_H_ */
