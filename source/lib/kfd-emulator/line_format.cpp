// MIT License - see LICENSE.
#include "line_format.hpp"

#include "common/kfd_abi.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#    include <emmintrin.h>
#endif

namespace kfd_emu
{
namespace abi = rocprofiler::kfd_abi;

namespace
{
// The value of each byte as a hex digit, 0xff for bytes that are none.
struct hex_table
{
    uint8_t values[256];
    constexpr hex_table() : values{}
    {
        for(int c = 0; c < 256; ++c)
            values[c] = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : 0xff;
    }
};
constexpr uint8_t const (&hex_digit_values)[256] = hex_table{}.values;

// Eight ASCII bytes loaded as a little-endian word (the first byte lowest): whether all are
// '0'..'9', and their value, without a loop (the usual SWAR forms, as in fast_float): a byte is
// a digit when its high nibble is 3 and stays 3 after adding 6.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the eight-digit step assumes it");

inline bool
all_digits(uint64_t eight)
{
    return (((eight & 0xF0F0F0F0F0F0F0F0ull) |
             (((eight + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
            0x3333333333333333ull);
}

// The number whose eight decimal digits (0..9, the most significant first) are the bytes.
inline uint64_t
eight_digit_values_number(uint64_t values)
{
    values = (values * 10) + (values >> 8); // two-digit values in every other byte
    return (((values & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
            (((values >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
           32;
}

inline uint64_t
eight_digits_value(uint64_t eight)
{
    return eight_digit_values_number(eight - 0x3030303030303030ull);
}

// A cursor over a line: each take_* consumes a field or fails without side effects on out.
struct cursor
{
    std::string_view text;
    size_t           pos = 0;

    bool at_end() const { return pos >= text.size(); }

    bool take_char(char c)
    {
        if(pos < text.size() && text[pos] == c)
        {
            ++pos;
            return true;
        }
        return false;
    }

    // The digit loops run on local copies of the position and the bytes: a store through a
    // char pointer may alias any object, so a loop on the members would load and store pos
    // for every byte.
    bool take_hex(uint64_t& value, span* where = nullptr)
    {
        // One table look-up per byte and no other test in the loop (every replayed line is
        // parsed twice: by the scan and by the producer). More than 16 digits (64 bits) is
        // refused; the loop stops at the 17th, so v never shifts out digits that count.
        const char*  bytes = text.data();
        const size_t start = pos;
        const size_t end   = std::min(text.size(), start + 17);
        size_t       at    = start;
        uint64_t     v     = 0;
        while(at < end)
        {
            const uint8_t digit = hex_digit_values[static_cast<unsigned char>(bytes[at])];
            if(digit > 15) break;
            v = (v << 4) | digit;
            ++at;
        }
        pos = at;
        if(at == start || at - start > 16) return false;
        value = v;
        if(where) *where = span{start, at - start};
        return true;
    }

    // Decimal digits of a value within 0..INT64_MAX (what the kernel's "%lld" of a
    // timestamp or "%d" of a pid can print); a longer or larger number is refused. At most 19
    // digits are taken (the 20th refuses the number): 19 digits cannot overflow uint64, so
    // the range is checked once at the end rather than for every digit.
    bool take_dec(uint64_t& value, span* where = nullptr)
    {
        const char*  bytes = text.data();
        const size_t start = pos;
        const size_t end   = std::min(text.size(), start + 20);
        size_t       at    = start;
        uint64_t     v     = 0;
        // The first eight digits in one step when eight bytes are there and all are digits
        // (a 14-digit timestamp then takes one step and six single digits).
        if(start + 8 <= end)
        {
            uint64_t eight = 0;
            std::memcpy(&eight, bytes + start, sizeof(eight));
            if(all_digits(eight))
            {
                v  = eight_digits_value(eight);
                at = start + 8;
            }
        }
        while(at < end)
        {
            const unsigned digit = static_cast<unsigned char>(bytes[at]) - unsigned{'0'};
            if(digit > 9) break;
            v = v * 10 + digit;
            ++at;
        }
        pos = at;
        if(at == start || at - start > 19 || v > static_cast<uint64_t>(INT64_MAX)) return false;
        value = v;
        if(where) *where = span{start, at - start};
        return true;
    }

    bool take_u32_hex(uint32_t& value)
    {
        uint64_t v = 0;
        if(!take_hex(v) || v > 0xffffffffull) return false;
        value = static_cast<uint32_t>(v);
        return true;
    }
};

void
add_node(parsed_event& ev, uint32_t node)
{
    if(ev.node_count < sizeof(ev.nodes) / sizeof(ev.nodes[0])) ev.nodes[ev.node_count++] = node;
}

// "<ns> -<pid>" at the start of every profiler body.
bool
take_ns_pid(cursor& c, parsed_event& ev)
{
    uint64_t ns  = 0;
    uint64_t pid = 0;
    if(!c.take_dec(ns, &ev.ns_span) || !c.take_char(' ') || !c.take_char('-') ||
       !c.take_dec(pid, &ev.pid_span) || pid > 0xffffffffull)
        return false;
    ev.has_ns   = true;
    ev.ns       = static_cast<int64_t>(ns);
    ev.pid_kind = pid_style::decimal;
    ev.text_pid = static_cast<uint32_t>(pid);
    return true;
}

// "@<page hex>(<hex>)": the hex in parentheses is npages or (faults) the node.
bool
take_page_paren(cursor& c, uint64_t& inside)
{
    uint64_t page = 0;
    return c.take_char('@') && c.take_hex(page) && c.take_char('(') && c.take_hex(inside) &&
           c.take_char(')');
}

bool
parse_migrate(cursor& c, parsed_event& ev)
{
    uint64_t npages = 0;
    uint32_t from   = 0;
    uint32_t to     = 0;
    if(!take_ns_pid(c, ev) || !c.take_char(' ') || !take_page_paren(c, npages) ||
       !c.take_char(' ') || !c.take_u32_hex(from) || !c.take_char('-') || !c.take_char('>') ||
       !c.take_u32_hex(to))
        return false;
    add_node(ev, from);
    add_node(ev, to);
    // The GPU doing the migration: the destination, or the source when moving to RAM.
    ev.has_route_node = true;
    ev.route_node     = (to != 0) ? to : from;
    if(ev.id == abi::event_migrate_start)
    {
        // Prefetch and preferred locations name nodes too (optional for routing).
        uint32_t prefetch  = 0;
        uint32_t preferred = 0;
        if(c.take_char(' ') && c.take_u32_hex(prefetch) && c.take_char(':') &&
           c.take_u32_hex(preferred))
        {
            add_node(ev, prefetch);
            add_node(ev, preferred);
        }
    }
    return true;
}

bool
parse_fault(cursor& c, parsed_event& ev)
{
    uint64_t node = 0;
    if(!take_ns_pid(c, ev) || !c.take_char(' ') || !take_page_paren(c, node) ||
       node > 0xffffffffull)
        return false;
    ev.has_route_node = true;
    ev.route_node     = static_cast<uint32_t>(node);
    add_node(ev, ev.route_node);
    return true;
}

bool
parse_queue(cursor& c, parsed_event& ev)
{
    uint32_t node = 0;
    if(!take_ns_pid(c, ev) || !c.take_char(' ') || !c.take_u32_hex(node)) return false;
    ev.has_route_node = true;
    ev.route_node     = node;
    add_node(ev, node);
    return true;
}

bool
parse_unmap(cursor& c, parsed_event& ev)
{
    uint64_t npages = 0;
    uint32_t node   = 0;
    if(!take_ns_pid(c, ev) || !c.take_char(' ') || !take_page_paren(c, npages) ||
       !c.take_char(' ') || !c.take_u32_hex(node))
        return false;
    ev.has_route_node = true;
    ev.route_node     = node;
    add_node(ev, node);
    return true;
}

// VMFAULT "<pid hex>:<task>", PROCESS_START/END "<pid hex> <task>".
void
parse_hex_pid(cursor& c, parsed_event& ev, char separator)
{
    uint64_t pid   = 0;
    span     where = {};
    if(c.take_hex(pid, &where) && pid <= 0xffffffffull && (c.at_end() || c.take_char(separator)))
    {
        ev.pid_kind = pid_style::hex;
        ev.text_pid = static_cast<uint32_t>(pid);
        ev.pid_span = where;
    }
}

// "00" to "99": two digits per division when formatting.
struct digit_pairs
{
    char text[200];
    constexpr digit_pairs() : text{}
    {
        for(int i = 0; i < 100; ++i)
        {
            text[2 * i]     = static_cast<char>('0' + i / 10);
            text[2 * i + 1] = static_cast<char>('0' + i % 10);
        }
    }
};
constexpr digit_pairs two_digits{};

// 10^0 .. 10^19 (all within uint64).
struct ten_powers
{
    uint64_t value[20];
    constexpr ten_powers() : value{}
    {
        value[0] = 1;
        for(int i = 1; i < 20; ++i)
            value[i] = value[i - 1] * 10;
    }
};
constexpr ten_powers powers_of_ten{};

// The number of decimal digits of v: log10 from the bit length (1233/4096 ~ log10(2)),
// corrected by one comparison.
unsigned
decimal_digits(uint64_t v)
{
    if(v < 10) return 1;
    const unsigned bits  = 64 - static_cast<unsigned>(__builtin_clzll(v));
    const unsigned guess = (bits * 1233) >> 12;
    return guess + 1 - (v < powers_of_ten.value[guess] ? 1 : 0);
}

// Writes v in decimal at p and returns the end: the length first, then two digits per
// division written backwards in place. The replay formats a timestamp for every line
// (rebase): no temporary buffer, no copy, no append per digit.
char*
write_dec(char* p, uint64_t v)
{
    char* const end = p + decimal_digits(v);
    char*       q   = end;
    while(v >= 100)
    {
        q -= 2;
        std::memcpy(q, two_digits.text + 2 * (v % 100), 2);
        v /= 100;
    }
    if(v >= 10)
        std::memcpy(q - 2, two_digits.text + 2 * v, 2);
    else
        q[-1] = static_cast<char>('0' + v);
    return end;
}

char*
write_hex(char* p, uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    char              buf[8];
    int               n = 0;
    do
    {
        buf[n++] = digits[v & 0xf];
        v >>= 4;
    } while(v != 0);
    while(n > 0)
        *p++ = buf[--n];
    return p;
}

char*
copy_bytes(char* p, std::string_view line, size_t from, size_t to)
{
    std::memcpy(p, line.data() + from, to - from);
    return p + (to - from);
}
} // namespace

int64_t
shift_timestamp(int64_t ns, int64_t offset)
{
    if(ns < 0) return ns; // not a timestamp parse_event gives: left as it is
    // ns >= 0, so ns + offset cannot fall below INT64_MIN; only the top can overflow.
    if(offset > 0 && ns > INT64_MAX - offset) return INT64_MAX;
    int64_t shifted = ns + offset;
    return shifted < 0 ? 0 : shifted;
}

bool
is_profiler_event(uint32_t id)
{
    return id >= abi::event_migrate_start && id <= abi::event_unmap_from_gpu;
}

bool
parse_event(std::string_view line, parsed_event& out)
{
    parsed_event ev;
    cursor       c{line, 0};
    uint64_t     id = 0;
    if(!c.take_hex(id) || !c.take_char(' ')) return false;
    // Ids 1-63 can be enabled by a mask bit; 0 and 64 (ALL_PROCESS) are not events.
    if(id == 0 || id >= abi::event_all_process) return false;
    ev.id = static_cast<uint32_t>(id);

    bool ok = true;
    switch(ev.id)
    {
    case abi::event_migrate_start:
    case abi::event_migrate_end:
        ok = parse_migrate(c, ev);
        break;
    case abi::event_page_fault_start:
    case abi::event_page_fault_end:
        ok = parse_fault(c, ev);
        break;
    case abi::event_queue_eviction:
    case abi::event_queue_restore:
        ok = parse_queue(c, ev);
        break;
    case abi::event_unmap_from_gpu:
        ok = parse_unmap(c, ev);
        break;
    case abi::event_vmfault:
        parse_hex_pid(c, ev, ':');
        break;
    case abi::event_process_start:
    case abi::event_process_end:
        parse_hex_pid(c, ev, ' ');
        break;
    case abi::event_thermal_throttle:
    case abi::event_gpu_pre_reset:
    case abi::event_gpu_post_reset:
        break;
    default:
    {
        // Unknown ids (14 and later): take "<ns> -<pid>" when the line has that shape.
        cursor       probe = c;
        parsed_event shaped;
        if(take_ns_pid(probe, shaped))
        {
            ev.has_ns   = true;
            ev.ns       = shaped.ns;
            ev.ns_span  = shaped.ns_span;
            ev.pid_kind = pid_style::decimal;
            ev.text_pid = shaped.text_pid;
            ev.pid_span = shaped.pid_span;
        }
        break;
    }
    }
    if(!ok) return false;
    out = ev;
    return true;
}

namespace
{
// Moves the cursor past the next `c` (false when there is none).
bool
skip_past(cursor& c, char target)
{
    if(c.at_end()) return false;
    const void* at = std::memchr(c.text.data() + c.pos, target, c.text.size() - c.pos);
    if(at == nullptr) return false;
    c.pos = static_cast<size_t>(static_cast<const char*>(at) - c.text.data()) + 1;
    return true;
}
} // namespace

bool
parse_routing_fields(std::string_view line, parsed_event& out)
{
    parsed_event ev;
    cursor       c{line, 0};
    uint64_t     id = 0;
    if(!c.take_hex(id) || !c.take_char(' ') || id < abi::event_migrate_start ||
       id > abi::event_unmap_from_gpu)
        return parse_event(line, out);
    ev.id = static_cast<uint32_t>(id);
    if(!take_ns_pid(c, ev) || !c.take_char(' ')) return false;
    uint32_t node = 0;
    switch(ev.id)
    {
    case abi::event_migrate_start:
    case abi::event_migrate_end:
    {
        // "@<page>(<npages>) <from>-><to>": the destination, or the source when moving to RAM.
        uint32_t from = 0;
        if(!skip_past(c, ')') || !c.take_char(' ') || !c.take_u32_hex(from) || !c.take_char('-') ||
           !c.take_char('>') || !c.take_u32_hex(node))
            return false;
        if(node == 0) node = from;
        break;
    }
    case abi::event_page_fault_start:
    case abi::event_page_fault_end:
        // "@<page>(<node>)"
        if(!skip_past(c, '(') || !c.take_u32_hex(node)) return false;
        break;
    case abi::event_queue_eviction:
    case abi::event_queue_restore:
        if(!c.take_u32_hex(node)) return false;
        break;
    default: // unmap: "@<page>(<npages>) <node>"
        if(!skip_past(c, ')') || !c.take_char(' ') || !c.take_u32_hex(node)) return false;
        break;
    }
    ev.has_route_node = true;
    ev.route_node     = node;
    out               = ev;
    return true;
}

uint32_t
delivery_pid(const parsed_event& ev, uint32_t text_pid_after_rewrite)
{
    // The kernel passes pid 0 for these although VMFAULT and PROCESS_* print one.
    return ev.pid_kind == pid_style::decimal ? text_pid_after_rewrite : 0;
}

std::string
rewrite_line(std::string_view line, const parsed_event& ev, const rewrite_rule& rule,
             uint32_t& out_pid)
{
    std::string out;
    rewrite_line_into(out, line, ev, rule, out_pid);
    return out;
}

void
rewrite_line_into(std::string& out, std::string_view line, const parsed_event& ev,
                  const rewrite_rule& rule, uint32_t& out_pid)
{
    out.resize(line.size() + rewrite_growth);
    out.resize(rewrite_line_to(out.data(), line, ev, rule, out_pid));
}

namespace
{
// The six digits of low (below 10^6), as three pairs.
inline char*
write_six_digits(char* p, uint32_t low)
{
    std::memcpy(p, two_digits.text + 2 * (low / 10000), 2);
    std::memcpy(p + 2, two_digits.text + 2 * (low / 100 % 100), 2);
    std::memcpy(p + 4, two_digits.text + 2 * (low % 100), 2);
    return p + 6;
}

// A shifted timestamp: its digits above the last six come from the memo while they stay the
// same; the six below are written as three pairs.
char*
write_timestamp(char* p, uint64_t v, rewrite_memo* memo)
{
    constexpr uint64_t million = 1000000;
    if(memo == nullptr || v < million) return write_dec(p, v);
    const uint64_t high = v / million;
    const uint32_t low  = static_cast<uint32_t>(v - high * million);
    if(high != memo->ns_high)
    {
        memo->ns_len  = static_cast<size_t>(write_dec(memo->ns_text, high) - memo->ns_text);
        memo->ns_high = high;
    }
    // A fixed-size copy (out has the room, rewrite_growth): bytes past ns_len are written over
    // by what follows or lie past the message's end.
    std::memcpy(p, memo->ns_text, sizeof(memo->ns_text));
    return write_six_digits(p + memo->ns_len, low);
}

char*
write_pid(char* p, uint32_t pid, pid_style kind, rewrite_memo* memo)
{
    if(memo == nullptr) return kind == pid_style::hex ? write_hex(p, pid) : write_dec(p, pid);
    if(memo->pid_len == 0 || memo->pid != pid || memo->pid_kind != kind)
    {
        char* end      = kind == pid_style::hex ? write_hex(memo->pid_text, pid)
                                                : write_dec(memo->pid_text, pid);
        memo->pid_len  = static_cast<size_t>(end - memo->pid_text);
        memo->pid      = pid;
        memo->pid_kind = kind;
    }
    std::memcpy(p, memo->pid_text, sizeof(memo->pid_text)); // fixed size, as above
    return p + memo->pid_len;
}
} // namespace

size_t
rewrite_line_to(char* out, std::string_view line, const parsed_event& ev, const rewrite_rule& rule,
                uint32_t& out_pid, rewrite_memo* memo)
{
    out_pid = ev.text_pid;
    bool new_pid =
        rule.rewrite_pid && ev.pid_kind != pid_style::none && ev.text_pid == rule.from_pid;
    if(new_pid) out_pid = rule.to_pid;
    bool new_ns = ev.has_ns && rule.ns_offset != 0;

    char*  p   = out;
    size_t pos = 0;
    // ns comes before the pid in every shape that has both.
    if(new_ns)
    {
        p                = copy_bytes(p, line, pos, ev.ns_span.pos);
        const int64_t ns = shift_timestamp(ev.ns, rule.ns_offset);
        if(ns < 0) // only for an ns that parse_event never gives
        {
            *p++ = '-';
            p    = write_dec(p, 0 - static_cast<uint64_t>(ns));
        }
        else
            p = write_timestamp(p, static_cast<uint64_t>(ns), memo);
        pos = ev.ns_span.pos + ev.ns_span.len;
    }
    if(new_pid)
    {
        p   = copy_bytes(p, line, pos, ev.pid_span.pos);
        p   = write_pid(p, out_pid, ev.pid_kind, memo);
        pos = ev.pid_span.pos + ev.pid_span.len;
    }
    p    = copy_bytes(p, line, pos, line.size());
    *p++ = '\n';
    return static_cast<size_t>(p - out);
}

namespace
{
constexpr uint64_t each_byte = 0x0101010101010101ull;

// The high bit of each of the eight bytes that is not '0'..'9' (the others are 0): a byte is
// a digit when its low seven bits are at least '0' and at most '9' and its high bit is clear.
inline uint64_t
non_digit_bytes(uint64_t eight)
{
    const uint64_t low7       = eight & (0x7f * each_byte);
    const uint64_t at_least_0 = low7 + (0x80 - '0') * each_byte;     // no carry: <= 0xcf
    const uint64_t above_9    = low7 + (0x80 - '9' - 1) * each_byte; // no carry: <= 0xc5
    return ~(at_least_0 & ~above_9 & ~eight) & (0x80 * each_byte);
}

// The decimal digits from b[pos] up to the first other byte or n: 1 to 19 of them and at most
// INT64_MAX, as take_dec accepts them; end receives the index after them. Eight bytes at a
// time while the line has them: a whole word of digits in one step, and the digits before
// the first other byte of a word in one more (moved to the word's top, below them zeros).
bool
scan_decimal(const char* b, size_t n, size_t pos, uint64_t& value, size_t& end)
{
    uint64_t v       = 0;
    size_t   at      = pos;
    bool     stopped = false;                       // a byte that is not a digit was found
    while(!stopped && at + 8 <= n && at - pos <= 8) // two words at most: 16 digits
    {
        uint64_t eight = 0;
        std::memcpy(&eight, b + at, sizeof(eight));
        const uint64_t other = non_digit_bytes(eight);
        if(other == 0)
        {
            v = v * 100000000 + eight_digits_value(eight);
            at += 8;
            continue;
        }
        const unsigned digits = static_cast<unsigned>(__builtin_ctzll(other)) / 8;
        if(digits > 0)
        {
            // Borrows of the subtraction run from the other bytes upwards, away from the
            // digits, and are shifted out with them.
            const uint64_t values = (eight - 0x30 * each_byte) << (64 - 8 * digits);
            v = v * powers_of_ten.value[digits] + eight_digit_values_number(values);
            at += digits;
        }
        stopped = true;
    }
    // The rest one byte at a time: the line's last bytes, or digits beyond 16 (a 20th digit
    // refuses the number, so v may wrap only for a number that is refused).
    while(!stopped && at < n && at - pos < 20)
    {
        const unsigned digit = static_cast<unsigned char>(b[at]) - unsigned{'0'};
        if(digit > 9) break;
        v = v * 10 + digit;
        ++at;
    }
    if(at == pos || at - pos > 19 || v > static_cast<uint64_t>(INT64_MAX)) return false;
    value = v;
    end   = at;
    return true;
}

// The first len bytes (at most 16) of a and b are equal; both have 16 bytes readable.
inline bool
same_head(const char* a, const char* b, size_t len)
{
    uint64_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
    std::memcpy(&a0, a, 8);
    std::memcpy(&a1, a + 8, 8);
    std::memcpy(&b0, b, 8);
    std::memcpy(&b1, b + 8, 8);
    const uint64_t m0 = len >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * len)) - 1;
    const uint64_t m1 = len >= 16  ? ~uint64_t{0}
                        : len <= 8 ? 0
                                   : (uint64_t{1} << (8 * (len - 8))) - 1;
    return ((a0 ^ b0) & m0) == 0 && ((a1 ^ b1) & m1) == 0;
}

// scan_decimal of the timestamp at b[pos], through the memo: when the line has the leading
// digits the last timestamp had (as bytes) and then six digits and a byte that is not one,
// only those six are converted. Gives what scan_decimal gives, and remembers the leading
// digits of what it accepts (7 to 19 digits).
bool
scan_timestamp(const char* b, size_t n, size_t pos, rewrite_memo& memo, uint64_t& value,
               size_t& end)
{
    const size_t head = memo.ns_head_len;
    if(head != 0 && pos + 16 <= n && pos + head + 8 <= n &&
       same_head(b + pos, memo.ns_head_text, head))
    {
        uint64_t eight = 0;
        std::memcpy(&eight, b + pos + head, sizeof(eight));
        // Bytes 0-5 digits, byte 6 not one (byte 7: any).
        if((non_digit_bytes(eight) & 0x0080808080808080ull) == 0x0080000000000000ull)
        {
            const uint64_t values = (eight - 0x30 * each_byte) << 16;
            const uint64_t v      = memo.ns_head * 1000000 + eight_digit_values_number(values);
            if(v <= static_cast<uint64_t>(INT64_MAX))
            {
                value = v;
                end   = pos + head + 6;
                return true;
            }
        }
    }
    if(!scan_decimal(b, n, pos, value, end)) return false;
    const size_t digits = end - pos;
    if(digits >= 7 && pos + 16 <= n)
    {
        memo.ns_head_len = digits - 6;
        memo.ns_head     = value / 1000000;
        std::memcpy(memo.ns_head_text, b + pos, 16); // bytes past the head are not compared
    }
    return true;
}

// scan_decimal of the pid at b[pos], through the memo: the digits the last pid had, then ' ',
// are that pid. Gives what scan_decimal gives when the number ends in ' ' (the only end the
// caller accepts), and remembers a pid of 1 to 7 digits that does.
bool
scan_pid(const char* b, size_t n, size_t pos, rewrite_memo& memo, uint64_t& value, size_t& end)
{
    const size_t len = memo.raw_pid_len;
    if(len != 0 && pos + 8 <= n)
    {
        uint64_t eight = 0, known = 0;
        std::memcpy(&eight, b + pos, sizeof(eight));
        std::memcpy(&known, memo.raw_pid_text, sizeof(known));
        // The digits and ' ' (all eight bytes for seven digits).
        const uint64_t mask = len >= 7 ? ~uint64_t{0} : (uint64_t{1} << (8 * (len + 1))) - 1;
        if(((eight ^ known) & mask) == 0)
        {
            value = memo.raw_pid;
            end   = pos + len;
            return true;
        }
    }
    if(!scan_decimal(b, n, pos, value, end)) return false;
    const size_t digits = end - pos;
    if(digits <= 7 && end < n && b[end] == ' ')
    {
        std::memcpy(memo.raw_pid_text, b + pos, digits + 1);
        memo.raw_pid_len = digits;
        memo.raw_pid     = value;
    }
    return true;
}

// The high bit of each of the eight bytes equal to c: exact up to the first such byte (the
// lowest bit set is that byte), which is all the callers use; bits above it may be wrong (a
// borrow of the subtraction runs upwards).
inline uint64_t
bytes_equal_to(uint64_t eight, char c)
{
    const uint64_t x = eight ^ (each_byte * static_cast<unsigned char>(c));
    return (x - each_byte) & ~x & (0x80 * each_byte);
}

// 1 to 8 hex digits from b[at] (at moves past them); false for none and for more than 8
// (which take_u32_hex may still accept, with leading zeros: the general path decides).
// A loop of table look-ups: nodes are a few digits (an eight-byte step costs more here).
bool
scan_hex32(const char* b, size_t n, size_t& at, uint32_t& value)
{
    const size_t start = at;
    uint32_t     v     = 0;
    while(at < n)
    {
        const uint8_t digit = hex_digit_values[static_cast<unsigned char>(b[at])];
        if(digit > 15) break;
        if(at - start == 8) return false;
        v = (v << 4) | digit;
        ++at;
    }
    if(at == start) return false;
    value = v;
    return true;
}

bool
byte_at(const char* b, size_t n, size_t at, char c)
{
    return at < n && b[at] == c;
}

// Where the first byte equal to one of a or b lies among the 16 at p (their index, 16 for
// none): SSE2 where the target has it (every x86-64), else two eight-byte SWAR steps.
inline unsigned
first_of_two(const char* p, char a, char b)
{
#if defined(__SSE2__)
    const __m128i  bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const unsigned hits  = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
         _mm_cmpeq_epi8(bytes, _mm_set1_epi8(a)), _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b)))));
    return hits != 0 ? static_cast<unsigned>(__builtin_ctz(hits)) : 16;
#else
    for(unsigned half = 0; half < 16; half += 8)
    {
        uint64_t eight = 0;
        std::memcpy(&eight, p + half, sizeof(eight));
        if(const uint64_t hits = bytes_equal_to(eight, a) | bytes_equal_to(eight, b))
            return half + static_cast<unsigned>(__builtin_ctzll(hits)) / 8;
    }
    return 16;
#endif
}

// at moves past the next `target` at or after it, before the line's '\n' and n (as skip_past
// in the line alone). Sixteen bytes at a time (readable past n).
bool
skip_past_byte(const char* b, size_t n, size_t& at, char target)
{
    for(size_t i = at; i < n; i += 16)
    {
        const unsigned first = first_of_two(b + i, target, '\n');
        if(first == 16) continue;
        const size_t found = i + first;
        if(found >= n || b[found] != target) return false;
        at = found + 1;
        return true;
    }
    return false;
}

// The node that routes a profiler event, read from b[at] on (just after "-<pid> "), as
// parse_routing_fields reads it.
bool
scan_route_node(uint32_t id, const char* b, size_t n, size_t at, uint32_t& node)
{
    switch(id)
    {
    case abi::event_migrate_start:
    case abi::event_migrate_end:
    {
        // "@<page>(<npages>) <from>-><to>": the destination, or the source when moving to RAM.
        uint32_t from = 0;
        if(!skip_past_byte(b, n, at, ')') || !byte_at(b, n, at, ' ')) return false;
        ++at;
        if(!scan_hex32(b, n, at, from) || !byte_at(b, n, at, '-') || !byte_at(b, n, at + 1, '>'))
            return false;
        at += 2;
        if(!scan_hex32(b, n, at, node)) return false;
        if(node == 0) node = from;
        return true;
    }
    case abi::event_page_fault_start:
    case abi::event_page_fault_end: // "@<page>(<node>)"
        return skip_past_byte(b, n, at, '(') && scan_hex32(b, n, at, node);
    case abi::event_queue_eviction:
    case abi::event_queue_restore: // "<node>"
        return scan_hex32(b, n, at, node);
    default: // unmap: "@<page>(<npages>) <node>"
        if(!skip_past_byte(b, n, at, ')') || !byte_at(b, n, at, ' ')) return false;
        ++at;
        return scan_hex32(b, n, at, node);
    }
}

// Copies the `size` bytes at from (at most 24) to p in one fixed-size copy: p has the
// room (rewrite_growth), from the bytes readable; what lies past size is written over next.
char*
copy_digits(char* p, const char* from, size_t size)
{
    std::memcpy(p, from, 24);
    return p + size;
}

// Copies b[from..] through the line's '\n' to out, sixteen bytes at a time (up to fifteen
// bytes more are written, and read: readable past n). Returns the index of the '\n', or npos
// when it is not before n or the line is longer than max_line.
size_t
copy_through_newline(const char* b, size_t n, size_t from, size_t max_line, char* out)
{
    for(size_t i = from; i < n && i <= max_line; i += 16, out += 16)
    {
        std::memcpy(out, b + i, 16);
        const unsigned first = first_of_two(b + i, '\n', '\n');
        if(first == 16) continue;
        const size_t found = i + first;
        return found < n && found <= max_line ? found : std::string_view::npos;
    }
    return std::string_view::npos;
}
} // namespace

size_t
route_and_rewrite_in_place(const char* b, size_t n, size_t max_line, const rewrite_rule& rule,
                           rewrite_memo& memo, char* out, routed_event& ev, size_t& line_size)
{
    const uint8_t id =
        n > 2 && b[1] == ' ' ? hex_digit_values[static_cast<unsigned char>(b[0])] : uint8_t{0xff};
    if(id < abi::event_migrate_start || id > abi::event_unmap_from_gpu) return 0;
    uint64_t ns      = 0;
    uint64_t pid     = 0;
    size_t   ns_end  = 0;
    size_t   pid_end = 0;
    if(!scan_timestamp(b, n, 2, memo, ns, ns_end) || !byte_at(b, n, ns_end, ' ') ||
       !byte_at(b, n, ns_end + 1, '-') || !scan_pid(b, n, ns_end + 2, memo, pid, pid_end) ||
       pid > 0xffffffffull || !byte_at(b, n, pid_end, ' '))
        return 0;
    uint32_t node = 0;
    if(!scan_route_node(id, b, n, pid_end + 1, node)) return 0;

    const bool new_pid = rule.rewrite_pid && pid == rule.from_pid;
    ev.id              = id;
    ev.route_node      = node;
    ev.ns              = static_cast<int64_t>(ns);
    ev.pid             = new_pid ? rule.to_pid : static_cast<uint32_t>(pid);
    // The message: "<id> ", the timestamp, " -", the pid, the rest of the line and its '\n'.
    char* p = out;
    p[0]    = b[0];
    p[1]    = ' ';
    p += 2;
    if(rule.ns_offset != 0)
    {
        // write_timestamp, its common case (the memo's leading digits) inline.
        constexpr uint64_t million = 1000000;
        const uint64_t     shifted = static_cast<uint64_t>(shift_timestamp(ev.ns, rule.ns_offset));
        const uint64_t     high    = shifted / million;
        if(shifted >= million && high == memo.ns_high)
        {
            std::memcpy(p, memo.ns_text, sizeof(memo.ns_text));
            p = write_six_digits(p + memo.ns_len, static_cast<uint32_t>(shifted - high * million));
        }
        else
            p = write_timestamp(p, shifted, &memo);
    }
    else
        p = copy_digits(p, b + 2, ns_end - 2); // at most 19 digits
    p[0] = ' ';
    p[1] = '-';
    p += 2;
    if(new_pid && memo.pid_len != 0 && memo.pid == ev.pid && memo.pid_kind == pid_style::decimal)
    {
        std::memcpy(p, memo.pid_text, sizeof(memo.pid_text)); // write_pid's common case
        p += memo.pid_len;
    }
    else if(new_pid)
        p = write_pid(p, ev.pid, pid_style::decimal, &memo);
    else
        p = copy_digits(p, b + ns_end + 2, pid_end - ns_end - 2); // at most 10
    const size_t newline = copy_through_newline(b, n, pid_end, max_line, p);
    if(newline == std::string_view::npos) return 0;
    line_size = newline;
    return static_cast<size_t>(p - out) + (newline - pid_end) + 1;
}

size_t
route_and_rewrite(std::string_view line, const rewrite_rule& rule, rewrite_memo& memo, char* out,
                  routed_event& ev)
{
    std::string bytes(line);
    bytes += '\n';
    bytes.append(route_read_slack, '\0');
    size_t       line_size = 0;
    const size_t size = route_and_rewrite_in_place(bytes.data(), line.size() + 1, line.size(), rule,
                                                   memo, out, ev, line_size);
    return line_size == line.size() ? size : 0; // (a '\n' inside: never a reader's line)
}
} // namespace kfd_emu
