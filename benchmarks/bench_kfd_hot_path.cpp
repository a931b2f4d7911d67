// MIT License - see LICENSE.
//
// What the KFD reader thread does per event: split a read into lines, parse, pair, and copy
// the record into a buffer. The kernel FIFO holds 8 KiB; the reader must drain it faster
// than GPUs fault, so these are the numbers that bound how fast we can keep up.
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/context.hpp"
#include "rocprofiler-sdk/kfd/pairing.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

namespace
{
// A realistic mix: fault pairs, migrate pairs, queue pairs, unmaps.
std::string
make_stream(int groups)
{
    std::string text;
    char        line[128];
    for(int i = 0; i < groups; ++i)
    {
        uint64_t ts   = 40507688414784ull + 1000ull * i;
        unsigned page = 0x7fa608127u + i;
        snprintf(line, sizeof(line), "7 %llu -152990 @%x(1ea0) R\n", (unsigned long long) ts, page);
        text += line;
        snprintf(line, sizeof(line), "5 %llu -152990 @%x(200) 0->1ea0 1ea0:ffffffff 1\n",
                 (unsigned long long) ts + 10, page);
        text += line;
        snprintf(line, sizeof(line), "6 %llu -152990 @%x(200) 0->1ea0 1 0\n",
                 (unsigned long long) ts + 500, page);
        text += line;
        snprintf(line, sizeof(line), "8 %llu -152990 @%x(1ea0) M\n", (unsigned long long) ts + 600,
                 page);
        text += line;
        snprintf(line, sizeof(line), "9 %llu -152990 1ea0 2\n", (unsigned long long) ts + 700);
        text += line;
        snprintf(line, sizeof(line), "a %llu -152990 1ea0 0\n", (unsigned long long) ts + 800);
        text += line;
        snprintf(line, sizeof(line), "b %llu -152990 @%x(200) 1ea0 2\n", (unsigned long long) ts + 900,
                 page);
        text += line;
    }
    return text;
}

void
parse_only(benchmark::State& state)
{
    auto                       text = make_stream(1000);
    rocprofiler::kfd::line_splitter splitter;
    uint64_t                   events = 0;
    for(auto _ : state)
    {
        splitter.feed(text.data(), text.size(), [&](std::string_view line) {
            rocprofiler::kfd::event ev;
            events += rocprofiler::kfd::parse_line(line, ev) == rocprofiler::kfd::parse_result::ok;
        });
    }
    state.SetItemsProcessed(static_cast<int64_t>(events));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(parse_only);

void
parse_and_pair(benchmark::State& state)
{
    auto                             text = make_stream(1000);
    rocprofiler::kfd::line_splitter  splitter;
    rocprofiler::kfd::pairing_engine pairing;
    uint64_t                         events = 0, records = 0;
    for(auto _ : state)
    {
        splitter.feed(text.data(), text.size(), [&](std::string_view line) {
            rocprofiler::kfd::event ev;
            if(rocprofiler::kfd::parse_line(line, ev) != rocprofiler::kfd::parse_result::ok) return;
            ++events;
            rocprofiler_buffer_tracing_page_migration_record_t rec;
            records += pairing.process(ev, rec);
        });
    }
    state.SetItemsProcessed(static_cast<int64_t>(events));
    state.counters["records"] = benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsRate);
}
BENCHMARK(parse_and_pair);

void
noop_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
              size_t, void*, uint64_t)
{}

void
buffer_emplace(benchmark::State& state)
{
    uint64_t ctx = 0, buf = 0;
    rocprofiler::context::create(1, &ctx);
    rocprofiler::buffer::create(ctx, 1 << 20, 1 << 19, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                noop_callback, nullptr, &buf);
    rocprofiler::callback_thread::start_all();  // as initialization does
    rocprofiler_buffer_tracing_page_migration_record_t rec{};
    rec.size = sizeof(rec);
    for(auto _ : state)
        benchmark::DoNotOptimize(rocprofiler::buffer::emplace(
            buf, ROCPROFILER_BUFFER_CATEGORY_TRACING, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
            &rec, sizeof(rec)));
    rocprofiler::buffer::flush(buf);
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(buffer_emplace);
}  // namespace

BENCHMARK_MAIN();
