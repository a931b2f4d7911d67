// MIT License - see LICENSE.
#include "page.hpp"

#include "plots.hpp"
#include "svg.hpp"

#include <fmt/format.h>

namespace rocprof_kfd_report
{
namespace
{
// System fonts only (nothing to fetch); colours kept when printed; plots never split
// across pages.
constexpr const char* kStyle = R"css(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       margin: 0 auto; max-width: 960px; padding: 16px 24px; color: #1a1a1a; background: #fff;
       font-size: 14px; line-height: 1.4; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; border-bottom: 2px solid #0072B2; padding-bottom: 2px; margin-top: 28px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.sub, p.note, p.caption { color: #555; margin: 2px 0 8px; }
.banner { padding: 10px 14px; border-radius: 4px; margin: 12px 0; }
.banner-lost { background: #fde8e4; border: 2px solid #c0392b; color: #7b1d12; }
.banner-lost ul { margin: 4px 0; }
.banner-ok { background: #eef6ee; border: 1px solid #5a9a5a; color: #1f4d1f; }
ul.highlights { background: #f4f8fb; border-left: 4px solid #0072B2; padding: 8px 8px 8px 28px;
                margin: 8px 0; }
.top-grid { display: grid; grid-template-columns: 3fr 2fr; gap: 0 24px; align-items: start; }
@media (max-width: 700px) { ul.highlights { background: #f4f8fb; border-left: 4px solid #0072B2; padding: 8px 8px 8px 28px;
                margin: 8px 0; }
.top-grid { grid-template-columns: 1fr; } }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 13px; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: middle; }
thead th { background: #f2f2f2; }
table.meta th { background: none; font-weight: 600; padding-right: 16px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.bar-cell svg { vertical-align: middle; }
tr.nonzero td, td.lost { color: #b02a1a; font-weight: 600; }
svg.plot { display: block; max-width: 100%; height: auto; margin: 4px 0 12px; }
svg.plot text { font-size: 11px; fill: #1a1a1a; }
svg.plot .axis line { stroke: #333; stroke-width: 1; }
svg.plot .axis line.grid { stroke: #e3e3e3; }
svg.plot .axis-title { font-size: 12px; font-weight: 600; }
svg.plot .panel-title { font-weight: 600; }
svg.plot .empty { fill: #777; font-style: italic; }
svg.plot rect.track { fill: #f2f2f2; }
svg.plot .series { stroke: #fff; stroke-width: 0.3; }
* { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  h2 { break-after: avoid; }
  h3 { break-after: avoid; }
  svg.plot, table, .banner { break-inside: avoid; }
  section.input { break-before: page; }
  section.input:first-of-type { break-before: auto; }
}
@page { size: A4; margin: 14mm; }
.tip { position: fixed; display: none; background: #fff; border: 1px solid #333; padding: 4px 6px;
       font-size: 12px; pointer-events: none; white-space: pre; z-index: 10; }
@media print { .tip { display: none !important; } }
)css";

// Progressive enhancement only (the page is complete without it): hovering a time plot shows
// the bin's time and every series' value, read from the plot's data attributes. No URL, no
// network, no eval; text is set with textContent.
constexpr const char* kScript = R"js(
(function () {
  'use strict';
  var tip = document.createElement('div');
  tip.className = 'tip';
  document.body.appendChild(tip);
  function num(v) { return v >= 100 ? v.toFixed(0) : (v >= 1 ? v.toFixed(2) : v.toPrecision(3)); }
  Array.prototype.forEach.call(document.querySelectorAll('svg.plot[data-bins]'), function (svg) {
    var bins = +svg.getAttribute('data-bins');
    var x0 = +svg.getAttribute('data-x0'), x1 = +svg.getAttribute('data-x1');
    var binNs = +svg.getAttribute('data-bin-ns');
    var startMs = (+svg.getAttribute('data-start-ns') - +svg.getAttribute('data-t0-ns')) / 1e6;
    var unit = svg.getAttribute('data-unit');
    var series = Array.prototype.map.call(svg.querySelectorAll('path.series'), function (p) {
      return { label: p.getAttribute('data-label'), values: p.getAttribute('data-values').split(' ') };
    });
    if (!bins || !(x1 > x0)) return;
    svg.addEventListener('mousemove', function (ev) {
      var pt = svg.createSVGPoint();
      pt.x = ev.clientX; pt.y = ev.clientY;
      var p = pt.matrixTransform(svg.getScreenCTM().inverse());
      var b = Math.floor((p.x - x0) / (x1 - x0) * bins);
      if (b < 0 || b >= bins) { tip.style.display = 'none'; return; }
      var lines = ['bin ' + b + ': ' + (startMs + b * binNs / 1e6).toFixed(3) + '\u2013' +
                   (startMs + (b + 1) * binNs / 1e6).toFixed(3) + ' ms'];
      series.forEach(function (s) { lines.push(s.label + ': ' + num(+s.values[b]) + ' ' + unit); });
      tip.textContent = lines.join('\n');
      tip.style.display = 'block';
      tip.style.left = (ev.clientX + 14) + 'px';
      tip.style.top = (ev.clientY + 14) + 'px';
    });
    svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  });
})();
)js";

std::string
input_section(const Input& in, size_t index)
{
    const Summary&   s = in.summary;
    const TimeDomain d = time_domain(s);
    std::string out = fmt::format("<section class=\"input\" data-input=\"{}\"><h2>{}</h2>", index,
                                  escape(input_label(in)));
    out += highlights(s);
    // Run metadata and loss accounting side by side at the top (one column when printed
    // narrow or on a small screen).
    out += "<div class=\"top-grid\"><div><h3>Run</h3>" + metadata_table(in) +
           "</div><div><h3>Loss accounting</h3>";
    if(!s.loss.message.empty()) out += "<p class=\"note\">" + escape(s.loss.message) + "</p>";
    out += loss_table(s) + "</div></div>";
    if(!s.inputs.empty())
        out += fmt::format("<h3>Merged from {} processes</h3>", s.inputs.size()) +
               merged_inputs_table(s);
    out += "<h3>Operations</h3>" + operations_table(s);
    out += "<h3>Migration bandwidth</h3><p class=\"caption\">Bytes migrated per time bin of " +
           format_duration(static_cast<double>(s.timeline.bin_ns)) +
           ", stacked by direction and device (bytes of a migration spread over the bins it "
           "spans).</p>";
    out += bandwidth_plot(s, d) + directions_table(s);
    out += "<h3>Page-fault rate</h3><p class=\"caption\">Faults started per second in each "
           "bin, per GPU, read and write stacked; one scale for all GPUs.</p>";
    out += fault_rate_plot(s, d) + faults_table(s);
    out += "<h3>Durations</h3>";
    out += histogram_plot(s, "page_fault", "Page-fault latency distribution (log scale)");
    out += histogram_plot(s, "page_migrate", "Migration duration distribution (log scale)");
    out += std::string("<h3>Queue suspensions</h3><p class=\"caption\">When each GPU's queues were "
                       "evicted (suspended), and their total as a share of ") +
           (s.metadata.emulated ? "the time the replayed records span" : "the run's wall time") +
           ".</p>";
    out += queue_strip_plot(s, d);
    std::string merged;
    for(const QueueIntervals& q : s.queue_suspensions)
        if(q.intervals_merged) merged += (merged.empty() ? "" : ", ") + device_label(s, q.gpu_id);
    if(!merged.empty())
        out += "<p class=\"note\">" + escape(merged) +
               ": more suspensions than the summary keeps; neighbouring intervals were merged "
               "(the totals and shares count every suspension).</p>";
    out += fmt::format("<h3>Top address ranges</h3><p class=\"caption\">{}-aligned ranges.</p>",
                       format_bytes(static_cast<double>(s.range_bytes)));
    out += "<h4>By faults</h4>" + ranges_table(s, false);
    out += "<h4>By bytes migrated</h4>" + ranges_table(s, true);
    out += "<h3>Thrashing</h3>" + thrashing_table(s);
    return out + "</section>";
}

std::string
rank_section(const std::vector<Input>& inputs)
{
    std::vector<std::string> rows;
    BarSeries                htod{"HtoD", series_colour(0), {}}, dtoh{"DtoH", series_colour(1), {}},
        dtod{"DtoD", series_colour(2), {}};
    BarSeries read{"read faults", kReadColour, {}}, write{"write faults", kWriteColour, {}};
    BarSeries share{"largest GPU share", series_colour(3), {}};
    for(const Input& in : inputs)
    {
        const RankTotals t = rank_totals(in.summary);
        rows.push_back(input_label(in));
        htod.values.push_back(t.htod_bytes);
        dtoh.values.push_back(t.dtoh_bytes);
        dtod.values.push_back(t.dtod_bytes);
        read.values.push_back(t.read_faults);
        write.values.push_back(t.write_faults);
        share.values.push_back(t.max_queue_share * 100);
    }
    std::string out = "<section class=\"ranks\" data-section=\"rank-comparison\">"
                      "<h2>Per-rank comparison</h2>";
    out += rank_table(inputs);
    out += hbar_plot("rank-bytes", "Bytes migrated per process, by direction", rows,
                     {htod, dtoh, dtod}, "bytes migrated (GiB)", 1024.0 * 1024 * 1024);
    out += hbar_plot("rank-faults", "Page faults per process, read and write", rows, {read, write},
                     "page faults", 1);
    // An emulated input's share is of its records' time span (summary.json's share_of_wall).
    out += hbar_plot("rank-queue", "Largest share of wall time a GPU's queues were suspended", rows,
                     {share}, "queues suspended (% of wall time, of records' span if replayed)", 1);
    return out + "</section>";
}
} // namespace

std::string
render_report(const std::vector<Input>& inputs)
{
    std::string title = "rocprof-kfd report";
    if(inputs.size() == 1) title += " — " + input_label(inputs[0]);
    std::string out =
        fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                    "<meta name=\"generator\" content=\"rocprof-kfd-report {}\">"
                    "<title>{}</title><style>{}</style></head>\n<body>",
                    ROCPROF_KFD_REPORT_VERSION, escape(title), kStyle);
    out += fmt::format("<header><h1>Page-migration report</h1><p class=\"sub\">{} process{} · "
                       "made by rocprof-kfd-report {} from summary.json (schema "
                       "rocprof-kfd-summary v1)</p></header>",
                       inputs.size(), inputs.size() == 1 ? "" : "es", ROCPROF_KFD_REPORT_VERSION);
    out += loss_banner(inputs);
    // The comparison is over single processes: a merged summary given alongside its ranks
    // would count them twice.
    std::vector<Input> processes;
    for(const Input& in : inputs)
        if(in.summary.inputs.empty()) processes.push_back(in);
    if(processes.size() > 1) out += rank_section(processes);
    for(size_t i = 0; i < inputs.size(); ++i)
        out += input_section(inputs[i], i) + "\n";
    return out + "<script>" + kScript + "</script></body></html>\n";
}
} // namespace rocprof_kfd_report
