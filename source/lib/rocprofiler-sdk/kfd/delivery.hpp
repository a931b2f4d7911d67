// MIT License - see LICENSE.
//
// The reader's per-read work: the lines of one read parsed, paired and delivered to the
// buffers of the active contexts. Records are built in place in one record batch per
// destination buffer, in line order (so each buffer gets them in the order record-by-record
// emplaces would give), and each buffer's lock is taken once per read. Reader thread only.
#pragma once

#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/kfd/reader.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rocprofiler::kfd::delivery
{
// A service of one active context: the operations it traces and its buffer's batch.
struct destination
{
    uint64_t operations = 0;
    size_t   batch      = 0; // index into chunk_delivery::batches
};

struct buffer_batch
{
    uint64_t             buffer_id = 0;
    bool                 in_use    = false;
    buffer::record_batch records;
};

// One read's destinations, and the batches, kept across reads so that their storage is
// reused (at most one per buffer ever used).
struct chunk_delivery
{
    std::vector<destination>  raw;    // kfd_events services, in context order
    std::vector<destination>  paired; // page_migration services, in context order
    std::vector<buffer_batch> batches;
    // This read: the batch of the page-migration service when there is exactly one (the
    // common case: records built in place with no per-line lookups), and what it traces.
    buffer::record_batch* sole_paired            = nullptr;
    uint64_t              sole_paired_operations = 0;
    event                 scratch; // the line being handled
    // This read: services that could not be listed (out of memory), and records lost
    // before their batch reached the buffer (counted as dropped).
    uint64_t unlisted_raw = 0, unlisted_paired = 0;
    uint64_t lost_raw = 0, lost_paired = 0;
};

// Events of other processes are counted and dropped (since Linux 6.16 a CAP_SYS_ADMIN
// client receives every process's events).
struct process_filter
{
    bool     only_own_process = false;
    uint32_t self_pid         = 0;
};

// Handles one read: collects the destinations of the contexts active now (call it after
// batch_sequence turned odd: a context stopped before is not seen, and a stop during the
// batch waits for it), splits the bytes with stream.splitter, parses, pairs, builds the
// records, appends each batch to its buffer and publishes the stream's counters.
void deliver_chunk(chunk_delivery& cd, const process_filter& filter, gpu_stream& stream,
                   const char* data, size_t size, uint64_t now) noexcept;
} // namespace rocprofiler::kfd::delivery
