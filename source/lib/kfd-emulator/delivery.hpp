// MIT License - see LICENSE.
//
// The kernel's delivery rules for one message (mask and pid filters, whole messages or
// nothing, drops when full), the readiness of an SMI fd (a token byte in its socket while the
// FIFO has data, a new edge per batch), and the life of a client (closed, vanished GPU).
// All with the lock held.
#pragma once

#include "state.hpp"

#include <string_view>
#include <vector>

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
bool     flush_wakeups(session& s); // whether a client was given a new edge

// The bytes queued for one client of a GPU and not yet copied into its FIFO: consecutive
// messages of the producer's stage, copied with one push (see queue_if_room).
struct pending_run
{
    const char* begin = nullptr;
    size_t      bytes = 0;
    uint64_t    count = 0; // messages
};

// The producer's hot path in lossless and max pace: deliver() of msg when every client that
// gets it has room for it (in lossless pace the room must_wait_for_space asks), with the
// same counters, except that the message is added to the client's run (runs: one per entry
// of gpu.clients) and reaches its FIFO with flush_runs. Returns false, changing nothing, when
// a client lacks room (the caller then takes the general path, which waits or drops).
// msg lies right after the run's bytes when the run goes on (the stage keeps each GPU's
// messages in a row).
bool queue_if_room(const config& cfg, gpu_state& gpu, std::vector<pending_run>& runs, uint32_t id,
                   uint32_t pid, std::string_view msg);
// Copies the runs into their clients' FIFOs (each a whole push: queue_if_room saw the room),
// with the counters of their messages, and marks the clients for a wake-up. Before the lock
// is released, and before any other delivery: runs is then empty.
void flush_runs(gpu_state& gpu, std::vector<pending_run>& runs);
// The GPU of a `#@ fault vanish` vanishes (when it is emulated and has not yet).
void apply_vanish_fault(const config& cfg, session& s, const vanish_fault& fault);
void close_client(client& c);
void trim_clients(gpu_state& gpu);
} // namespace kfd_emu
