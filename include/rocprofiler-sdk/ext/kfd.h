/* MIT License - see LICENSE. */
/**
 * @file ext/kfd.h
 * @brief Extensions of this library beyond the rocprofiler-sdk 0.x API, for the KFD
 *        page-migration service:
 *        - loss accounting (what the kernel or the SDK could not deliver, per GPU);
 *        - a raw-event buffer-tracing kind that delivers every KFD SMI event unpaired;
 *        - per-buffer counts (what one tool's buffer stored, delivered and dropped).
 *
 * Everything here is prefixed rocprofiler_kfd_ / ROCPROFILER_KFD_ and is not part of the
 * upstream API: guard its use with `#ifdef ROCPROFILER_KFD_EXT_VERSION`.
 */
#ifndef ROCPROFILER_SDK_EXT_KFD_H_
#define ROCPROFILER_SDK_EXT_KFD_H_

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/** Version of this extension. */
#define ROCPROFILER_KFD_EXT_VERSION 3

/**
 * Buffer-tracing kind delivering every KFD SMI event as it arrives (unpaired), as
 * rocprofiler_kfd_event_record_t. Numbered well after the upstream kinds so that it never
 * collides with kinds a newer upstream adds. Operations are rocprofiler_kfd_event_id_t.
 */
#define ROCPROFILER_BUFFER_TRACING_KFD_EVENT ((rocprofiler_buffer_tracing_kind_t) 256)

/** KFD SMI event ids, as the kernel numbers them (operations of the KFD_EVENT kind). */
typedef enum rocprofiler_kfd_event_id_t /* NOLINT */
{
    ROCPROFILER_KFD_EVENT_NONE = 0,
    ROCPROFILER_KFD_EVENT_VMFAULT,          /**< 1: GPU VM fault (pid and task name) */
    ROCPROFILER_KFD_EVENT_THERMAL_THROTTLE, /**< 2: bitmask and counter */
    ROCPROFILER_KFD_EVENT_GPU_PRE_RESET,    /**< 3: reset sequence number (+ reason) */
    ROCPROFILER_KFD_EVENT_GPU_POST_RESET,   /**< 4: reset sequence number (+ reason) */
    ROCPROFILER_KFD_EVENT_MIGRATE_START,    /**< 5 */
    ROCPROFILER_KFD_EVENT_MIGRATE_END,      /**< 6 */
    ROCPROFILER_KFD_EVENT_PAGE_FAULT_START, /**< 7 */
    ROCPROFILER_KFD_EVENT_PAGE_FAULT_END,   /**< 8 */
    ROCPROFILER_KFD_EVENT_QUEUE_EVICTION,   /**< 9 */
    ROCPROFILER_KFD_EVENT_QUEUE_RESTORE,    /**< 10 */
    ROCPROFILER_KFD_EVENT_UNMAP_FROM_GPU,   /**< 11 */
    ROCPROFILER_KFD_EVENT_PROCESS_START,    /**< 12 (Linux 6.16+) */
    ROCPROFILER_KFD_EVENT_PROCESS_END,      /**< 13 (Linux 6.16+) */
    /** 14 shaped `e <ns> -<pid> <count>`: events the (out-of-tree) driver dropped */
    ROCPROFILER_KFD_EVENT_DROPPED_EVENTS,
    /** 14 shaped `e <ns> -<pid> <node>`... as a restore: a rescheduled queue restore
     *  (proposed kernel change); reported with this distinct operation value */
    ROCPROFILER_KFD_EVENT_QUEUE_RESTORE_RESCHEDULED,
    ROCPROFILER_KFD_EVENT_LAST,
} rocprofiler_kfd_event_id_t;

/** Bits of rocprofiler_kfd_event_record_t::flags. */
#define ROCPROFILER_KFD_EVENT_FLAG_READ_FAULT     (1u << 0) /**< fault start said 'R' */
#define ROCPROFILER_KFD_EVENT_FLAG_MIGRATED       (1u << 1) /**< fault end said 'M' */
#define ROCPROFILER_KFD_EVENT_FLAG_RESCHEDULED    (1u << 2) /**< restore said 'R' */
#define ROCPROFILER_KFD_EVENT_FLAG_HAS_ERROR_CODE (1u << 3) /**< MIGRATE_END had error_code */
#define ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP  (1u << 4) /**< timestamp came from the kernel */

/** Maximum length of the raw text kept in a record (the kernel builds 96-byte messages). */
#define ROCPROFILER_KFD_EVENT_TEXT_SIZE 96

/**
 * One KFD SMI event, as parsed. Fields an event does not carry are 0. Addresses are bytes
 * (page << 12); node fields are KFD gpu_ids (0 = system memory, 0xffffffff = undefined).
 */
typedef struct rocprofiler_kfd_event_record_t
{
    uint64_t size;      /**< sizeof this struct */
    uint32_t kind;      /**< ROCPROFILER_BUFFER_TRACING_KFD_EVENT */
    int32_t  operation; /**< a rocprofiler_kfd_event_id_t */
    uint64_t timestamp; /**< kernel ns (CLOCK_BOOTTIME); for events without one, when read */
    uint32_t pid;       /**< event's pid (0 when none) */
    uint32_t gpu_id;    /**< gpu_id of the SMI fd the event was read from */
    uint32_t node_id;   /**< fault/queue/unmap node */
    uint32_t from_node; /**< migrate source */
    uint32_t to_node;   /**< migrate destination */
    uint32_t prefetch_node;
    uint32_t preferred_node;
    int32_t  trigger;    /**< the event's trigger value as printed */
    int32_t  error_code; /**< MIGRATE_END error code (6.13+) */
    uint32_t flags;      /**< ROCPROFILER_KFD_EVENT_FLAG_* */
    uint64_t address;    /**< first byte (page << 12) */
    uint64_t length;     /**< bytes (npages << 12) */
    uint64_t count;      /**< dropped-event count, thermal counter, or reset sequence */
    uint64_t bitmask;    /**< thermal throttle bitmask */
    char     text[ROCPROFILER_KFD_EVENT_TEXT_SIZE]; /**< raw line without '\n', NUL-terminated,
                                                         truncated if longer */
} rocprofiler_kfd_event_record_t;

/**
 * What the page-migration service received and what it could not turn into records, per
 * GPU or in total. Every counter counts from the service's start.
 */
typedef struct rocprofiler_kfd_loss_stats_t
{
    uint64_t size;                  /**< set by the caller to sizeof this struct */
    uint64_t gpu_id;                /**< the GPU these are for; 0 = all GPUs */
    uint64_t events_received;       /**< well-formed events read from the kernel */
    uint64_t lines_malformed;       /**< lines skipped unparsed: an empty line, a known event
                                         id whose text does not match its format, or an
                                         unknown or invalid event id (overlong lines are in
                                         lines_overlong) */
    uint64_t events_other_process;  /**< events of other processes, filtered out */
    uint64_t records_emitted;       /**< records written to buffers */
    uint64_t ends_without_start;    /**< ends that produced no record: no outstanding start
                                         with their key, or that start's timestamp is later
                                         than the end's (the start then stays outstanding);
                                         also unmaps with timestamp 0 */
    uint64_t starts_aged_out;       /**< starts that can no longer produce a record: evicted
                                         by the outstanding-start cap, replaced by a later
                                         start with the same key, with timestamp 0, or not
                                         stored for lack of memory */
    uint64_t starts_never_ended;    /**< starts still outstanding at finalization */
    uint64_t records_dropped;       /**< records a buffer could not hold; in the all-GPU
                                         total also records left undelivered in a buffer
                                         when its tool was finalized */
    uint64_t kernel_reported_drops; /**< drops the kernel reported (event id 14 counts) */
    uint64_t fifo_saturations;      /**< reads that returned a nearly full kernel FIFO:
                                         events were probably dropped by the kernel */
    uint64_t raw_events_dropped;    /**< raw KFD_EVENT records a buffer could not hold */
    /* Fields below were added in ROCPROFILER_KFD_EXT_VERSION 2. A tool built against
     * version 1 passes the smaller size and gets the prefix it knows. */
    uint64_t starts_lost_in_gap;         /**< outstanding starts dropped because events of
                                              their kind stopped reaching the SDK or may
                                              have been lost (see the header of
                                              rocprofiler_kfd_get_loss_stats) */
    uint64_t starts_timed_out;           /**< starts older than the age bound when a later
                                              event on their GPU showed it passed */
    uint64_t migrate_trigger_mismatches; /**< migrations whose end trigger differed from
                                              the start's (events lost between them) */
    uint64_t lines_overlong;             /**< lines longer than the kernel ever writes,
                                              skipped (not in lines_malformed) */
    uint64_t fields_out_of_range;        /**< events whose trigger or other enum field was
                                              outside its declared range and was clamped */
} rocprofiler_kfd_loss_stats_t;

/** Pass as gpu_id to get the totals over all GPUs. */
#define ROCPROFILER_KFD_ALL_GPUS 0

/**
 * @brief Reads the loss counters of one GPU (by KFD gpu_id) or of all GPUs.
 *
 * Gaps: a start (fault, migration, queue eviction) seen before events of its kind may have
 * been lost is dropped rather than paired with an end read after the loss, and counted in
 * starts_lost_in_gap. That happens when the last page-migration service tracing its kind
 * stops (the SDK first reads what the kernel had queued; a kind is paired only while a
 * page-migration service traces it, never for a kfd_events service, whose events are raw
 * records only, and a kind paired again while its events were read unpaired meanwhile is
 * treated as after a gap), when its GPU's stream ends or a read fails, when a read returns a (nearly) full kernel
 * FIFO (the kernel probably dropped what followed: a probable loss is treated as a loss,
 * so that no record spans it), and at a kernel drop report (id 14). Ends arriving after such a gap
 * whose start was dropped count in ends_without_start. After a gap in queue events, queue
 * suspensions that end within 10 s of it are withheld and counted in starts_lost_in_gap as
 * well: the driver's eviction count is unknown then, and a suspension seen to start after
 * the gap may be nested in an eviction the gap hid (its record would be too short).
 * Age bound: a fault or migration start more than 10 s older than the newest event of its
 * GPU is dropped (starts_timed_out); queue suspensions have no age bound.
 *
 * Callable at any time, from any thread, including from a buffer callback and from the
 * tool's finalize (where the counters are final).
 * @param stats caller-allocated; stats->size must be set (smaller sizes get a prefix).
 * @return SUCCESS; INVALID_ARGUMENT (NULL, size too small); AGENT_NOT_FOUND (no such GPU
 *         traced).
 */
rocprofiler_status_t
rocprofiler_kfd_get_loss_stats(uint64_t gpu_id, rocprofiler_kfd_loss_stats_t* stats) ROCPROFILER_API;

/**
 * What one buffer did with the records written to it (of every kind), since its creation.
 * Added in ROCPROFILER_KFD_EXT_VERSION 3.
 *
 * The loss counters above are the process's: with two tools tracing page migration, each
 * record counts once per buffer it reaches in records_emitted, and a drop of either tool's
 * buffer counts in records_dropped. A tool judging its own losses reads its own buffers
 * here. At every moment, records_stored = records_delivered + records_in_delivery +
 * records_pending + records_discarded. Once the tool's finalize has begun (its buffers are
 * closed then) records_pending is 0, and records_in_delivery is 0 unless a callback never
 * returned (it called exit(), or was still running at the exit deadline).
 */
typedef struct rocprofiler_kfd_buffer_stats_t
{
    uint64_t size;              /**< set by the caller to sizeof this struct */
    uint64_t records_stored;    /**< records the buffer accepted */
    uint64_t records_delivered; /**< stored records handed to the buffer's callback, once it
                                     returned */
    uint64_t records_dropped;   /**< records lost in this buffer: those it could not store
                                     (full, out of memory, or written after it was destroyed
                                     or its tool finalized) and those stored but discarded
                                     undelivered (records_discarded) */
    uint64_t records_pending;   /**< stored records not yet delivered */
    uint64_t records_discarded; /**< stored records discarded undelivered: the buffer was
                                     destroyed, or its tool finalized, before their delivery,
                                     or no memory was left for their batch's header array
                                     (also counted in records_dropped) */
    uint64_t records_in_delivery; /**< stored records handed to the callback that has not
                                       returned yet (records_delivered counts them after) */
} rocprofiler_kfd_buffer_stats_t;

/**
 * @brief Reads the counts of one buffer (any buffer of this process, also a destroyed one:
 *        its final counts).
 *
 * Callable at any time, from any thread, including from a buffer callback and from the
 * tool's finalize (where the counts of its own buffers are final).
 * @param stats caller-allocated; stats->size must be set (smaller sizes get a prefix).
 * @return SUCCESS; INVALID_ARGUMENT (NULL, size too small); BUFFER_NOT_FOUND (no buffer
 *         with this id was ever created).
 */
rocprofiler_status_t
rocprofiler_kfd_get_buffer_stats(rocprofiler_buffer_id_t         buffer_id,
                                 rocprofiler_kfd_buffer_stats_t* stats) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI

#endif /* ROCPROFILER_SDK_EXT_KFD_H_ */
