// MIT License - see LICENSE.
#include "rocprofiler-sdk/buffer.hpp"
#include "common/never_destroyed.hpp"
#include "rocprofiler-sdk/api_guard.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/cancellation.hpp"
#include "rocprofiler-sdk/context.hpp"
#include "rocprofiler-sdk/enum_arg.hpp"
#include "rocprofiler-sdk/env.hpp"
#include "rocprofiler-sdk/logging.hpp"
#include "rocprofiler-sdk/registration.hpp"
#include "rocprofiler-sdk/sized_copy.hpp"

#include <rocprofiler-sdk/ext/kfd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace rocprofiler::buffer
{
namespace
{
// Each record is stored as an entry_header (buffer.hpp) followed by its bytes, padded to 8
// bytes so that payloads handed to the tool are aligned.
constexpr size_t
padded(size_t n)
{
    return (n + 7) & ~size_t{7};
}

struct record_buffer
{
    // Fixed at creation.
    uint64_t                        id         = 0;
    uint64_t                        context_id = 0;
    size_t                          size       = 0;
    size_t                          watermark  = 0;
    size_t                          cap        = 0; // most bytes pending before dropping
    rocprofiler_buffer_policy_t     policy     = ROCPROFILER_BUFFER_POLICY_NONE;
    rocprofiler_buffer_tracing_cb_t callback   = nullptr;
    void*                           data       = nullptr;
    std::atomic<uint64_t>           thread_id{callback_thread::default_thread};

    std::mutex mutex;
    // One delivery at a time, so batches stay in order; a flag, not a lock held across the
    // tool's callback (see deliver()). Both under `mutex`.
    bool            delivery_running = false;
    bool            delivery_wanted  = false; // another deliver() came while one was running
    std::thread::id delivering_thread;        // the one running it (delivery_running)
    // Header arrays handed to the callback, reused across deliveries (by the one running).
    std::vector<rocprofiler_record_header_t>  headers;
    std::vector<rocprofiler_record_header_t*> pointers;
    bool                                      warned_throw     = false;
    bool                                      warned_no_memory = false; // for the headers
    std::condition_variable                   delivered_cv;
    std::vector<std::byte>                    pending; // records waiting for delivery
    std::vector<std::byte>                    spare;   // storage reused for the next batch
    size_t   pending_bytes    = 0;                     // record bytes (without entry headers)
    size_t   held_bytes       = 0;                     // the same with entry headers
    uint64_t pending_count    = 0;
    uint64_t emplaced         = 0;
    uint64_t delivered        = 0; // records whose callback returned
    uint64_t drops_unreported = 0;
    uint64_t drops_reported   = 0; // passed to the callback so far
    // Drops taken out for the callback, not yet returned from it: a flush waits for them too.
    uint64_t drops_in_delivery = 0;
    uint64_t dropped           = 0;
    uint64_t discarded         = 0; // stored, then dropped undelivered (in dropped too)
    // Taken out for the callback, not yet returned from it: emplaced = delivered + in_delivery
    // + pending_count + discarded at every moment this mutex is free.
    uint64_t          in_delivery = 0;
    size_t            peak_bytes  = 0;
    bool              scheduled   = false;
    std::atomic<bool> in_callback{false}; // the tool's callback is running now
    bool              destroyed  = false;
    bool              destroying = false; // destroy() runs: no new records are taken
    bool              closed     = false;
};

// Whether the buffer stores new records: not once it is closed, destroyed, or being destroyed.
// Under b->mutex.
bool
takes_records(const record_buffer* b)
{
    return !b->destroyed && !b->destroying && !b->closed;
}

std::array<std::atomic<record_buffer*>, max_buffers>&
table()
{
    static common::never_destroyed<std::array<std::atomic<record_buffer*>, max_buffers>> t;
    return t.get();
}
std::atomic<size_t> buffer_count{0};
std::mutex          create_mutex;

record_buffer*
find(uint64_t buffer_id) noexcept
{
    if(buffer_id == 0 || buffer_id > max_buffers) return nullptr;
    return table()[buffer_id - 1].load(std::memory_order_acquire);
}

// ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES (read at each buffer's creation); 0: unset.
uint64_t
lossless_cap_setting()
{
    return env::number("ROCPROFILER_BUFFER_LOSSLESS_CAP_BYTES", 1, UINT64_MAX, 0);
}

size_t
lossless_cap(size_t size)
{
    if(auto setting = lossless_cap_setting(); setting != 0)
        return static_cast<size_t>(std::max<uint64_t>(setting, size));
    // 4 x size without overflow: a huge size caps at SIZE_MAX, never at a wrapped value.
    size_t four_times = size > SIZE_MAX / 4 ? SIZE_MAX : size * 4;
    return std::max(four_times, default_lossless_cap);
}

// Asks the buffer's callback thread for a delivery unless one is pending. Called without
// the buffer's lock held.
// False when the buffer's callback thread is not running (not started yet, failed to start,
// or stopped at exit): the caller may then deliver itself, off the producer's thread.
bool
request_delivery(record_buffer* b)
{
    {
        std::lock_guard<std::mutex> lock{b->mutex};
        if(b->scheduled) return true;
        b->scheduled = true;
    }
    if(callback_thread::schedule(b->thread_id.load(), b->id)) return true;
    std::lock_guard<std::mutex> lock{b->mutex};
    b->scheduled = false;
    return false;
}

// Both storages get their capacity now, on the tool's thread, so that the reader never
// grows one while the kernel's FIFO fills: a vector that doubles copies everything it holds
// into memory touched for the first time, and those page faults (0.5 MiB at a time, in
// 0.1-0.3 ms runs measured on a VM) outlast a 1 KiB FIFO at 100k events/s (0.2 ms). That
// was most of the drops of the first 0.2 s of a trace. Only address space is reserved: the
// pages are touched as records arrive, a few at a time. A failure leaves them to grow.
// A storage holds a 16-byte entry header per record besides its `size` record bytes: a
// quarter more covers records of 64 bytes and more (a page-migration record has 136).
void
reserve_for(std::vector<std::byte>& storage, size_t size) noexcept
{
    try
    {
        const size_t bytes = std::min(size, max_reserved_storage);
        storage.reserve(bytes + bytes / 4);
    }
    catch(...)
    {
    }
}

void
reserve_storage(record_buffer& b) noexcept
{
    reserve_for(b.pending, b.size);
    reserve_for(b.spare, b.size);
}
} // namespace

rocprofiler_status_t
create(uint64_t context_id, size_t size, size_t watermark, int64_t policy_value,
       rocprofiler_buffer_tracing_cb_t callback, void* callback_data, uint64_t* buffer_id)
{
    if(buffer_id == nullptr || callback == nullptr || size == 0)
        return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
    if(policy_value != ROCPROFILER_BUFFER_POLICY_DISCARD &&
       policy_value != ROCPROFILER_BUFFER_POLICY_LOSSLESS)
        return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
    auto policy = static_cast<rocprofiler_buffer_policy_t>(policy_value); // valid now
    if(context::find(context_id) == nullptr) return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
    registration::pin_library_of(reinterpret_cast<const void*>(callback));

    std::lock_guard<std::mutex> lock{create_mutex};
    auto                        index = buffer_count.load();
    if(index >= max_buffers)
    {
        ROCP_WARNING << "rocprofiler_create_buffer: the limit of " << max_buffers
                     << " buffers per process is reached";
        return ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    auto* b       = new record_buffer{};
    b->id         = index + 1;
    b->context_id = context_id;
    b->size       = size;
    b->watermark  = std::min(watermark, size);
    b->policy     = policy;
    b->cap        = (policy == ROCPROFILER_BUFFER_POLICY_LOSSLESS) ? lossless_cap(size) : size;
    b->callback   = callback;
    b->data       = callback_data;
    reserve_storage(*b);
    table()[index].store(b, std::memory_order_release);
    buffer_count.store(index + 1);
    *buffer_id = b->id;
    return ROCPROFILER_STATUS_SUCCESS;
}

bool
exists(uint64_t buffer_id) noexcept
{
    auto* b = find(buffer_id);
    if(b == nullptr) return false;
    std::lock_guard<std::mutex> lock{b->mutex};
    return !b->destroyed && !b->destroying; // nothing new is attached to a buffer going away
}

uint64_t
owner_context(uint64_t buffer_id) noexcept
{
    auto* b = find(buffer_id);
    return b ? b->context_id : UINT64_MAX;
}

rocprofiler_status_t
set_callback_thread(uint64_t buffer_id, uint64_t thread_id)
{
    auto* b = find(buffer_id);
    if(b == nullptr) return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
    std::lock_guard<std::mutex> lock{b->mutex};
    if(b->destroyed) return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
    if(b->scheduled || b->pending_count > 0) return ROCPROFILER_STATUS_ERROR_BUFFER_BUSY;
    b->thread_id.store(thread_id);
    return ROCPROFILER_STATUS_SUCCESS;
}

namespace
{
// The policy's rule for whether a record of `size` bytes fits now. A LOSSLESS cap counts
// what the buffer really holds: each record's 16-byte entry header and padding too (a cap on
// payload bytes let small records pin far more). DISCARD keeps its size in record bytes, as
// the tool asked for. Under b->mutex.
// `held` and `payload` are the buffer's held_bytes and pending_bytes, or running sums of them.
bool
fits_with(const record_buffer* b, size_t held, size_t payload, size_t size)
{
    if(b->policy == ROCPROFILER_BUFFER_POLICY_LOSSLESS)
        return held + sizeof(entry_header) + padded(size) <= b->cap;
    return payload + size <= b->cap;
}

bool
fits(const record_buffer* b, size_t size)
{
    return fits_with(b, b->held_bytes, b->pending_bytes, size);
}

// Whether every record of the batch fits now (then each fits when its turn comes).
bool
fits_all(const record_buffer* b, const record_batch& batch)
{
    if(b->policy == ROCPROFILER_BUFFER_POLICY_LOSSLESS)
        return b->held_bytes + batch.bytes() <= b->cap;
    return b->pending_bytes + batch.payload_bytes() <= b->cap;
}

// Counts a record of `size` bytes just appended to b->pending. Under b->mutex.
void
account_stored(record_buffer* b, size_t size)
{
    b->pending_bytes += size;
    b->held_bytes += sizeof(entry_header) + padded(size);
    b->pending_count += 1;
    b->emplaced += 1;
    b->peak_bytes = std::max(b->peak_bytes, b->pending_bytes);
}

// Deliver at the watermark, and also as soon as the next record of this size would not fit
// (a watermark close to the size must not cause drops). Under b->mutex.
bool
wants_delivery(const record_buffer* b, size_t size, bool stored)
{
    return !b->scheduled && (b->pending_bytes >= b->watermark || !stored || !fits(b, size));
}
} // namespace

bool
emplace(uint64_t buffer_id, uint32_t category, uint32_t kind, const void* record,
        size_t size) noexcept
{
    auto* b = find(buffer_id);
    if(b == nullptr || record == nullptr) return false;
    bool want_delivery = false;
    bool stored        = false;
    {
        std::lock_guard<std::mutex> lock{b->mutex};
        if(!takes_records(b))
        {
            ++b->dropped;
            return false;
        }
        if(!fits(b, size))
        {
            ++b->dropped;
            ++b->drops_unreported;
        }
        else
        {
            try
            {
                auto offset = b->pending.size();
                b->pending.resize(offset + sizeof(entry_header) + padded(size));
                auto* header = reinterpret_cast<entry_header*>(b->pending.data() + offset);
                *header      = entry_header{category, kind, size};
                std::memcpy(header + 1, record, size);
                account_stored(b, size);
                stored = true;
            }
            catch(...)
            {
                ++b->dropped;
                ++b->drops_unreported;
            }
        }
        want_delivery = wants_delivery(b, size, stored);
    }
    if(want_delivery) request_delivery(b);
    return stored;
}

bool
record_batch::grow(size_t size) noexcept
{
    const size_t                 needed   = m_used + sizeof(entry_header) + padded(size);
    const size_t                 capacity = std::max({needed, 2 * m_capacity, size_t{64} << 10});
    std::unique_ptr<std::byte[]> bigger{new(std::nothrow) std::byte[capacity]};
    if(!bigger) return false;
    if(m_used > 0) std::memcpy(bigger.get(), m_storage.get(), m_used);
    m_storage  = std::move(bigger);
    m_capacity = capacity;
    return true;
}

namespace
{
// One copy of the batch's bytes onto b->pending; false when it cannot allocate. Under b->mutex.
bool
append_whole(record_buffer* b, const record_batch& batch) noexcept
{
    try
    {
        b->pending.insert(b->pending.end(), batch.data(), batch.data() + batch.bytes());
        return true;
    }
    catch(...)
    {
        return false;
    }
}

// Whether, once the batch is appended, another record of each record's size would fit right
// after it (fits_with after each one, as emplace() tests it). Under b->mutex, before the batch
// is counted. The pending sizes only grow, so when one of the largest size fits after the
// whole batch each does; otherwise (near the cap) record by record on running sums.
bool
each_next_fits(const record_buffer* b, const record_batch& batch)
{
    if(fits_with(b, b->held_bytes + batch.bytes(), b->pending_bytes + batch.payload_bytes(),
                 batch.largest()))
        return true;
    size_t           held    = b->held_bytes;
    size_t           payload = b->pending_bytes;
    const std::byte* entry   = batch.data();
    for(size_t i = 0; i < batch.count(); ++i)
    {
        const auto*  header = reinterpret_cast<const entry_header*>(entry);
        const size_t bytes  = sizeof(entry_header) + padded(header->size);
        held += bytes;
        payload += header->size;
        if(!fits_with(b, held, payload, header->size)) return false;
        entry += bytes;
    }
    return true;
}

// Adds the batch's records to counts[0] (those of split_kind) and counts[1] (the others).
void
count_by_kind(const record_batch& batch, uint32_t split_kind, uint64_t (&counts)[2])
{
    if(batch.one_kind())
    {
        counts[batch.kind() == split_kind ? 0 : 1] += batch.count();
        return;
    }
    const std::byte* entry = batch.data();
    for(size_t i = 0; i < batch.count(); ++i)
    {
        const auto* header = reinterpret_cast<const entry_header*>(entry);
        counts[header->kind == split_kind ? 0 : 1] += 1;
        entry += sizeof(entry_header) + padded(header->size);
    }
}

// Record by record, each stored or dropped as emplace() would at that point. Under b->mutex.
void
append_each(record_buffer* b, const record_batch& batch, uint32_t split_kind,
            batch_outcome& outcome, bool& want_delivery) noexcept
{
    const std::byte* entry = batch.data();
    for(size_t i = 0; i < batch.count(); ++i)
    {
        const auto*  header = reinterpret_cast<const entry_header*>(entry);
        const size_t bytes  = sizeof(entry_header) + padded(header->size);
        const int    side   = header->kind == split_kind ? 0 : 1;
        bool         stored = false;
        if(!takes_records(b))
            ++b->dropped;
        else if(!fits(b, header->size))
            ++b->dropped, ++b->drops_unreported;
        else
        {
            try
            {
                b->pending.insert(b->pending.end(), entry, entry + bytes);
                account_stored(b, header->size);
                stored = true;
            }
            catch(...)
            {
                ++b->dropped, ++b->drops_unreported;
            }
        }
        ++(stored ? outcome.stored : outcome.dropped)[side];
        if(takes_records(b))
            want_delivery = want_delivery || wants_delivery(b, header->size, stored);
        entry += bytes;
    }
}
} // namespace

void
append_batch(uint64_t buffer_id, const record_batch& batch, uint32_t split_kind,
             batch_outcome& outcome) noexcept
{
    auto* b = find(buffer_id);
    if(batch.empty()) return;
    if(b == nullptr) // as emplace: each record dropped
    {
        const std::byte* entry = batch.data();
        for(size_t i = 0; i < batch.count(); ++i)
        {
            const auto* header = reinterpret_cast<const entry_header*>(entry);
            ++outcome.dropped[header->kind == split_kind ? 0 : 1];
            entry += sizeof(entry_header) + padded(header->size);
        }
        return;
    }
    bool want_delivery = false;
    {
        std::lock_guard<std::mutex> lock{b->mutex};
        // The common case, every record fits: one copy of the whole batch, then the counters
        // added at once. Each record then fits when its turn comes, and the states it passes
        // through are those of one emplace() each: the pending sizes only grow (so the peak
        // and the watermark test are those after the last record), and whether the next record
        // of some record's size would not fit right after it is one test unless the buffer is
        // near its cap (each_next_fits). Otherwise (or if that copy cannot allocate) record by
        // record, as emplace() would.
        if(takes_records(b) && fits_all(b, batch) && append_whole(b, batch))
        {
            const bool next_may_not_fit = !each_next_fits(b, batch);
            count_by_kind(batch, split_kind, outcome.stored);
            b->pending_bytes += batch.payload_bytes();
            b->held_bytes += batch.bytes();
            b->pending_count += batch.count();
            b->emplaced += batch.count();
            b->peak_bytes = std::max(b->peak_bytes, b->pending_bytes);
            want_delivery = !b->scheduled && (b->pending_bytes >= b->watermark || next_may_not_fit);
        }
        else
            append_each(b, batch, split_kind, outcome, want_delivery);
    }
    if(want_delivery) request_delivery(b);
}

void
request_pending_deliveries() noexcept
{
    for(size_t i = 0; i < count(); ++i)
    {
        auto* b = table()[i].load();
        if(b == nullptr) continue;
        bool pending = false;
        {
            std::lock_guard<std::mutex> lock{b->mutex};
            pending = b->pending_count > 0 || b->drops_unreported > 0;
        }
        if(pending) request_delivery(b);
    }
}

namespace
{
thread_local int      delivery_depth    = 0;
thread_local uint64_t delivering_buffer = 0; // buffer whose callback this thread runs

struct delivery_scope
{
    explicit delivery_scope(uint64_t id) : previous{delivering_buffer}
    {
        ++delivery_depth;
        delivering_buffer = id;
    }
    ~delivery_scope()
    {
        --delivery_depth;
        delivering_buffer = previous;
    }
    delivery_scope(const delivery_scope&)            = delete;
    delivery_scope& operator=(const delivery_scope&) = delete;
    uint64_t        previous;
};
} // namespace

bool
inside_delivery() noexcept
{
    return delivery_depth > 0;
}

namespace
{
// What one delivery hands to the tool, taken out of the buffer under its lock.
struct taken_batch
{
    std::vector<std::byte> bytes;
    uint64_t               count = 0;
    uint64_t               drops = 0;
    bool                   call  = false;
    // Whether `bytes` is the buffer's pending storage (given back as the spare after the
    // delivery). A round with nothing pending leaves both storages where they are.
    bool took_storage = false;
};

taken_batch
take_batch(record_buffer* b)
{
    taken_batch                 t;
    std::lock_guard<std::mutex> lock{b->mutex};
    b->scheduled       = false;
    b->delivery_wanted = false;
    // With nothing pending (a round asked for while the last one ran, or drops alone), the
    // storages stay: the spare is never left empty by a round that has nothing to hand over.
    if(!b->pending.empty())
    {
        t.bytes.swap(b->spare);
        t.bytes.swap(b->pending); // pending now holds the (empty) spare storage
        t.took_storage = true;
    }
    t.count = b->pending_count;
    t.drops = b->drops_unreported;
    b->in_delivery += t.count;
    b->drops_in_delivery += t.drops;
    b->pending_count    = 0;
    b->pending_bytes    = 0;
    b->held_bytes       = 0;
    b->drops_unreported = 0;
    // Never once destroyed: destroy() returned, and the tool may have freed the callback's data.
    t.call = !b->closed && !b->destroyed && (t.count > 0 || t.drops > 0);
    return t;
}

// The tool's view of batch t: one header per record and the array of pointers to them, in
// arrays kept across batches. False when their memory could not be had (the callback is then
// not called: the batch is lost and counted so, see deliver()).
bool
build_headers(record_buffer* b, const taken_batch& t) noexcept
{
    auto& headers  = b->headers;
    auto& pointers = b->pointers;
    headers.clear();
    pointers.clear();
    try
    {
        headers.reserve(t.count);
        pointers.reserve(t.count);
    }
    catch(...)
    {
        return false;
    }
    for(size_t offset = 0; offset < t.bytes.size();)
    {
        auto* entry = reinterpret_cast<const entry_header*>(t.bytes.data() + offset);
        rocprofiler_record_header_t header{};
        header.category = entry->category;
        header.kind     = entry->kind;
        header.payload  = const_cast<entry_header*>(entry) + 1;
        headers.push_back(header); // within the reserved capacity: no allocation
        offset += sizeof(entry_header) + padded(entry->size);
    }
    for(auto& h : headers)
        pointers.push_back(&h);
    return true;
}

// Runs the tool's callback on one batch, with no SDK lock held; false when it could not
// (out of memory for the headers). An exception from the callback stops there; a callback
// that ends its thread (pthread_exit, a cancellation) unwinds on: glibc aborts the process
// when that is swallowed.
ROCP_CATCHES_FORCED_UNWIND bool
hand_to_tool(record_buffer* b, taken_batch& t)
{
    if(!build_headers(b, t))
    {
        if(!b->warned_no_memory)
            ROCP_WARNING << "buffer " << b->id
                         << ": out of memory for a batch's record headers; its records are "
                            "dropped and counted (logged once)";
        b->warned_no_memory = true;
        return false;
    }
    try
    {
        b->in_callback.store(true);
        b->callback(rocprofiler_context_id_t{b->context_id}, rocprofiler_buffer_id_t{b->id},
                    b->pointers.data(), b->pointers.size(), b->data, t.drops);
        b->in_callback.store(false);
    }
    catch(abi::__forced_unwind&)
    {
        b->in_callback.store(false);
        throw;
    }
    catch(...)
    {
        b->in_callback.store(false);
        if(!b->warned_throw)
            ROCP_WARNING << "buffer " << b->id
                         << ": the tool's callback threw an exception; the records it was "
                            "given are lost (logged once)";
        b->warned_throw = true;
    }
    return true;
}

// A tool's callback ended this thread while deliver() ran it on batch t: the records were
// handed over (delivered, as flush counts them), and the buffer must not stay marked as
// delivering, or no delivery would ever run again. A delivery asked for meanwhile is left to
// the next request or flush. The batch's storage goes back as the spare, as after any
// delivery, so that the reader's next batch does not start in an empty storage.
void
end_delivery_on_thread_end(record_buffer* b, taken_batch& t) noexcept
{
    t.bytes.clear();
    std::lock_guard<std::mutex> lock{b->mutex};
    b->delivered += t.count;
    b->in_delivery -= t.count;
    b->drops_in_delivery -= t.drops;
    b->drops_reported += t.drops;
    if(t.took_storage && !b->destroyed) b->spare.swap(t.bytes);
    b->delivery_running = false;
    b->delivery_wanted  = false;
    b->delivered_cv.notify_all();
}
} // namespace

// One delivery at a time per buffer keeps batches in order, but no lock is held while the
// tool's callback runs: a deliver() that finds another one running only asks it to go
// round once more (it takes what was emplaced meanwhile) and returns at once. So no thread
// ever blocks on a tool's callback here; flush() waits for its records on a condition
// variable, with its deadline.
ROCP_CATCHES_FORCED_UNWIND void
deliver(uint64_t buffer_id)
{
    auto* b = find(buffer_id);
    if(b == nullptr || inside_delivery()) return; // never nested: it would deadlock
    {
        std::lock_guard<std::mutex> lock{b->mutex};
        if(b->delivery_running)
        {
            b->delivery_wanted = true;
            return;
        }
        b->delivery_running  = true;
        b->delivering_thread = std::this_thread::get_id();
    }
    delivery_scope scope{buffer_id};
    // Twice the size without overflow (a huge size never trims at a wrapped value).
    const size_t trim_above = b->size > (SIZE_MAX - 4096) / 2 ? SIZE_MAX : 2 * b->size + 4096;
    for(;;)
    {
        auto t      = take_batch(b);
        bool handed = true;
        if(t.call)
        {
            try
            {
                handed = hand_to_tool(b, t);
            }
            catch(abi::__forced_unwind&)
            {
                end_delivery_on_thread_end(b, t);
                throw;
            }
        }
        t.bytes.clear();
        // The storage is kept for the next batch, unless a LOSSLESS burst grew it past twice
        // the size: that one is freed and replaced by one reserved as at creation (outside the
        // lock), so that the reader never starts a batch in an empty storage that it grows.
        // The burst's header arrays go with it (24 bytes a record, only this thread's).
        if(t.took_storage && t.bytes.capacity() > trim_above)
        {
            std::vector<std::byte>{}.swap(t.bytes);
            reserve_for(t.bytes, b->size);
            std::vector<rocprofiler_record_header_t>{}.swap(b->headers);
            std::vector<rocprofiler_record_header_t*>{}.swap(b->pointers);
        }
        std::lock_guard<std::mutex> lock{b->mutex};
        if(handed)
        {
            b->delivered += t.count;
            b->drops_reported += t.drops;
        }
        else
        {
            // Never handed over: the records are dropped, and the tool hears of them and of
            // the drops this batch carried in its next callback's drop count.
            b->dropped += t.count;
            b->discarded += t.count;
            b->drops_unreported += t.count + t.drops;
        }
        b->in_delivery -= t.count;
        b->drops_in_delivery -= t.drops;
        if(t.took_storage && !b->destroyed) b->spare.swap(t.bytes); // else freed with t
        b->delivered_cv.notify_all();
        if(!b->delivery_wanted)
        {
            b->delivery_running = false;
            return;
        }
    }
}

void
forget_scheduled_delivery(uint64_t buffer_id) noexcept
{
    auto* b = find(buffer_id);
    if(b == nullptr) return;
    std::lock_guard<std::mutex> lock{b->mutex};
    b->scheduled = false;
    b->delivered_cv.notify_all(); // a flush waiting for it asks again
}

namespace
{
std::atomic<bool> exiting{false};

// No callback thread can deliver: deliver on the flushing thread, except where that cannot
// be done. From inside another callback, an inline delivery cannot nest: busy, not a hang.
// At exit, for a buffer whose callback thread a tool's callback ended: that callback would
// end the exiting thread in the middle of exit (glibc then aborts, or the process goes on
// without its main thread and hangs); its records are left to be counted as dropped.
// The callback runs with `cancel_state` (a program's thread: as cancellable as it was when it
// called the API; the unwind of a cancellation there is handled as a pthread_exit's).
rocprofiler_status_t
deliver_on_this_thread(record_buffer* b, int cancel_state)
{
    if(inside_delivery()) return ROCPROFILER_STATUS_ERROR_BUFFER_BUSY;
    if(exiting.load() && callback_thread::ended_by_tool(b->thread_id.load()))
        return ROCPROFILER_STATUS_ERROR;
    {
        const cancellation::scoped_state as_caller{cancel_state};
        deliver(b->id);
    }
    // A finalization the callback asked for runs now, after it returned (as on a callback
    // thread), not inside it, and not cancellable: its waits (the reader's drain, the tool's
    // finalize) sit in noexcept code, where a cancellation's unwind would abort the process.
    const cancellation::scoped_state not_cancellable{PTHREAD_CANCEL_DISABLE};
    callback_thread::run_after_delivery_hook();
    return ROCPROFILER_STATUS_SUCCESS;
}
} // namespace

void
begin_exit() noexcept
{
    exiting.store(true);
}

bool
callback_thread_ended_by_tool(uint64_t buffer_id) noexcept
{
    auto* b = find(buffer_id);
    return b != nullptr && callback_thread::ended_by_tool(b->thread_id.load());
}

namespace
{
// Waits that could close a cycle. A flush or a destroy waits for a delivery that another
// thread runs, or will run (the buffer's callback thread, once its current callback returns).
// If that thread is itself waiting, from inside a tool's code, for a delivery that only this
// thread can let happen (two callbacks on two callback threads flushing each other's buffers,
// or a chain of them), no wait of the cycle ever ends. So every such wait is registered, and
// one that would close a chain of waits back to its own thread is refused (BUFFER_BUSY)
// instead. The chain, not only "the target's callback runs now": a callback may wait for a
// buffer queued behind a callback that waits for it.
struct waiter
{
    std::thread::id thread;
    uint64_t        buffer = 0;
    waiter*         next   = nullptr;
};

// Taken before any buffer's or callback thread's lock, never while one is held.
std::mutex wait_mutex;
waiter*    waiters = nullptr; // newest first: a thread's innermost wait is found first

// The thread that runs the buffer's next delivery: the one running one now, else its callback
// thread; none when neither runs (a flush then delivers on its own thread).
std::thread::id
serving_thread(uint64_t buffer_id)
{
    auto* b = find(buffer_id);
    if(b == nullptr) return {};
    {
        std::lock_guard<std::mutex> lock{b->mutex};
        if(b->delivery_running) return b->delivering_thread;
    }
    return callback_thread::os_thread(b->thread_id.load());
}

// Under wait_mutex.
const waiter*
wait_of(std::thread::id thread, size_t& count)
{
    const waiter* found = nullptr;
    count               = 0;
    for(const waiter* w = waiters; w != nullptr; w = w->next, ++count)
        if(found == nullptr && w->thread == thread) found = w;
    return found;
}

// Whether waiting for a delivery of `buffer_id` would wait, through the registered waits,
// for this thread. Under wait_mutex.
bool
closes_a_cycle(uint64_t buffer_id)
{
    const auto      self   = std::this_thread::get_id();
    std::thread::id holder = serving_thread(buffer_id);
    // Each registered thread at most once: more hops mean a cycle without this thread, which
    // a wait joining it would never leave either.
    for(size_t hops = 0;; ++hops)
    {
        if(holder == std::thread::id{}) return false;
        if(holder == self) return true;
        size_t      count = 0;
        const auto* w     = wait_of(holder, count);
        if(w == nullptr) return false; // running tool code, not waiting for a delivery
        if(hops > count) return true;
        auto next = serving_thread(w->buffer);
        if(next == holder) return false; // it delivers that buffer itself (inline)
        holder = next;
    }
}

// This thread's wait for a delivery of a buffer, registered for its lifetime unless it would
// close a cycle of waits (refused()).
class registered_wait
{
public:
    explicit registered_wait(uint64_t buffer_id) noexcept
    {
        m_node.thread = std::this_thread::get_id();
        m_node.buffer = buffer_id;
        std::lock_guard<std::mutex> lock{wait_mutex};
        if(closes_a_cycle(buffer_id)) return;
        m_node.next  = waiters;
        waiters      = &m_node;
        m_registered = true;
    }
    ~registered_wait()
    {
        if(!m_registered) return;
        std::lock_guard<std::mutex> lock{wait_mutex};
        for(waiter** link = &waiters; *link != nullptr; link = &(*link)->next)
            if(*link == &m_node)
            {
                *link = m_node.next;
                break;
            }
    }
    registered_wait(const registered_wait&)            = delete;
    registered_wait& operator=(const registered_wait&) = delete;

    bool refused() const noexcept { return !m_registered; }

private:
    waiter m_node;
    bool   m_registered = false;
};

// From inside a callback: on the buffer's own callback thread, or this buffer's own callback
// running inline, a wait would wait for itself.
bool
waits_for_itself(const record_buffer* b)
{
    return callback_thread::is_current(b->thread_id.load()) || delivering_buffer == b->id;
}
} // namespace

rocprofiler_status_t
flush(uint64_t buffer_id, std::chrono::milliseconds timeout, int wait_cancel_state)
{
    auto* b = find(buffer_id);
    if(b == nullptr) return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
    if(waits_for_itself(b)) return ROCPROFILER_STATUS_ERROR_BUFFER_BUSY;

    uint64_t target       = 0;
    uint64_t drops_target = 0; // drops counted before the call are reported too
    {
        std::lock_guard<std::mutex> lock{b->mutex};
        if(b->destroyed) return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
        target = b->emplaced;
        // Including the drops a running delivery took: the tool has not been told of them yet.
        drops_target = b->drops_reported + b->drops_in_delivery + b->drops_unreported;
        if(b->delivered + b->discarded >= target && b->drops_reported >= drops_target)
            return ROCPROFILER_STATUS_SUCCESS;
    }
    // Registered before the delivery is asked for: whoever runs it and then waits for this
    // thread finds this wait (declared before the lock below: released after it).
    registered_wait wait{buffer_id};
    if(wait.refused()) return ROCPROFILER_STATUS_ERROR_BUFFER_BUSY;
    // No running callback thread (never started, failed, or stopped at exit): deliver here.
    // flush is never called by the producer, so callbacks still never run on its thread.
    if(!request_delivery(b))
    {
        if(auto status = deliver_on_this_thread(b, wait_cancel_state);
           status != ROCPROFILER_STATUS_SUCCESS)
            return status;
    }

    auto                         deadline = (timeout == std::chrono::milliseconds::max())
                                                ? std::chrono::steady_clock::time_point::max()
                                                : std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> lock{b->mutex};
    // Every record emplaced before the call has left the buffer: delivered, or discarded
    // undelivered (out of memory for its batch's headers; counted, and reported as drops).
    auto done = [&]
    {
        return (b->delivered + b->discarded >= target && b->drops_reported >= drops_target) ||
               b->closed;
    };
    // No delivery queued or running: the one asked for could not be scheduled, or its callback
    // thread ended before it ran it (forget_scheduled_delivery).
    auto unserved = [&] { return !b->scheduled && !b->delivery_running; };
    while(!done())
    {
        auto slice =
            std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds{200});
        {
            const cancellation::scoped_state caller_may_cancel{wait_cancel_state};
            b->delivered_cv.wait_until(lock, slice, [&] { return done() || unserved(); });
        }
        if(done()) break;
        if(std::chrono::steady_clock::now() >= deadline) return ROCPROFILER_STATUS_ERROR;
        // A delivery that could not be scheduled (callback thread gone) is retried.
        if(!b->scheduled)
        {
            lock.unlock();
            if(!request_delivery(b))
            {
                if(auto status = deliver_on_this_thread(b, wait_cancel_state);
                   status != ROCPROFILER_STATUS_SUCCESS)
                    return status;
            }
            lock.lock();
        }
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

namespace
{
// Puts back a buffer whose destroy() did not complete (BUSY, or a cancellation of its wait):
// it takes records again, as before the call.
struct undo_destroying
{
    record_buffer* b;
    bool           completed = false;
    ~undo_destroying()
    {
        if(completed) return;
        std::lock_guard<std::mutex> lock{b->mutex};
        b->destroying = false;
    }
};

// After destroy()'s flush: a delivery of the buffer that another thread still runs (its loop
// going round once more, or a callback of a closed buffer) is waited for, so that no callback
// runs once destroy returns (a tool frees the callback's data then); `destroyed` is set in
// the same critical section, and no later delivery calls back (take_batch). Except for a
// callback that exit abandoned at its deadline (closed at exit, still running): waiting for it
// could hang the exit; destroy then fails (ROCPROFILER_STATUS_ERROR) and the buffer stays.
rocprofiler_status_t
destroy_when_idle(record_buffer* b, int wait_cancel_state)
{
    registered_wait wait{b->id};
    if(wait.refused()) return ROCPROFILER_STATUS_ERROR_BUFFER_BUSY;
    const auto                   self = std::this_thread::get_id();
    std::unique_lock<std::mutex> lock{b->mutex};
    auto idle = [&] { return !b->delivery_running || b->delivering_thread == self; };
    // Its callback, not the SDK's own loop around it (which always ends promptly).
    auto abandoned = [&] { return b->closed && exiting.load() && b->in_callback.load(); };
    // In slices: in_callback changes without a notification.
    while(!idle() && !abandoned())
    {
        const cancellation::scoped_state caller_may_cancel{wait_cancel_state};
        b->delivered_cv.wait_for(lock, std::chrono::milliseconds{200});
    }
    if(!idle()) return ROCPROFILER_STATUS_ERROR;
    b->destroyed = true;
    // Emplaced before the flush but left undelivered (its flush failed): counted, not lost
    // silently.
    b->dropped += b->pending_count;
    b->discarded += b->pending_count;
    std::vector<std::byte>{}.swap(b->pending);
    std::vector<std::byte>{}.swap(b->spare);
    if(!b->delivery_running) // else its own callback destroys it: the tool still reads them
    {
        std::vector<rocprofiler_record_header_t>{}.swap(b->headers);
        std::vector<rocprofiler_record_header_t*>{}.swap(b->pointers);
    }
    b->pending_bytes = 0;
    b->held_bytes    = 0;
    b->pending_count = 0;
    return ROCPROFILER_STATUS_SUCCESS;
}
} // namespace

// First no new records (they are dropped and counted), then what was emplaced is delivered,
// then no delivery may still run on another thread.
rocprofiler_status_t
destroy(uint64_t buffer_id, int wait_cancel_state)
{
    auto* b = find(buffer_id);
    if(b == nullptr || !exists(buffer_id)) return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
    if(waits_for_itself(b)) return ROCPROFILER_STATUS_ERROR_BUFFER_BUSY;
    {
        std::lock_guard<std::mutex> lock{b->mutex};
        if(b->destroyed || b->destroying) return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
        b->destroying = true;
    }
    undo_destroying undo{b};
    auto            status = flush(buffer_id, std::chrono::milliseconds::max(), wait_cancel_state);
    if(status == ROCPROFILER_STATUS_ERROR_BUFFER_BUSY) return status;
    status         = destroy_when_idle(b, wait_cancel_state);
    undo.completed = status == ROCPROFILER_STATUS_SUCCESS;
    return status;
}

uint64_t
close(uint64_t buffer_id) noexcept
{
    auto* b = find(buffer_id);
    if(b == nullptr) return 0;
    std::lock_guard<std::mutex> lock{b->mutex};
    b->closed          = true;
    uint64_t abandoned = b->pending_count; // never delivered: counted, not lost silently
    b->dropped += abandoned;
    b->discarded += abandoned;
    b->pending.clear();
    b->pending_bytes = 0;
    b->held_bytes    = 0;
    b->pending_count = 0;
    b->delivered_cv.notify_all();
    return abandoned;
}

bool
callback_running_elsewhere(uint64_t buffer_id) noexcept
{
    auto* b = find(buffer_id);
    return b != nullptr && b->in_callback.load() && delivering_buffer != buffer_id;
}

bool
get_totals(uint64_t buffer_id, totals& out) noexcept
{
    auto* b = find(buffer_id);
    if(b == nullptr) return false;
    std::lock_guard<std::mutex> lock{b->mutex};
    out = totals{
        b->emplaced,      b->delivered,   b->dropped,
        b->discarded,     b->in_delivery, b->pending_count,
        b->pending_bytes, b->peak_bytes,  std::min(b->pending.capacity(), b->spare.capacity())};
    return true;
}

size_t
count() noexcept
{
    return buffer_count.load();
}

namespace
{
size_t locked_for_fork = 0; // buffers whose mutex the fork prepare handler holds
} // namespace

void
lock_all_for_fork() noexcept
{
    wait_mutex.lock(); // first: it is taken before the buffers' locks
    locked_for_fork = count();
    for(size_t i = 0; i < locked_for_fork; ++i)
        if(auto* b = table()[i].load()) b->mutex.lock();
}

void
unlock_all_after_fork() noexcept
{
    for(size_t i = 0; i < locked_for_fork; ++i)
        if(auto* b = table()[i].load()) b->mutex.unlock();
    locked_for_fork = 0;
    wait_mutex.unlock();
}

void
discard_after_fork() noexcept
{
    waiters = nullptr; // the waiting threads do not exist in the child
    for(size_t i = 0; i < count(); ++i)
    {
        auto* b = table()[i].load();
        if(b == nullptr) continue;
        // The parent delivers these; the child must not deliver them a second time.
        b->pending.clear();
        b->pending_bytes    = 0;
        b->pending_count    = 0;
        b->drops_unreported = 0;
        b->scheduled        = false;
        b->closed           = true;
        b->delivery_wanted  = false;
        // A tool's callback that forked: its batch is this child's too, and its delivery
        // goes on here when the callback returns and counts the batch as delivered. Anyone
        // else's batch stays with the parent's callback (the thread that ran it does not
        // exist here).
        const bool forked_in_its_callback =
            b->delivery_running && b->delivering_thread == std::this_thread::get_id();
        if(!forked_in_its_callback)
        {
            b->in_delivery       = 0;
            b->drops_in_delivery = 0;
            b->delivery_running  = false;
        }
        b->delivered = b->emplaced - b->discarded - b->in_delivery;
    }
}
} // namespace rocprofiler::buffer

extern "C"
{
    rocprofiler_status_t rocprofiler_create_buffer(rocprofiler_context_id_t context, size_t size,
                                                   size_t                          watermark,
                                                   rocprofiler_buffer_policy_t     policy,
                                                   rocprofiler_buffer_tracing_cb_t callback,
                                                   void*                           callback_data,
                                                   rocprofiler_buffer_id_t*        buffer_id)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            if(buffer_id == nullptr)
                                return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
                            if(auto locked = registration::check_configuration_open();
                               locked != ROCPROFILER_STATUS_SUCCESS)
                                return locked;
                            return buffer::create(context.handle, size, watermark, enum_arg(policy),
                                                  callback, callback_data, &buffer_id->handle);
                        });
    }

    rocprofiler_status_t rocprofiler_destroy_buffer(rocprofiler_buffer_id_t buffer_id)
    {
        using namespace rocprofiler;
        return api_call(__func__, [&](int callers_cancel_state)
                        { return buffer::destroy(buffer_id.handle, callers_cancel_state); });
    }

    rocprofiler_status_t rocprofiler_kfd_get_buffer_stats(rocprofiler_buffer_id_t         buffer_id,
                                                          rocprofiler_kfd_buffer_stats_t* stats)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            if(stats == nullptr || stats->size < sizeof(uint64_t))
                                return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
                            buffer::totals t{};
                            if(!buffer::get_totals(buffer_id.handle, t))
                                return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
                            rocprofiler_kfd_buffer_stats_t out{};
                            out.size                = sizeof(out);
                            out.records_stored      = t.emplaced;
                            out.records_delivered   = t.delivered;
                            out.records_dropped     = t.dropped;
                            out.records_pending     = t.pending_count;
                            out.records_discarded   = t.discarded;
                            out.records_in_delivery = t.in_delivery;
                            copy_sized(out, stats);
                            return ROCPROFILER_STATUS_SUCCESS;
                        });
    }

    rocprofiler_status_t rocprofiler_flush_buffer(rocprofiler_buffer_id_t buffer_id)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&](int callers_cancel_state)
                        {
                            return buffer::flush(buffer_id.handle, std::chrono::milliseconds::max(),
                                                 callers_cancel_state);
                        });
    }
}
