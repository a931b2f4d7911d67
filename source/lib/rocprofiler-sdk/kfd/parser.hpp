// MIT License - see LICENSE.
//
// Parser of the amdkfd SMI text events: bytes -> typed events. Pure: no I/O, no globals,
// no allocation, no exceptions. See docs/kfd-smi-interface.md for the kernel formats.
//
// Accepted grammar (one line, without its '\n'; `<hex>`/`<dec>` as the kernel prints them):
//
//   line    := id ' ' body              id: hex 1..e (the kernel's "%x ")
//   1  VMFAULT            <hex pid> ':' <text>                     text: task name, may be empty
//   2  THERMAL_THROTTLE   <hex64 bitmask> ':' <hex64 counter>
//   3  GPU_PRE_RESET      <hex seq> [' ' <text>]                   6.0 has no reset cause
//   4  GPU_POST_RESET     <hex seq> [' ' <text>]
//   5  MIGRATE_START      H '@' <hex64 page> '(' <hex64 npages> ')' ' ' <hex from> '->' <hex to>
//                         ' ' <hex prefetch> ':' <hex preferred> ' ' <int trigger>
//   6  MIGRATE_END        H '@' <hex64 page> '(' <hex64 npages> ')' ' ' <hex from> '->' <hex to>
//                         ' ' <int trigger> [' ' <int error_code>]   error_code from 6.13
//   7  PAGE_FAULT_START   H '@' <hex64 page> '(' <hex node> ')' ' ' ('R' | 'W')
//   8  PAGE_FAULT_END     H '@' <hex64 page> '(' <hex node> ')' ' ' ('M' | 'U')
//   9  QUEUE_EVICTION     H <hex node> ' ' <int trigger>
//   a  QUEUE_RESTORE      H <hex node> [ " R" | " \0" | " 0" ]     the four field variants
//   b  UNMAP_FROM_GPU     H '@' <hex64 page> '(' <hex64 npages> ')' ' ' <hex node> ' ' <int
//   trigger> c  PROCESS_START      <hex pid> ' ' <text> d  PROCESS_END        <hex pid> ' ' <text>
//   e  (id 14)            H <token>                                 see "id 14" below
//   H := <dec ns> ' ' '-' <dec pid> ' '
//
// Numbers (overlong or overflowing numbers are malformed):
//   - hex: 1..8 digits for 32-bit fields, 1..16 for 64-bit fields; either letter case.
//   - ns: 1..19 decimal digits, at most INT64_MAX (what "%lld" can print); no sign.
//   - pid after '-': 1..10 decimal digits, at most INT32_MAX ("%d" of a pid_t).
//   - trigger / error_code: optional '-', 1..10 digits, within int32_t.
//   - Addresses must be representable in bytes: page + npages < 2^52 (so page << 12 and
//     (page + npages) << 12 fit in 64 bits); npages >= 1 for ranges (the kernel never prints
//     an empty range; an empty one would give end_addr < start_addr).
//
// Trailing content: nothing may follow the last field, except the QUEUE_RESTORE suffixes
// listed above (each exactly as shown: one space then 'R', NUL or '0', then the end). A '\n'
// left in `line`, a '\r', a second space or any other byte after the last field is malformed.
// Text fields (task name, reset cause) run to the end of the line and may not contain NUL.
//
// Id 14 ("e"): two producers, same shape `e <ns> -<pid> <token>`:
//   - out-of-tree drivers: dropped events, `"%lld -%d %d"`: token = decimal drop count;
//   - a proposed kernel change: rescheduled queue restore, `"%lld -%d %x"`: token = hex node.
//   A token with a hex letter (a-f) cannot be a "%d" count: it is a rescheduled restore.
//   A token of decimal digits only is ambiguous; parse_line takes it as DROPPED EVENTS (the
//   safer reading: it creates no record and changes no pairing state, while a wrong restore
//   would end an unrelated queue suspension) and marks the event `id14_ambiguous`, with the
//   token's hex value in `id14_restore_node`. A caller that knows the gpu_id of the fd the line
//   came from can call resolve_id14() to settle it: a rescheduled restore always names the GPU
//   whose fd receives it. A negative or overflowing token is malformed.
//
// Lines longer than max_line_length bytes are malformed (the kernel builds every message in
// a 96-byte buffer, so real lines are far shorter).
#pragma once

#include <rocprofiler-sdk/ext/kfd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#    include <emmintrin.h> // SSE2: part of every x86-64
#endif

namespace rocprofiler::kfd
{
// Longest line content (without its '\n') that parse_line accepts and line_splitter keeps.
inline constexpr size_t max_line_length = 255;

// Which of the two id-14 producers an id-14 event came from (see the header comment).
enum class id14_kind : uint8_t
{
    not_id14 = 0,
    dropped_events,
    rescheduled_restore,
};

// Which QUEUE_RESTORE variant a line was (for diagnostics and tests; pairing uses
// `rescheduled`).
enum class restore_form : uint8_t
{
    not_restore = 0,
    bare,        // 6.0-6.11 normal restore: no suffix
    suffix_r,    // " R": rescheduled (6.0 until the id-14 change)
    suffix_nul,  // " \0": 6.12 normal restore
    suffix_zero, // " 0": fixed kernels' normal restore
};

// One parsed SMI event. Fields the event does not carry are 0 / false. Ordered by size
// (96 bytes, no padding inside): parse_line zeroes it with three 32-byte stores.
struct event
{
    uint64_t timestamp = 0; // kernel ns; 0 when the format carries none (1-4, 12, 13)
    uint64_t page      = 0; // start page (pages, not bytes)
    uint64_t npages    = 0;
    uint64_t count     = 0; // id 14 dropped count; thermal counter; reset seq
    uint64_t bitmask   = 0; // thermal bitmask

    uint32_t id             = 0; // kfd_abi::event_id value (1..14); for id 14 see kind14
    uint32_t pid            = 0; // decimal pid (profiler events), hex pid (1, 12, 13)
    uint32_t node           = 0; // fault/queue/unmap node (gpu_id, hex in text)
    uint32_t from_node      = 0; // migrate
    uint32_t to_node        = 0;
    uint32_t prefetch_node  = 0;
    uint32_t preferred_node = 0;
    int32_t  trigger        = 0; // as printed (decimal)
    int32_t  error_code     = 0; // MIGRATE_END 6.13+
    // id 14 read as dropped events from a decimal-only token: it could also be a rescheduled
    // restore of node `id14_restore_node` (the token read as hex). See resolve_id14().
    uint32_t id14_restore_node = 0;

    // Text field (task name of 1/12/13, reset cause of 3/4) as a range of the parsed line;
    // read it with event_text(). Length 0 when absent or empty.
    uint16_t text_offset = 0;
    uint16_t text_length = 0;

    bool         has_timestamp  = false; // the format carries a timestamp (5-11, 14)
    bool         has_error_code = false; // MIGRATE_END carried an error_code
    bool         read_fault     = false; // PAGE_FAULT_START 'R' (false for 'W')
    bool         migrated       = false; // PAGE_FAULT_END 'M' (false for 'U')
    bool         rescheduled    = false; // QUEUE_RESTORE " R", or the id-14 restore shape
    id14_kind    kind14         = id14_kind::not_id14;
    restore_form restore        = restore_form::not_restore;
    bool         id14_ambiguous = false; // see id14_restore_node
};

enum class parse_result
{
    ok,
    malformed,  // a known id whose body does not match its format (or a bad line)
    unknown_id, // id 0, 15+, or an id token that is not a hex number: skip and count
};

// Parses one line (`line` excludes the '\n' and may contain NUL bytes). Never reads outside
// `line`. On ok, `out` holds the event. Otherwise `out` is all zero except `id`, which holds
// the id when it was a known one (for per-id malformed counts). An empty line is malformed.
// Where the CPU has AVX-512 VBMI2, a line of 16 to 127 bytes is first tried against the hot
// shapes (hot_shapes.hpp: nearly every kernel line, parsed in one pass); any other line,
// and every line elsewhere, takes the paths below.
// A line of 16 to 127 bytes (every kernel line but the shortest) is classified at once
// (SIMD: bitmaps of its hex and decimal digits, and each byte's value as a digit) and copied
// into a zero-padded local block, so that each number's length is one count-trailing-zeros
// and every number and separator is read with plain loads (no end checks); numbers are
// converted with SSSE3 when the CPU has it (the line classified 32 bytes at a time with AVX2
// when it has AVX2 and BMI2: parse_line_avx2; else parse_line_ssse3), else eight bytes at a
// time (SWAR). Other lengths (or no SSE2) take parse_line_swar's path. The hot instance
// carries no code of the other paths (each path is its own template instance).
parse_result parse_line(std::string_view line, event& out) noexcept;

// parse_line picks, once per process, the AVX2 instance when the CPU has AVX2, BMI1 and
// BMI2, else the SSSE3 instance when it has SSSE3 (numbers of up to 16 digits converted with
// pmaddubsw + pmaddwd, no branch on their length), else the SSE2 one. All are exported so
// that the tests run each whatever the CPU:
// parse_line_ssse3 is the SSSE3 path (the SSE2 one when the CPU lacks SSSE3, see
// parse_line_has_ssse3), parse_line_sse2 the SSE2 path with SWAR conversion.
parse_result parse_line_ssse3(std::string_view line, event& out) noexcept;
parse_result parse_line_sse2(std::string_view line, event& out) noexcept;
bool         parse_line_has_ssse3() noexcept;
// The AVX2 path (lines classified 32 bytes at a time, the body compiled for AVX2 + BMI2),
// which parse_line takes when the CPU has AVX2, BMI1 and BMI2; parse_line_avx2 is the
// SSSE3 path where it has not (see parse_line_has_avx2).
parse_result parse_line_avx2(std::string_view line, event& out) noexcept;
bool         parse_line_has_avx2() noexcept;
// Where the CPU also has AVX-512 F, BW, VBMI and VBMI2, parse_line (and parse_line_dispatch)
// first try the line's shape against the hot shapes of the profiler events (hot_shapes.hpp:
// one pass with no branch per field and no switch on the id) and take the paths above for
// every line that is not one of them. parse_line_avx512 is that path (parse_line_avx2 where
// the CPU lacks it); parse_line_hot_shape tells whether the hot pass alone took a line (for
// the tests: false on CPUs without it).
parse_result parse_line_avx512(std::string_view line, event& out) noexcept;
bool         parse_line_hot_shape(std::string_view line, event& out) noexcept;
bool         parse_line_has_avx512() noexcept;

// One dispatch per line: what a caller does with each id's events, as a table of functions
// indexed by the id. parse_line_dispatch parses as parse_line does and, when the line is ok,
// calls the id's handler from that id's own branch of the parser's switch (each branch has
// its own call site, whose target never changes): the caller does not switch on the id a
// second time, a branch that a random mix of events mispredicts. A null entry calls nothing.
// The handler gets the parsed event (it may change it, e.g. resolve_id14) and the line.
struct event_handlers
{
    using handler                      = void (*)(void* context, event& ev, std::string_view line);
    static constexpr size_t slot_count = 15; // ids 1..14; slot 0 is never called
    handler                 on_id[slot_count] = {};
    void*                   context           = nullptr;
    // Whether parse_line_dispatch may try the hot shapes' AVX-512 pass first (where the CPU
    // has it). On Intel CPUs the first 512-bit instructions after a pause of some hundred
    // microseconds run slowly while the vector unit's upper half powers up: after a 300 us
    // sleep the pass loses to the AVX2 path for about the first 15 lines and breaks even at
    // 25-30 (BENCHMARKS.md), so a caller that parses only a few lines per wake-up turns it
    // off. Either way the results are the same.
    bool hot_shapes = true;
};

// parse_line, then the handler of the parsed id when the result is ok (nothing otherwise).
// The AVX2 instance when the CPU has it and the line fits the masked path, else parse_line
// followed by a look-up of the handler.
parse_result parse_line_dispatch(std::string_view line, event& out,
                                 const event_handlers& handlers) noexcept;

// The twins of parse_line that the tests run on the same inputs and compare (same contract
// and results): numbers read eight bytes at a time, classifying each word (no SIMD), and
// byte at a time (the plain reference).
parse_result parse_line_swar(std::string_view line, event& out) noexcept;
parse_result parse_line_scalar(std::string_view line, event& out) noexcept;

// The text field of an event parsed from `line` (the same bytes passed to parse_line).
std::string_view event_text(const event& ev, std::string_view line) noexcept;

// Settles an ambiguous id-14 event (decimal-only token) with the gpu_id of the fd it was
// read from: when the token read as hex equals that gpu_id (non-zero), the event becomes a
// rescheduled restore of that node; otherwise it stays dropped events. A no-op for every
// other event.
void resolve_id14(event& ev, uint32_t fd_gpu_id) noexcept;

// Raw-event record (ext/kfd.h) of a parsed event: addresses in bytes, text = line truncated
// to ROCPROFILER_KFD_EVENT_TEXT_SIZE - 1 bytes + NUL (embedded NULs copied as they are),
// operation = id, with id 14 as ROCPROFILER_KFD_EVENT_DROPPED_EVENTS or
// ROCPROFILER_KFD_EVENT_QUEUE_RESTORE_RESCHEDULED by shape; timestamp = the kernel's when the
// event has one, else read_time_ns.
rocprofiler_kfd_event_record_t to_raw_record(const event& ev, uint32_t gpu_id,
                                             std::string_view line, uint64_t read_time_ns) noexcept;

// Splits a byte stream into '\n'-terminated lines, carrying a partial line across reads in
// fixed storage. A line longer than max_line bytes including its '\n' (content longer than
// max_line_length) is discarded up to its '\n' and counted once. Not thread-safe; on_line
// may call reset() but must not feed() the same splitter.
class line_splitter
{
public:
    // Bytes of the longest line kept, including its '\n'.
    static constexpr size_t max_line = max_line_length + 1;

    // Calls on_line(std::string_view) for every complete line in data (plus any carried
    // prefix); the view excludes the '\n' and is valid only during the call.
    template <typename F> void feed(const char* data, size_t size, F&& on_line);

    // Bytes of the carried partial line (0 while skipping an overlong line).
    size_t pending() const { return m_length; }
    // True while the rest of an overlong line is being skipped.
    bool discarding() const { return m_discarding; }
    // Lines discarded for exceeding max_line.
    uint64_t overlong_lines() const { return m_overlong; }
    // Drops any partial line (e.g. the fd was closed); the overlong count is kept.
    void reset()
    {
        m_length     = 0;
        m_discarding = false;
    }

private:
    // Calls on_line for every whole line in [cursor, end) found 64 bytes at a time (at least
    // 64 bytes left, no carried line); returns the start of the first line not ended there.
    template <typename F> const char* feed_blocks(const char* cursor, const char* end, F& on_line);

    void start_discarding()
    {
        ++m_overlong;
        m_length     = 0;
        m_discarding = true;
    }

    char     m_buffer[max_line_length] = {};
    size_t   m_length                  = 0;
    bool     m_discarding              = false;
    uint64_t m_overlong                = 0;
};

// The first '\n' in [p, p + n), or nullptr. Inline, 16 bytes a compare: a kernel line is
// found in 3-5 steps without a call (memchr only for the last bytes of a read).
inline const char*
find_newline(const char* p, size_t n) noexcept
{
#if defined(__SSE2__)
    const __m128i newline = _mm_set1_epi8('\n');
    for(; n >= 16; p += 16, n -= 16)
    {
        const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const int     hits  = _mm_movemask_epi8(_mm_cmpeq_epi8(block, newline));
        if(hits != 0) return p + __builtin_ctz(static_cast<unsigned>(hits));
    }
#endif
    return static_cast<const char*>(std::memchr(p, '\n', n));
}

#if defined(__SSE2__)
// Bit i set when p[i] is '\n', for the 16 bytes at p.
inline uint32_t
newline_bits16(const char* p, __m128i newline) noexcept
{
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(block, newline)));
}
#endif

// Bit i set when p[i] is '\n', for the 64 bytes at p. The four blocks written out: GCC at
// -O2 kept a loop of four (a counter, a compare and a branch per block, and variable shifts):
// 16 instructions more per line of a kernel log (callgrind, bench-kfd-hot-path mix).
inline uint64_t
newline_bits64(const char* p) noexcept
{
#if defined(__SSE2__)
    const __m128i  newline = _mm_set1_epi8('\n');
    const uint64_t low     = newline_bits16(p, newline) | (newline_bits16(p + 16, newline) << 16);
    const uint64_t high = newline_bits16(p + 32, newline) | (newline_bits16(p + 48, newline) << 16);
    return low | (high << 32);
#else
    uint64_t bits = 0;
    for(int i = 0; i < 64; ++i)
        bits |= uint64_t{p[i] == '\n'} << i;
    return bits;
#endif
}

// Most lines of a read: one bitmap of the newlines per 64 bytes, each line's end one
// count-trailing-zeros (no loop per line whose trip count the branch predictor would have
// to guess).
template <typename F>
const char*
line_splitter::feed_blocks(const char* cursor, const char* end, F& on_line)
{
    const char* line = cursor;
    for(const char* block = cursor; end - block >= 64; block += 64)
    {
        for(uint64_t newlines = newline_bits64(block); newlines != 0; newlines &= newlines - 1)
        {
            const char*  newline = block + __builtin_ctzll(newlines);
            const size_t length  = static_cast<size_t>(newline - line);
            if(length > max_line_length)
                ++m_overlong; // ends here: counted once
            else
                on_line(std::string_view{line, length}); // may reset(): nothing is carried
            line = newline + 1;
        }
    }
    return line;
}

template <typename F>
void
line_splitter::feed(const char* data, size_t size, F&& on_line)
{
    if(data == nullptr) return;
    const char*       cursor = data;
    const char* const end    = data + size;
    while(cursor < end)
    {
        if(m_length == 0 && !m_discarding && end - cursor >= 64)
        {
            cursor = feed_blocks(cursor, end, on_line);
            if(cursor >= end) return;
        }
        const size_t available = static_cast<size_t>(end - cursor);
        const char*  newline   = find_newline(cursor, available);
        if(m_discarding)
        {
            if(newline == nullptr) return; // still inside the overlong line
            m_discarding = false;
            cursor       = newline + 1;
            continue;
        }
        if(newline == nullptr)
        {
            // Partial line: keep it for the next feed, unless it is already too long.
            if(m_length + available > max_line_length)
                start_discarding();
            else
            {
                std::memcpy(m_buffer + m_length, cursor, available);
                m_length += available;
            }
            return;
        }
        const size_t segment = static_cast<size_t>(newline - cursor);
        if(m_length + segment > max_line_length)
        {
            ++m_overlong; // ends here: counted once, nothing left to skip
            m_length = 0;
        }
        else if(m_length == 0)
        {
            on_line(std::string_view{cursor, segment}); // whole line in this feed: no copy
        }
        else
        {
            std::memcpy(m_buffer + m_length, cursor, segment);
            const size_t length = m_length + segment;
            m_length            = 0; // before the call: on_line may reset() or throw
            on_line(std::string_view{m_buffer, length});
        }
        cursor = newline + 1;
    }
}

// What feed_dispatch did with the lines of one read.
struct feed_tally
{
    uint64_t lines = 0; // complete lines parsed (not the overlong ones the splitter skipped)
    uint64_t ok    = 0; // ... of them parsed ok (their handlers called)
};

// splitter.feed(data, size) with parse_line_dispatch(line, scratch, handlers) for each line:
// the same results and handler calls in the same order. Where parse_line_dispatch would try
// the hot shapes' pass first, the lines are split and the pass run in one function compiled
// for AVX-512 (hot_shapes::feed_dispatch), whose only call per line is the handler's: without
// the layers of parse_line_dispatch and the pass's own entry and exit, the parse stage of a
// 1M-event log measured about 5% faster (BENCHMARKS.md).
feed_tally feed_dispatch(line_splitter& splitter, const char* data, size_t size, event& scratch,
                         const event_handlers& handlers) noexcept;
} // namespace rocprofiler::kfd
