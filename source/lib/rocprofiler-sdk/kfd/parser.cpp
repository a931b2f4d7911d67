// MIT License - see LICENSE.
//
// Hand-written, bounds-checked parser of the amdkfd SMI event lines (grammar in parser.hpp).
// Every read goes through `cursor`, which never looks past the end of the line: no sscanf,
// no NUL-terminated assumptions, no allocation, no exceptions.
#include "rocprofiler-sdk/kfd/parser.hpp"

#include "common/kfd_abi.hpp"

#include <limits>

namespace rocprofiler::kfd
{
namespace
{
// Page numbers must leave room for "<< 12" of page + npages (see parser.hpp).
constexpr uint64_t page_limit = uint64_t{1} << (64 - kfd_abi::page_shift);

constexpr size_t hex32_digits = 8;
constexpr size_t hex64_digits = 16;
constexpr size_t ns_digits    = 19; // INT64_MAX has 19 digits
constexpr size_t int32_digits = 10; // INT32_MAX has 10 digits

// A read position inside one line. Every accessor checks the end first.
struct cursor
{
    std::string_view text;
    size_t           position = 0;

    bool   at_end() const { return position >= text.size(); }
    char   peek() const { return at_end() ? '\0' : text[position]; }
    size_t remaining() const { return text.size() - position; }

    // Consumes `c` when it is the next byte.
    bool skip(char c)
    {
        if(at_end() || text[position] != c) return false;
        ++position;
        return true;
    }
};

int
hex_value(char c)
{
    if(c >= '0' && c <= '9') return c - '0';
    if(c >= 'a' && c <= 'f') return c - 'a' + 10;
    if(c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool
is_decimal_digit(char c)
{
    return c >= '0' && c <= '9';
}

// 1..max_digits hex digits. With at most 16 digits a uint64_t cannot overflow; 32-bit
// fields pass max_digits = 8.
bool
read_hex(cursor& c, size_t max_digits, uint64_t& value)
{
    value         = 0;
    size_t digits = 0;
    while(!c.at_end() && hex_value(c.peek()) >= 0)
    {
        if(++digits > max_digits) return false;
        value = (value << 4) | static_cast<uint64_t>(hex_value(c.peek()));
        ++c.position;
    }
    return digits > 0;
}

bool
read_hex32(cursor& c, uint32_t& value)
{
    uint64_t wide = 0;
    if(!read_hex(c, hex32_digits, wide)) return false;
    value = static_cast<uint32_t>(wide);
    return true;
}

bool
read_hex64(cursor& c, uint64_t& value)
{
    return read_hex(c, hex64_digits, value);
}

// 1..max_digits decimal digits, value <= max_value. 19 digits fit in a uint64_t.
bool
read_decimal(cursor& c, size_t max_digits, uint64_t max_value, uint64_t& value)
{
    value         = 0;
    size_t digits = 0;
    while(!c.at_end() && is_decimal_digit(c.peek()))
    {
        if(++digits > max_digits) return false;
        value = value * 10 + static_cast<uint64_t>(c.peek() - '0');
        ++c.position;
    }
    return digits > 0 && value <= max_value;
}

// "%d": optional '-', then digits, within int32_t.
bool
read_int32(cursor& c, int32_t& value)
{
    const bool negative = c.skip('-');
    // magnitude of INT32_MIN is INT32_MAX + 1
    const uint64_t limit =
        uint64_t{std::numeric_limits<int32_t>::max()} + (negative ? uint64_t{1} : uint64_t{0});
    uint64_t magnitude = 0;
    if(!read_decimal(c, int32_digits, limit, magnitude)) return false;
    value = negative ? static_cast<int32_t>(-static_cast<int64_t>(magnitude))
                     : static_cast<int32_t>(magnitude);
    return true;
}

// "%lld -%d " : timestamp and pid of every profiler event, with the trailing space.
bool
read_profiler_header(cursor& c, event& ev)
{
    uint64_t pid = 0;
    if(!read_decimal(c, ns_digits, uint64_t{std::numeric_limits<int64_t>::max()}, ev.timestamp))
        return false;
    if(!c.skip(' ') || !c.skip('-')) return false;
    if(!read_decimal(c, int32_digits, uint64_t{std::numeric_limits<int32_t>::max()}, pid))
        return false;
    ev.pid           = static_cast<uint32_t>(pid);
    ev.has_timestamp = true;
    return c.skip(' ');
}

// "@%lx(%lx)": a page range; npages >= 1 and the byte range must fit in 64 bits.
bool
read_page_range(cursor& c, event& ev)
{
    if(!c.skip('@') || !read_hex64(c, ev.page)) return false;
    if(!c.skip('(') || !read_hex64(c, ev.npages) || !c.skip(')')) return false;
    return ev.npages >= 1 && ev.page < page_limit && ev.npages < page_limit - ev.page;
}

// "@%lx(%x)": a faulting page and its node.
bool
read_fault_address(cursor& c, event& ev)
{
    if(!c.skip('@') || !read_hex64(c, ev.page)) return false;
    if(!c.skip('(') || !read_hex32(c, ev.node) || !c.skip(')')) return false;
    return ev.page < page_limit;
}

// "%x->%x"
bool
read_from_to(cursor& c, event& ev)
{
    return read_hex32(c, ev.from_node) && c.skip('-') && c.skip('>') && read_hex32(c, ev.to_node);
}

// The rest of the line as the event's text field (task name, reset cause): no NUL allowed.
bool
read_text_to_end(cursor& c, event& ev)
{
    const std::string_view rest = c.text.substr(c.position);
    if(rest.find('\0') != std::string_view::npos) return false;
    ev.text_offset = static_cast<uint16_t>(c.position);
    ev.text_length = static_cast<uint16_t>(rest.size());
    c.position     = c.text.size();
    return true;
}

// ---- one body parser per id; each must consume the whole body ----

bool
parse_vmfault(cursor& c, event& ev) // "%x:%s"
{
    return read_hex32(c, ev.pid) && c.skip(':') && read_text_to_end(c, ev);
}

bool
parse_thermal_throttle(cursor& c, event& ev) // "%llx:%llx"
{
    return read_hex64(c, ev.bitmask) && c.skip(':') && read_hex64(c, ev.count) && c.at_end();
}

bool
parse_gpu_reset(cursor& c, event& ev) // "%x %s", or "%x" on 6.0
{
    if(!read_hex(c, hex32_digits, ev.count)) return false;
    if(c.at_end()) return true;
    return c.skip(' ') && read_text_to_end(c, ev);
}

bool
parse_migrate_start(cursor& c, event& ev) // H "@%lx(%lx) %x->%x %x:%x %d"
{
    return read_profiler_header(c, ev) && read_page_range(c, ev) && c.skip(' ') &&
           read_from_to(c, ev) && c.skip(' ') && read_hex32(c, ev.prefetch_node) && c.skip(':') &&
           read_hex32(c, ev.preferred_node) && c.skip(' ') && read_int32(c, ev.trigger) &&
           c.at_end();
}

bool
parse_migrate_end(cursor& c, event& ev) // H "@%lx(%lx) %x->%x %d" [" %d"]
{
    if(!(read_profiler_header(c, ev) && read_page_range(c, ev) && c.skip(' ') &&
         read_from_to(c, ev) && c.skip(' ') && read_int32(c, ev.trigger)))
        return false;
    if(c.at_end()) return true; // before 6.13: no error code
    ev.has_error_code = true;
    return c.skip(' ') && read_int32(c, ev.error_code) && c.at_end();
}

bool
parse_page_fault_start(cursor& c, event& ev) // H "@%lx(%x) %c", 'R' or 'W'
{
    if(!(read_profiler_header(c, ev) && read_fault_address(c, ev) && c.skip(' '))) return false;
    if(c.skip('R'))
        ev.read_fault = true;
    else if(!c.skip('W'))
        return false;
    return c.at_end();
}

bool
parse_page_fault_end(cursor& c, event& ev) // H "@%lx(%x) %c", 'M' or 'U'
{
    if(!(read_profiler_header(c, ev) && read_fault_address(c, ev) && c.skip(' '))) return false;
    if(c.skip('M'))
        ev.migrated = true;
    else if(!c.skip('U'))
        return false;
    return c.at_end();
}

bool
parse_queue_eviction(cursor& c, event& ev) // H "%x %d"
{
    return read_profiler_header(c, ev) && read_hex32(c, ev.node) && c.skip(' ') &&
           read_int32(c, ev.trigger) && c.at_end();
}

bool
parse_queue_restore(cursor& c, event& ev) // H "%x" [" R" | " \0" | " 0"]
{
    if(!(read_profiler_header(c, ev) && read_hex32(c, ev.node))) return false;
    if(c.at_end())
    {
        ev.restore = restore_form::bare;
        return true;
    }
    // exactly one space and one flag byte, then the end of the line
    if(!c.skip(' ') || c.remaining() != 1) return false;
    switch(c.peek())
    {
    case 'R':
        ev.restore     = restore_form::suffix_r;
        ev.rescheduled = true;
        break;
    case '\0':
        ev.restore = restore_form::suffix_nul;
        break;
    case '0':
        ev.restore = restore_form::suffix_zero;
        break;
    default:
        return false;
    }
    ++c.position;
    return true;
}

bool
parse_unmap_from_gpu(cursor& c, event& ev) // H "@%lx(%lx) %x %d"
{
    return read_profiler_header(c, ev) && read_page_range(c, ev) && c.skip(' ') &&
           read_hex32(c, ev.node) && c.skip(' ') && read_int32(c, ev.trigger) && c.at_end();
}

bool
parse_process_start_end(cursor& c, event& ev) // "%x %s"
{
    return read_hex32(c, ev.pid) && c.skip(' ') && read_text_to_end(c, ev);
}

// H "%d" (dropped events) or H "%x" (rescheduled restore): told apart by the token's
// characters; see "Id 14" in parser.hpp.
bool
parse_id14(cursor& c, event& ev)
{
    if(!read_profiler_header(c, ev)) return false;
    const std::string_view token          = c.text.substr(c.position);
    bool                   has_hex_letter = false;
    for(char ch : token)
    {
        if(hex_value(ch) < 0) return false; // also rejects '-', ' ', NUL
        if(!is_decimal_digit(ch)) has_hex_letter = true;
    }
    if(has_hex_letter)
    {
        ev.kind14      = id14_kind::rescheduled_restore;
        ev.rescheduled = true;
        return read_hex32(c, ev.node) && c.at_end();
    }
    cursor   as_hex = c; // the same digits read as a restore's node, when they fit
    uint64_t node   = 0;
    if(read_hex(as_hex, hex32_digits, node) && as_hex.at_end())
    {
        ev.id14_ambiguous    = true;
        ev.id14_restore_node = static_cast<uint32_t>(node);
    }
    ev.kind14 = id14_kind::dropped_events;
    return read_decimal(c, int32_digits, uint64_t{std::numeric_limits<int32_t>::max()}, ev.count) &&
           c.at_end();
}

using body_parser = bool (*)(cursor&, event&);

// Indexed by event id; ids without an entry are unknown.
constexpr body_parser body_parsers[kfd_abi::max_event_id + 1] = {
    nullptr,                 // 0 NONE
    parse_vmfault,           // 1
    parse_thermal_throttle,  // 2
    parse_gpu_reset,         // 3 PRE_RESET
    parse_gpu_reset,         // 4 POST_RESET
    parse_migrate_start,     // 5
    parse_migrate_end,       // 6
    parse_page_fault_start,  // 7
    parse_page_fault_end,    // 8
    parse_queue_eviction,    // 9
    parse_queue_restore,     // 10 (a)
    parse_unmap_from_gpu,    // 11 (b)
    parse_process_start_end, // 12 (c)
    parse_process_start_end, // 13 (d)
    parse_id14,              // 14 (e)
};

// The id token is everything before the first space. Returns 0 when it is not a hex number
// of at most 8 digits or not a known id.
uint32_t
read_event_id(cursor& c)
{
    uint64_t id = 0;
    if(!read_hex(c, hex32_digits, id)) return 0;
    if(!c.at_end() && c.peek() != ' ') return 0; // e.g. "5x": not a number
    if(id > kfd_abi::max_event_id || body_parsers[id] == nullptr) return 0;
    return static_cast<uint32_t>(id);
}
} // namespace

parse_result
parse_line(std::string_view line, event& out) noexcept
{
    out = event{};
    if(line.empty() || line.size() > max_line_length) return parse_result::malformed;

    cursor         c{line, 0};
    const uint32_t id = read_event_id(c);
    if(id == 0) return parse_result::unknown_id;

    event parsed{};
    parsed.id = id;
    if(!c.skip(' ') || !body_parsers[id](c, parsed) || !c.at_end())
    {
        out.id = id;
        return parse_result::malformed;
    }
    out = parsed;
    return parse_result::ok;
}

std::string_view
event_text(const event& ev, std::string_view line) noexcept
{
    if(ev.text_length == 0 || ev.text_offset > line.size()) return {};
    return line.substr(ev.text_offset, ev.text_length);
}

void
resolve_id14(event& ev, uint32_t fd_gpu_id) noexcept
{
    if(ev.id != kfd_abi::event_id_14 || !ev.id14_ambiguous) return;
    if(fd_gpu_id == 0 || ev.id14_restore_node != fd_gpu_id) return;
    ev.kind14         = id14_kind::rescheduled_restore;
    ev.rescheduled    = true;
    ev.node           = fd_gpu_id;
    ev.count          = 0;
    ev.id14_ambiguous = false;
}

rocprofiler_kfd_event_record_t
to_raw_record(const event& ev, uint32_t gpu_id, std::string_view line,
              uint64_t read_time_ns) noexcept
{
    rocprofiler_kfd_event_record_t record;
    std::memset(&record, 0, sizeof(record)); // no stale bytes, text zero-filled

    record.size      = sizeof(record);
    record.kind      = static_cast<uint32_t>(ROCPROFILER_BUFFER_TRACING_KFD_EVENT);
    record.operation = static_cast<int32_t>(ev.id);
    if(ev.id == kfd_abi::event_id_14)
    {
        record.operation = ev.kind14 == id14_kind::rescheduled_restore
                               ? ROCPROFILER_KFD_EVENT_QUEUE_RESTORE_RESCHEDULED
                               : ROCPROFILER_KFD_EVENT_DROPPED_EVENTS;
    }
    record.timestamp      = ev.has_timestamp ? ev.timestamp : read_time_ns;
    record.pid            = ev.pid;
    record.gpu_id         = gpu_id;
    record.node_id        = ev.node;
    record.from_node      = ev.from_node;
    record.to_node        = ev.to_node;
    record.prefetch_node  = ev.prefetch_node;
    record.preferred_node = ev.preferred_node;
    record.trigger        = ev.trigger;
    record.error_code     = ev.error_code;
    record.address        = ev.page << kfd_abi::page_shift;
    record.length         = ev.npages << kfd_abi::page_shift;
    record.count          = ev.count;
    record.bitmask        = ev.bitmask;

    uint32_t flags = 0;
    if(ev.read_fault) flags |= ROCPROFILER_KFD_EVENT_FLAG_READ_FAULT;
    if(ev.migrated) flags |= ROCPROFILER_KFD_EVENT_FLAG_MIGRATED;
    if(ev.rescheduled) flags |= ROCPROFILER_KFD_EVENT_FLAG_RESCHEDULED;
    if(ev.has_error_code) flags |= ROCPROFILER_KFD_EVENT_FLAG_HAS_ERROR_CODE;
    if(ev.has_timestamp) flags |= ROCPROFILER_KFD_EVENT_FLAG_HAS_TIMESTAMP;
    record.flags = flags;

    const size_t copied =
        line.size() < sizeof(record.text) - 1 ? line.size() : sizeof(record.text) - 1;
    if(copied > 0) std::memcpy(record.text, line.data(), copied);
    record.text[copied] = '\0';
    return record;
}
} // namespace rocprofiler::kfd
