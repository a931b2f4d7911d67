// MIT License - see LICENSE.
#include "svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rocprof_kfd_report
{
std::string
escape(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for(char c : text)
    {
        switch(c)
        {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            // Control characters have no place in the page; show them as '?'.
            out += (static_cast<unsigned char>(c) < 0x20 && c != '\t') ? '?' : c;
        }
    }
    return out;
}

std::string
format_number(double v, int digits)
{
    if(!std::isfinite(v)) return "0";
    if(v == 0) return "0";
    if(std::fabs(v) >= 1e15) return fmt::format("{:.{}e}", v, digits - 1);
    // Fixed notation with `digits` significant digits, trailing zeros removed.
    const int   magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    const int   decimals  = std::max(0, digits - 1 - magnitude);
    std::string s         = fmt::format("{:.{}f}", v, decimals);
    if(s.find('.') != std::string::npos)
    {
        while(!s.empty() && s.back() == '0')
            s.pop_back();
        if(!s.empty() && s.back() == '.') s.pop_back();
    }
    return s;
}

std::string
format_si(double v)
{
    const double a = std::fabs(v);
    if(a >= 1e9) return format_number(v / 1e9, 3) + "G";
    if(a >= 1e6) return format_number(v / 1e6, 3) + "M";
    if(a >= 1e4) return format_number(v / 1e3, 3) + "k";
    return format_number(v, 3);
}

std::string
format_bytes(double bytes)
{
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int                u       = 0;
    while(bytes >= 1024 && u < 5)
    {
        bytes /= 1024;
        ++u;
    }
    return u == 0 ? fmt::format("{} B", format_number(bytes, 4))
                  : fmt::format("{:.2f} {}", bytes, units[u]);
}

std::string
format_duration(double ns)
{
    if(ns < 1e3) return format_number(ns, 3) + " ns";
    if(ns < 1e6) return format_number(ns / 1e3, 3) + " µs";
    if(ns < 1e9) return format_number(ns / 1e6, 3) + " ms";
    return format_number(ns / 1e9, 3) + " s";
}

const char*
series_colour(size_t index)
{
    // Okabe & Ito (2008), "Color Universal Design"; black left out (reserved for axes).
    static const char* colours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                    "#56B4E9", "#CC79A7", "#F0E442"};
    return colours[index % (sizeof(colours) / sizeof(colours[0]))];
}

double
nice_ceiling(double v)
{
    if(!(v > 0) || !std::isfinite(v)) return 1;
    const double p = std::pow(10.0, std::floor(std::log10(v)));
    for(double m : {1.0, 2.0, 5.0, 10.0})
        if(m * p >= v * (1 - 1e-12)) return m * p;
    return 10 * p;
}

std::vector<double>
nice_ticks(double lo, double hi, int target)
{
    std::vector<double> ticks;
    if(!(hi > lo) || target < 1) return {lo};
    const double step  = nice_ceiling((hi - lo) / target);
    const double first = std::ceil(lo / step - 1e-9) * step;
    for(double t = first; t <= hi + step * 1e-9; t += step)
        ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    return ticks;
}

TimeUnit
time_unit_for(double span_ns)
{
    if(span_ns >= 2e9) return {"s", 1e9};
    if(span_ns >= 2e6) return {"ms", 1e6};
    if(span_ns >= 2e3) return {"µs", 1e3};
    return {"ns", 1};
}

std::string
axis_bottom(const Frame& f, const LinearScale& x, const std::vector<double>& ticks,
            const std::vector<std::string>& labels, const std::string& title)
{
    const double y   = f.inner_bottom();
    std::string  out = fmt::format(
         "<g class=\"axis axis-x\"><line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>",
         f.inner_left(), y, f.inner_right(), y);
    for(size_t i = 0; i < ticks.size(); ++i)
    {
        const double tx = x(ticks[i]);
        if(tx < f.inner_left() - 0.5 || tx > f.inner_right() + 0.5) continue;
        out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>"
                           "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>",
                           tx, y, y + 5, y + 17, escape(i < labels.size() ? labels[i] : ""));
    }
    out += fmt::format("<text class=\"axis-title\" x=\"{:.1f}\" y=\"{:.1f}\" "
                       "text-anchor=\"middle\">{}</text></g>",
                       (f.inner_left() + f.inner_right()) / 2, y + 36, escape(title));
    return out;
}

std::string
axis_left(const Frame& f, const LinearScale& y, const std::vector<double>& ticks,
          const std::string& title)
{
    const double x   = f.inner_left();
    std::string  out = fmt::format("<g class=\"axis axis-y\"><line x1=\"{0:.1f}\" y1=\"{1:.1f}\" "
                                    "x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>",
                                   x, f.inner_top(), f.inner_bottom());
    for(double t : ticks)
    {
        const double ty = y(t);
        if(ty < f.inner_top() - 0.5 || ty > f.inner_bottom() + 0.5) continue;
        out += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" "
                           "y2=\"{1:.1f}\"/><text x=\"{3:.1f}\" y=\"{4:.1f}\" "
                           "text-anchor=\"end\">{5}</text>",
                           x, ty, f.inner_right(), x - 6, ty + 4, format_si(t));
    }
    const double cy = (f.inner_top() + f.inner_bottom()) / 2;
    out += fmt::format("<text class=\"axis-title\" x=\"14\" y=\"{0:.1f}\" text-anchor=\"middle\" "
                       "transform=\"rotate(-90 14 {0:.1f})\">{1}</text></g>",
                       cy, escape(title));
    return out;
}

std::string
legend(const std::vector<LegendItem>& items, double x, double y, double max_width, double& height)
{
    std::string out = "<g class=\"legend\">";
    double      cx = x, cy = y;
    for(const LegendItem& item : items)
    {
        // About 6.5 px per character at the legend's 11 px font.
        const double w = 22 + 6.5 * static_cast<double>(item.label.size()) + 14;
        if(cx > x && cx + w > x + max_width)
        {
            cx = x;
            cy += 16;
        }
        if(item.dashed)
            out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                               "stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/>",
                               cx, cy + 5, cx + 16, cy + 5, item.colour);
        else
            out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"16\" height=\"10\" "
                               "fill=\"{}\"/>",
                               cx, cy, item.colour);
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", cx + 22, cy + 9,
                           escape(item.label));
        cx += w;
    }
    height = items.empty() ? 0 : cy - y + 16;
    return out + "</g>";
}

std::string
svg_open(const Frame& f, const std::string& plot_id, const std::string& title,
         const std::string& attrs)
{
    return fmt::format("<svg class=\"plot\" data-plot=\"{0}\" viewBox=\"0 0 {1:.0f} {2:.0f}\" "
                       "width=\"{1:.0f}\" height=\"{2:.0f}\" role=\"img\" "
                       "aria-label=\"{3}\"{4}><title>{3}</title>",
                       escape(plot_id), f.width, f.height, escape(title), attrs);
}

std::string
number_list(const std::vector<double>& values)
{
    std::string out;
    for(size_t i = 0; i < values.size(); ++i)
    {
        if(i) out += ' ';
        out += format_number(values[i], 6);
    }
    return out;
}
} // namespace rocprof_kfd_report
