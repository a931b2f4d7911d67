// MIT License - see LICENSE.
//
// Buffers: records written by producers (the KFD reader) are copied into a buffer under a
// short lock and delivered in batches to the tool's callback on a callback thread. A producer
// never waits for a callback: a full DISCARD buffer drops (and counts), a LOSSLESS buffer
// grows up to its cap. Buffers live in a fixed table and are never freed while the process
// runs (a destroyed buffer only releases its storage), so a producer holding an id can never
// touch freed memory.
#pragma once

#include <pthread.h>

#include <rocprofiler-sdk/buffer.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace rocprofiler::buffer
{
inline constexpr size_t max_buffers = 1024;
// Default cap of a LOSSLESS buffer's growth: the larger of 4 x size and this, unless
// ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES sets it (never below size).
inline constexpr size_t default_lossless_cap = size_t{256} << 20;

// Each of a buffer's two storages (records pending, and the one being delivered) is
// reserved at creation for its size, up to this: see create().
inline constexpr size_t max_reserved_storage = size_t{64} << 20;

// `policy`: the integer value of a rocprofiler_buffer_policy_t, validated here.
rocprofiler_status_t create(uint64_t context_id, size_t size, size_t watermark, int64_t policy,
                            rocprofiler_buffer_tracing_cb_t callback, void* callback_data,
                            uint64_t* buffer_id);

bool exists(uint64_t buffer_id) noexcept;

// Context that owns the buffer, or UINT64_MAX.
uint64_t owner_context(uint64_t buffer_id) noexcept;

rocprofiler_status_t set_callback_thread(uint64_t buffer_id, uint64_t thread_id);

// Copies one record into the buffer. Never blocks on a callback. False when the record was
// dropped (buffer full, destroyed or closed); drops are counted and reported to the callback.
bool emplace(uint64_t buffer_id, uint32_t category, uint32_t kind, const void* record,
             size_t size) noexcept;

// Records for one buffer built by a producer with no lock held, in the buffer's own storage
// layout (an entry_header, then the record padded to 8 bytes), and appended by append_batch
// with one lock and one copy: a record is written once, where reserve() says. Reused from
// batch to batch (its storage is kept), so that building a record neither allocates nor
// zero-fills.
struct entry_header
{
    uint32_t category;
    uint32_t kind;
    uint64_t size;
};

class record_batch
{
public:
    // Room for a record of `size` bytes after the committed ones; nullptr when it cannot be
    // allocated. Valid until the next reserve() or clear(); commit() keeps what was written.
    void* reserve(size_t size) noexcept
    {
        if(m_used + sizeof(entry_header) + padded(size) > m_capacity && !grow(size)) return nullptr;
        return m_storage.get() + m_used + sizeof(entry_header);
    }
    // Adds the record written at the last reserve() (of the same size), padding zeroed (no
    // stale bytes handed to the tool).
    void commit(uint32_t category, uint32_t kind, size_t size) noexcept
    {
        auto* header = reinterpret_cast<entry_header*>(m_storage.get() + m_used);
        *header      = entry_header{category, kind, size};
        for(size_t i = size; i < padded(size); ++i)
            reinterpret_cast<std::byte*>(header + 1)[i] = std::byte{0};
        m_used += sizeof(entry_header) + padded(size);
        m_payload += size;
        m_count += 1;
        m_largest = std::max(m_largest, size);
        m_kinds_or |= kind;
        m_kinds_and &= kind;
    }
    void clear() noexcept
    {
        m_used = 0, m_payload = 0, m_count = 0;
        m_largest = 0, m_kinds_or = 0, m_kinds_and = ~uint32_t{0};
    }

    // Records are stored padded to 8 bytes, so that payloads handed to the tool are aligned.
    static constexpr size_t padded(size_t n) { return (n + 7) & ~size_t{7}; }

    bool             empty() const noexcept { return m_count == 0; }
    size_t           count() const noexcept { return m_count; }
    size_t           bytes() const noexcept { return m_used; } // with entry headers
    size_t           payload_bytes() const noexcept { return m_payload; }
    const std::byte* data() const noexcept { return m_storage.get(); }
    // Size of the largest record: append_batch needs no walk over the records to see that
    // after each one another of its size would still fit, when one of this size would fit
    // after them all.
    size_t largest() const noexcept { return m_largest; }
    // Whether every record is of one kind, kind(): the outcome's split by kind needs no walk.
    bool     one_kind() const noexcept { return m_kinds_or == m_kinds_and; }
    uint32_t kind() const noexcept { return m_kinds_or; }

private:
    bool grow(size_t size) noexcept;

    // The three counters commit() adds to are kept apart (not adjacent): adjacent ones are
    // added as one vector, which the next reserve() reads back as scalars (a stalled forward).
    size_t                       m_used     = 0;
    size_t                       m_capacity = 0;
    size_t                       m_payload  = 0;
    std::unique_ptr<std::byte[]> m_storage;
    size_t                       m_count     = 0;
    size_t                       m_largest   = 0;
    uint32_t                     m_kinds_or  = 0;            // of every record's kind
    uint32_t                     m_kinds_and = ~uint32_t{0}; // equal to m_kinds_or: one kind
};

// What append_batch did with the records of a batch, split into those of `split_kind` ([0])
// and the others ([1]).
struct batch_outcome
{
    uint64_t stored[2]  = {0, 0};
    uint64_t dropped[2] = {0, 0};
};

// Appends the batch's records in their order under one lock, each stored or dropped exactly
// as emplace() would store or drop it at that point (the same cap, policy and counters), and
// asks for a delivery at most once, after the batch. Never blocks on a callback.
void append_batch(uint64_t buffer_id, const record_batch& batch, uint32_t split_kind,
                  batch_outcome& outcome) noexcept;

// Returns once every record emplaced before the call was delivered and every drop counted
// before it was reported to the callback (including those a running delivery took), or the
// timeout passed (then ROCPROFILER_STATUS_ERROR). BUFFER_BUSY when called on the buffer's
// callback thread (from any callback that thread runs: waiting there would wait for itself),
// from the buffer's own callback running inline, from inside any callback when the delivery
// would have to run inline on this thread, or when the thread that delivers the buffer waits
// (directly or through a chain of such waits) for a flush or destroy of this thread: e.g. two
// callbacks on two callback threads flushing each other's buffers (one of them gets BUSY, the
// other returns once that callback did). The wait for the callback thread, and a callback
// run inline on this thread, have the cancellation state `wait_cancel_state` (the API's
// caller's; the SDK's own flushes at a tool's finalize and at exit are no cancellation point).
rocprofiler_status_t flush(uint64_t                  buffer_id,
                           std::chrono::milliseconds timeout = std::chrono::milliseconds::max(),
                           int                       wait_cancel_state = PTHREAD_CANCEL_DISABLE);

// Exit finalization has begun: from now on flush never delivers a buffer on the flushing
// thread when a tool's callback ended that buffer's callback thread (flush then returns
// ROCPROFILER_STATUS_ERROR and the records stay for close() to count).
void begin_exit() noexcept;

// True when a tool's callback ended the buffer's callback thread (and it was not restarted).
bool callback_thread_ended_by_tool(uint64_t buffer_id) noexcept;

// Stops taking records (those emplaced from now on are dropped and counted), flushes (its
// wait with `wait_cancel_state`, as flush's), waits until no delivery of the buffer runs on
// another thread, then destroys: once it returns SUCCESS, its callback neither runs nor is
// called again. BUFFER_BUSY as flush (the buffer is then left as it was, and takes records
// again); ROCPROFILER_STATUS_ERROR, the buffer left as it was, when its callback was abandoned
// still running at the exit deadline.
rocprofiler_status_t destroy(uint64_t buffer_id, int wait_cancel_state = PTHREAD_CANCEL_DISABLE);

// Before the owning tool's finalize: no callback will run for this buffer again. Records
// still pending are discarded and counted as dropped; returns how many.
uint64_t close(uint64_t buffer_id) noexcept;

// True while the buffer's callback runs on another thread than this one (a callback still
// stuck at the exit deadline).
bool callback_running_elsewhere(uint64_t buffer_id) noexcept;

// Asks for the delivery of every buffer holding records (once callback threads started).
void request_pending_deliveries() noexcept;

// True while this thread is inside deliver() (e.g. a tool callback that called exit()).
bool inside_delivery() noexcept;

// Called by the callback thread: hands everything pending to the tool's callback. Throws
// nothing but the unwind of a thread that the tool's callback ended (pthread_exit, a
// cancellation), after which the buffer is consistent and usable.
void deliver(uint64_t buffer_id);

// A delivery of the buffer was queued on a callback thread that ended before it ran (a
// tool's callback ended that thread): the next request or flush asks for one again.
void forget_scheduled_delivery(uint64_t buffer_id) noexcept;

// Totals since creation (for loss accounting and tests).
struct totals
{
    uint64_t emplaced;
    uint64_t delivered;
    uint64_t dropped;       // could not be stored, or discarded
    uint64_t discarded;     // stored, then discarded undelivered (destroy, close)
    uint64_t in_delivery;   // with the callback, which has not returned yet
    uint64_t pending_count; // stored, not yet delivered
    size_t   pending_bytes;
    size_t   peak_bytes;
    size_t   reserved_bytes; // the smaller capacity of its two storages (pending, spare)
};
bool get_totals(uint64_t buffer_id, totals& out) noexcept;

// Number of buffer ids handed out so far (ids are 0 .. count-1).
size_t count() noexcept;

// fork() support: lock/unlock every buffer; in the child, drop the parent's records.
void lock_all_for_fork() noexcept;
void unlock_all_after_fork() noexcept;
void discard_after_fork() noexcept;
} // namespace rocprofiler::buffer
