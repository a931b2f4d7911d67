// MIT License - see LICENSE.
//
// The KFD reader's per-event work, stage by stage, side by side with the reference approach
// (baseline_reference.hpp) on the same bytes, in one binary and one run:
//
//   parse/<impl>/<log>               split the reads into lines and parse them (ours: the
//                                    reader's entry point, feed_dispatch, with no handlers)
//   parse_pair/<impl>/<log>          ... and pair starts with ends into records (ours:
//                                    feed_dispatch into the pairing engine's entry points by id)
//   parse_pair_emplace/ours/<log>    ... and deliver the records into a LOSSLESS buffer that a
//                                    callback thread drains (as after initialization): the
//                                    reader's own per-read code, delivery::deliver_chunk
//   parse_pair_emplace_own_process/ours/<log>
//                                    ... with the process filter of a privileged reader
//                                    (every event's pid checked, a fifth of them dropped)
//
// <log>: every rocprof-kfd-gen scenario and "mix" (all of them interleaved at random, each in
// another format era), KFD_BENCH_EVENTS lines each (default 1M), generated at start and fed
// in whole-message reads of at most 8 KiB, as the kernel returns them: each read copied into
// one reused read buffer first, as read() copies into the reader's (so every stage parses
// bytes that are in the cache, as the reader does; the copy, the kernel's work in the reader,
// is charged to each stage, ours and the baseline's alike). KFD_BENCH_IN_PLACE=1 parses the
// reads where the generated log holds them instead (a 45 MB array: its DRAM stream, which the
// reader never sees, then shows in our times). Each benchmark reports ns/event and events/s;
// at the end a table gives the ratios baseline / ours (and the own-process variant's ns/event).
//
//   ./build/benchmarks/bench-kfd-hot-path --benchmark_repetitions=5   (medians in the table)
#include "baseline_reference.hpp"
#include "workloads.hpp"

#include "common/kfd_abi.hpp"
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/context.hpp"
#include "rocprofiler-sdk/kfd/delivery.hpp"
#include "rocprofiler-sdk/kfd/pairing.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace
{
namespace kfd = rocprofiler::kfd;
namespace abi = rocprofiler::kfd_abi;
using bench_workloads::workload;
using record = rocprofiler_buffer_tracing_page_migration_record_t;

uint64_t
events_per_log()
{
    const char* value = std::getenv("KFD_BENCH_EVENTS");
    return value != nullptr && *value != '\0' ? std::strtoull(value, nullptr, 10) : 1000000;
}

void
report(benchmark::State& state, uint64_t events, uint64_t records)
{
    state.SetItemsProcessed(static_cast<int64_t>(events));
    // CPU time of the benchmark thread / events (printed with its unit, e.g. "33.1ns")
    state.counters["t/event"] = benchmark::Counter(
        static_cast<double>(events), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["records/event"] =
        benchmark::Counter(events ? static_cast<double>(records) / static_cast<double>(events) : 0);
}

// One read of the kernel's: the reader's read() copies the FIFO's bytes into its buffer, so
// the parser sees them in the cache. Each stage reads every chunk through this.
class kernel_read
{
public:
    std::string_view operator()(std::string_view chunk) noexcept
    {
        if(s_in_place || chunk.size() > sizeof(m_bytes)) return chunk; // (no chunk is longer)
        std::memcpy(m_bytes, chunk.data(), chunk.size());
        return {m_bytes, chunk.size()};
    }

private:
    static inline const bool s_in_place = []
    {
        const char* value = std::getenv("KFD_BENCH_IN_PLACE");
        return value != nullptr && std::strcmp(value, "1") == 0;
    }();
    alignas(64) char m_bytes[bench_workloads::chunk_bytes];
};

// ---- ours: the SDK's parser, pairing engine and buffer ----

void
ours_parse(benchmark::State& state, const workload& w)
{
    kernel_read read;
    uint64_t    events = 0;
    for(auto _ : state)
    {
        kfd::line_splitter        splitter;
        kfd::event                ev;   // the parser writes every field: not re-initialized
        const kfd::event_handlers none; // the reader's entry point, with no handler to call
        for(auto chunk : w.chunks)
        {
            events += kfd::feed_dispatch(splitter, read(chunk).data(), chunk.size(), ev, none).ok;
            benchmark::DoNotOptimize(ev);
        }
    }
    report(state, events, 0);
}

// What the handlers of one iteration share: the pairing engine and the record counter.
struct pair_context
{
    kfd::pairing_engine pairing;
    uint64_t            records = 0;
    record              rec;
};

template <bool (kfd::pairing_engine::*finish)(const kfd::event&, record&) noexcept>
void
pair_end(void* context, kfd::event& ev, std::string_view)
{
    auto& pc = *static_cast<pair_context*>(context);
    if((pc.pairing.*finish)(ev, pc.rec))
    {
        ++pc.records;
        benchmark::DoNotOptimize(pc.rec);
    }
}

template <void (kfd::pairing_engine::*start)(const kfd::event&) noexcept>
void
pair_start(void* context, kfd::event& ev, std::string_view)
{
    (static_cast<pair_context*>(context)->pairing.*start)(ev);
}

// The pairing entry points by id, called by parse_line_dispatch as the reader calls them
// (delivery.cpp's handlers, without the process filter and the buffers): one dispatch on
// the id per line, no second switch in the pairing engine.
kfd::event_handlers
pair_handlers(pair_context& pc)
{
    using engine = kfd::pairing_engine;
    kfd::event_handlers h;
    h.context                            = &pc;
    h.on_id[abi::event_migrate_start]    = pair_start<&engine::on_migrate_start>;
    h.on_id[abi::event_page_fault_start] = pair_start<&engine::on_page_fault_start>;
    h.on_id[abi::event_queue_eviction]   = pair_start<&engine::on_queue_eviction>;
    h.on_id[abi::event_id_14]            = pair_start<&engine::on_id_14>;
    h.on_id[abi::event_migrate_end]      = pair_end<&engine::on_migrate_end>;
    h.on_id[abi::event_page_fault_end]   = pair_end<&engine::on_page_fault_end>;
    h.on_id[abi::event_queue_restore]    = pair_end<&engine::on_queue_restore>;
    h.on_id[abi::event_unmap_from_gpu]   = pair_end<&engine::on_unmap_from_gpu>;
    return h;
}

void
ours_parse_pair(benchmark::State& state, const workload& w)
{
    kernel_read read;
    uint64_t    events = 0, records = 0;
    for(auto _ : state)
    {
        kfd::line_splitter        splitter;
        pair_context              pc;
        const kfd::event_handlers handlers = pair_handlers(pc);
        kfd::event                ev; // as in the reader: not re-initialized per line
        for(auto chunk : w.chunks)
            events +=
                kfd::feed_dispatch(splitter, read(chunk).data(), chunk.size(), ev, handlers).ok;
        records += pc.records;
    }
    report(state, events, records);
}

void
noop_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
              size_t, void*, uint64_t)
{
}

// A LOSSLESS buffer drained by a callback thread (started as initialization starts it), in a
// context that traces every page-migration operation and is active.
uint64_t
draining_buffer()
{
    static uint64_t id = []
    {
        uint64_t ctx = 0, buf = 0;
        rocprofiler::context::create(1, &ctx);
        rocprofiler::buffer::create(ctx, 1 << 20, 1 << 19, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                    noop_callback, nullptr, &buf);
        auto* context                      = rocprofiler::context::find(ctx);
        context->page_migration.configured = true;
        context->page_migration.buffer_id  = buf;
        context->page_migration.operations = ~uint64_t{0};
        context->active.store(true);
        rocprofiler::callback_thread::start_all(); // as initialization does
        return buf;
    }();
    return id;
}

// The reader's own per-read code (delivery::deliver_chunk, what the reader thread runs for
// each read): split, parse, pair, records built in place in a batch, one append per read.
void
deliver_all(benchmark::State& state, const workload& w, const kfd::delivery::process_filter& filter)
{
    kernel_read                   read;
    const uint64_t                buf = draining_buffer();
    kfd::delivery::chunk_delivery destinations;
    uint64_t                      events = 0, records = 0, dropped = 0;
    for(auto _ : state)
    {
        kfd::gpu_stream stream;
        for(auto chunk : w.chunks)
            kfd::delivery::deliver_chunk(destinations, filter, stream, read(chunk).data(),
                                         chunk.size(), 0);
        events += stream.counters.events_received.load();
        records += stream.counters.records_emitted.load();
        dropped += stream.counters.records_dropped.load();
        state.PauseTiming();
        rocprofiler::buffer::flush(buf); // the next iteration starts with an empty buffer
        state.ResumeTiming();
    }
    report(state, events, records);
    state.counters["dropped"] = benchmark::Counter(static_cast<double>(dropped));
}

void
ours_parse_pair_emplace(benchmark::State& state, const workload& w)
{
    deliver_all(state, w, kfd::delivery::process_filter{});
}

// As a privileged reader runs it (CAP_SYS_ADMIN on Linux 6.16+, and the emulator): every
// event's pid checked against the traced process's, the other process's counted and dropped.
// Not compared with the baseline, which pairs every event.
void
ours_parse_pair_emplace_own(benchmark::State& state, const workload& w)
{
    deliver_all(state, w, kfd::delivery::process_filter{true, bench_workloads::traced_pid});
}

// ---- baseline: the reference approach on the same bytes ----

void
baseline_parse(benchmark::State& state, const workload& w)
{
    kernel_read read;
    uint64_t    events = 0;
    for(auto _ : state)
        for(auto chunk : w.chunks)
            bench_baseline::for_each_line_copied(read(chunk).data(), chunk.size(),
                                                 [&](const char* line, size_t)
                                                 {
                                                     uint32_t id = 0;
                                                     record   rec;
                                                     events += bench_baseline::parse(line, id, rec);
                                                     benchmark::DoNotOptimize(rec);
                                                 });
    report(state, events, 0);
}

void
baseline_parse_pair(benchmark::State& state, const workload& w)
{
    kernel_read read;
    uint64_t    events = 0, records = 0;
    for(auto _ : state)
    {
        bench_baseline::pairer pairer;
        for(auto chunk : w.chunks)
            bench_baseline::for_each_line_copied(read(chunk).data(), chunk.size(),
                                                 [&](const char* line, size_t)
                                                 {
                                                     uint32_t id = 0;
                                                     record   rec;
                                                     if(!bench_baseline::parse(line, id, rec))
                                                         return;
                                                     ++events;
                                                     if(pairer.process(id, rec))
                                                     {
                                                         ++records;
                                                         benchmark::DoNotOptimize(rec);
                                                     }
                                                 });
    }
    report(state, events, records);
}

// ---- registration and the side-by-side table ----

using bench_fn = void (*)(benchmark::State&, const workload&);

struct stage
{
    const char* name;
    bench_fn    fn;
};

const stage stages[] = {
    {"parse/ours", ours_parse},
    {"parse/baseline", baseline_parse},
    {"parse_pair/ours", ours_parse_pair},
    {"parse_pair/baseline", baseline_parse_pair},
    {"parse_pair_emplace/ours", ours_parse_pair_emplace},
    {"parse_pair_emplace_own_process/ours", ours_parse_pair_emplace_own},
};

void
register_all()
{
    const uint64_t events = events_per_log();
    for(const auto& log : bench_workloads::names())
        for(const auto& s : stages)
            benchmark::RegisterBenchmark((std::string{s.name} + "/" + log).c_str(),
                                         [s, log, events](benchmark::State& state)
                                         { s.fn(state, bench_workloads::get(log, events)); })
                ->Unit(benchmark::kMillisecond);
}

// Prints the usual console output and remembers each benchmark's ns/event (the median when
// repeated), then a table of ratios.
class ratio_reporter : public benchmark::ConsoleReporter
{
public:
    void ReportRuns(const std::vector<Run>& runs) override
    {
        ConsoleReporter::ReportRuns(runs);
        for(const auto& run : runs)
        {
            auto it = run.counters.find("t/event");
            if(it == run.counters.end() || run.error_occurred) continue;
            const std::string& agg = run.aggregate_name;
            if(!agg.empty() && agg != "median") continue;
            const std::string name = run.run_name.function_name;
            if(agg.empty() && m_has_median[name]) continue;
            m_ns[name]         = it->second.value * 1e9;
            m_has_median[name] = agg == "median";
        }
    }

    void Finalize() override
    {
        ConsoleReporter::Finalize();
        std::printf("\nns/event of CPU time (median of the repetitions when repeated); x = "
                    "baseline / ours\n");
        std::printf("%-10s %9s %9s %6s | %9s %9s %6s | %9s %6s | %9s\n", "log", "parse", "base",
                    "x", "p+pair", "base", "x", "p+p+emp", "x", "own proc");
        for(const auto& log : bench_workloads::names())
        {
            double p = get("parse/ours/" + log), bp = get("parse/baseline/" + log);
            double pp = get("parse_pair/ours/" + log), bpp = get("parse_pair/baseline/" + log);
            double ppe = get("parse_pair_emplace/ours/" + log);
            double own = get("parse_pair_emplace_own_process/ours/" + log);
            std::printf("%-10s %9.1f %9.1f %6.1f | %9.1f %9.1f %6.1f | %9.1f %6.1f | %9.1f\n",
                        log.c_str(), p, bp, ratio(bp, p), pp, bpp, ratio(bpp, pp), ppe,
                        ratio(bpp, ppe), own);
        }
        std::fflush(stdout);
    }

private:
    double get(const std::string& name) const
    {
        auto it = m_ns.find(name);
        return it == m_ns.end() ? 0.0 : it->second;
    }
    static double ratio(double base, double ours) { return ours > 0 ? base / ours : 0.0; }

    std::map<std::string, double> m_ns;
    std::map<std::string, bool>   m_has_median;
};
} // namespace

int
main(int argc, char** argv)
{
    benchmark::Initialize(&argc, argv);
    if(benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    register_all();
    ratio_reporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
