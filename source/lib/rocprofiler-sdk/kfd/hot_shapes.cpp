// MIT License - see LICENSE.
//
// The hot shapes in one AVX-512 pass (see hot_shapes.hpp for the steps). What the pass needs
// to know is in two compiled tables, built at compile time from the readable descriptions
// below (they read like parser.hpp's grammar): each id's `layout` (its numbers: where their
// digits go, how they are converted, which event member each fills), picked by the line's
// first byte, and each `shape` (the separators, which of the numbers are present, the
// members the shape fixes), picked once the line's shape is known.
#include "rocprofiler-sdk/kfd/hot_shapes.hpp"

#include "common/kfd_abi.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 headers fill unused lanes from a self-initialized `__Y`, which it then
// reports as used uninitialized wherever an intrinsic is inlined (GCC bug 105593, fixed in
// 13): the warning is about the header, not this file.
#    if !defined(__clang__)
#        pragma GCC diagnostic ignored "-Wuninitialized"
#        pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#    endif
#    include <immintrin.h>
#    define KFD_HOT_SHAPES 1
#    define KFD_AVX512                                                                             \
        __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt")))
#endif

namespace rocprofiler::kfd::hot_shapes
{
namespace
{
using namespace std::literals;

// ---- the shapes ----

enum class radix : uint8_t
{
    dec = 10,
    hex = 16,
};

// One number of an id's layout: its radix, the most digits this path takes (more: the
// general parser decides), and the event member it fills (size 0: a digit that must be '0').
struct field
{
    radix   base;
    uint8_t max_digits; // 1..16; above 8 the number takes two 8-digit lanes
    uint8_t offset;
    uint8_t size; // 8, 4 or 0
};

constexpr uint8_t
member(size_t offset)
{
    return static_cast<uint8_t>(offset);
}

// Limits below the grammar's (19 / 10 decimal digits) keep every number within two lanes
// (a timestamp of 16 digits is 115 days of uptime) or one (a pid of 8 digits is 100 times
// Linux's largest pid); longer ones go to the general parser.
constexpr field timestamp{radix::dec, 16, member(offsetof(event, timestamp)), 8};
constexpr field pid{radix::dec, 8, member(offsetof(event, pid)), 4};
constexpr field page{radix::hex, 16, member(offsetof(event, page)), 8};
constexpr field npages{radix::hex, 16, member(offsetof(event, npages)), 8};
constexpr field node{radix::hex, 8, member(offsetof(event, node)), 4};
constexpr field from_node{radix::hex, 8, member(offsetof(event, from_node)), 4};
constexpr field to_node{radix::hex, 8, member(offsetof(event, to_node)), 4};
constexpr field prefetch_node{radix::hex, 8, member(offsetof(event, prefetch_node)), 4};
constexpr field preferred_node{radix::hex, 8, member(offsetof(event, preferred_node)), 4};
constexpr field trigger{radix::dec, 8, member(offsetof(event, trigger)), 4}; // no sign here
constexpr field error_code{radix::dec, 8, member(offsetof(event, error_code)), 4};
constexpr field zero_digit{radix::dec, 1, 0, 0};

constexpr size_t max_fields = 10; // after the id

// The numbers of an id's lines, in order: its shapes (below) have all of them or the first
// ones. What the pass gathers and converts depends on the id alone, which the line's first
// byte gives long before its shape is known (see parse_shape).
struct layout
{
    uint32_t id;
    field    fields[max_fields];
    size_t   field_count;
    // The numbers are a page range (page, npages): npages >= 1 and page + npages < 2^52.
    bool range;
};

constexpr layout layouts[] = {
    {kfd_abi::event_migrate_start,
     {timestamp, pid, page, npages, from_node, to_node, prefetch_node, preferred_node, trigger},
     9,
     true},
    {kfd_abi::event_migrate_end,
     {timestamp, pid, page, npages, from_node, to_node, trigger, error_code},
     8,
     true},
    {kfd_abi::event_page_fault_start, {timestamp, pid, page, node}, 4, false},
    {kfd_abi::event_page_fault_end, {timestamp, pid, page, node}, 4, false},
    {kfd_abi::event_queue_eviction, {timestamp, pid, node, trigger}, 4, false},
    {kfd_abi::event_queue_restore, {timestamp, pid, node, zero_digit}, 4, false},
    {kfd_abi::event_unmap_from_gpu, {timestamp, pid, page, npages, node, trigger}, 6, true},
};

// A line shape: the line with every number written as 'x' (the id too) and the flag byte as
// '?', how many of its layout's numbers it has, and the event's members that it fixes.
struct shape
{
    uint32_t         id;
    std::string_view pattern;
    size_t           field_count;
    bool             has_error_code = false;
    bool             negate_last    = false; // the last number follows a '-' (as "%d")
    restore_form     restore        = restore_form::not_restore;
    // The '?' byte (the last): `flag_yes` sets the bool member at flag_offset and makes
    // the restore form restore_if_yes, `flag_no` clears it and leaves `restore`.
    uint8_t      flag_offset    = 0;
    char         flag_yes       = 0;
    char         flag_no        = 0;
    restore_form restore_if_yes = restore_form::not_restore;
};

using rf = restore_form;

// Told apart by id, pattern length and whether the line ends in a hex digit.
constexpr shape shapes[] = {
    {kfd_abi::event_migrate_start, "x x -x @x(x) x->x x:x x"sv, 9},
    {kfd_abi::event_migrate_end, "x x -x @x(x) x->x x"sv, 7},                // before 6.13
    {kfd_abi::event_migrate_end, "x x -x @x(x) x->x x x"sv, 8, true},        // 6.13
    {kfd_abi::event_migrate_end, "x x -x @x(x) x->x x -x"sv, 8, true, true}, // -errno
    {kfd_abi::event_page_fault_start, "x x -x @x(x) ?"sv, 4, false, false, rf::not_restore,
     member(offsetof(event, read_fault)), 'R', 'W'},
    {kfd_abi::event_page_fault_end, "x x -x @x(x) ?"sv, 4, false, false, rf::not_restore,
     member(offsetof(event, migrated)), 'M', 'U'},
    {kfd_abi::event_queue_eviction, "x x -x x x"sv, 4},
    {kfd_abi::event_queue_restore, "x x -x x"sv, 3, false, false, rf::bare},
    {kfd_abi::event_queue_restore, "x x -x x ?"sv, 3, false, false, rf::suffix_nul,   // " \0"
     member(offsetof(event, rescheduled)), 'R', '\0', rf::suffix_r},                  // or " R"
    {kfd_abi::event_queue_restore, "x x -x x x"sv, 4, false, false, rf::suffix_zero}, // " 0"
    {kfd_abi::event_unmap_from_gpu, "x x -x @x(x) x x"sv, 6},
};

constexpr size_t layout_count = sizeof(layouts) / sizeof(layouts[0]);
constexpr size_t shape_count  = sizeof(shapes) / sizeof(shapes[0]);

// ---- what the pass reads ----
//
// The numbers' digits are gathered into two registers of eight 8-byte lanes, A and B, each
// lane right-aligned (the last digit in its last byte, zeros before the first). A number of
// up to 8 digits has one lane; a longer one ("long") a lane in A for its digits 9-16 from the
// right and the same lane of B for digits 1-8, so that one multiply-add joins them in A.
// Long numbers take the first lanes; the others follow in A, then in B.
struct alignas(64) compiled_layout
{
    uint8_t field_max_digits[64];   // per boundary byte (field k's end: 2k + 1; 0: the id);
                                    // 0 past the last field, 255 at the starts (even bytes)
    uint8_t  lane_field[2][64];     // per byte of A and B: its field's end byte (2k + 1)
    uint8_t  lane_digit[2][64];     // ... which digit from the right (1: the last)
    uint8_t  lane_max_digit[2][64]; // ... its largest value: 9 (decimal), 15 (hex) or 0
    uint8_t  lane_pair_mul[2][64];  // radix, 1 per byte pair (pmaddubsw)
    int16_t  lane_quad_mul[2][32];  // radix^2, 1 per word pair (pmaddwd)
    uint64_t lane_octet_mul[2][8];  // radix^4 per lane (pmuludq)
    uint64_t join_mul[8];           // per lane of A holding a long number: 10^8 or 1
    uint64_t join_shift[8];         // ... and then << 0 or << 32
    uint64_t value_max[8];          // per lane of the joined values: page numbers < 2^52
    uint64_t value_min[8];          // ... npages >= 1
    uint8_t  out_index[128];        // per byte of the event: its byte of A:B (values)
    uint64_t out_from_values_low;   // event bytes 0-63 taken from the values
    uint64_t out_from_values_high;  // event bytes 64-95
    uint8_t  long_lanes;            // lanes of A that hold a long number
    uint8_t  range_end_lane;        // npages' lane: with the lane before (page) < 2^52
    uint8_t  last_half;             // where the last number is: A (0) or B (1) ...
    uint8_t  last_lane;             // ... and its lane
    uint8_t  id;
};

struct alignas(64) compiled_shape
{
    uint8_t pattern[64]; // the shape as the pass compresses it out of the line
    // The event's bytes that the shape fixes (id, flags, restore form), else 0: [1] when the
    // flag byte is flag_yes, [0] otherwise (the same for a shape without a flag byte).
    uint8_t  out_fixed[2][128];
    uint64_t pattern_care;     // pattern bytes compared (not the flag byte)
    uint8_t  negated_lanes[2]; // lanes of the values and of B to negate
    uint8_t  pattern_length;
    uint8_t  field_count; // with the id
    uint8_t  flag_always; // no flag byte: any last byte will do
    char     flag_yes;
    char     flag_no;
    uint8_t  ends_in_number;
};

// Not constexpr: a table that breaks a rule below stops the build where it calls this.
inline void
table_error(const char*)
{
}

constexpr unsigned
radix_power(radix base, unsigned exponent)
{
    unsigned value = 1;
    for(unsigned i = 0; i < exponent; ++i)
        value *= static_cast<unsigned>(base);
    return value;
}

constexpr void
fill_lane(compiled_layout& c, int half, size_t lane, size_t field_index, const field& f,
          bool high_part)
{
    for(size_t j = 0; j < 8; ++j)
    {
        const size_t byte            = lane * 8 + j;
        c.lane_field[half][byte]     = static_cast<uint8_t>(2 * field_index + 1);
        c.lane_digit[half][byte]     = static_cast<uint8_t>(8 - j + (high_part ? 8 : 0));
        c.lane_max_digit[half][byte] = f.size == 0 ? 0 : static_cast<uint8_t>(f.base) - 1;
        c.lane_pair_mul[half][byte]  = j % 2 == 0 ? static_cast<uint8_t>(f.base) : 1;
    }
    for(size_t q = 0; q < 4; ++q)
        c.lane_quad_mul[half][lane * 4 + q] =
            static_cast<int16_t>(q % 2 == 0 ? radix_power(f.base, 2) : 1);
    c.lane_octet_mul[half][lane] = radix_power(f.base, 4);
}

// Event bytes [offset, offset + size) from the value in byte `source` of A:B onward.
constexpr void
route(compiled_layout& c, uint8_t offset, uint8_t size, size_t source)
{
    for(size_t b = 0; b < size; ++b)
    {
        const size_t dest = offset + b;
        c.out_index[dest] = static_cast<uint8_t>(source + b);
        if(dest < 64)
            c.out_from_values_low |= uint64_t{1} << dest;
        else
            c.out_from_values_high |= uint64_t{1} << (dest - 64);
    }
}

// Page numbers leave room for "<< 12" of page + npages (as in parser.cpp).
constexpr uint64_t page_limit = uint64_t{1} << (64 - kfd_abi::page_shift);

constexpr compiled_layout
compile_layout(const layout& l)
{
    compiled_layout c{};
    // An empty lane: a field past the last one (no digits, so nothing is gathered).
    for(int half = 0; half < 2; ++half)
        for(size_t byte = 0; byte < 64; ++byte)
        {
            c.lane_field[half][byte] = 63;
            c.lane_digit[half][byte] = 1;
        }
    if(l.field_count > max_fields) table_error("too many fields");
    for(size_t byte = 0; byte < 64; byte += 2)
        c.field_max_digits[byte] = 0xFF; // a start: not a length
    c.field_max_digits[1] = 1;           // a one-digit id
    c.id                  = static_cast<uint8_t>(l.id);

    size_t long_count = 0;
    for(size_t k = 0; k < l.field_count; ++k)
        long_count += l.fields[k].max_digits > 8;
    size_t next_a = long_count, next_b = long_count, next_long = 0;
    for(size_t lane = 0; lane < 8; ++lane)
        c.value_max[lane] = ~uint64_t{0};
    for(size_t k = 0; k < l.field_count; ++k)
    {
        const field& f                    = l.fields[k];
        const size_t index                = k + 1;
        c.field_max_digits[2 * index + 1] = f.max_digits;
        if(f.max_digits > 8)
        {
            const size_t lane = next_long++;
            fill_lane(c, 0, lane, index, f, true);
            fill_lane(c, 1, lane, index, f, false);
            c.long_lanes |= static_cast<uint8_t>(1u << lane);
            c.join_mul[lane]   = f.base == radix::dec ? 100000000u : 1u;
            c.join_shift[lane] = f.base == radix::dec ? 0u : 32u;
            route(c, f.offset, f.size, lane * 8);
            if(f.offset == offsetof(event, page)) c.value_max[lane] = page_limit - 1;
            if(f.offset == offsetof(event, npages))
            {
                if(!l.range || lane == 0 || l.fields[k - 1].offset != offsetof(event, page))
                    table_error("npages must follow page in a range layout");
                c.value_max[lane] = page_limit - 1;
                c.value_min[lane] = 1;
                c.range_end_lane  = static_cast<uint8_t>(1u << lane);
            }
            c.last_half = 0;
            c.last_lane = static_cast<uint8_t>(lane);
        }
        else if(next_a < 8)
        {
            fill_lane(c, 0, next_a, index, f, false);
            route(c, f.offset, f.size, next_a * 8);
            c.last_half = 0;
            c.last_lane = static_cast<uint8_t>(next_a++);
        }
        else if(next_b < 8)
        {
            fill_lane(c, 1, next_b, index, f, false);
            route(c, f.offset, f.size, 64 + next_b * 8);
            c.last_half = 1;
            c.last_lane = static_cast<uint8_t>(next_b++);
        }
        else
            table_error("a layout has more numbers than lanes");
    }
    return c;
}

constexpr void
fix(compiled_shape& c, size_t offset, uint32_t value, size_t size)
{
    for(auto& fixed : c.out_fixed)
        for(size_t b = 0; b < size; ++b)
            fixed[offset + b] = static_cast<uint8_t>(value >> (8 * b));
}

constexpr compiled_shape
compile_shape(const shape& s, const layout& l, const compiled_layout& cl)
{
    compiled_shape c{};
    size_t         numbers = 0; // the 'x's after the id's
    for(size_t i = 0; i < s.pattern.size(); ++i)
    {
        const char ch = s.pattern[i];
        c.pattern[i]  = static_cast<uint8_t>(ch == '?' ? 0 : ch);
        if(ch != '?') c.pattern_care |= uint64_t{1} << i;
        if(ch == 'x' && i > 0) ++numbers;
    }
    if(numbers != s.field_count || s.field_count > l.field_count || s.pattern.size() >= 64)
        table_error("a shape's pattern and fields disagree");
    if(s.negate_last)
    {
        if(s.field_count != l.field_count || l.fields[l.field_count - 1].max_digits > 8)
            table_error("only the layout's last number, of one lane, can be negated");
        c.negated_lanes[cl.last_half] = static_cast<uint8_t>(1u << cl.last_lane);
    }
    c.pattern_length = static_cast<uint8_t>(s.pattern.size());
    c.field_count    = static_cast<uint8_t>(s.field_count + 1);
    fix(c, offsetof(event, id), s.id, sizeof(uint32_t));
    fix(c, offsetof(event, has_timestamp), 1, 1);
    fix(c, offsetof(event, has_error_code), s.has_error_code ? 1 : 0, 1);
    fix(c, offsetof(event, restore), static_cast<uint8_t>(s.restore), 1);
    c.flag_always = s.flag_offset == 0 ? 1 : 0;
    if(s.flag_offset != 0)
    {
        c.out_fixed[1][s.flag_offset]            = 1;
        c.out_fixed[1][offsetof(event, restore)] = static_cast<uint8_t>(s.restore_if_yes);
    }
    c.flag_yes       = s.flag_yes;
    c.flag_no        = s.flag_no;
    c.ends_in_number = s.pattern.back() == 'x' ? 1 : 0;
    return c;
}

// Entry 0 of each matches nothing; the others are layouts[] and shapes[] in order.
struct pass_tables
{
    compiled_layout layout_of[layout_count + 1];
    compiled_shape  shape_of[shape_count + 1];
    uint8_t         layout_by_first_byte[256]; // a hot id's digit ('5'..'9', a/A, b/B)
    uint8_t         id_by_first_byte[256];     // ... and its id (0 for any other byte)
    uint8_t         shape_by_key[16][64][2];   // id, pattern length, ends in a hex digit
};

constexpr int
hex_digit_value(int b)
{
    return b >= '0' && b <= '9'   ? b - '0'
           : b >= 'a' && b <= 'f' ? b - 'a' + 10
           : b >= 'A' && b <= 'F' ? b - 'A' + 10
                                  : -1;
}

constexpr pass_tables
compile_all()
{
    pass_tables t{};
    t.shape_of[0].pattern_length = 0xFF; // no line compresses to 255 bytes
    size_t layout_index[16]      = {};
    for(size_t i = 0; i < layout_count; ++i)
    {
        t.layout_of[i + 1]          = compile_layout(layouts[i]);
        layout_index[layouts[i].id] = i + 1;
    }
    for(int b = 0; b < 256; ++b)
    {
        const int digit = hex_digit_value(b);
        t.layout_by_first_byte[b] =
            static_cast<uint8_t>(digit > 0 ? layout_index[static_cast<size_t>(digit)] : 0);
        t.id_by_first_byte[b] = t.layout_by_first_byte[b] != 0 ? static_cast<uint8_t>(digit) : 0;
    }
    for(size_t i = 0; i < shape_count; ++i)
    {
        const size_t l = layout_index[shapes[i].id];
        if(l == 0) table_error("a shape's id has no layout");
        t.shape_of[i + 1] = compile_shape(shapes[i], layouts[l - 1], t.layout_of[l]);
        uint8_t& slot     = t.shape_by_key[shapes[i].id][shapes[i].pattern.size()]
                                      [t.shape_of[i + 1].ends_in_number];
        if(slot != 0) table_error("two shapes have the same key");
        slot = static_cast<uint8_t>(i + 1);
    }
    return t;
}

constexpr pass_tables tables = compile_all();

static_assert(offsetof(compiled_shape, field_count) == offsetof(compiled_shape, pattern_length) + 1,
              "the pass compares the two counts as one 16-bit number (low byte first)");

static_assert(sizeof(event) == 96, "the event is written as 64 + 32 bytes");

#if defined(KFD_HOT_SHAPES)

struct alignas(64) byte_rows
{
    uint8_t iota[64];
    uint8_t iota64[64];
    uint8_t zero_char[64];
    uint8_t ten[64];
    uint8_t case_bit[64];
    uint8_t letter_a[64];
    uint8_t six[64];
    uint8_t x[64];
};

constexpr byte_rows
make_rows()
{
    byte_rows r{};
    for(int i = 0; i < 64; ++i)
    {
        r.iota[i]      = static_cast<uint8_t>(i);
        r.iota64[i]    = static_cast<uint8_t>(64 + i);
        r.zero_char[i] = '0';
        r.ten[i]       = 10;
        r.case_bit[i]  = 0x20;
        r.letter_a[i]  = 'a';
        r.six[i]       = 6;
        r.x[i]         = 'x';
    }
    return r;
}

constexpr byte_rows row_table = make_rows();

// The rows through a pointer the compiler cannot see through: it would rebuild each splatted
// constant on every call (mov + vpbroadcastb) instead of reading it as a memory operand.
KFD_AVX512 inline const byte_rows&
rows_of()
{
    const byte_rows* r = &row_table;
    __asm__("" : "+r"(r));
    return *r;
}

KFD_AVX512 inline __m512i
load(const void* p)
{
    return _mm512_load_si512(p);
}

// 64 bytes of the line (zeros past `present`), their digit values (garbage for non-digits,
// which are never gathered) and which of them are hex digits.
struct classified
{
    __m512i  bytes;
    __m512i  values;
    uint64_t hex;
};

KFD_AVX512 inline classified
classify(const byte_rows& r, const char* p, uint64_t present)
{
    const __m512i ten     = load(r.ten);
    const __m512i bytes   = _mm512_maskz_loadu_epi8(present, p);
    const __m512i decimal = _mm512_sub_epi8(bytes, load(r.zero_char));
    const __m512i letter =
        _mm512_sub_epi8(_mm512_or_si512(bytes, load(r.case_bit)), load(r.letter_a));
    const __mmask64 is_dec    = _mm512_cmplt_epu8_mask(decimal, ten);
    const __mmask64 is_letter = _mm512_cmplt_epu8_mask(letter, load(r.six));
    return {bytes, _mm512_mask_add_epi8(decimal, is_letter, letter, ten),
            static_cast<uint64_t>(is_dec) | static_cast<uint64_t>(is_letter)};
}

// `low` (its first `count` bytes) followed by `high`: for lines of 64 bytes or more, whose
// shapes and positions are compressed out of each 64-byte half.
KFD_AVX512 inline __m512i
append(const byte_rows& r, __m512i low, unsigned count, __m512i high)
{
    const __mmask64 after = ~_bzhi_u64(~uint64_t{0}, count); // bzhi: defined for count 64
    return _mm512_mask_permutexvar_epi8(
        low, after, _mm512_sub_epi8(load(r.iota), _mm512_set1_epi8(static_cast<char>(count))),
        high);
}

// The numbers of lanes `half` (A: 0, B: 1): each lane's digits gathered right-aligned from
// the digit values, then converted (8 digits -> 4 pairs -> 2 quads -> 1 value per lane).
// Flags in `bad` the digits over their lane's largest value (a hex letter in a decimal
// number, a digit other than '0' in a zero_digit field).
template <bool wide>
KFD_AVX512 inline __m512i
convert_lanes(const compiled_layout& l, int half, __m512i ends, __m512i lengths, __m512i values0,
              __m512i values1, __mmask64& bad)
{
    const __m512i   field   = load(l.lane_field[half]);
    const __m512i   digit   = load(l.lane_digit[half]);
    const __m512i   end     = _mm512_permutexvar_epi8(field, ends);
    const __m512i   length  = _mm512_permutexvar_epi8(field, lengths);
    const __mmask64 present = _mm512_cmple_epu8_mask(digit, length);
    const __m512i   index   = _mm512_sub_epi8(end, digit);
    __m512i         digits;
    if constexpr(wide)
        digits = _mm512_maskz_permutex2var_epi8(present, values0, index, values1);
    else
        digits = _mm512_maskz_permutexvar_epi8(present, index, values0);
    bad = _kor_mask64(bad, _mm512_cmpgt_epu8_mask(digits, load(l.lane_max_digit[half])));
    const __m512i pairs = _mm512_maddubs_epi16(digits, load(l.lane_pair_mul[half]));
    const __m512i quads = _mm512_madd_epi16(pairs, load(l.lane_quad_mul[half]));
    return _mm512_add_epi64(_mm512_mul_epu32(quads, load(l.lane_octet_mul[half])),
                            _mm512_srli_epi64(quads, 32));
}

// Lines of 16-63 bytes (narrow: one 64-byte half, the end of the last number at bit <= 63)
// or 64-127 (wide: two halves).
template <bool wide>
KFD_AVX512 inline bool
parse_shape(const char* p, size_t length, event& out) noexcept
{
    // The id's layout from the first byte: what is gathered and converted does not wait for
    // the shape (known only after the classification, a compress and a table look-up).
    const unsigned layout_index = tables.layout_by_first_byte[static_cast<unsigned char>(p[0])];
    if(layout_index == 0) return false; // not a hot id
    const compiled_layout& l = tables.layout_of[layout_index];

    const byte_rows& rows     = rows_of();
    const uint64_t   present0 = wide ? ~uint64_t{0} : _bzhi_u64(~uint64_t{0}, length);
    const uint64_t   present1 = wide ? _bzhi_u64(~uint64_t{0}, length - 64) : 0;
    const classified half0    = classify(rows, p, present0);
    classified       half1{_mm512_setzero_si512(), _mm512_setzero_si512(), 0};
    if constexpr(wide) half1 = classify(rows, p + 64, present1);

    // Runs of hex digits: their first bytes (starts) and the bytes after them (ends).
    const uint64_t hex0 = half0.hex, hex1 = half1.hex;
    const uint64_t prev0 = hex0 << 1, prev1 = (hex1 << 1) | (hex0 >> 63);
    const uint64_t starts0 = hex0 & ~prev0, starts1 = hex1 & ~prev1;
    const uint64_t ends0 = ~hex0 & prev0, ends1 = ~hex1 & prev1;
    // The shape keeps every other byte and each run's first, written as 'x'.
    const uint64_t keep0 = (~hex0 | starts0) & present0, keep1 = (~hex1 | starts1) & present1;

    const __m512i x = load(rows.x);
    __m512i shape = _mm512_maskz_compress_epi8(keep0, _mm512_mask_blend_epi8(hex0, half0.bytes, x));
    // The runs' starts and ends in one compress, interleaved: byte 2k its start, 2k + 1 its end
    // (the bytes past 64 are lost, but a line with over 32 runs fails the count below).
    __m512i  bounds     = _mm512_maskz_compress_epi8(starts0 | ends0, load(rows.iota));
    unsigned shape_size = static_cast<unsigned>(_mm_popcnt_u64(keep0));
    unsigned runs       = static_cast<unsigned>(_mm_popcnt_u64(starts0));
    if constexpr(wide)
    {
        shape =
            append(rows, shape, shape_size,
                   _mm512_maskz_compress_epi8(keep1, _mm512_mask_blend_epi8(hex1, half1.bytes, x)));
        bounds = append(rows, bounds, static_cast<unsigned>(_mm_popcnt_u64(starts0 | ends0)),
                        _mm512_maskz_compress_epi8(starts1 | ends1, load(rows.iota64)));
        shape_size += static_cast<unsigned>(_mm_popcnt_u64(keep1));
        runs += static_cast<unsigned>(_mm_popcnt_u64(starts1));
    }

    // The numbers, by the layout.
    // Each run's length at its end byte (2k + 1 minus 2k, within a 16-byte lane).
    const __m512i ends    = bounds;
    const __m512i lengths = _mm512_sub_epi8(bounds, _mm512_bslli_epi128(bounds, 1));
    // What fails the line, gathered in a mask register (one test at the end).
    __mmask64     bad = _mm512_cmpgt_epu8_mask(lengths, load(l.field_max_digits));
    const __m512i a   = convert_lanes<wide>(l, 0, ends, lengths, half0.values, half1.values, bad);
    __m512i       b   = convert_lanes<wide>(l, 1, ends, lengths, half0.values, half1.values, bad);
    // Long numbers: digits 9-16 (A) * 10^8 + digits 1-8 (B), or hex (A << 32) | B.
    __m512i values = _mm512_mask_add_epi64(
        a, l.long_lanes,
        _mm512_sllv_epi64(_mm512_mul_epu32(a, load(l.join_mul)), load(l.join_shift)), b);

    // The shape: one compare for every separator; the counts exclude a literal 'x' in the
    // line. (The first byte's layout is its id's: the pattern's first 'x' and the id's one
    // digit make the id that byte.)
    const size_t          last     = length - 1;
    const uint64_t        last_hex = (last < 64 ? hex0 >> last : hex1 >> (last - 64)) & 1u;
    const compiled_shape& s =
        tables.shape_of[tables.shape_by_key[l.id][shape_size & 63u][last_hex]];
    bad = _kor_mask64(bad, _mm512_mask_cmpneq_epi8_mask(s.pattern_care, shape, load(s.pattern)));
    // The shape's length and its number count (pattern_length and field_count, adjacent).
    uint16_t expected_counts;
    __builtin_memcpy(&expected_counts, &s.pattern_length, sizeof expected_counts);
    unsigned good = (shape_size | runs << 8) == expected_counts;

    const __m512i zero = _mm512_setzero_si512();
    values             = _mm512_mask_sub_epi64(values, s.negated_lanes[0], zero, values); // as "%d"
    b                  = _mm512_mask_sub_epi64(b, s.negated_lanes[1], zero, b);

    // No branch below: which way each goes is as random as the mix of events (a read or a
    // write fault, a range or not), and a mispredicted branch here throws away the next
    // lines' work that the CPU had started. The flag byte picks the fixed bytes by address.
    const char     flag  = p[length - 1];
    const unsigned yes   = flag == s.flag_yes;
    const uint8_t* fixed = s.out_fixed[yes];
    const __m512i  low   = _mm512_or_si512(
           _mm512_maskz_permutex2var_epi8(l.out_from_values_low, values, load(l.out_index), b),
           load(fixed));
    const __m512i high = _mm512_or_si512(
        _mm512_maskz_permutex2var_epi8(l.out_from_values_high, values, load(l.out_index + 64), b),
        load(fixed + 64));
    auto* bytes = reinterpret_cast<unsigned char*>(&out);
    _mm512_storeu_si512(bytes, low);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(bytes + 64), _mm512_castsi512_si256(high));
    good &= yes | static_cast<unsigned>(flag == s.flag_no) | s.flag_always;
    good &= _kortestz_mask64_u8(bad, bad);

    // As read_page_range / read_fault_address, on the joined values (reading them back from
    // the event would wait for its 64-byte store: no store forwarding into a smaller load):
    // page and npages < 2^52, npages >= 1, page + npages < 2^52 (no overflow: both < 2^52).
    const __m512i  previous = _mm512_alignr_epi64(values, values, 7); // lane i: lane i - 1
    const uint64_t out_of_range =
        static_cast<uint64_t>(_mm512_cmpgt_epu64_mask(values, load(l.value_max))) |
        static_cast<uint64_t>(_mm512_cmplt_epu64_mask(values, load(l.value_min))) |
        static_cast<uint64_t>(
            _mm512_mask_cmpge_epu64_mask(l.range_end_lane, _mm512_add_epi64(values, previous),
                                         _mm512_set1_epi64(static_cast<long long>(page_limit))));
    good &= static_cast<unsigned>(out_of_range == 0);
    __asm__("" : "+r"(good));
    return good != 0;
}

// parse() inlined: the line's length checked, then the narrow or the wide pass.
KFD_AVX512 inline __attribute__((always_inline)) bool
parse_inline(std::string_view line, event& out) noexcept
{
    const size_t length = line.size();
    if(length < min_length || length > max_length) return false;
    return length < 64 ? parse_shape<false>(line.data(), length, out)
                       : parse_shape<true>(line.data(), length, out);
}
#endif
} // namespace

#if defined(KFD_HOT_SHAPES)
KFD_AVX512 __attribute__((flatten)) feed_tally
feed_dispatch(line_splitter& splitter, const char* data, size_t size, event& scratch,
              const event_handlers& handlers, const event_handlers& others) noexcept
{
    feed_tally tally;
    // The lambda is compiled for AVX-512 as this function is, and `flatten` inlines the
    // splitter's loop here and the lambda into it: the pass needs no call, entry or exit per
    // line (a lambda without the target could not take the pass inlined).
    splitter.feed(data, size,
                  [&](std::string_view line) KFD_AVX512
                  {
                      ++tally.lines;
                      // The handler from the line's first byte, known long before the pass's
                      // result (a call target that waits for it is mispredicted late). Only
                      // called when the pass took the line, whose id that byte is.
                      const unsigned char first =
                          line.empty() ? 0 : static_cast<unsigned char>(line[0]);
                      const auto handler = handlers.on_id[tables.id_by_first_byte[first]];
                      if(parse_inline(line, scratch))
                      {
                          ++tally.ok;
                          if(handler) handler(handlers.context, scratch, line);
                      }
                      else
                          tally.ok +=
                              parse_line_dispatch(line, scratch, others) == parse_result::ok;
                  });
    return tally;
}
#else
feed_tally
feed_dispatch(line_splitter&, const char*, size_t, event&, const event_handlers&,
              const event_handlers&) noexcept
{
    return {}; // never called: cpu_supports() is false
}
#endif

bool
cpu_supports() noexcept
{
#if defined(KFD_HOT_SHAPES)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
           __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("popcnt");
#else
    return false;
#endif
}

#if defined(KFD_HOT_SHAPES)
KFD_AVX512 bool
parse(std::string_view line, event& out) noexcept
#else
bool
parse(std::string_view line, event& out) noexcept
#endif
{
#if defined(KFD_HOT_SHAPES)
    return parse_inline(line, out);
#else
    (void)line;
    (void)out;
    return false;
#endif
}
} // namespace rocprofiler::kfd::hot_shapes
