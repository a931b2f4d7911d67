// MIT License - see LICENSE.
#include "summary.hpp"

#include "names.hpp"

#include <algorithm>
#include <tuple>

namespace rocprof_kfd
{
summary_builder::summary_builder(uint64_t thrashing_threshold, size_t table_capacity)
    : threshold_(thrashing_threshold == 0 ? 1 : thrashing_threshold), by_faults_(table_capacity),
      by_bytes_(table_capacity), thrash_(table_capacity)
{
}

void
summary_builder::add(const record& r, uint32_t input, uint32_t host)
{
    int op = r.operation;
    if(op < 1 || op > 4) return;
    if(host != 0)
    {
        if(input >= host_of_input_.size()) host_of_input_.resize(input + 1, 0);
        host_of_input_[input] = host;
    }
    records_ += 1;
    uint64_t start    = r.start_timestamp;
    uint64_t end      = std::max(r.end_timestamp, r.start_timestamp);
    uint64_t duration = end - start;
    first_ns_         = std::min(first_ns_, start);
    last_ns_          = std::max(last_ns_, end);

    auto& stats = ops_[{op, record_trigger(r)}];
    stats.count += 1;
    stats.total_ns += duration;
    stats.durations.add(duration);
    op_durations_[op].add(duration);
    op_log2_[op].add(duration);

    switch(op)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        add_migration(r, input, host);
        break;
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
    {
        const auto& f   = r.page_fault;
        const auto  gpu = make_node_key(host, f.node_id);
        auto&       g   = faults_[gpu];
        if(f.read_fault)
            (f.migrated ? g.read_migrated : g.read_updated) += 1;
        else
            (f.migrated ? g.write_migrated : g.write_updated) += 1;
        range_key key{f.address / range_bytes, 0, 0, r.pid, input};
        by_faults_.add(key, 1).faults += 1;
        by_bytes_.add(key, 0).faults += 1;
        timeline_.add_fault(gpu, f.read_fault, start);
        break;
    }
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        add_suspension(make_node_key(host, r.queue_suspend.node_id), start, end);
        break;
    default:
        break;
    }
}

void
summary_builder::add_migration(const record& r, uint32_t input, uint32_t host)
{
    const auto& m     = r.page_migrate;
    uint64_t    end   = std::max(m.end_addr, m.start_addr);
    uint64_t    bytes = end - m.start_addr + 1;
    uint64_t    dur   = std::max(r.end_timestamp, r.start_timestamp) - r.start_timestamp;

    const auto from = make_node_key(host, m.from_node), to = make_node_key(host, m.to_node);
    auto&      d = directions_[{from, to}];
    d.count += 1;
    d.bytes += bytes;
    d.total_ns += dur;
    timeline_.add_migration(from, to, r.start_timestamp, r.start_timestamp + dur, bytes);

    uint32_t a = std::min(m.from_node, m.to_node);
    uint32_t b = std::max(m.from_node, m.to_node);
    // Every range_bytes block the migration covers, with the bytes that overlap it.
    for(uint64_t block = m.start_addr / range_bytes; block <= end / range_bytes; ++block)
    {
        uint64_t  lo      = std::max(m.start_addr, block * range_bytes);
        uint64_t  hi      = std::min(end, block * range_bytes + (range_bytes - 1));
        uint64_t  overlap = hi - lo + 1;
        range_key key{block, 0, 0, r.pid, input};
        for(range_counters* c : {&by_faults_.add(key, 0), &by_bytes_.add(key, overlap)})
        {
            c->migrations += 1;
            if(m.from_node == 0 && m.to_node != 0)
                c->htod_bytes += overlap;
            else if(m.from_node != 0 && m.to_node == 0)
                c->dtoh_bytes += overlap;
            else if(m.from_node != 0 && m.to_node != 0)
                c->dtod_bytes += overlap;
        }
        if(a != b)
        {
            range_counters& t = thrash_.add({block, a, b, r.pid, input}, 1);
            t.migrations += 1;
            t.bytes += overlap;
            t.directions |= m.from_node == a ? 1u : 2u;
        }
        if(block == UINT64_MAX / range_bytes) break;
    }
}

void
summary_builder::add_suspension(uint64_t gpu, uint64_t start, uint64_t end)
{
    auto& s = suspends_[gpu];
    s.count += 1;
    s.total_ns += end - start;
    // Room for the most the list ever holds, taken once: merging below works in place, so
    // a long run allocates nothing more for suspensions (before, every merge built a new
    // list, and the list then grew again by doubling, on the callback thread).
    if(s.intervals.capacity() == 0) s.intervals.reserve(max_intervals_per_gpu + 1);
    s.intervals.emplace_back(start, end);
    if(s.intervals.size() <= max_intervals_per_gpu) return;
    merge_neighbour_intervals(s.intervals);
    s.intervals_merged = true;
}

void
merge_neighbour_intervals(std::vector<std::pair<uint64_t, uint64_t>>& intervals)
{
    // Bounded: merge neighbours pairwise (the list halves, each interval covers both).
    // Pair i/2 is written after both of its intervals were read, and i/2 <= i.
    std::sort(intervals.begin(), intervals.end());
    size_t kept = 0;
    for(size_t i = 0; i < intervals.size(); i += 2)
    {
        auto iv = intervals[i];
        if(i + 1 < intervals.size()) iv.second = std::max(iv.second, intervals[i + 1].second);
        intervals[kept++] = iv;
    }
    intervals.resize(kept);
}

namespace
{
// The heaviest ranges of a table with weight, heaviest first; ties in key order, which for
// these tables (no pair of locations) is by address, then pid, then input.
std::vector<heavy_entry>
heaviest(const heavy_hitters& table)
{
    auto top = table.top(top_ranges);
    top.erase(
        std::remove_if(top.begin(), top.end(), [](const heavy_entry& e) { return e.weight == 0; }),
        top.end());
    return top;
}
} // namespace

std::vector<heavy_entry>
summary_builder::top_by_faults() const
{
    return heaviest(by_faults_);
}

std::vector<heavy_entry>
summary_builder::top_by_bytes() const
{
    return heaviest(by_bytes_);
}

bool
summary_builder::top_ranges_approximate() const
{
    return by_faults_.approximate() || by_bytes_.approximate();
}

std::vector<thrashing_range>
summary_builder::thrashing() const
{
    std::vector<thrashing_range> out;
    for(const auto& e : thrash_.all())
    {
        if(e.counters.migrations < threshold_ || e.counters.directions != 3u) continue;
        const uint32_t host = e.key.input < host_of_input_.size() ? host_of_input_[e.key.input] : 0;
        out.push_back({e.key.block * range_bytes, e.key.block * range_bytes + range_bytes - 1,
                       e.key.a, e.key.b, e.counters.migrations, e.counters.bytes, e.key.pid, host});
    }
    std::sort(out.begin(), out.end(),
              [](const thrashing_range& x, const thrashing_range& y)
              {
                  if(x.migrations != y.migrations) return x.migrations > y.migrations;
                  if(x.start != y.start) return x.start < y.start;
                  return std::tie(x.a, x.b, x.pid, x.host) < std::tie(y.a, y.b, y.pid, y.host);
              });
    if(out.size() > max_thrashing_ranges) out.resize(max_thrashing_ranges);
    return out;
}

uint64_t
summary_builder::thrashing_count() const
{
    uint64_t count = 0;
    for(const auto& e : thrash_.all())
        count += e.counters.migrations >= threshold_ && e.counters.directions == 3u;
    return count;
}

uint64_t
wall_ns(const run_info& run, const summary_builder& s)
{
    if(run.end_ns > run.start_ns && run.start_ns != 0) return run.end_ns - run.start_ns;
    if(s.records() != 0) return s.last_ns() - s.first_ns();
    return 0;
}

uint64_t
share_base_ns(const run_info& run, const summary_builder& s)
{
    if(run.emulated && s.records() != 0) return s.last_ns() - s.first_ns();
    return wall_ns(run, s);
}
} // namespace rocprof_kfd
