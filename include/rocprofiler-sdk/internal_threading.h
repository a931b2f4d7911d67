/* MIT License - see LICENSE. */
/**
 * @file internal_threading.h
 * @brief The SDK's own threads: notifications around their creation, and callback threads
 *        that run buffer callbacks.
 */
#ifndef ROCPROFILER_SDK_INTERNAL_THREADING_H_
#define ROCPROFILER_SDK_INTERNAL_THREADING_H_

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/** Called before/after the SDK creates an internal thread for one of the libraries. */
typedef void (*rocprofiler_internal_thread_library_cb_t)(rocprofiler_runtime_library_t, void*);

/**
 * @brief Registers callbacks run on the creating thread just before and just after the SDK
 *        starts an internal thread for any library in the bit set @p libs.
 * @return SUCCESS; INVALID_ARGUMENT; CONFIGURATION_LOCKED outside initialization.
 */
rocprofiler_status_t
rocprofiler_at_internal_thread_create(rocprofiler_internal_thread_library_cb_t precreate,
                                      rocprofiler_internal_thread_library_cb_t postcreate,
                                      int                                      libs,
                                      void*                                    data) ROCPROFILER_API;

/**
 * @brief Creates a new thread for running buffer callbacks.
 * @return SUCCESS; INVALID_ARGUMENT; CONFIGURATION_LOCKED outside initialization;
 *         OUT_OF_RESOURCES.
 */
rocprofiler_status_t
rocprofiler_create_callback_thread(rocprofiler_callback_thread_t* cb_thread_id) ROCPROFILER_API;

/**
 * @brief Makes a buffer's callbacks run on the given callback thread (default: a shared one).
 * @return SUCCESS; BUFFER_NOT_FOUND; THREAD_NOT_FOUND; CONFIGURATION_LOCKED; BUFFER_BUSY when
 *         the buffer already holds records.
 */
rocprofiler_status_t
rocprofiler_assign_callback_thread(rocprofiler_buffer_id_t       buffer_id,
                                   rocprofiler_callback_thread_t cb_thread_id) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI

#endif /* ROCPROFILER_SDK_INTERNAL_THREADING_H_ */
