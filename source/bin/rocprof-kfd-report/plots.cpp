// MIT License - see LICENSE.
#include "plots.hpp"

#include "svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rocprof_kfd_report
{
namespace
{
constexpr size_t kMaxSeries = 7;

std::string
empty_note(const Frame& f, const std::string& text)
{
    return fmt::format("<text class=\"empty\" x=\"{:.1f}\" y=\"{:.1f}\" "
                       "text-anchor=\"middle\">{}</text>",
                       (f.inner_left() + f.inner_right()) / 2,
                       (f.inner_top() + f.inner_bottom()) / 2, escape(text));
}

// The time axis of every time plot: x maps ns since d.t0.
std::string
time_axis(const Frame& f, const LinearScale& x, const TimeDomain& d)
{
    const double             span = static_cast<double>(d.t1 - d.t0);
    const TimeUnit           unit = time_unit_for(span);
    std::vector<double>      ticks;
    std::vector<std::string> labels;
    for(double t : nice_ticks(0, span / unit.ns, 8))
    {
        ticks.push_back(t * unit.ns);
        labels.push_back(format_number(t, 4));
    }
    return axis_bottom(f, x, ticks, labels,
                       fmt::format("time since the first event ({})", unit.name));
}

LinearScale
time_scale(const Frame& f, const TimeDomain& d)
{
    return {0, static_cast<double>(std::max<uint64_t>(d.t1 - d.t0, 1)), f.inner_left(),
            f.inner_right()};
}

// Path of one stacked step area: the top edge (lower + values) left to right, then the
// bottom edge (lower) back. x_of(i) is the left edge of bin i.
template <typename XOf>
std::string
step_area(const std::vector<double>& lower, const std::vector<double>& values, XOf x_of,
          const LinearScale& y)
{
    const size_t n = values.size();
    if(n == 0) return "";
    std::string d = fmt::format("M{:.1f} {:.1f}", x_of(0), y(lower[0]));
    for(size_t i = 0; i < n; ++i)
        d += fmt::format("V{:.1f}H{:.1f}", y(lower[i] + values[i]), x_of(i + 1));
    for(size_t i = n; i-- > 0;)
        d += fmt::format("V{:.1f}H{:.1f}", y(lower[i]), x_of(i));
    return d + "Z";
}

double
max_of(const std::vector<double>& v)
{
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

std::string
direction_label(const Summary& s, uint64_t from, uint64_t to)
{
    const bool  from_cpu = gpu_id_of(from) == 0, to_cpu = gpu_id_of(to) == 0;
    const char* kind = from_cpu ? (to_cpu ? "HtoH" : "HtoD") : (to_cpu ? "DtoH" : "DtoD");
    return fmt::format("{} {} → {}", kind, device_label(s, from), device_label(s, to));
}
} // namespace

TimeDomain
time_domain(const Summary& s)
{
    const Timeline& t = s.timeline;
    TimeDomain      d{t.start_ns, t.start_ns + t.bins * t.bin_ns};
    bool            any = t.bins > 0;
    for(const QueueIntervals& q : s.queue_suspensions)
        for(const auto& [a, b] : q.intervals)
        {
            d.t0 = any ? std::min(d.t0, a) : a;
            d.t1 = any ? std::max(d.t1, b) : b;
            any  = true;
        }
    if(d.t1 <= d.t0) d.t1 = d.t0 + 1;
    return d;
}

namespace
{
std::string
device_name(const Summary& s, uint64_t node)
{
    if(gpu_id_of(node) == 0) return "CPU";
    for(const Agent& a : s.agents)
        if(a.gpu_id == node)
            return fmt::format("{} node {}", a.name.empty() ? "GPU" : a.name, a.node_id);
    return fmt::format("gpu_id {}", gpu_id_of(node));
}

std::string
host_data_attribute(const Summary& s, uint64_t node)
{
    const std::string& host = host_of(s, node);
    return host.empty() ? "" : fmt::format(" data-host=\"{}\"", escape(host));
}
} // namespace

std::string
device_label(const Summary& s, uint64_t node)
{
    if((node >> 32) == 0) return device_name(s, node); // no host named
    const std::string& host = host_of(s, node);
    return device_name(s, node) + " @ " + (host.empty() ? "(unnamed host)" : host);
}

std::string
gpu_data_attributes(const Summary& s, uint64_t node)
{
    return fmt::format(" data-gpu-id=\"{}\"", gpu_id_of(node)) + host_data_attribute(s, node);
}

std::vector<BandwidthSeries>
bandwidth_series(const Summary& s)
{
    const Timeline&              t = s.timeline;
    std::vector<BandwidthSeries> all;
    std::vector<double>          totals;
    for(const MigrationSeries& m : t.migration_bytes)
    {
        BandwidthSeries b;
        b.from_node = m.from_node;
        b.to_node   = m.to_node;
        b.label     = direction_label(s, m.from_node, m.to_node);
        // bytes per ns is GB/s (10^9 bytes per 10^9 ns).
        for(double bytes : m.values)
            b.gb_per_s.push_back(bytes / static_cast<double>(t.bin_ns));
        all.push_back(std::move(b));
        totals.push_back(std::accumulate(m.values.begin(), m.values.end(), 0.0));
    }
    std::vector<size_t> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return totals[a] > totals[b]; });
    std::vector<BandwidthSeries> out;
    for(size_t i = 0; i < order.size(); ++i)
    {
        BandwidthSeries& b = all[order[i]];
        if(i < kMaxSeries)
        {
            b.colour = series_colour(i);
            out.push_back(std::move(b));
            continue;
        }
        if(out.size() == kMaxSeries)
        {
            BandwidthSeries other;
            other.other  = true;
            other.colour = kOtherColour;
            other.gb_per_s.assign(t.bins, 0.0);
            out.push_back(std::move(other));
        }
        BandwidthSeries& other = out.back();
        for(size_t k = 0; k < b.gb_per_s.size(); ++k)
            other.gb_per_s[k] += b.gb_per_s[k];
        const size_t folded = order.size() - kMaxSeries;
        other.label         = fmt::format("other ({} direction{})", folded, folded == 1 ? "" : "s");
    }
    return out;
}

std::vector<std::pair<uint64_t, uint64_t>>
join_close_intervals(const std::vector<std::pair<uint64_t, uint64_t>>& intervals, double min_ns)
{
    std::vector<std::pair<uint64_t, uint64_t>> sorted = intervals, out;
    std::sort(sorted.begin(), sorted.end());
    for(const auto& iv : sorted)
    {
        if(!out.empty() &&
           static_cast<double>(iv.first) <= static_cast<double>(out.back().second) + min_ns)
            out.back().second = std::max(out.back().second, iv.second);
        else
            out.push_back(iv);
    }
    return out;
}

std::string
bandwidth_plot(const Summary& s, const TimeDomain& d)
{
    const Timeline&                    t      = s.timeline;
    const std::vector<BandwidthSeries> series = bandwidth_series(s);
    Frame                              f;
    std::vector<LegendItem>            items;
    for(const BandwidthSeries& b : series)
        items.push_back({b.label, b.colour});
    double            legend_h = 0;
    const std::string leg =
        legend(items, f.inner_left(), 6, f.inner_right() - f.inner_left(), legend_h);
    f.top += legend_h;
    f.height += legend_h;

    std::vector<double> stack(t.bins, 0.0);
    for(const BandwidthSeries& b : series)
        for(size_t i = 0; i < t.bins; ++i)
            stack[i] += b.gb_per_s[i];
    const double      ymax = nice_ceiling(max_of(stack));
    const LinearScale x    = time_scale(f, d);
    const LinearScale y{0, ymax, f.inner_bottom(), f.inner_top()};
    const double      offset = static_cast<double>(t.start_ns) - static_cast<double>(d.t0);
    auto x_of = [&](size_t i) { return x(offset + static_cast<double>(i * t.bin_ns)); };

    std::string out = svg_open(
        f, "migration-bandwidth", "Migration bandwidth over time, stacked by direction and device",
        fmt::format(" data-unit=\"GB/s\" data-start-ns=\"{}\" data-bin-ns=\"{}\" data-bins=\"{}\" "
                    "data-t0-ns=\"{}\" data-x0=\"{:.2f}\" data-x1=\"{:.2f}\"",
                    t.start_ns, t.bin_ns, t.bins, d.t0, x_of(0), x_of(t.bins)));
    out += leg;
    out += axis_left(f, y, nice_ticks(0, ymax, 5), "bandwidth (GB/s)");
    std::vector<double> lower(t.bins, 0.0);
    for(const BandwidthSeries& b : series)
    {
        out += fmt::format(
            "<path class=\"series\" fill=\"{}\" data-label=\"{}\" "
            "data-from-node=\"{}\" data-to-node=\"{}\"{} data-values=\"{}\" d=\"{}\">"
            "<title>{}</title></path>",
            b.colour, escape(b.label),
            b.other ? std::string("other") : std::to_string(gpu_id_of(b.from_node)),
            b.other ? std::string("other") : std::to_string(gpu_id_of(b.to_node)),
            b.other ? std::string() : host_data_attribute(s, b.from_node), number_list(b.gb_per_s),
            step_area(lower, b.gb_per_s, x_of, y), escape(b.label));
        for(size_t i = 0; i < t.bins; ++i)
            lower[i] += b.gb_per_s[i];
    }
    if(series.empty()) out += empty_note(f, "no page migrations recorded");
    out += time_axis(f, x, d);
    return out + "</svg>";
}

std::string
fault_rate_plot(const Summary& s, const TimeDomain& d)
{
    const Timeline&   t       = s.timeline;
    const double      panel_h = 80, gap = 14;
    Frame             f;
    double            legend_h = 0;
    const std::string leg = legend({{"read faults", kReadColour}, {"write faults", kWriteColour}},
                                   f.inner_left(), 6, f.inner_right() - f.inner_left(), legend_h);
    f.top += legend_h + 4;
    const size_t panels = std::max<size_t>(t.faults.size(), 1);
    f.height            = f.top + static_cast<double>(panels) * (panel_h + gap) + f.bottom;

    // One y scale for every GPU so their rates compare at a glance.
    const double per_s = 1e9 / static_cast<double>(std::max<uint64_t>(t.bin_ns, 1));
    std::vector<std::vector<double>> reads, writes;
    double                           ymax = 0;
    for(const FaultSeries& g : t.faults)
    {
        std::vector<double> r, w;
        for(size_t i = 0; i < t.bins; ++i)
        {
            r.push_back(g.read[i] * per_s);
            w.push_back(g.write[i] * per_s);
            ymax = std::max(ymax, r.back() + w.back());
        }
        reads.push_back(std::move(r));
        writes.push_back(std::move(w));
    }
    ymax = nice_ceiling(ymax);

    const LinearScale x      = time_scale(f, d);
    const double      offset = static_cast<double>(t.start_ns) - static_cast<double>(d.t0);
    auto        x_of = [&](size_t i) { return x(offset + static_cast<double>(i * t.bin_ns)); };
    std::string out =
        svg_open(f, "fault-rate", "Page-fault rate over time per GPU, read and write",
                 fmt::format(" data-unit=\"faults/s\" data-start-ns=\"{}\" data-bin-ns=\"{}\" "
                             "data-bins=\"{}\" data-t0-ns=\"{}\" data-x0=\"{:.2f}\" "
                             "data-x1=\"{:.2f}\"",
                             t.start_ns, t.bin_ns, t.bins, d.t0, x_of(0), x_of(t.bins)));
    out += leg;
    for(size_t g = 0; g < t.faults.size(); ++g)
    {
        Frame pf  = f;
        pf.top    = f.top + static_cast<double>(g) * (panel_h + gap) + gap;
        pf.bottom = f.height - (pf.top + panel_h);
        const LinearScale y{0, ymax, pf.inner_bottom(), pf.inner_top()};
        const uint64_t    gpu = t.faults[g].gpu_id;
        out += fmt::format("<g class=\"panel\"{}><text class=\"panel-title\" "
                           "x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
                           gpu_data_attributes(s, gpu), pf.inner_left() + 4, pf.inner_top() - 3,
                           escape(device_label(s, gpu)));
        out += axis_left(pf, y, nice_ticks(0, ymax, 3), g == 0 ? "faults/s" : "");
        const std::vector<double> zero(t.bins, 0.0);
        const std::string         label = escape(device_label(s, gpu));
        out += fmt::format("<path class=\"series\" data-kind=\"read\" fill=\"{}\" "
                           "data-label=\"{} read\" data-values=\"{}\" d=\"{}\"><title>read faults, "
                           "{}</title></path>",
                           kReadColour, label, number_list(reads[g]),
                           step_area(zero, reads[g], x_of, y), label);
        out += fmt::format("<path class=\"series\" data-kind=\"write\" fill=\"{}\" "
                           "data-label=\"{} write\" data-values=\"{}\" d=\"{}\"><title>write "
                           "faults, {}</title></path></g>",
                           kWriteColour, label, number_list(writes[g]),
                           step_area(reads[g], writes[g], x_of, y), label);
    }
    if(t.faults.empty()) out += empty_note(f, "no page faults recorded");
    out += time_axis(f, x, d);
    return out + "</svg>";
}

std::string
histogram_plot(const Summary& s, const std::string& operation, const std::string& title)
{
    Frame f;
    f.height            = 230;
    const auto       it = s.histograms.find(operation);
    const Histogram  empty;
    const Histogram& h = it == s.histograms.end() ? empty : it->second;
    // Bucket i covers (upper/2, upper]; on a log2 axis that is [log2(upper) - 1, log2(upper)].
    auto top_of = [](uint64_t upper)
    { return std::log2(static_cast<double>(std::max<uint64_t>(upper, 1))); };
    double lo = 1e300, hi = -1e300, cmax = 0;
    for(size_t i = 0; i < h.counts.size(); ++i)
        if(h.counts[i] > 0)
        {
            lo   = std::min(lo, top_of(h.bucket_upper_ns[i]) - 1);
            hi   = std::max(hi, top_of(h.bucket_upper_ns[i]));
            cmax = std::max(cmax, static_cast<double>(h.counts[i]));
        }
    const bool any = cmax > 0;
    if(!any) lo = 0, hi = 10;
    double            legend_h = 0;
    const std::string leg      = legend({{"records per bucket", series_colour(0)},
                                         {"p50", "#000000", true},
                                         {"p99", kWriteColour, true}},
                                        f.inner_left(), 6, f.inner_right() - f.inner_left(), legend_h);
    f.top += legend_h + 10;
    f.height += legend_h + 10;
    const LinearScale x{lo, hi, f.inner_left(), f.inner_right()};
    const double      ymax = nice_ceiling(cmax);
    const LinearScale y{0, ymax, f.inner_bottom(), f.inner_top()};

    std::string out = svg_open(f, "histogram-" + operation, title,
                               fmt::format(" data-operation=\"{}\" data-scale=\"log2\" "
                                           "data-p50-ns=\"{}\" data-p99-ns=\"{}\"",
                                           escape(operation), h.p50_ns, h.p99_ns));
    out += leg;
    out += axis_left(f, y, nice_ticks(0, ymax, 4), "records");
    for(size_t i = 0; i < h.counts.size(); ++i)
    {
        if(h.counts[i] == 0) continue;
        const double   t1 = top_of(h.bucket_upper_ns[i]), x0 = x(t1 - 1), x1 = x(t1);
        const uint64_t lower = i == 0 ? 0 : h.bucket_upper_ns[i] / 2;
        out += fmt::format("<rect class=\"bar\" data-bucket=\"{}\" data-lower-ns=\"{}\" "
                           "data-upper-ns=\"{}\" data-value=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" "
                           "width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>({}, {}]: {} "
                           "records</title></rect>",
                           i, lower, h.bucket_upper_ns[i], h.counts[i], x0 + 0.5,
                           y(static_cast<double>(h.counts[i])), std::max(x1 - x0 - 1, 0.5),
                           y(0) - y(static_cast<double>(h.counts[i])), series_colour(0),
                           format_duration(static_cast<double>(lower)),
                           format_duration(static_cast<double>(h.bucket_upper_ns[i])), h.counts[i]);
    }
    // Decades of ns as ticks (1 µs, 10 µs, ...), with every power of two when the span is
    // under a decade.
    std::vector<double>      ticks;
    std::vector<std::string> labels;
    for(int k = 0; k <= 12; ++k)
    {
        const double v = std::pow(10.0, k);
        if(std::log2(v) >= lo - 1e-9 && std::log2(v) <= hi + 1e-9)
        {
            ticks.push_back(std::log2(v));
            labels.push_back(format_duration(v));
        }
    }
    if(ticks.size() < 2)
    {
        ticks.clear();
        labels.clear();
        for(double e = std::ceil(lo); e <= hi; e += 1)
        {
            ticks.push_back(e);
            labels.push_back(format_duration(std::pow(2.0, e)));
        }
    }
    out += axis_bottom(f, x, ticks, labels,
                       "duration (ns, log scale; bucket i holds (2^(i-1), 2^i] ns)");
    if(any)
    {
        const std::pair<const char*, uint64_t> marks[] = {{"p50", h.p50_ns}, {"p99", h.p99_ns}};
        for(const auto& [name, ns] : marks)
        {
            const double mx  = x(std::clamp(top_of(ns), lo, hi));
            const bool   p99 = name[1] == '9';
            out += fmt::format(
                "<g class=\"marker\" data-marker=\"{}\" data-ns=\"{}\"><line "
                "x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                "stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/>"
                "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">{} {}</text></g>",
                name, ns, mx, f.inner_top(), mx, f.inner_bottom(), p99 ? kWriteColour : "#000000",
                mx > f.inner_right() - 90 ? mx - 3 : mx + 3, f.inner_top() + (p99 ? 24 : 10),
                mx > f.inner_right() - 90 ? "end" : "start", name,
                format_duration(static_cast<double>(ns)));
        }
    }
    else
        out += empty_note(f, "no records");
    return out + "</svg>";
}

std::string
queue_strip_plot(const Summary& s, const TimeDomain& d)
{
    // GPUs that have intervals or totals, in the order they appear.
    std::vector<uint64_t> gpus;
    auto                  add = [&](uint64_t g)
    {
        if(std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
    };
    for(const GpuQueueSuspend& q : s.queue_suspend_by_gpu)
        add(q.gpu_id);
    for(const QueueIntervals& q : s.queue_suspensions)
        add(q.gpu_id);

    const double row_h = 22;
    Frame        f;
    f.left                     = 150;
    f.right                    = 120;
    double            legend_h = 0;
    const std::string leg = legend({{"queues suspended (evicted)", kWriteColour}}, f.inner_left(),
                                   6, f.inner_right() - f.inner_left(), legend_h);
    f.top                 = legend_h + 14;
    f.height = f.top + static_cast<double>(std::max<size_t>(gpus.size(), 1)) * row_h + f.bottom;
    const LinearScale x    = time_scale(f, d);
    const double one_px_ns = static_cast<double>(d.t1 - d.t0) / (f.inner_right() - f.inner_left());

    std::string out = svg_open(
        f, "queue-suspension",
        std::string("Queue suspension intervals per GPU, with their share of ") + share_base(s),
        fmt::format(" data-t0-ns=\"{}\" data-t1-ns=\"{}\" data-wall-ns=\"{}\"", d.t0, d.t1,
                    s.metadata.wall_ns));
    out += leg;
    out += fmt::format("<text class=\"panel-title\" x=\"{:.1f}\" y=\"{:.1f}\" "
                       "text-anchor=\"end\">share of {}</text>",
                       f.width - 4, f.top - 4, share_base(s));
    for(size_t r = 0; r < gpus.size(); ++r)
    {
        const uint64_t                             gpu   = gpus[r];
        const double                               y0    = f.top + static_cast<double>(r) * row_h;
        uint64_t                                   total = 0, count = 0;
        double                                     share  = 0;
        bool                                       merged = false;
        std::vector<std::pair<uint64_t, uint64_t>> intervals;
        for(const GpuQueueSuspend& q : s.queue_suspend_by_gpu)
            if(q.gpu_id == gpu) total = q.total_ns, count = q.count, share = q.share_of_wall;
        for(const QueueIntervals& q : s.queue_suspensions)
            if(q.gpu_id == gpu) intervals = q.intervals, merged = q.intervals_merged;
        out += fmt::format("<g class=\"row\"{} data-count=\"{}\" "
                           "data-total-ns=\"{}\" data-share=\"{}\" data-intervals=\"{}\" "
                           "data-intervals-merged=\"{}\"><text x=\"{:.1f}\" y=\"{:.1f}\" "
                           "text-anchor=\"end\">{}</text><rect class=\"track\" x=\"{:.1f}\" "
                           "y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>",
                           gpu_data_attributes(s, gpu), count, total, format_number(share, 6),
                           intervals.size(), merged ? "true" : "false", f.inner_left() - 8,
                           y0 + row_h / 2 + 4, escape(device_label(s, gpu)), f.inner_left(), y0 + 3,
                           f.inner_right() - f.inner_left(), row_h - 6);
        for(const auto& [a, b] : join_close_intervals(intervals, one_px_ns / 2))
        {
            const double xa = x(static_cast<double>(a - d.t0)),
                         xb = x(static_cast<double>(b - d.t0));
            out +=
                fmt::format("<rect class=\"interval\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" "
                            "height=\"{:.1f}\" fill=\"{}\"/>",
                            xa, y0 + 3, std::max(xb - xa, 0.6), row_h - 6, kWriteColour);
        }
        out +=
            fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{} % · {}</text></g>",
                        f.width - 4, y0 + row_h / 2 + 4, format_number(share * 100, 3),
                        format_duration(static_cast<double>(total)));
    }
    if(gpus.empty()) out += empty_note(f, "no queue suspensions recorded");
    out += time_axis(f, x, d);
    return out + "</svg>";
}

std::string
hbar_plot(const std::string& plot_id, const std::string& title,
          const std::vector<std::string>& rows, const std::vector<BarSeries>& series,
          const std::string& axis_title, double axis_scale)
{
    const double row_h = 20;
    Frame        f;
    f.left = 200;
    std::vector<LegendItem> items;
    for(const BarSeries& b : series)
        items.push_back({b.label, b.colour});
    double            legend_h = 0;
    const std::string leg =
        legend(items, f.inner_left(), 6, f.inner_right() - f.inner_left(), legend_h);
    f.top       = legend_h + 12;
    f.height    = f.top + static_cast<double>(std::max<size_t>(rows.size(), 1)) * row_h + f.bottom;
    double xmax = 0;
    for(size_t r = 0; r < rows.size(); ++r)
    {
        double sum = 0;
        for(const BarSeries& b : series)
            sum += b.values[r];
        xmax = std::max(xmax, sum / axis_scale);
    }
    xmax = nice_ceiling(xmax);
    const LinearScale x{0, xmax, f.inner_left(), f.inner_right()};
    std::string       out = svg_open(f, plot_id, title, "");
    out += leg;
    for(size_t r = 0; r < rows.size(); ++r)
    {
        const double y0 = f.top + static_cast<double>(r) * row_h;
        out += fmt::format("<g class=\"row\" data-row=\"{}\"><text x=\"{:.1f}\" y=\"{:.1f}\" "
                           "text-anchor=\"end\">{}</text>",
                           r, f.inner_left() - 6, y0 + row_h / 2 + 4, escape(rows[r]));
        double acc = 0;
        for(const BarSeries& b : series)
        {
            const double v = b.values[r] / axis_scale;
            out += fmt::format("<rect class=\"bar\" data-series=\"{}\" data-value=\"{}\" "
                               "x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                               "fill=\"{}\"><title>{}: {}</title></rect>",
                               escape(b.label), format_number(b.values[r], 6), x(acc), y0 + 3,
                               x(acc + v) - x(acc), row_h - 6, b.colour, escape(b.label),
                               format_number(v, 4));
            acc += v;
        }
        out += "</g>";
    }
    std::vector<double>      ticks = nice_ticks(0, xmax, 6);
    std::vector<std::string> labels;
    for(double t : ticks)
        labels.push_back(format_number(t, 4));
    out += axis_bottom(f, x, ticks, labels, axis_title);
    return out + "</svg>";
}
} // namespace rocprof_kfd_report
