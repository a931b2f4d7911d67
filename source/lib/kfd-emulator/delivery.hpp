// MIT License - see LICENSE.
//
// The kernel's delivery rules for one message (mask and pid filters, whole messages or
// nothing, drops when full), the bytes of an SMI fd (the FIFO's, sent into its socket with
// each batch: a new edge per batch), and the life of a client (closed, vanished GPU).
// All with the lock held.
#pragma once

#include "state.hpp"

#include <string_view>

namespace kfd_emu
{
// Closed clients kept per GPU for the statistics; older closed ones are forgotten (counted).
constexpr size_t max_clients_kept = 256;

// Sends the FIFO's bytes queued since the last batch into the client's socket; true when
// some were sent.
bool publish(client& c);
// Sends every client's queued bytes that are not in its socket yet: when the producer ends
// and in the exit wait, where no later batch or read would (a reader that reads without
// read() sends nothing itself).
void publish_all(session& s);
// n bytes were taken out of the socket (read, or lost to an injected EFAULT): they leave the
// FIFO.
void take_from_fifo(client& c, size_t n);
// Removes from the FIFO the bytes a reader took from the socket without an intercepted
// read() (SIOCINQ); returns how many.
size_t sync_fill(client& c);
// Whether a live client of the GPU may take bytes the emulator does not see: it read without
// read() before (recv, io_uring), or it has read nothing yet.
bool may_read_unseen(const gpu_state& gpu);
bool is_live(const client& c);
bool must_wait_for_space(const config& cfg, gpu_state& gpu, uint32_t id, uint32_t pid, size_t size);
bool mask_wait_done(const session& s, const mask_wait& wait);
// Returns how many clients dropped msg because their FIFO was full.
uint64_t deliver(const config& cfg, gpu_state& gpu, uint32_t id, uint32_t pid,
                 std::string_view msg);
// Lossless pace: delivers msg as deliver does (drops: how many clients dropped it) unless some
// client must wait for space (must_wait_for_space); then false, with nothing changed. One
// pass over the clients for a GPU with one live client, the common case.
bool deliver_when_room(const config& cfg, gpu_state& gpu, uint32_t id, uint32_t pid,
                       std::string_view msg, uint64_t& drops);
bool flush_wakeups(session& s); // whether a client was given a new edge
// The GPU of a `#@ fault vanish` vanishes (when it is emulated and has not yet).
void apply_vanish_fault(const config& cfg, session& s, const vanish_fault& fault);
void close_client(client& c);
void trim_clients(gpu_state& gpu);
} // namespace kfd_emu
