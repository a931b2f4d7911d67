// MIT License - see LICENSE.
//
// The statistics file (KFD_EMULATOR_STATS): what the emulated kernel did with every line of
// the log, per GPU, per client and in total. Schema in docs/kfd-emulator.md.
#pragma once

#include "config.hpp"

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kfd_emu
{
struct client_stats
{
    uint64_t queued               = 0;
    uint64_t dropped_fifo_full    = 0;
    uint64_t filtered_mask        = 0;
    uint64_t filtered_pid         = 0;
    uint64_t bytes_queued         = 0;
    uint64_t bytes_read           = 0;
    uint64_t bytes_lost_efault    = 0;
    uint64_t lines_lost_efault    = 0;
    uint64_t injected_read_errors = 0;
    uint64_t fifo_bytes_at_exit   = 0;
    uint64_t max_fifo_fill        = 0;
};

// Sums over a GPU's clients, except events_emitted, no_client and after_vanish, which count
// events.
struct gpu_stats
{
    uint64_t events_emitted    = 0;
    uint64_t events_queued     = 0;
    uint64_t dropped_fifo_full = 0;
    uint64_t filtered_mask     = 0;
    uint64_t filtered_pid      = 0;
    uint64_t no_client         = 0;
    uint64_t after_vanish      = 0;
};

struct client_report
{
    int          fd       = -1;
    pid_t        pid      = 0;
    uint64_t     mask     = 0;
    bool         closed   = false;
    bool         vanished = false;
    client_stats n;
};

struct gpu_report
{
    gpu_stats                  n;
    bool                       vanished        = false;
    uint64_t                   vanished_line   = 0;
    uint64_t                   clients_omitted = 0;
    std::vector<client_report> clients;
};

// The system calls the emulator makes inside the program's intercepted calls, by kind.
enum client_syscall : unsigned
{
    sc_getpid,
    sc_fstat,
    sc_recvfrom,
    sc_sendto,
    sc_close,
    sc_fcntl,
    sc_socketpair,
    sc_memfd_create,
    sc_getrlimit,
    sc_futex_wake,        // a notify of the producer that waits for room (one FUTEX_WAKE)
    sc_futex_lock_wait,   // the lock was held by another thread (about one FUTEX_WAIT)
    sc_futex_unlock_wake, // the read's unlock of a lock another thread waited for (FUTEX_WAKE)
    sc_thread_create,     // the producer's start: clone3, mmap, mprotect, rt_sigprocmask
    sc_ioctl,             // SIOCINQ: how many bytes of an SMI fd's socket are unread
    sc_sendmsg,           // a batch's bytes sent into an SMI fd's socket
    client_syscall_kinds
};
// Their names in the statistics' "client_thread_syscalls".
inline constexpr const char* client_syscall_names[client_syscall_kinds] = {
    "getpid",        "fstat",      "recvfrom",        "sendto",
    "close",         "fcntl",      "socketpair",      "memfd_create",
    "getrlimit",     "futex_wake", "futex_lock_wait", "futex_unlock_wake",
    "thread_create", "ioctl",      "sendmsg"};

struct client_call_report
{
    uint64_t reads_intercepted              = 0;
    uint64_t syscalls[client_syscall_kinds] = {};
};

struct stats_input
{
    const config*           cfg               = nullptr;
    pid_t                   pid               = 0;
    int64_t                 ns_offset         = 0;
    bool                    producer_started  = false;
    bool                    producer_finished = false;
    std::string             exit_wait;
    std::string             producer_error;
    uint64_t                producer_timer_slack_ns = 0;
    std::vector<gpu_report> gpus;
    client_call_report      client_calls;
};

std::string stats_to_json(const stats_input& in);
} // namespace kfd_emu
