// MIT License - see LICENSE.
// The report's plots: pure functions from a Summary to an inline <svg> string. Every plot
// carries data-* attributes with the numbers it draws (see docs/rocprof-kfd-report.md), so
// tests can read them back without decoding geometry.
#pragma once

#include "summary.hpp"

#include <string>
#include <utility>
#include <vector>

namespace rocprof_kfd_report
{
// The absolute time span [t0, t1] (ns) that the time plots of one summary share: the
// timeline's bins, widened to cover every queue suspension interval.
struct TimeDomain
{
    uint64_t t0 = 0, t1 = 0;
};
TimeDomain time_domain(const Summary& s);

// "CPU" for gpu_id 0, else the agent's name and node ("gfx90a node 2"), else "gpu_id N"; and
// " @ host" in a merged summary of several hosts. `node` is a node key (Summary::hosts).
std::string device_label(const Summary& s, uint64_t node);
// ` data-gpu-id="N"`, and ` data-host="h"` where the summary names the node's host.
std::string gpu_data_attributes(const Summary& s, uint64_t node);

// One stacked series of the bandwidth plot: GB/s per timeline bin.
struct BandwidthSeries
{
    std::string         label;
    std::string         colour;
    uint64_t            from_node = 0, to_node = 0;
    bool                other = false; // the sum of the smallest directions past the 7th
    std::vector<double> gb_per_s;
};
// Directions ordered by total bytes, largest first (drawn at the bottom); more than 7 are
// folded into one "other" series.
std::vector<BandwidthSeries> bandwidth_series(const Summary& s);

// Intervals [a, b] (absolute ns) as drawn: neighbours closer than min_ns joined, so a
// thousand tiny suspensions become a few rectangles (what a screen or a printer shows).
std::vector<std::pair<uint64_t, uint64_t>>
join_close_intervals(const std::vector<std::pair<uint64_t, uint64_t>>& intervals, double min_ns);

std::string bandwidth_plot(const Summary& s, const TimeDomain& d);
std::string fault_rate_plot(const Summary& s, const TimeDomain& d);
// `operation` is a key of Summary::histograms ("page_fault", "page_migrate").
std::string histogram_plot(const Summary& s, const std::string& operation,
                           const std::string& title);
std::string queue_strip_plot(const Summary& s, const TimeDomain& d);

// Horizontal stacked bars, one row per rank: used by the per-rank comparison.
struct BarSeries
{
    std::string         label;
    std::string         colour;
    std::vector<double> values; // one per row
};
std::string hbar_plot(const std::string& plot_id, const std::string& title,
                      const std::vector<std::string>& rows, const std::vector<BarSeries>& series,
                      const std::string& axis_title, double axis_scale);
} // namespace rocprof_kfd_report
