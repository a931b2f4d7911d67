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

struct stats_input
{
    const config*           cfg               = nullptr;
    pid_t                   pid               = 0;
    int64_t                 ns_offset         = 0;
    bool                    producer_started  = false;
    bool                    producer_finished = false;
    std::string             exit_wait;
    std::string             producer_error;
    std::vector<gpu_report> gpus;
};

std::string stats_to_json(const stats_input& in);
} // namespace kfd_emu
