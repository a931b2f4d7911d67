// MIT License - see LICENSE.
// The report's tables and banners: pure functions from summaries to HTML fragments.
#pragma once

#include "summary.hpp"

#include <string>
#include <vector>

namespace rocprof_kfd_report
{
// One input file of the report and what it held.
struct Input
{
    std::string path;
    Summary     summary;
};

// "rank 2 · host-a · pid 4711" (no rank part when the run had none).
std::string input_label(const Input& in);

// A red banner when any input lost or probably lost events; a quiet line otherwise.
std::string loss_banner(const std::vector<Input>& inputs);

std::string metadata_table(const Input& in);
std::string loss_table(const Summary& s);
// The processes a merged summary was made from.
std::string merged_inputs_table(const Summary& s);
std::string operations_table(const Summary& s);
std::string directions_table(const Summary& s);
std::string faults_table(const Summary& s);
// by_bytes: the top ranges by bytes migrated (bars show bytes), else by faults.
std::string ranges_table(const Summary& s, bool by_bytes);
std::string thrashing_table(const Summary& s);
// The few lines an engineer reads first: bytes moved, peak bandwidth and fault rate (with
// their bins), the worst GPU's queue suspension share, p99 fault latency, thrashing.
std::string highlights(const Summary& s);

// One row per input: the figures the per-rank comparison plots show, as numbers.
std::string rank_table(const std::vector<Input>& inputs);

// Totals used by the rank comparison (also by its plots).
struct RankTotals
{
    double htod_bytes = 0, dtoh_bytes = 0, dtod_bytes = 0;
    double read_faults = 0, write_faults = 0;
    double max_queue_share = 0;
};
RankTotals rank_totals(const Summary& s);
} // namespace rocprof_kfd_report
