/* MIT License - see LICENSE. */
/**
 * @file buffer.h
 * @brief Buffers collect records and hand them to the tool's callback in batches, on an
 *        internal callback thread, never on the thread that produced them.
 */
#ifndef ROCPROFILER_SDK_BUFFER_H_
#define ROCPROFILER_SDK_BUFFER_H_

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/**
 * @brief Receives a batch of records.
 * @param headers     array of @p num_headers record headers, valid only during the call.
 * @param drop_count  records this buffer could not hold since the previous call.
 */
typedef void (*rocprofiler_buffer_tracing_cb_t)(rocprofiler_context_id_t      context,
                                                rocprofiler_buffer_id_t       buffer_id,
                                                rocprofiler_record_header_t** headers,
                                                size_t                        num_headers,
                                                void*                         data,
                                                uint64_t                      drop_count);

/**
 * @brief Creates a buffer owned by a context (only while the tool initializes).
 *
 * @param size      bytes of records the buffer holds before it is full (> 0).
 * @param watermark bytes at which a delivery to the callback is scheduled (<= size; 0 means
 *                  deliver every record as soon as possible).
 * @param policy    DISCARD drops records that do not fit; LOSSLESS grows past @p size, up to
 *                  a cap (ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES, default 256 MiB or 4 x size,
 *                  whichever is larger), and only past the cap drops and counts.
 * @return SUCCESS; CONTEXT_NOT_FOUND; INVALID_ARGUMENT; CONFIGURATION_LOCKED; FINALIZED;
 *         OUT_OF_RESOURCES (1024 buffers per process exist already, or no memory).
 */
rocprofiler_status_t
rocprofiler_create_buffer(rocprofiler_context_id_t        context,
                          size_t                          size,
                          size_t                          watermark,
                          rocprofiler_buffer_policy_t     policy,
                          rocprofiler_buffer_tracing_cb_t callback,
                          void*                           callback_data,
                          rocprofiler_buffer_id_t*        buffer_id) ROCPROFILER_API;

/**
 * @brief Delivers what the buffer holds, then destroys it. Records written from the start of
 *        the call are dropped and counted. Once it returns SUCCESS the callback is not running
 *        and is never called again (the tool may free its callback data).
 * @return SUCCESS; BUFFER_NOT_FOUND (a second destroy); BUFFER_BUSY as
 *         rocprofiler_flush_buffer (the buffer is then left as it was); ERROR when its callback
 *         is still running after the exit deadline abandoned it.
 */
rocprofiler_status_t
rocprofiler_destroy_buffer(rocprofiler_buffer_id_t buffer_id) ROCPROFILER_API;

/**
 * @brief Returns once every record written before the call was delivered to the callback (or,
 *        out of memory for its batch's headers, dropped), and every record dropped before it
 *        was reported in a callback's drop_count.
 * @return SUCCESS; BUFFER_NOT_FOUND; BUFFER_BUSY when waiting could never end: called on the
 *         buffer's callback thread (from any callback that thread runs: it would wait for
 *         itself), from the buffer's own callback, or when the thread that delivers the buffer
 *         is itself waiting, in a flush or destroy called from a callback, for this thread
 *         (e.g. two callbacks on two callback threads that flush each other's buffers: one of
 *         them gets BUSY, the other returns once that callback returned).
 */
rocprofiler_status_t
rocprofiler_flush_buffer(rocprofiler_buffer_id_t buffer_id) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI

#endif /* ROCPROFILER_SDK_BUFFER_H_ */
