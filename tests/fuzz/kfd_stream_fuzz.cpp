// MIT License - see LICENSE.
//
// Fuzz target over the reader's pure core, fed arbitrary bytes split arbitrarily across reads,
// along two paths: line_splitter -> parse_line -> resolve_id14 -> (pid filter) ->
// pairing_engine::process, each step on its own; and the reader's own path, feed_dispatch into
// the engine's entry points by id (delivery.cpp's order), which the first must agree with. The
// input is the byte stream itself (so seeds are plain kernel text); how it is cut into reads,
// the fd's gpu_id, whether the pid filter is on and whether feed_dispatch may use the hot
// shapes' pass are drawn from a PRNG seeded by the input's size and last two bytes.
//
// Invariants, each checked against a model written here, never against the code under test:
//  - the lines delivered are exactly the '\n'-separated lines of the stream of at most
//    max_line_length bytes, in order, whatever the cuts; the longer ones are counted overlong;
//  - every line is parsed, malformed, unknown or filtered: the counts add up to the lines;
//    a line that is not ok leaves the event all zero but its id;
//  - parse_line (on this CPU: the AVX-512 hot shapes, AVX2, SSSE3 or SSE2 path) gives the
//    result and event of parse_line_scalar, its byte-at-a-time twin written separately;
//  - no record has start 0 or start > end; every enum field is in its declared range
//    (api-contract.md); size and kind are set; address ranges do not run backwards;
//  - the engine's record count equals the records it returned; ids that are neither starts
//    nor ends never produce a record; a fault or migrate end or an unmap that produces no
//    record is counted as a loss; finish() leaves nothing outstanding;
//  - the reader's own path over the same reads (feed_dispatch, with its AVX-512 loop where the
//    CPU has it, or with the hot shapes off, into the engine's entry points by id, as
//    delivery.cpp calls them) calls a handler for exactly the lines parse_line_scalar parses
//    ok, in order, with the scalar twin's event, counts the same lines, and ends with the same
//    records, byte for byte, and the same counters.
// A violation prints one line naming it and aborts (libFuzzer saves the input).
#include "rocprofiler-sdk/kfd/pairing.hpp"
#include "rocprofiler-sdk/kfd/parser.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace
{
using namespace rocprofiler::kfd;
using record_t = rocprofiler_buffer_tracing_page_migration_record_t;

constexpr uint32_t self_pid    = 4242; // the pid of the hand-written seeds' process
constexpr uint32_t gpu_ids[]   = {0x1ea0, 0x2b4c, 0, 0x3};
constexpr size_t   max_records = 1u << 20;

[[noreturn]] void
violated(const char* what, long long value = 0)
{
    std::fprintf(stderr, "kfd-stream-fuzz: INVARIANT VIOLATED: %s (value %lld)\n", what, value);
    std::fflush(stderr);
    std::abort();
}

void
require(bool ok, const char* what, long long value = 0)
{
    if(!ok) violated(what, value);
}

// xorshift64*: the cut plan and options, reproducible from the input alone.
struct plan
{
    uint64_t state;
    uint64_t next()
    {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return state * 0x2545F4914F6CDD1Dull;
    }
};

// The C enum fields, read as the int32 they are stored as (reading an out-of-range value
// through the enum type would itself be undefined).
int32_t
as_int(const void* field)
{
    int32_t v = 0;
    std::memcpy(&v, field, sizeof(v));
    return v;
}

void
check_enum(const void* field, int32_t none, int32_t last, const char* what)
{
    int32_t v = as_int(field);
    require(v >= none && v < last, what, v);
}

void
check_record(const record_t& r)
{
    require(r.size == sizeof(record_t), "record size is not sizeof(record)",
            static_cast<long long>(r.size));
    require(as_int(&r.kind) == ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
            "record kind is not PAGE_MIGRATION", as_int(&r.kind));
    require(r.start_timestamp != 0, "record with start_timestamp 0");
    require(r.start_timestamp <= r.end_timestamp, "record with start_timestamp > end_timestamp",
            static_cast<long long>(r.start_timestamp - r.end_timestamp));
    int32_t op = as_int(&r.operation);
    require(op > ROCPROFILER_PAGE_MIGRATION_NONE && op < ROCPROFILER_PAGE_MIGRATION_LAST,
            "record operation out of range", op);
    switch(op)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        check_enum(&r.page_migrate.trigger, ROCPROFILER_PAGE_MIGRATION_TRIGGER_NONE,
                   ROCPROFILER_PAGE_MIGRATION_TRIGGER_LAST,
                   "page_migrate.trigger out of rocprofiler_page_migration_trigger_t");
        require(r.page_migrate.start_addr <= r.page_migrate.end_addr,
                "page_migrate.start_addr > end_addr");
        break;
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        check_enum(&r.queue_suspend.trigger, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_NONE,
                   ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_LAST,
                   "queue_suspend.trigger out of "
                   "rocprofiler_page_migration_queue_suspend_trigger_t");
        break;
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        check_enum(&r.unmap_from_gpu.trigger,
                   ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU_TRIGGER_NONE,
                   ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU_TRIGGER_LAST,
                   "unmap_from_gpu.trigger out of "
                   "rocprofiler_page_migration_unmap_from_gpu_trigger_t");
        require(r.unmap_from_gpu.start_addr <= r.unmap_from_gpu.end_addr,
                "unmap_from_gpu.start_addr > end_addr");
        break;
    default:
        break;
    }
}

uint64_t
losses(const pairing_counters& c)
{
    return c.ends_without_start + c.starts_aged_out + c.starts_never_ended;
}

// Field by field: the struct has padding.
bool
all_zero_but_id(const event& e)
{
    return e.timestamp == 0 && !e.has_timestamp && e.pid == 0 && e.page == 0 && e.npages == 0 &&
           e.node == 0 && e.from_node == 0 && e.to_node == 0 && e.prefetch_node == 0 &&
           e.preferred_node == 0 && e.trigger == 0 && e.error_code == 0 && !e.has_error_code &&
           !e.read_fault && !e.migrated && !e.rescheduled && e.count == 0 && e.bitmask == 0 &&
           e.kind14 == id14_kind::not_id14 && e.restore == restore_form::not_restore &&
           !e.id14_ambiguous && e.id14_restore_node == 0 && e.text_offset == 0 &&
           e.text_length == 0;
}

// What a previous line could have left in a reused event.
event
stale_event()
{
    event e{};
    e.timestamp     = 77;
    e.has_timestamp = true;
    e.page          = 5;
    e.trigger       = 3;
    e.rescheduled   = true;
    e.kind14        = id14_kind::dropped_events;
    e.text_length   = 4;
    return e;
}

struct tally
{
    uint64_t lines     = 0;
    uint64_t parsed    = 0; // ok and handed to the engine
    uint64_t malformed = 0;
    uint64_t unknown   = 0;
    uint64_t filtered  = 0;
    uint64_t records   = 0;
};

// One line through the parser, the filter and the engine, as service.cpp's handle_line.
void
handle_line(std::string_view line, uint32_t gpu_id, bool filter, pairing_engine& engine, tally& t,
            std::vector<record_t>& records)
{
    ++t.lines;
    event              ev     = stale_event(); // nothing of it may survive a line that is not ok
    const parse_result result = parse_line(line, ev);
    event              twin   = stale_event();
    require(parse_line_scalar(line, twin) == result, "parse_line and its scalar twin disagree",
            ev.id);
    require(std::memcmp(&ev, &twin, offsetof(event, id14_ambiguous) + 1) == 0,
            "parse_line's event differs from its scalar twin's", ev.id);
    switch(result)
    {
    case parse_result::ok:
        break;
    case parse_result::malformed:
        ++t.malformed;
        require(all_zero_but_id(ev), "malformed line left fields in the event", ev.id);
        return;
    case parse_result::unknown_id:
        ++t.unknown;
        require(all_zero_but_id(ev), "unknown-id line left fields in the event", ev.id);
        return;
    default:
        violated("parse_line returned a value outside parse_result");
    }
    require(ev.id >= 1 && ev.id <= 14, "parsed event id out of 1..14", ev.id);
    resolve_id14(ev, gpu_id);
    if(filter && ev.pid != 0 && ev.pid != self_pid)
    {
        ++t.filtered;
        return;
    }
    ++t.parsed;
    const pairing_counters before = engine.counters();
    record_t               rec;
    std::memset(&rec, 0, sizeof(rec));
    bool produced = engine.process(ev, rec);
    if(produced)
    {
        ++t.records;
        check_record(rec);
        records.push_back(rec);
        require(engine.counters().records == before.records + 1,
                "a returned record was not counted in counters().records");
    }
    else
        require(engine.counters().records == before.records,
                "counters().records grew without a returned record");
    bool start_or_end = (ev.id >= 5 && ev.id <= 11) || ev.kind14 == id14_kind::rescheduled_restore;
    if(!start_or_end)
        require(!produced && losses(engine.counters()) == losses(before),
                "an event that is neither start nor end changed the pairing", ev.id);
    bool must_account = ev.id == 6 || ev.id == 8 || ev.id == 11; // these never nest
    if(must_account && !produced)
        require(losses(engine.counters()) > losses(before),
                "an end or unmap produced no record and was counted nowhere", ev.id);
}

// The reader's path (delivery.cpp): feed_dispatch calls the parsed id's handler, which
// resolves id 14, filters by process and calls the engine's entry point for that id.
struct dispatch_path
{
    const std::vector<std::string_view>& expected; // the model's lines
    uint32_t                             gpu_id;
    bool                                 filter;
    pairing_engine                       engine;
    line_splitter                        splitter;
    event                                scratch = stale_event();
    size_t                               next    = 0; // the first model line not yet matched
    uint64_t                             lines   = 0; // feed_dispatch's tallies, summed
    uint64_t                             ok      = 0;
    uint64_t                             calls   = 0;
    std::vector<record_t>                records;
};

// The handler's line must be the next model line that parse_line_scalar parses ok, with the
// same id and event: every model line before it must be one that is not ok.
void
match_next_ok_line(dispatch_path& path, uint32_t slot, const event& ev, std::string_view line)
{
    for(;; ++path.next)
    {
        require(path.next < path.expected.size(),
                "feed_dispatch called a handler for a line past the stream's last",
                static_cast<long long>(slot));
        event                  twin   = stale_event();
        const std::string_view model  = path.expected[path.next];
        const parse_result     result = parse_line_scalar(model, twin);
        if(result != parse_result::ok) continue; // feed_dispatch must have skipped it
        require(line == model, "feed_dispatch's handler line differs from the stream's",
                static_cast<long long>(path.next));
        require(twin.id == slot, "feed_dispatch called another id's handler",
                static_cast<long long>(slot));
        require(std::memcmp(&ev, &twin, offsetof(event, id14_ambiguous) + 1) == 0,
                "feed_dispatch's event differs from the scalar twin's", slot);
        ++path.next;
        return;
    }
}

template <uint32_t slot>
void
on_dispatched(void* context, event& ev, std::string_view line)
{
    auto& path = *static_cast<dispatch_path*>(context);
    ++path.calls;
    match_next_ok_line(path, slot, ev, line);
    resolve_id14(ev, path.gpu_id);
    if(path.filter && ev.pid != 0 && ev.pid != self_pid) return;
    record_t rec;
    std::memset(&rec, 0, sizeof(rec));
    bool produced = false;
    switch(slot)
    {
    case 5:
        path.engine.on_migrate_start(ev);
        break;
    case 6:
        produced = path.engine.on_migrate_end(ev, rec);
        break;
    case 7:
        path.engine.on_page_fault_start(ev);
        break;
    case 8:
        produced = path.engine.on_page_fault_end(ev, rec);
        break;
    case 9:
        path.engine.on_queue_eviction(ev);
        break;
    case 10:
        produced = path.engine.on_queue_restore(ev, rec);
        break;
    case 11:
        produced = path.engine.on_unmap_from_gpu(ev, rec);
        break;
    case 14:
        path.engine.on_id_14(ev);
        break;
    default:
        break; // no pairing role, as in process()
    }
    if(produced) path.records.push_back(rec);
}

template <uint32_t... slot>
event_handlers
dispatch_handlers(dispatch_path& path, bool hot_shapes, std::integer_sequence<uint32_t, slot...>)
{
    event_handlers h;
    h.context    = &path;
    h.hot_shapes = hot_shapes;
    ((h.on_id[slot] = on_dispatched<slot>), ...);
    h.on_id[0] = nullptr; // never called
    return h;
}

// The model of the splitter: the stream's lines, cut at every '\n'.
void
model_lines(const uint8_t* data, size_t size, std::vector<std::string_view>& kept,
            uint64_t& overlong, size_t& trailing)
{
    const char* text  = reinterpret_cast<const char*>(data);
    size_t      start = 0;
    for(size_t i = 0; i < size; ++i)
    {
        if(text[i] != '\n') continue;
        size_t length = i - start;
        if(length > max_line_length)
            ++overlong;
        else
            kept.emplace_back(text + start, length);
        start = i + 1;
    }
    trailing = size - start;
    if(trailing > max_line_length) ++overlong;
}
} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if(size > (1u << 20)) return 0;
    uint64_t seed = size * 0x9E3779B97F4A7C15ull + 1;
    if(size >= 1) seed ^= static_cast<uint64_t>(data[size - 1]) << 8;
    if(size >= 2) seed ^= static_cast<uint64_t>(data[size - 2]) << 16;
    plan           cuts{seed | 1};
    const uint64_t options  = cuts.next();
    const uint32_t gpu_id   = gpu_ids[options & 3];
    const bool     filter   = (options >> 2) & 1;
    const uint64_t cut_mode = (options >> 3) % 4; // one read, bytes, short reads, long reads

    std::vector<std::string_view> expected;
    uint64_t                      expected_overlong = 0;
    size_t                        trailing          = 0;
    model_lines(data, size, expected, expected_overlong, trailing);

    const size_t          cap = 1 + (options >> 8) % 64; // small caps exercise eviction
    line_splitter         splitter;
    pairing_engine        engine(cap);
    tally                 t;
    size_t                delivered = 0;
    std::vector<record_t> records;
    auto                  on_line = [&](std::string_view line)
    {
        require(delivered < expected.size(),
                "the splitter delivered more lines than the stream has");
        require(line == expected[delivered], "a delivered line differs from the stream's line",
                static_cast<long long>(delivered));
        ++delivered;
        handle_line(line, gpu_id, filter, engine, t, records);
    };
    dispatch_path        path{expected, gpu_id, filter, pairing_engine(cap), {}};
    const event_handlers handlers = dispatch_handlers(path, ((options >> 5) & 1) == 0,
                                                      std::make_integer_sequence<uint32_t, 15>{});
    // The bytes of each read are copied into a buffer of their own, as read() would fill.
    std::vector<char> chunk;
    for(size_t at = 0; at < size;)
    {
        size_t n = size - at;
        if(cut_mode == 1) n = 1;
        if(cut_mode == 2) n = 1 + cuts.next() % 16;
        if(cut_mode == 3) n = 1 + cuts.next() % 600;
        n = n < size - at ? n : size - at;
        chunk.assign(data + at, data + at + n);
        splitter.feed(chunk.data(), chunk.size(), on_line);
        // The reader's path over the same read, in a buffer of exactly its size (a sanitizer
        // build sees any read past it).
        std::unique_ptr<char[]> exact(new char[n]);
        std::memcpy(exact.get(), data + at, n);
        const feed_tally fed = feed_dispatch(path.splitter, exact.get(), n, path.scratch, handlers);
        path.lines += fed.lines;
        path.ok += fed.ok;
        at += n;
    }
    for(; path.next < expected.size(); ++path.next)
    {
        event twin = stale_event();
        require(parse_line_scalar(expected[path.next], twin) != parse_result::ok,
                "feed_dispatch called no handler for a line parsed ok",
                static_cast<long long>(path.next));
    }
    require(path.lines == delivered, "feed_dispatch counted other lines than the splitter",
            static_cast<long long>(path.lines));
    require(path.ok == path.calls && path.ok == t.parsed + t.filtered,
            "feed_dispatch's ok lines differ from its handler calls or parse_line's",
            static_cast<long long>(path.ok));
    require(path.splitter.overlong_lines() == splitter.overlong_lines() &&
                path.splitter.pending() == splitter.pending(),
            "feed_dispatch left its splitter unlike the splitter's own feed");
    require(path.records.size() == records.size(),
            "the entry points by id produced another number of records than process()",
            static_cast<long long>(path.records.size()));
    for(size_t i = 0; i < records.size(); ++i)
        require(std::memcmp(&path.records[i], &records[i], sizeof(record_t)) == 0,
                "a record of the entry points by id differs from process()'s",
                static_cast<long long>(i));
    path.engine.finish();
    require(delivered == expected.size(), "the splitter lost lines",
            static_cast<long long>(expected.size() - delivered));
    require(splitter.overlong_lines() == expected_overlong, "overlong lines miscounted",
            static_cast<long long>(splitter.overlong_lines()));
    if(trailing <= max_line_length)
        require(splitter.pending() == trailing && !splitter.discarding(),
                "the partial last line is not what the stream ends with",
                static_cast<long long>(splitter.pending()));
    require(t.lines == delivered, "lines handled differ from lines delivered");
    require(t.parsed + t.malformed + t.unknown + t.filtered == t.lines,
            "parsed + malformed + unknown + filtered do not add up to the lines");
    require(t.records <= max_records, "too many records");
    engine.finish();
    require(engine.outstanding() == 0, "finish() left starts outstanding",
            static_cast<long long>(engine.outstanding()));
    require(engine.counters().records == t.records, "counters().records differs after finish()");
    require(std::memcmp(&path.engine.counters(), &engine.counters(), sizeof(pairing_counters)) == 0,
            "the entry points by id counted otherwise than process()");
    return 0;
}
