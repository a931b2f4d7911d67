// MIT License - see LICENSE.
// Small pure building blocks of the report's inline SVG: escaping, number formatting,
// scales, "nice" ticks, axes with unit labels, legends and the colour-blind-safe palette.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rocprof_kfd_report
{
// HTML/SVG text and attribute escaping (& < > " ').
std::string escape(std::string_view text);

// Shortest readable form of a number with up to `digits` significant digits ("1.5", "120k"
// is not used: plain decimal, no exponent below 1e15).
std::string format_number(double v, int digits = 4);

// Axis tick labels: "950", "12k", "4M", "1.5G" (k from 10^4, M from 10^6, G from 10^9).
std::string format_si(double v);

// "512 B", "2.00 MiB", "1.25 GiB".
std::string format_bytes(double bytes);

// "850 ns", "12.3 µs", "4.56 ms", "1.20 s".
std::string format_duration(double ns);

// Okabe-Ito palette (colour-blind safe), in an order that keeps neighbours distinct on white;
// index wraps around.
const char*                  series_colour(size_t index);
inline constexpr const char* kReadColour  = "#0072B2"; // blue
inline constexpr const char* kWriteColour = "#D55E00"; // vermillion
inline constexpr const char* kOtherColour = "#999999";

// Maps [d0, d1] onto [r0, r1] linearly (d0 == d1 maps everything to r0).
struct LinearScale
{
    double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
    double operator()(double v) const
    {
        return d1 == d0 ? r0 : r0 + (v - d0) * (r1 - r0) / (d1 - d0);
    }
};

// Round tick values covering [lo, hi] with steps of 1, 2 or 5 x 10^k, about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target);

// The smallest "nice" number >= v (1, 2, 5 x 10^k); 1 for v <= 0.
double nice_ceiling(double v);

// A time unit for axis labels: the largest of s, ms, µs, ns that keeps span >= 1 unit.
struct TimeUnit
{
    const char* name;
    double      ns;
};
TimeUnit time_unit_for(double span_ns);

// The geometry every plot shares: the outer size and the inner plotting area.
struct Frame
{
    double width = 860, height = 240;
    double left = 70, right = 20, top = 14, bottom = 44;
    double inner_left() const { return left; }
    double inner_right() const { return width - right; }
    double inner_top() const { return top; }
    double inner_bottom() const { return height - bottom; }
};

// Horizontal axis at y = frame.inner_bottom(): ticks at `ticks` (domain values), labelled by
// label(tick); the axis title is centred below.
std::string axis_bottom(const Frame& f, const LinearScale& x, const std::vector<double>& ticks,
                        const std::vector<std::string>& labels, const std::string& title);

// Vertical axis at x = frame.inner_left() with horizontal grid lines; title rotated.
std::string axis_left(const Frame& f, const LinearScale& y, const std::vector<double>& ticks,
                      const std::string& title);

struct LegendItem
{
    std::string label;
    std::string colour;
    bool        dashed = false; // a marker line rather than a filled series
};

// One row of legend entries starting at (x, y); wraps at max_width. Returns the SVG and
// sets `height` to the height it takes.
std::string legend(const std::vector<LegendItem>& items, double x, double y, double max_width,
                   double& height);

// Opening tag of a plot's <svg>: fixed viewBox, scales to the page width, with `attrs`
// (already escaped data-* attributes) and an accessible title.
std::string svg_open(const Frame& f, const std::string& plot_id, const std::string& title,
                     const std::string& attrs);

// Space-separated numbers for data-* attributes (bandwidths, rates): up to 6 digits each.
std::string number_list(const std::vector<double>& values);
} // namespace rocprof_kfd_report
