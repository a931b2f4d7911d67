// MIT License - see LICENSE.
//
// The KFD SMI message text, as far as the emulator needs it: which event a log line is, whose
// it is (pid), when (ns), and which GPU's clients get it. Everything else in a line is kept
// byte for byte, so a captured log replays exactly as the kernel wrote it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kfd_emu
{
// A run of bytes inside a line.
struct span
{
    size_t pos = 0;
    size_t len = 0;
};

enum class pid_style
{
    none,    // no pid in the text (thermal, resets)
    decimal, // "-<pid>" of the profiler events (and id 14 by shape)
    hex,     // "<pid hex>" at the start of VMFAULT, PROCESS_START/END
};

struct parsed_event
{
    uint32_t id = 0;

    bool    has_ns = false;
    int64_t ns     = 0;
    span    ns_span;

    pid_style pid_kind = pid_style::none;
    uint32_t  text_pid = 0; // the pid as written in the line
    span      pid_span;

    // The GPU the kernel would deliver this event on, when the text says (ids 5-11).
    bool     has_route_node = false;
    uint32_t route_node     = 0;

    // Every node id the line mentions (for the default GPU list).
    uint32_t nodes[4]   = {};
    size_t   node_count = 0;
};

// Parses one log line (without its '\n'). Returns false when the id is missing or invalid, or
// when an event of ids 5-11 lacks the fields that route it.
bool parse_event(std::string_view line, parsed_event& out);

// The fields the replay routes and rewrites by (id, timestamp, pid and their spans, route
// node) of a line that parse_event is known to accept (the scan found no line it refuses, in
// this very file): for ids 5-11 the fields between them (page, npages, prefetch and preferred
// locations) are skipped, not checked, and nodes[] is left empty; other ids are parsed by
// parse_event. Returns false when the line does not have the shape it expects.
bool parse_routing_fields(std::string_view line, parsed_event& out);

// True for the profiler events (ids 5-11) and id 14 in its "<ns> -<pid> ..." shape.
bool is_profiler_event(uint32_t id);

// The pid the kernel delivers by: 0 (everyone) for VMFAULT, thermal, resets and process
// start/end even though some carry a pid in their text.
uint32_t delivery_pid(const parsed_event& ev, uint32_t text_pid_after_rewrite);

struct rewrite_rule
{
    bool     rewrite_pid = false;
    uint32_t from_pid    = 0; // the log's "self" pid
    uint32_t to_pid      = 0; // the real pid of the traced process
    int64_t  ns_offset   = 0; // added to every timestamp (0 = keep)
};

// A timestamp moved by offset ns (`#@ timestamps rebase`), without overflow: a result below 0
// becomes 0 and one above INT64_MAX becomes INT64_MAX (the kernel's "%lld" of a boottime
// never prints a negative number).
int64_t shift_timestamp(int64_t ns, int64_t offset);

// Returns the line with the pid and timestamp rewritten and '\n' appended; every other byte
// is unchanged. out_pid receives the text pid after rewriting.
std::string rewrite_line(std::string_view line, const parsed_event& ev, const rewrite_rule& rule,
                         uint32_t& out_pid);
// The same into `out` (replaced), whose storage is reused: the replay's hot path.
void rewrite_line_into(std::string& out, std::string_view line, const parsed_event& ev,
                       const rewrite_rule& rule, uint32_t& out_pid);

// Room a rewrite needs beyond the line: a timestamp may grow to 19 digits, a pid to 10, and the
// '\n' (a line's shortest timestamp and pid are one digit each); the rest is slack for the
// fixed-size copies of memoized text (see rewrite_memo) and for the sixteen-byte steps of
// route_and_rewrite_in_place (up to 15 bytes past the message).
inline constexpr size_t rewrite_growth = 48;

// What the previous rewrites formatted, reused by the next ones: a log's timestamps share
// their leading digits for long runs (events microseconds apart), and the rewritten pid is
// always the same. Only a cache: the text written is the same with or without it.
struct rewrite_memo
{
    uint64_t  ns_high      = UINT64_MAX; // a shifted timestamp / 10^6 whose decimal text is ns_text
    char      ns_text[20]  = {};
    size_t    ns_len       = 0;
    uint32_t  pid          = 0; // the pid whose text is pid_text, written as pid_kind
    pid_style pid_kind     = pid_style::none;
    char      pid_text[12] = {};
    size_t    pid_len      = 0;
    // What route_and_rewrite read in the lines before: the leading digits of the last
    // timestamp (all but its last six) and the last pid, as the log wrote them, and their
    // values. A line that repeats those bytes has only its timestamp's last six digits
    // converted (the pid not at all).
    char     ns_head_text[16] = {};
    size_t   ns_head_len      = 0; // 0: none yet
    uint64_t ns_head          = 0;
    char     raw_pid_text[8]  = {}; // the digits, then ' '
    size_t   raw_pid_len      = 0;  // digits, at most 7; 0: none yet
    uint64_t raw_pid          = 0;
};

// The same into out, which has room for line.size() + rewrite_growth bytes; returns the
// message's length. The producer writes each message once, into a buffer it reuses.
size_t rewrite_line_to(char* out, std::string_view line, const parsed_event& ev,
                       const rewrite_rule& rule, uint32_t& out_pid, rewrite_memo* memo = nullptr);

// What the replay needs of a profiler event besides its message.
struct routed_event
{
    uint32_t id         = 0;
    uint32_t route_node = 0; // the GPU node the kernel delivers it on
    uint32_t pid        = 0; // after the rewrite: the pid the kernel delivers by
    int64_t  ns         = 0; // as the log says (the schedule of realtime pace)
};

// Bytes past a buffer's end that route_and_rewrite_in_place may read (it loads up to sixteen at
// a time); their values do not matter.
inline constexpr size_t route_read_slack = 32;

// The replay's hot path: finding the line's end, parse_routing_fields and rewrite_line_to fused
// into one pass over a line of the shape the kernel writes for ids 5-11 ("<one hex digit> <ns>
// -<pid> ..."), read in place in the log reader's buffer. The line is b[0..line_size), up to
// the first '\n' of b[0, n); route_read_slack bytes past n are readable. The timestamp and pid
// go through the memo, the rest of the line is copied sixteen bytes at a time while its '\n'
// is looked for (no memchr, no memcpy call). Writes the message into out (room for max_line +
// rewrite_growth bytes) and returns its length, or 0 when the line has another shape, has no
// '\n' before n or is longer than max_line (the caller then takes the general path, which
// gives the same for any line this accepts).
size_t route_and_rewrite_in_place(const char* b, size_t n, size_t max_line,
                                  const rewrite_rule& rule, rewrite_memo& memo, char* out,
                                  routed_event& ev, size_t& line_size);

// The same for a line given alone (without its '\n'; the tests' form): a copy of the line is
// read in place.
size_t route_and_rewrite(std::string_view line, const rewrite_rule& rule, rewrite_memo& memo,
                         char* out, routed_event& ev);
} // namespace kfd_emu
