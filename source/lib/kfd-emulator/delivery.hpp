// MIT License - see LICENSE.
//
// The kernel's delivery rules for one message (mask and pid filters, whole messages or
// nothing, drops when full), the readiness of an SMI fd (a token byte in its socket while the
// FIFO has data, a new edge per batch), and the life of a client (closed, vanished GPU).
// All with the lock held.
#pragma once

#include "state.hpp"

#include <string_view>

namespace kfd_emu
{
// Closed clients kept per GPU for the statistics; older closed ones are forgotten (counted).
constexpr size_t max_clients_kept = 256;

void drop_token(client& c);
bool is_live(const client& c);
bool must_wait_for_space(const config& cfg, const gpu_state& gpu, uint32_t id, uint32_t pid,
                         size_t size);
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
