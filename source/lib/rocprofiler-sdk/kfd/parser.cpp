// MIT License - see LICENSE.
//
// Hand-written, bounds-checked parser of the amdkfd SMI event lines (grammar in parser.hpp).
// Every read goes through `cursor`, which never looks past the end of the line: no sscanf,
// no NUL-terminated assumptions, no allocation, no exceptions.
#include "rocprofiler-sdk/kfd/parser.hpp"

#include "common/kfd_abi.hpp"
#include "rocprofiler-sdk/kfd/hot_shapes.hpp"

#include <atomic>
#include <initializer_list>
#include <limits>

#if defined(__SSE2__)
#    include <emmintrin.h> // SSE2: part of every x86-64
#    include <tmmintrin.h> // SSSE3: only in functions marked KFD_SSSE3, chosen at run time
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#    include <immintrin.h> // AVX2: only in functions marked KFD_AVX2, chosen at run time
#    define KFD_HAVE_AVX2 1
#    define KFD_AVX2 __attribute__((target("avx2,bmi,bmi2")))
#endif

// The readers are small and called a dozen times per line: inlined into each body parser,
// a line is parsed without calls (at -O2 GCC would keep them out of line).
#define KFD_PARSER_INLINE inline __attribute__((always_inline))

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

// How numbers are read. Each path is its own instance of the body parsers (the choice is
// folded in at compile time: the hot instance carries no code of the others).
enum class number_path
{
    masked,       // lines of 16 to 127 bytes: classified at once (SSE2), SWAR conversion
    masked_ssse3, // the same, numbers converted with SSSE3 (pmaddubsw, pmaddwd), when the CPU has
                  // it
    masked_avx2, // the same, classified 32 bytes at a time, VEX-encoded, when the CPU has AVX2+BMI2
    swar,        // eight bytes at a time (other lengths, or no SSE2)
    scalar,      // a byte at a time
};

// Longest line of the masked path, and the bytes of the zero-padded copy it reads from: the
// line, plus the longest read past its end (an 8-byte word at the end of the line; a
// number's later words end inside it), rounded up to whole 16-byte blocks. At most 127
// bytes: then every mask has a bit past the line's end (see digits_at).
constexpr size_t masked_line_max   = 127;
constexpr size_t masked_narrow_max = 63; // the 64-bit-mask instance (see digits_at)
constexpr size_t padded_line_bytes = masked_line_max + 33;
// One bit per byte of the line: 64 bits for lines of at most 63 bytes (most lines: the
// cheaper instance), 128 for the longer ones. The longer ones are built in a 128-bit
// mask as its two words, in registers: the bits at a position are then two
// selects and two shifts (a 128-bit shift costs a dozen instructions and two branches; a
// load of the bits from memory put a load's latency, and a store forwarding that fails for
// the later fields, on every field's critical path: 2-3x the narrow instance per line).
struct wide_words
{
    // Bit i of `low` (i < 64) or of `high` (i - 64) set when byte i of the line is not a
    // digit; the bits past the line's end are set.
    uint64_t low  = 0;
    uint64_t high = 0;
};

// A read position inside one line. Every accessor checks the end first. `path` picks the
// number readers (see number_path), which tests run on the same inputs and compare.
constexpr bool
is_masked(number_path p)
{
    return p == number_path::masked || p == number_path::masked_ssse3 ||
           p == number_path::masked_avx2;
}

// The paths that convert numbers with SSSE3 from the line's digit values (`nibbles`).
constexpr bool
uses_nibbles(number_path p)
{
    return p == number_path::masked_ssse3 || p == number_path::masked_avx2;
}

template <number_path P, typename Mask = uint64_t> struct cursor_of
{
    static constexpr number_path path = P;
    using mask_type                   = Mask;

    std::string_view text;
    size_t           position = 0;
    // Masked path: bit i set when byte i of the line is not a hex (decimal) digit, and for
    // every bit past the line's end: a number at i ends at the next set bit (stored
    // complemented: one instruction less per number). `padded` is a copy of the line
    // followed by zeros, so that every number and separator is read with plain loads (no
    // end checks).
    Mask        not_hex = {};
    Mask        not_dec = {};
    const char* padded  = nullptr;
    // SSSE3/AVX2 paths: byte i is the value of byte i of the line read as a hex digit (its
    // low nibble, + 9 for a letter), computed for the whole line during the classification,
    // so that converting a number is an AND and two multiply-adds (garbage for non-digits,
    // which the conversion never selects).
    const unsigned char* nibbles = nullptr;

    KFD_PARSER_INLINE bool   at_end() const { return position >= text.size(); }
    KFD_PARSER_INLINE char   peek() const { return at_end() ? '\0' : text[position]; }
    KFD_PARSER_INLINE size_t remaining() const { return text.size() - position; }
    // The bytes from the cursor to the line's end. Built by hand: `text.substr` is an
    // out-of-line call on `&text`, which made the whole cursor live in memory (a store of
    // the position after every field and separator).
    KFD_PARSER_INLINE std::string_view rest() const
    {
        return std::string_view{text.data() + position, text.size() - position};
    }

    // Consumes `c` (never NUL) when it is the next byte. The padded copy reads NUL past the
    // line's end, which never matches.
    KFD_PARSER_INLINE bool skip(char c)
    {
        if constexpr(is_masked(P))
        {
            if(padded[position] != c) return false;
        }
        else if(at_end() || text[position] != c)
            return false;
        ++position;
        return true;
    }

    // Consumes `yes` or `no` (neither NUL), setting `flag` to which: without a branch on
    // the flag, whose value (a read or a write fault, a page migrated or not) the branch
    // predictor cannot guess.
    KFD_PARSER_INLINE bool skip_flag(char yes, char no, bool& flag)
    {
        char next = '\0';
        if constexpr(is_masked(P))
            next = padded[position];
        else
            next = peek();
        flag        = next == yes;
        unsigned ok = static_cast<unsigned>(next == yes) | static_cast<unsigned>(next == no);
        // A value the compiler cannot split back into two branches (GCC branches on each
        // compare otherwise, the second one data-dependent).
        __asm__("" : "+r"(ok));
        position += ok;
        return ok != 0;
    }

    // Consumes `a` then `b` (neither NUL): one 2-byte compare on the padded copy.
    KFD_PARSER_INLINE bool skip2(char a, char b)
    {
        if constexpr(is_masked(P))
        {
            uint16_t next = 0, want = 0;
            std::memcpy(&next, padded + position, 2);
            const char pair[2] = {a, b};
            std::memcpy(&want, pair, 2);
            if(next != want) return false;
            position += 2;
            return true;
        }
        else
            return skip(a) && skip(b);
    }
};

// The number readers: the word-at-a-time ones, or their scalar twins (see cursor::swar).
template <class C> KFD_PARSER_INLINE bool read_hex(C& c, size_t max_digits, uint64_t& value);

// 1 <= n <= max_digits, as one unsigned compare (n = 0 wraps around to the largest value).
KFD_PARSER_INLINE bool
digit_count_ok(unsigned n, size_t max_digits)
{
    return size_t{n} - 1u < max_digits;
}
template <class C>
KFD_PARSER_INLINE bool read_decimal(C& c, size_t max_digits, uint64_t max_value, uint64_t& value);

constexpr int
hex_value(char c)
{
    if(c >= '0' && c <= '9') return c - '0';
    if(c >= 'a' && c <= 'f') return c - 'a' + 10;
    if(c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

constexpr bool
is_decimal_digit(char c)
{
    return c >= '0' && c <= '9';
}

// 1..max_digits hex digits. With at most 16 digits a uint64_t cannot overflow; 32-bit
// fields pass max_digits = 8.
template <class C>
__attribute__((noinline)) bool
read_hex_scalar(C& c, size_t max_digits, uint64_t& value)
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

template <class C>
KFD_PARSER_INLINE bool
read_hex32(C& c, uint32_t& value)
{
    uint64_t wide = 0;
    if(!read_hex(c, hex32_digits, wide)) return false;
    value = static_cast<uint32_t>(wide);
    return true;
}

template <class C>
KFD_PARSER_INLINE bool
read_hex64(C& c, uint64_t& value)
{
    return read_hex(c, hex64_digits, value);
}

// 1..max_digits decimal digits, value <= max_value. 19 digits fit in a uint64_t.
template <class C>
__attribute__((noinline)) bool
read_decimal_scalar(C& c, size_t max_digits, uint64_t max_value, uint64_t& value)
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

// ---- word-at-a-time (SWAR) twins of the two readers above ----
//
// Eight bytes of the line are classified at once: the first byte that is not a digit ends
// the number (found with one count-trailing-zeros, no branch per byte), and the digits are
// converted with a few multiplies and shifts. Bytes past the end of the line read as NUL,
// which is no digit, so a number never runs past the line.

constexpr uint64_t ones  = 0x0101010101010101ull;
constexpr uint64_t highs = 0x8080808080808080ull;

// The 8 bytes of the line at p (first byte in the lowest bits), NUL past its end. Reads
// only inside [begin, end).
KFD_PARSER_INLINE uint64_t
load8(const char* p, const char* begin, const char* end)
{
    uint64_t     word      = 0;
    const size_t remaining = static_cast<size_t>(end - p);
    if(remaining >= 8)
        std::memcpy(&word, p, 8);
    else if(end - begin >= 8 && remaining > 0)
    {
        // The line's last 8 bytes, shifted so that p comes first and zeros follow its end.
        std::memcpy(&word, end - 8, 8);
        word >>= 8 * (8 - remaining);
    }
    else
        for(size_t i = 0; i < remaining; ++i)
            word |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
    return word;
}

// Digits of a run of n bytes at the start of a word: index of the first flagged byte.
KFD_PARSER_INLINE unsigned
run_length(uint64_t flagged)
{
    return flagged == 0 ? 8u : static_cast<unsigned>(__builtin_ctzll(flagged)) / 8u;
}

// The high bit of every byte that is not '0'..'9'. A carry out of a byte >= 0x80 can only
// flag a later byte, which does not move the first flagged one.
KFD_PARSER_INLINE uint64_t
non_decimal_bytes(uint64_t word)
{
    const uint64_t x = word ^ (ones * '0');
    return ((x + ones * 0x76) | x) & highs;
}

// The value of the first n (1..8) decimal digits of word.
KFD_PARSER_INLINE uint64_t
decimal_value(uint64_t word, unsigned n)
{
    uint64_t x = (word ^ (ones * '0')) << (8 * (8 - n)); // later bytes shifted out
    x          = x * 10 + (x >> 8);                      // pairs of digits
    x          = (((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
        32;
    return x;
}

constexpr uint64_t powers_of_ten[9] = {1,      10,      100,      1000,     10000,
                                       100000, 1000000, 10000000, 100000000};

template <class C>
KFD_PARSER_INLINE bool
read_decimal_swar(C& c, size_t max_digits, uint64_t max_value, uint64_t& value)
{
    const char* begin  = c.text.data();
    const char* end    = begin + c.text.size();
    const char* p      = begin + c.position;
    uint64_t    v      = 0;
    size_t      digits = 0;
    while(true)
    {
        const uint64_t word = load8(p + digits, begin, end);
        const unsigned n    = run_length(non_decimal_bytes(word));
        if(digits + n > max_digits) return false; // at most 19: v cannot overflow
        if(n > 0) v = v * powers_of_ten[n] + decimal_value(word, n);
        digits += n;
        if(n < 8) break;
    }
    value = v;
    c.position += digits;
    return digits > 0 && v <= max_value;
}

// The high bit of every byte that is a hex digit; `letters` gets those that are a-f/A-F.
// Each byte's arithmetic stays below 0x100 (bytes >= 0x80 are masked first): no carries.
KFD_PARSER_INLINE uint64_t
hex_digit_bytes(uint64_t word, uint64_t& letters)
{
    const uint64_t ascii  = ~word & highs; // bytes < 0x80
    const uint64_t x      = word & (ones * 0x7F);
    const uint64_t digits = (x + ones * (0x80 - '0')) & ~(x + ones * (0x80 - '9' - 1)) & ascii;
    const uint64_t lower  = x | (ones * 0x20);
    letters = (lower + ones * (0x80 - 'a')) & ~(lower + ones * (0x80 - 'f' - 1)) & ascii;
    return (digits | letters) & highs;
}

// The value of the first n (1..8) hex digits of word.
KFD_PARSER_INLINE uint64_t
hex_value_of(uint64_t word, uint64_t letters, unsigned n)
{
    uint64_t x = (word & (ones * 0x0F)) + (letters >> 7) * 9; // nibbles, first byte first
    x <<= 8 * (8 - n);                                        // later bytes shifted out
    // Pairs of nibbles into the even bytes P0..P3 (P0 the most significant): each byte is
    // 16 * nibble + the next one <= 255, so no carry crosses a byte; the odd bytes are
    // never read again.
    x = (x << 4) + (x >> 8);
    // P0 P1 P2 P3 into one 32-bit value with two independent multiplies: P0 and P2 land at
    // bits 56 and 40, P1 and P3 at 48 and 32; what lands below bit 32 (P0 << 8, P1) is
    // under 2^16 and shifted out, what lands above 63 is cut by the 64-bit product.
    const uint64_t even = x & 0x000000FF000000FFull;         // P0, P2
    const uint64_t odd  = (x >> 16) & 0x000000FF000000FFull; // P1, P3
    return (even * ((uint64_t{1} << 56) + (uint64_t{1} << 8)) + odd * ((uint64_t{1} << 48) + 1)) >>
           32;
}

template <class C>
KFD_PARSER_INLINE bool
read_hex_swar(C& c, size_t max_digits, uint64_t& value)
{
    const char* begin  = c.text.data();
    const char* end    = begin + c.text.size();
    const char* p      = begin + c.position;
    uint64_t    v      = 0;
    size_t      digits = 0;
    while(true)
    {
        const uint64_t word    = load8(p + digits, begin, end);
        uint64_t       letters = 0;
        const unsigned n       = run_length(~hex_digit_bytes(word, letters) & highs);
        if(digits + n > max_digits) return false; // at most 16: v cannot overflow
        if(n > 0) v = (n == 8 ? v << 32 : v << (4 * n)) | hex_value_of(word, letters, n);
        digits += n;
        if(n < 8) break;
    }
    value = v;
    c.position += digits;
    return digits > 0;
}

// ---- SIMD: the whole line classified at once (SSE2), then SWAR conversion ----

#if defined(__SSE2__)
// The byte constants of the classification, 32 of each (the 16-byte version reads the
// first 16).
struct classify_constants
{
    struct row
    {
        alignas(32) unsigned char b[32];
    };
    row to_digits;     // b + (0x80 - '0'): '0'..'9' become -128..-119
    row to_letters;    // (b | 0x20) + (0x80 - 'a'): letters become -128..-123
    row digit_limit;   // -128 + 10
    row letter_limit;  // -128 + 6
    row case_bit;      // 0x20
    row low_nibble;    // 0x0F
    row letter_adjust; // 9: 'a'/'A' (low nibble 1) is 10
};

constexpr classify_constants::row
splat(unsigned char value)
{
    classify_constants::row r{};
    for(auto& b : r.b)
        b = value;
    return r;
}

constexpr classify_constants classify_table = {
    splat(0x80 - '0'), splat(0x80 - 'a'), splat(0x80 + 10), splat(0x80 + 6),
    splat(0x20),       splat(0x0F),       splat(9)};

// The table, through a pointer the compiler cannot see through: with AVX2, GCC rebuilds
// every splatted constant it knows (mov + vmovq + vpbroadcast: three instructions each, on
// every call) instead of reading it from memory as an operand.
KFD_PARSER_INLINE const classify_constants&
constants()
{
    const classify_constants* k = &classify_table;
    __asm__("" : "+r"(k));
    return *k;
}

KFD_PARSER_INLINE __m128i
row16(const classify_constants::row& r)
{
    return _mm_load_si128(reinterpret_cast<const __m128i*>(r.b));
}

// Hex-digit and decimal-digit bitmaps of 16 bytes, and each byte's value as a hex digit.
KFD_PARSER_INLINE void
classify16(__m128i bytes, const classify_constants& k, uint32_t& hex, uint32_t& dec,
           __m128i& nibbles)
{
    // b - '0' < 10 and (b | 0x20) - 'a' < 6 (unsigned), as signed compares: adding
    // 0x80 - '0' (mod 256) maps exactly '0'..'9' to -128..-119.
    const __m128i digit =
        _mm_cmplt_epi8(_mm_add_epi8(bytes, row16(k.to_digits)), row16(k.digit_limit));
    const __m128i lower = _mm_or_si128(bytes, row16(k.case_bit));
    const __m128i letter =
        _mm_cmplt_epi8(_mm_add_epi8(lower, row16(k.to_letters)), row16(k.letter_limit));
    dec     = static_cast<uint32_t>(_mm_movemask_epi8(digit));
    hex     = static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(digit, letter)));
    nibbles = _mm_add_epi8(_mm_and_si128(bytes, row16(k.low_nibble)),
                           _mm_and_si128(letter, row16(k.letter_adjust)));
}

// The classified line: a zero-padded copy and, for the SSSE3/AVX2 paths, its digit values,
// both padded_line_bytes long (readable 16 bytes past every position of the line); the
// digit values also have 16 zero bytes before the line (a conversion loads the 16 bytes
// that end at a number's end).
constexpr size_t nibbles_front = 16;

struct line_copy
{
    alignas(32) char bytes[padded_line_bytes];
    alignas(32) unsigned char nibbles[nibbles_front + padded_line_bytes];
};

// The bits of a block of up to 32 bytes at `offset` of the line into a mask. The wide
// instance's blocks may straddle its two words: a block's offset is a constant or follows
// from the line's length, so the branch is predicted.
KFD_PARSER_INLINE void
add_bits(uint64_t& mask, uint32_t bits, size_t offset)
{
    mask |= uint64_t{bits} << offset;
}

KFD_PARSER_INLINE void
add_bits(wide_words& mask, uint32_t bits, size_t offset)
{
    const uint64_t value = bits;
    if(offset >= 64)
        mask.high |= value << (offset - 64);
    else
    {
        mask.low |= value << offset;
        mask.high |= (value >> 1) >> (63 - offset); // value >> (64 - offset), for 0 too
    }
}

// The complement of a mask built by add_bits: the bytes that are not digits, and every bit
// past the line.
KFD_PARSER_INLINE void
store_complement(uint64_t& mask, uint64_t bits)
{
    mask = ~bits;
}

KFD_PARSER_INLINE void
store_complement(wide_words& mask, wide_words bits)
{
    mask.low  = ~bits.low;
    mask.high = ~bits.high;
}

// One classified 16-byte block at `offset` of the line into the cursor's masks and copies.
template <class C>
KFD_PARSER_INLINE void
classify_block16(const char* p, size_t offset, const classify_constants& k, line_copy& copy,
                 typename C::mask_type& hex, typename C::mask_type& dec)
{
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + offset));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(copy.bytes + offset), block);
    uint32_t h = 0, d = 0;
    __m128i  nibbles;
    classify16(block, k, h, d, nibbles);
    if constexpr(uses_nibbles(C::path))
        _mm_storeu_si128(reinterpret_cast<__m128i*>(copy.nibbles + nibbles_front + offset),
                         nibbles);
    add_bits(hex, h, offset);
    add_bits(dec, d, offset);
}

// The end of the classification: zeros after the line in the copy (32 bytes: the longest
// read past the end), and the cursor pointed at the copy.
template <class C>
KFD_PARSER_INLINE void
finish_classification(C& c, line_copy& copy, typename C::mask_type hex, typename C::mask_type dec)
{
    const size_t  size = c.text.size();
    const __m128i zero = _mm_setzero_si128();
    _mm_storeu_si128(reinterpret_cast<__m128i*>(copy.bytes + size), zero);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(copy.bytes + size + 16), zero);
    if constexpr(uses_nibbles(C::path))
    {
        // never selected by a conversion, but read: defined bytes for the memory checkers
        _mm_storeu_si128(reinterpret_cast<__m128i*>(copy.nibbles), zero);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(copy.nibbles + nibbles_front + size), zero);
        c.nibbles = copy.nibbles + nibbles_front;
    }
    store_complement(c.not_hex, hex);
    store_complement(c.not_dec, dec);
    c.padded = copy.bytes;
}

// For a line of 16 to masked_line_max bytes: fills the cursor's masks and copies, in 16-byte
// blocks from the start, the last one ending at the line's end (it overlaps the one before;
// the same bytes give the same bits). Never reads outside the line.
template <class C>
KFD_PARSER_INLINE void
classify_line(C& c, line_copy& copy)
{
    const size_t size             = c.text.size();
    const char*  p                = c.text.data();
    using line_mask               = typename C::mask_type;
    line_mask                 hex = {}, dec = {};
    size_t                    offset = 0;
    const classify_constants& k      = constants();
    for(; offset + 16 <= size; offset += 16)
        classify_block16<C>(p, offset, k, copy, hex, dec);
    if(offset < size) classify_block16<C>(p, size - 16, k, copy, hex, dec);
    finish_classification(c, copy, hex, dec);
}
#endif

#if defined(KFD_HAVE_AVX2)
// classify16 for 32 bytes (AVX2).
KFD_AVX2 inline __m256i
row32(const classify_constants::row& r)
{
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(r.b));
}

KFD_AVX2 inline void
classify_block32(const char* p, size_t offset, const classify_constants& k, line_copy& copy,
                 uint32_t& hex, uint32_t& dec)
{
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + offset));
    const __m256i digit =
        _mm256_cmpgt_epi8(row32(k.digit_limit), _mm256_add_epi8(bytes, row32(k.to_digits)));
    const __m256i lower = _mm256_or_si256(bytes, row32(k.case_bit));
    const __m256i letter =
        _mm256_cmpgt_epi8(row32(k.letter_limit), _mm256_add_epi8(lower, row32(k.to_letters)));
    const __m256i nibbles = _mm256_add_epi8(_mm256_and_si256(bytes, row32(k.low_nibble)),
                                            _mm256_and_si256(letter, row32(k.letter_adjust)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(copy.bytes + offset), bytes);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(copy.nibbles + nibbles_front + offset), nibbles);
    dec = static_cast<uint32_t>(_mm256_movemask_epi8(digit));
    hex = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_or_si256(digit, letter)));
}

// classify_line with 32-byte blocks: a line of 32 bytes or more takes one block per 32 bytes
// plus one ending at its end (most kernel lines: two blocks); a shorter one the two 16-byte
// blocks that cover it (a 32-byte load would read past the line).
template <class C>
KFD_AVX2 inline void
classify_line_avx2(C& c, line_copy& copy)
{
    const size_t size             = c.text.size();
    const char*  p                = c.text.data();
    using line_mask               = typename C::mask_type;
    line_mask                 hex = {}, dec = {};
    const classify_constants& k = constants();
    if(size < 32)
    {
        classify_block16<C>(p, 0, k, copy, hex, dec);
        classify_block16<C>(p, size - 16, k, copy, hex, dec);
    }
    else
    {
        uint32_t h = 0, d = 0;
        size_t   offset = 0;
        for(; offset + 32 <= size; offset += 32)
        {
            classify_block32(p, offset, k, copy, h, d);
            add_bits(hex, h, offset);
            add_bits(dec, d, offset);
        }
        if(offset < size)
        {
            classify_block32(p, size - 32, k, copy, h, d);
            add_bits(hex, h, size - 32);
            add_bits(dec, d, size - 32);
        }
    }
    finish_classification(c, copy, hex, dec);
}
#endif

// 8 bytes of a padded line copy (zeros past the line's end are part of the copy).
KFD_PARSER_INLINE uint64_t
load8_padded(const char* p)
{
    uint64_t word = 0;
    std::memcpy(&word, p, 8);
    return word;
}

// Digits in a row at the cursor, from a mask of the bytes that are not digits (bits past the
// line are set). The 64-bit instance takes lines of at most 63 bytes (masked_narrow_max):
// the position is at most 63 and bit 63 is past the line's end, so the shift is defined and
// `rest` is never 0 (one shift, one count, no branch).
KFD_PARSER_INLINE unsigned
digits_at(uint64_t not_digit, size_t position)
{
    const uint64_t rest = not_digit >> position;
    return static_cast<unsigned>(__builtin_ctzll(rest));
}

// The same from two words, for lines of 64 to 127 bytes (the position is at most 127): the
// 63 bits from the position, from the word it is in and the next one (all ones past
// `high`: the line's end), and bit 63 set: more than the longest number, 19 digits; a
// longer run reads as 63, either way over every limit. Two selects and two shifts, no
// branch and no load on the field's critical path.
KFD_PARSER_INLINE unsigned
digits_at(wide_words not_digit, size_t position)
{
    const bool     upper  = position >= 64;
    const uint64_t first  = upper ? not_digit.high : not_digit.low;
    const uint64_t second = upper ? ~uint64_t{0} : not_digit.high;
    const unsigned shift  = static_cast<unsigned>(position) & 63u;
    // (second << 1) << (63 - shift): second's bits after first's, defined for shift 0 too.
    const uint64_t rest = (first >> shift) | ((second << 1) << (63u - shift)) | (uint64_t{1} << 63);
    return static_cast<unsigned>(__builtin_ctzll(rest));
}

// The value of the first n (1..8) hex digits of word, known to be hex digits: a letter is
// the only digit with bit 6 set ('A'-'F', 'a'-'f' are 0x4x/0x6x).
KFD_PARSER_INLINE uint64_t
known_hex_value(uint64_t word, unsigned n)
{
    const uint64_t letters = (word >> 6) & ones;
    return hex_value_of(word, letters << 7, n);
}

template <class C>
KFD_PARSER_INLINE bool
read_hex_masked(C& c, size_t max_digits, uint64_t& value)
{
    const unsigned n = digits_at(c.not_hex, c.position);
    if(!digit_count_ok(n, max_digits)) return false; // max_digits <= 16
    const char* p = c.padded + c.position;
    if(n <= 8)
        value = known_hex_value(load8_padded(p), n);
    else
        value = (known_hex_value(load8_padded(p), 8) << (4 * (n - 8))) |
                known_hex_value(load8_padded(p + 8), n - 8);
    c.position += n;
    return true;
}

template <class C>
KFD_PARSER_INLINE bool
read_decimal_masked(C& c, size_t max_digits, uint64_t max_value, uint64_t& value)
{
    const unsigned n = digits_at(c.not_dec, c.position);
    if(!digit_count_ok(n, max_digits)) return false; // max_digits <= 19: no overflow
    const char* p = c.padded + c.position;
    uint64_t    v = 0;
    if(n <= 8)
        v = decimal_value(load8_padded(p), n);
    else if(n <= 16)
        v = decimal_value(load8_padded(p), 8) * powers_of_ten[n - 8] +
            decimal_value(load8_padded(p + 8), n - 8);
    else
        v = (decimal_value(load8_padded(p), 8) * powers_of_ten[8] +
             decimal_value(load8_padded(p + 8), 8)) *
                powers_of_ten[n - 16] +
            decimal_value(load8_padded(p + 16), n - 16);
    value = v;
    c.position += n;
    return v <= max_value;
}

// ---- SSSE3: a number of up to 16 digits converted in one SIMD sequence ----
//
// The number's digits, at most 16, are moved to the end of a 16-byte register (pshufb with
// a per-length control that zeroes the bytes before them: leading zeros), then pairs, quads
// and octets of digits are combined with multiply-adds. No branch on the length, no loop.
// The code is compiled for SSSE3 only in the functions marked KFD_SSSE3, which run only when
// the CPU has it (see parse_line); GCC inlines them only into the SSSE3 line instance.
#if defined(__SSE2__) && defined(__GNUC__)
#    define KFD_SSSE3 __attribute__((target("ssse3")))

// A number's digit values, right-aligned in 16 bytes with zeros before them (leading
// zeros), without a shuffle: the 16 bytes that end at the number's end, AND the 16 bytes of
// conversion_constants::keep_last at offset n (16 - n zero bytes, then n bytes 0xFF). The digit
// values have 16 defined bytes before the line (line_copy::nibbles), so the load stays inside them.
struct keep_last_table
{
    alignas(32) unsigned char mask[32];
};

constexpr keep_last_table
make_keep_last()
{
    keep_last_table t{};
    for(int j = 16; j < 32; ++j)
        t.mask[j] = 0xFF;
    return t;
}

// The conversions' constants, read through a pointer the compiler cannot see through, like
// the classification's: it would load each into a register before every use (an
// instruction per constant and number) instead of folding the load into the instruction.
struct conversion_constants
{
    struct row
    {
        alignas(16) unsigned char b[16];
    };
    row hex_pairs;  // 16, 1 per byte pair
    row hex_quads;  // 256, 1 per 16-bit pair
    row hex_gather; // the four 16-bit groups, most significant first, in little-endian order
    row dec_pairs;  // 10, 1 per byte pair
    row dec_quads;  // 100, 1 per 16-bit pair
    row dec_octets; // 10000, 1 per 16-bit pair
    keep_last_table keep_last;
};

constexpr conversion_constants::row
repeat(std::initializer_list<unsigned char> pattern)
{
    conversion_constants::row r{};
    for(size_t i = 0; i < 16; ++i)
        r.b[i] = pattern.begin()[i % pattern.size()];
    return r;
}

constexpr conversion_constants conversion_table = {
    repeat({16, 1}),
    repeat({0x00, 0x01, 0x01, 0x00}),
    repeat({12, 13, 8, 9, 4, 5, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}),
    repeat({10, 1}),
    repeat({100, 0, 1, 0}),
    repeat({0x10, 0x27, 1, 0}),
    make_keep_last()};

KFD_PARSER_INLINE const conversion_constants&
conversion()
{
    const conversion_constants* k = &conversion_table;
    __asm__("" : "+r"(k));
    return *k;
}

KFD_SSSE3 inline __m128i
load_row(const conversion_constants::row& r)
{
    return _mm_load_si128(reinterpret_cast<const __m128i*>(r.b));
}

KFD_SSSE3 inline __m128i
right_aligned_digits(const conversion_constants& k, const unsigned char* end, unsigned n)
{
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(end - 16));
    return _mm_and_si128(bytes,
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(k.keep_last.mask + n)));
}

// The value of the n (1..16) hex digits whose values (cursor::nibbles) end at `end`.
KFD_SSSE3 inline uint64_t
hex_value_ssse3(const unsigned char* end, unsigned n)
{
    const conversion_constants& k       = conversion();
    const __m128i               aligned = right_aligned_digits(k, end, n);
    // 16 * first + second per byte pair, then 256 * first + second per word pair: four
    // 16-bit groups, the most significant first, gathered into little-endian order.
    const __m128i pairs = _mm_maddubs_epi16(aligned, load_row(k.hex_pairs));
    const __m128i quads = _mm_madd_epi16(pairs, load_row(k.hex_quads));
    return static_cast<uint64_t>(
        _mm_cvtsi128_si64(_mm_shuffle_epi8(quads, load_row(k.hex_gather))));
}

// The value of the n (1..16) decimal digits whose values (cursor::nibbles: a decimal
// digit's low nibble) end at `end`.
KFD_SSSE3 inline uint64_t
decimal_value_ssse3(const unsigned char* end, unsigned n)
{
    const conversion_constants& k       = conversion();
    const __m128i               aligned = right_aligned_digits(k, end, n);
    const __m128i               pairs  = _mm_maddubs_epi16(aligned, load_row(k.dec_pairs)); // <= 99
    const __m128i               quads  = _mm_madd_epi16(pairs, load_row(k.dec_quads)); // <= 9999
    const __m128i               packed = _mm_packs_epi32(quads, quads); // no saturation
    const __m128i               octets = _mm_madd_epi16(packed, load_row(k.dec_octets));
    const uint64_t              both   = static_cast<uint64_t>(_mm_cvtsi128_si64(octets));
    return (both & 0xFFFFFFFFull) * 100000000ull + (both >> 32);
}

template <class C>
KFD_PARSER_INLINE bool
read_hex_ssse3(C& c, size_t max_digits, uint64_t& value)
{
    const unsigned n = digits_at(c.not_hex, c.position);
    if(!digit_count_ok(n, max_digits)) return false; // max_digits <= 16
    value = hex_value_ssse3(c.nibbles + c.position + n, n);
    c.position += n;
    return true;
}

template <class C>
KFD_PARSER_INLINE bool
read_decimal_ssse3(C& c, size_t max_digits, uint64_t max_value, uint64_t& value)
{
    const unsigned n = digits_at(c.not_dec, c.position);
    // 17-19 digits (timestamps only: max_digits is a constant after inlining): rare
    if(max_digits > 16 && n > 16) return read_decimal_masked(c, max_digits, max_value, value);
    if(!digit_count_ok(n, max_digits)) return false;
    const uint64_t v = decimal_value_ssse3(c.nibbles + c.position + n, n);
    value            = v;
    c.position += n;
    return v <= max_value;
}
#endif

template <class C>
KFD_PARSER_INLINE bool
read_hex(C& c, size_t max_digits, uint64_t& value)
{
    if constexpr(uses_nibbles(C::path))
        return read_hex_ssse3(c, max_digits, value);
    else if constexpr(C::path == number_path::masked)
        return read_hex_masked(c, max_digits, value);
    else if constexpr(C::path == number_path::swar)
        return read_hex_swar(c, max_digits, value);
    else
        return read_hex_scalar(c, max_digits, value);
}

template <class C>
KFD_PARSER_INLINE bool
read_decimal(C& c, size_t max_digits, uint64_t max_value, uint64_t& value)
{
    if constexpr(uses_nibbles(C::path))
        return read_decimal_ssse3(c, max_digits, max_value, value);
    else if constexpr(C::path == number_path::masked)
        return read_decimal_masked(c, max_digits, max_value, value);
    else if constexpr(C::path == number_path::swar)
        return read_decimal_swar(c, max_digits, max_value, value);
    else
        return read_decimal_scalar(c, max_digits, max_value, value);
}

// "%d": optional '-', then digits, within int32_t.
template <class C>
KFD_PARSER_INLINE bool
read_int32(C& c, int32_t& value)
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

// "%lld -%d": timestamp and pid of every profiler event (not the space after them).
template <class C>
KFD_PARSER_INLINE bool
read_timestamp_pid(C& c, event& ev)
{
    uint64_t pid = 0;
    if(!read_decimal(c, ns_digits, uint64_t{std::numeric_limits<int64_t>::max()}, ev.timestamp))
        return false;
    if(!c.skip2(' ', '-')) return false;
    if(!read_decimal(c, int32_digits, uint64_t{std::numeric_limits<int32_t>::max()}, pid))
        return false;
    ev.pid           = static_cast<uint32_t>(pid);
    ev.has_timestamp = true;
    return true;
}

// The ids whose body starts with "%lld -%d" (the profiler events: 5-11 and 14). parse_with
// reads that header before the switch on the id, not in each branch: the switch is an
// indirect jump that a random mix of events mispredicts, and work before it in program
// order is not thrown away by the misprediction (it runs while the jump's target is
// fetched again), work after it is. One bit per id (a shift and a test: no branch on the
// range); `id` is a known id (1..14).
constexpr bool
has_profiler_header(uint32_t id)
{
    using namespace kfd_abi;
    constexpr uint32_t ids = (1u << event_migrate_start) | (1u << event_migrate_end) |
                             (1u << event_page_fault_start) | (1u << event_page_fault_end) |
                             (1u << event_queue_eviction) | (1u << event_queue_restore) |
                             (1u << event_unmap_from_gpu) | (1u << event_id_14);
    return ((ids >> id) & 1u) != 0;
}

// The rest of the header of every profiler event after "%lld -%d" (read by parse_with):
// the trailing space.
template <class C>
KFD_PARSER_INLINE bool
read_profiler_header(C& c, event&)
{
    return c.skip(' ');
}

// The same for the events whose body starts with an address: " @" (one 2-byte compare).
template <class C>
KFD_PARSER_INLINE bool
read_profiler_header_at(C& c, event&)
{
    return c.skip2(' ', '@');
}

// "%lx(%lx) " after the '@': a page range and the space after it (") " in one compare);
// npages >= 1 and the byte range must fit in 64 bits.
template <class C>
KFD_PARSER_INLINE bool
read_page_range(C& c, event& ev)
{
    if(!read_hex64(c, ev.page)) return false;
    if(!c.skip('(') || !read_hex64(c, ev.npages) || !c.skip2(')', ' ')) return false;
    return ev.npages >= 1 && ev.page < page_limit && ev.npages < page_limit - ev.page;
}

// "%lx(%x) " after the '@': a faulting page, its node and the space after them.
template <class C>
KFD_PARSER_INLINE bool
read_fault_address(C& c, event& ev)
{
    if(!read_hex64(c, ev.page)) return false;
    if(!c.skip('(') || !read_hex32(c, ev.node) || !c.skip2(')', ' ')) return false;
    return ev.page < page_limit;
}

// "%x->%x"
template <class C>
KFD_PARSER_INLINE bool
read_from_to(C& c, event& ev)
{
    return read_hex32(c, ev.from_node) && c.skip2('-', '>') && read_hex32(c, ev.to_node);
}

// The rest of the line as the event's text field (task name, reset cause): no NUL allowed.
template <class C>
KFD_PARSER_INLINE bool
read_text_to_end(C& c, event& ev)
{
    const std::string_view rest = c.rest();
    if(rest.find('\0') != std::string_view::npos) return false;
    ev.text_offset = static_cast<uint16_t>(c.position);
    ev.text_length = static_cast<uint16_t>(rest.size());
    c.position     = c.text.size();
    return true;
}

// ---- one body parser per id; each must consume the whole body ----
//
// For the profiler events (has_profiler_header), "H" below starts after "%lld -%d", which
// parse_with has read: read_profiler_header(_at) reads only the separator after it.

template <class C>
KFD_PARSER_INLINE bool
parse_vmfault(C& c, event& ev) // "%x:%s"
{
    return read_hex32(c, ev.pid) && c.skip(':') && read_text_to_end(c, ev);
}

template <class C>
KFD_PARSER_INLINE bool
parse_thermal_throttle(C& c, event& ev) // "%llx:%llx"
{
    return read_hex64(c, ev.bitmask) && c.skip(':') && read_hex64(c, ev.count) && c.at_end();
}

template <class C>
KFD_PARSER_INLINE bool
parse_gpu_reset(C& c, event& ev) // "%x %s", or "%x" on 6.0
{
    if(!read_hex(c, hex32_digits, ev.count)) return false;
    if(c.at_end()) return true;
    return c.skip(' ') && read_text_to_end(c, ev);
}

template <class C>
KFD_PARSER_INLINE bool
parse_migrate_start(C& c, event& ev) // H "@%lx(%lx) %x->%x %x:%x %d"
{
    return read_profiler_header_at(c, ev) && read_page_range(c, ev) && read_from_to(c, ev) &&
           c.skip(' ') && read_hex32(c, ev.prefetch_node) && c.skip(':') &&
           read_hex32(c, ev.preferred_node) && c.skip(' ') && read_int32(c, ev.trigger) &&
           c.at_end();
}

template <class C>
KFD_PARSER_INLINE bool
parse_migrate_end(C& c, event& ev) // H "@%lx(%lx) %x->%x %d" [" %d"]
{
    if(!(read_profiler_header_at(c, ev) && read_page_range(c, ev) && read_from_to(c, ev) &&
         c.skip(' ') && read_int32(c, ev.trigger)))
        return false;
    if(c.at_end()) return true; // before 6.13: no error code
    ev.has_error_code = true;
    return c.skip(' ') && read_int32(c, ev.error_code) && c.at_end();
}

template <class C>
KFD_PARSER_INLINE bool
parse_page_fault_start(C& c, event& ev) // H "@%lx(%x) %c", 'R' or 'W'
{
    return read_profiler_header_at(c, ev) && read_fault_address(c, ev) &&
           c.skip_flag('R', 'W', ev.read_fault) && c.at_end();
}

template <class C>
KFD_PARSER_INLINE bool
parse_page_fault_end(C& c, event& ev) // H "@%lx(%x) %c", 'M' or 'U'
{
    return read_profiler_header_at(c, ev) && read_fault_address(c, ev) &&
           c.skip_flag('M', 'U', ev.migrated) && c.at_end();
}

template <class C>
KFD_PARSER_INLINE bool
parse_queue_eviction(C& c, event& ev) // H "%x %d"
{
    return read_profiler_header(c, ev) && read_hex32(c, ev.node) && c.skip(' ') &&
           read_int32(c, ev.trigger) && c.at_end();
}

template <class C>
KFD_PARSER_INLINE bool
parse_queue_restore(C& c, event& ev) // H "%x" [" R" | " \0" | " 0"]
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

template <class C>
KFD_PARSER_INLINE bool
parse_unmap_from_gpu(C& c, event& ev) // H "@%lx(%lx) %x %d"
{
    return read_profiler_header_at(c, ev) && read_page_range(c, ev) && read_hex32(c, ev.node) &&
           c.skip(' ') && read_int32(c, ev.trigger) && c.at_end();
}

template <class C>
KFD_PARSER_INLINE bool
parse_process_start_end(C& c, event& ev) // "%x %s"
{
    return read_hex32(c, ev.pid) && c.skip(' ') && read_text_to_end(c, ev);
}

// H "%d" (dropped events) or H "%x" (rescheduled restore): told apart by the token's
// characters; see "Id 14" in parser.hpp.
template <class C>
KFD_PARSER_INLINE bool
parse_id14(C& c, event& ev)
{
    if(!read_profiler_header(c, ev)) return false;
    const std::string_view token          = c.rest();
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
    C        as_hex = c; // the same digits read as a restore's node, when they fit
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

// What parse_body does with an event whose line parsed: nothing (parse_line), or call the
// id's handler (parse_line_dispatch).
struct no_dispatch
{
    template <uint32_t id> KFD_PARSER_INLINE void call(event&, std::string_view) const {}
};

struct table_dispatch
{
    const event_handlers& handlers;

    // Inlined into each branch of parse_body: one call site per id. The empty asm after the
    // call names the id, so that the compiler cannot merge the branches' identical tails into
    // one call site after the switch (whose target would be as random as the mix).
    template <uint32_t id> KFD_PARSER_INLINE void call(event& ev, std::string_view line) const
    {
        if(const auto handler = handlers.on_id[id]) handler(handlers.context, ev, line);
        asm volatile("" ::"i"(id));
    }
};

// A body that parsed and consumed the whole line goes to the dispatch of its id.
template <uint32_t id, class C, class D>
KFD_PARSER_INLINE bool
dispatch_if(bool parsed, C& c, event& ev, const D& d)
{
    if(!parsed || !c.at_end()) return false;
    d.template call<id>(ev, c.text);
    return true;
}

// One dispatch per line: a switch on the id, every body parser inlined into it (so the
// cursor lives in registers and the choice of number readers is known at compile time), and
// in each branch the dispatch of that id (see event_handlers).
template <class C, class D>
KFD_PARSER_INLINE bool
parse_body(uint32_t id, C& c, event& ev, const D& d)
{
    using namespace kfd_abi;
    switch(id)
    {
    case event_vmfault:
        return dispatch_if<event_vmfault>(parse_vmfault(c, ev), c, ev, d);
    case event_thermal_throttle:
        return dispatch_if<event_thermal_throttle>(parse_thermal_throttle(c, ev), c, ev, d);
    case event_gpu_pre_reset:
        return dispatch_if<event_gpu_pre_reset>(parse_gpu_reset(c, ev), c, ev, d);
    case event_gpu_post_reset:
        return dispatch_if<event_gpu_post_reset>(parse_gpu_reset(c, ev), c, ev, d);
    case event_migrate_start:
        return dispatch_if<event_migrate_start>(parse_migrate_start(c, ev), c, ev, d);
    case event_migrate_end:
        return dispatch_if<event_migrate_end>(parse_migrate_end(c, ev), c, ev, d);
    case event_page_fault_start:
        return dispatch_if<event_page_fault_start>(parse_page_fault_start(c, ev), c, ev, d);
    case event_page_fault_end:
        return dispatch_if<event_page_fault_end>(parse_page_fault_end(c, ev), c, ev, d);
    case event_queue_eviction:
        return dispatch_if<event_queue_eviction>(parse_queue_eviction(c, ev), c, ev, d);
    case event_queue_restore:
        return dispatch_if<event_queue_restore>(parse_queue_restore(c, ev), c, ev, d);
    case event_unmap_from_gpu:
        return dispatch_if<event_unmap_from_gpu>(parse_unmap_from_gpu(c, ev), c, ev, d);
    case event_process_start:
        return dispatch_if<event_process_start>(parse_process_start_end(c, ev), c, ev, d);
    case event_process_end:
        return dispatch_if<event_process_end>(parse_process_start_end(c, ev), c, ev, d);
    case event_id_14:
        return dispatch_if<event_id_14>(parse_id14(c, ev), c, ev, d);
    default:
        return false;
    }
}

// Ids 1..14 have a body parser; 0 and 15+ are unknown.
constexpr bool
is_known_id(uint64_t id)
{
    return id >= 1 && id <= kfd_abi::max_event_id;
}

// The id token is everything before the first space. Returns 0 when it is not a hex number
// of at most 8 digits or not a known id.
template <class C>
uint32_t
read_event_id(C& c)
{
    uint64_t id = 0;
    if(!read_hex(c, hex32_digits, id)) return 0;
    if(!c.at_end() && c.peek() != ' ') return 0; // e.g. "5x": not a number
    if(!is_known_id(id)) return 0;
    return static_cast<uint32_t>(id);
}
} // namespace

namespace
{
// The known id (1..14) that each byte names as a one-digit id token, else 0.
struct id_table
{
    uint8_t id[256];
};

constexpr id_table
make_id_table()
{
    id_table t{};
    for(int b = 0; b < 256; ++b)
    {
        const int digit = hex_value(static_cast<char>(b));
        t.id[b]         = digit > 0 && is_known_id(static_cast<uint64_t>(digit))
                              ? static_cast<uint8_t>(digit)
                              : 0;
    }
    return t;
}

constexpr id_table one_digit_ids = make_id_table();

// The id of a line whose id token is one hex digit (every kernel line): one table look-up
// instead of a number read. 0 when the line does not start that way.
KFD_PARSER_INLINE uint32_t
one_digit_event_id(std::string_view line)
{
    if(line.size() < 2 || line[1] != ' ') return 0;
    return one_digit_ids.id[static_cast<unsigned char>(line[0])];
}

// All fields zero. Copied with memcpy: `out = event{}` compiles to a slow `rep stos`.
constexpr event zero_event{};
static_assert(sizeof(event) == 96, "parser.hpp orders event's members by size: no padding");

KFD_PARSER_INLINE void
clear(event& ev)
{
    std::memcpy(static_cast<void*>(&ev), &zero_event, sizeof(event));
}

// The event is built in place in `out` (written once on success).
template <class C, class D = no_dispatch>
KFD_PARSER_INLINE parse_result
parse_with(C& c, event& out, const D& dispatch = D{}) noexcept
{
    constexpr number_path  path = C::path;
    const std::string_view line = c.text;
    uint32_t               id   = path != number_path::scalar ? one_digit_event_id(line) : 0;
    if(id != 0)
        c.position = 1;
    else
        id = read_event_id(c);
    if(id == 0) return parse_result::unknown_id;

    out.id = id;
    if(!c.skip(' ') || (has_profiler_header(id) && !read_timestamp_pid(c, out)) ||
       !parse_body(id, c, out, dispatch))
    {
        clear(out);
        out.id = id;
        return parse_result::malformed;
    }
    return parse_result::ok;
}

template <number_path path>
parse_result
parse_line_with(std::string_view line, event& out) noexcept
{
    clear(out);
    if(line.empty() || line.size() > max_line_length) return parse_result::malformed;
    cursor_of<path> c{line};
    return parse_with(c, out);
}

#if defined(__SSE2__)
// Lines of 16 to masked_line_max bytes (every kernel line but the shortest): the masked
// instances, with a 64-bit mask up to 63 bytes and a 128-bit one above.
template <typename Mask>
__attribute__((noinline)) parse_result
parse_line_masked(std::string_view line, event& out) noexcept
{
    clear(out);
    line_copy                            copy;
    cursor_of<number_path::masked, Mask> c;
    c.text = line;
    classify_line(c, copy);
    return parse_with(c, out);
}

// The same with SSSE3 number conversion. `flatten` inlines the SSSE3 converters here, the
// only function compiled for SSSE3 that calls them. The copies have at least 16 readable
// bytes at every position of the line (padded_line_bytes), as the 16-byte loads need.
template <typename Mask>
__attribute__((noinline, flatten)) KFD_SSSE3 parse_result
parse_line_masked_ssse3(std::string_view line, event& out) noexcept
{
    clear(out);
    line_copy                                  copy;
    cursor_of<number_path::masked_ssse3, Mask> c;
    c.text = line;
    classify_line(c, copy);
    return parse_with(c, out);
}

#    if defined(KFD_HAVE_AVX2)
// The same, classified 32 bytes at a time and the whole body compiled for AVX2 and BMI2:
// three-operand (VEX) vector instructions need no register copies around the SSSE3
// conversions, and shlx/shrx shift the masks without the count in %cl.
template <typename Mask>
__attribute__((noinline, flatten)) KFD_AVX2 parse_result
parse_line_masked_avx2(std::string_view line, event& out) noexcept
{
    clear(out);
    line_copy                                 copy;
    cursor_of<number_path::masked_avx2, Mask> c;
    c.text = line;
    classify_line_avx2(c, copy);
    return parse_with(c, out);
}

// The same, calling the parsed id's handler (parse_line_dispatch).
template <typename Mask>
__attribute__((noinline, flatten)) KFD_AVX2 parse_result
parse_line_masked_avx2_dispatch(std::string_view line, event& out,
                                const event_handlers& handlers) noexcept
{
    clear(out);
    line_copy                                 copy;
    cursor_of<number_path::masked_avx2, Mask> c;
    c.text = line;
    classify_line_avx2(c, copy);
    return parse_with(c, out, table_dispatch{handlers});
}
#    endif

// What this CPU runs, best last.
enum class simd_level : int8_t
{
    unknown = -1, // not asked yet
    sse2,
    ssse3,
    avx2,   // with BMI1 and BMI2
    avx512, // AVX2 and what hot_shapes needs (AVX-512 F, BW, VBMI, VBMI2)
};

simd_level
cpu_simd_level() noexcept
{
    __builtin_cpu_init(); // may run before libgcc's own initializer
#    if defined(KFD_HAVE_AVX2)
    if(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
       __builtin_cpu_supports("bmi2"))
        return hot_shapes::cpu_supports() ? simd_level::avx512 : simd_level::avx2;
#    endif
    return __builtin_cpu_supports("ssse3") ? simd_level::ssse3 : simd_level::sse2;
}

// Asked on first use: the CPU does not change under the process. Not a flag set by this
// file's static initializer: the SDK's reader thread may parse before that initializer ran
// (the SDK starts it from its own load-time constructor), and ThreadSanitizer reported such
// a flag's initialization racing with it. A relaxed atomic, constant-initialized (no guard
// and no initializer run at load time): threads that race on the first use all store the
// same value. parse_line reads it with one load per line and, while it is unknown, tail-
// calls a function that asks (so that its own path needs no stack frame for a call).
KFD_PARSER_INLINE std::atomic<simd_level>&
                  simd_cache() noexcept
{
    static std::atomic<simd_level> level{simd_level::unknown};
    return level;
}

__attribute__((noinline)) simd_level
ask_simd_level() noexcept
{
    const simd_level level = cpu_simd_level();
    simd_cache().store(level, std::memory_order_relaxed);
    return level;
}

KFD_PARSER_INLINE simd_level
simd() noexcept
{
    const simd_level level = simd_cache().load(std::memory_order_relaxed);
    return level != simd_level::unknown ? level : ask_simd_level();
}

KFD_PARSER_INLINE bool
has_ssse3() noexcept
{
    return simd() >= simd_level::ssse3;
}

KFD_PARSER_INLINE bool
fits_masked(std::string_view line)
{
    return line.size() >= 16 && line.size() <= masked_line_max;
}
#endif
} // namespace

parse_result
parse_line_sse2(std::string_view line, event& out) noexcept
{
#if defined(__SSE2__)
    if(line.size() >= 16 && line.size() <= masked_narrow_max)
        return parse_line_masked<uint64_t>(line, out);
    if(line.size() > masked_narrow_max && line.size() <= masked_line_max)
        return parse_line_masked<wide_words>(line, out);
#endif
    return parse_line_with<number_path::swar>(line, out);
}

parse_result
parse_line_ssse3(std::string_view line, event& out) noexcept
{
#if defined(__SSE2__)
    if(!has_ssse3()) return parse_line_sse2(line, out);
    if(line.size() >= 16 && line.size() <= masked_narrow_max)
        return parse_line_masked_ssse3<uint64_t>(line, out);
    if(fits_masked(line)) return parse_line_masked_ssse3<wide_words>(line, out);
#endif
    return parse_line_with<number_path::swar>(line, out);
}

parse_result
parse_line_avx2(std::string_view line, event& out) noexcept
{
#if defined(__SSE2__) && defined(KFD_HAVE_AVX2)
    if(simd() >= simd_level::avx2 && fits_masked(line))
    {
        if(line.size() <= masked_narrow_max) return parse_line_masked_avx2<uint64_t>(line, out);
        return parse_line_masked_avx2<wide_words>(line, out);
    }
#endif
    return parse_line_ssse3(line, out);
}

bool
parse_line_has_ssse3() noexcept
{
#if defined(__SSE2__)
    return has_ssse3();
#else
    return false;
#endif
}

parse_result
parse_line_avx512(std::string_view line, event& out) noexcept
{
#if defined(__SSE2__) && defined(KFD_HAVE_AVX2)
    if(simd() == simd_level::avx512 && hot_shapes::parse(line, out)) return parse_result::ok;
#endif
    return parse_line_avx2(line, out);
}

bool
parse_line_hot_shape(std::string_view line, event& out) noexcept
{
#if defined(__SSE2__) && defined(KFD_HAVE_AVX2)
    return simd() == simd_level::avx512 && hot_shapes::parse(line, out);
#else
    (void)line;
    (void)out;
    return false;
#endif
}

bool
parse_line_has_avx512() noexcept
{
#if defined(__SSE2__) && defined(KFD_HAVE_AVX2)
    return simd() == simd_level::avx512;
#else
    return false;
#endif
}

bool
parse_line_has_avx2() noexcept
{
#if defined(__SSE2__) && defined(KFD_HAVE_AVX2)
    return simd() >= simd_level::avx2;
#else
    return false;
#endif
}

#if defined(__SSE2__)
namespace
{
// parse_line's first call (or first calls, when threads race): asks the CPU, then parses.
__attribute__((noinline)) parse_result
parse_line_first_use(std::string_view line, event& out) noexcept
{
    ask_simd_level();
    return parse_line(line, out);
}
} // namespace
#endif

parse_result
parse_line(std::string_view line, event& out) noexcept
{
#if defined(__SSE2__)
    if(fits_masked(line))
    {
        const bool       narrow = line.size() <= masked_narrow_max;
        const simd_level level  = simd_cache().load(std::memory_order_relaxed);
#    if defined(KFD_HAVE_AVX2)
        if(level == simd_level::avx512 && hot_shapes::parse(line, out)) return parse_result::ok;
        if(level >= simd_level::avx2)
            return narrow ? parse_line_masked_avx2<uint64_t>(line, out)
                          : parse_line_masked_avx2<wide_words>(line, out);
#    endif
        if(level == simd_level::ssse3)
            return narrow ? parse_line_masked_ssse3<uint64_t>(line, out)
                          : parse_line_masked_ssse3<wide_words>(line, out);
        if(level == simd_level::unknown) return parse_line_first_use(line, out);
    }
#endif
    return parse_line_sse2(line, out);
}

namespace
{
// Other CPUs and lengths: parse_line, then the event's own look-up of its handler. Out of
// line, so that parse_line_dispatch's common path is a tail call with no frame.
__attribute__((noinline)) parse_result
parse_line_then_dispatch(std::string_view line, event& out, const event_handlers& handlers) noexcept
{
    const parse_result result = parse_line(line, out);
    if(result == parse_result::ok && out.id < event_handlers::slot_count)
    {
        if(const auto handler = handlers.on_id[out.id]) handler(handlers.context, out, line);
    }
    return result;
}
} // namespace

parse_result
parse_line_dispatch(std::string_view line, event& out, const event_handlers& handlers) noexcept
{
#if defined(__SSE2__) && defined(KFD_HAVE_AVX2)
    const simd_level level = simd_cache().load(std::memory_order_relaxed);
    if(level == simd_level::avx512 && handlers.hot_shapes)
    {
        // One call site for every id (the hot shapes have no switch on it), whose target is
        // as random as the mix: looked up from the line's first byte, known long before the
        // event (a target that waits for the pass's result is mispredicted late).
        const auto handler = handlers.on_id[one_digit_event_id(line)];
        if(hot_shapes::parse(line, out))
        {
            if(handler) handler(handlers.context, out, line);
            return parse_result::ok;
        }
    }
    if(fits_masked(line) && level >= simd_level::avx2)
        return line.size() <= masked_narrow_max
                   ? parse_line_masked_avx2_dispatch<uint64_t>(line, out, handlers)
                   : parse_line_masked_avx2_dispatch<wide_words>(line, out, handlers);
#endif
    return parse_line_then_dispatch(line, out, handlers); // asks the CPU on first use
}

feed_tally
feed_dispatch(line_splitter& splitter, const char* data, size_t size, event& scratch,
              const event_handlers& handlers) noexcept
{
#if defined(__SSE2__) && defined(KFD_HAVE_AVX2)
    // simd() asks the CPU on first use: the first read takes the pass too.
    if(handlers.hot_shapes && simd() == simd_level::avx512)
    {
        event_handlers others = handlers;
        others.hot_shapes     = false;
        return hot_shapes::feed_dispatch(splitter, data, size, scratch, handlers, others);
    }
#endif
    feed_tally tally;
    splitter.feed(data, size,
                  [&](std::string_view line)
                  {
                      ++tally.lines;
                      tally.ok += parse_line_dispatch(line, scratch, handlers) == parse_result::ok;
                  });
    return tally;
}

parse_result
parse_line_scalar(std::string_view line, event& out) noexcept
{
    return parse_line_with<number_path::scalar>(line, out);
}

parse_result
parse_line_swar(std::string_view line, event& out) noexcept
{
    return parse_line_with<number_path::swar>(line, out);
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
