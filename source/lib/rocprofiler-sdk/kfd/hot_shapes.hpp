// MIT License - see LICENSE.
//
// The hot shapes: the eleven shapes of the profiler events that nearly every kernel line has
// (MIGRATE_START, MIGRATE_END without an error code, with one and with a negative one, the
// two page faults, queue eviction, the restores bare, " R", " \0" and " 0", UNMAP_FROM_GPU),
// with no other sign and numbers short enough for 8-byte lanes, parsed in one AVX-512 pass
// without a branch per field:
//   1. the line is classified at once (hex digits, decimal digits, each byte's digit value);
//   2. its shape, the line with each number written as 'x' (e.g. "x x -x @x(x) x->x x"), is
//      compressed out of it (vpcompressb) and compared with the shape of its id, length and
//      last byte in one compare: every separator and the number of fields at once;
//   3. the numbers' start and end positions are compressed out of the run bitmaps (all at
//      once, none depends on another number's length), their digits gathered right-aligned
//      into 8-byte lanes (vpermb) and converted together (pmaddubsw, pmaddwd, pmuludq);
//   4. the event is written with two byte permutations of the values into its layout, OR-ed
//      with the bytes the shape fixes (id, flags, restore form: picked by the flag byte).
// Tables built at compile time from the readable descriptions in hot_shapes.cpp drive each
// step: there is no switch on the id, and no branch on anything a line's numbers decide.
//
// Anything else (other ids, other lengths, a sign, a number longer than its lanes, any
// malformed line) is not taken: the caller parses it the general way, which is also the
// reference every line this path takes is compared with (parser_twin_test).
#pragma once

#include "rocprofiler-sdk/kfd/parser.hpp"

#include <string_view>

namespace rocprofiler::kfd::hot_shapes
{
// Lines this path takes: 16 to 127 bytes (the range parse_line classifies at once; every
// kernel line of a hot shape is longer than 16). parse() checks it: callers need not.
inline constexpr size_t min_length = 16;
inline constexpr size_t max_length = 127;

// True when the CPU has what the path needs (AVX-512 F, BW, VBMI and VBMI2, BMI1/2,
// POPCNT): asks the CPU on every call (parse_line keeps the answer). False on other
// architectures and under tools that hide AVX-512 (valgrind).
bool cpu_supports() noexcept;

// Only where cpu_supports() is true (else it would run instructions the CPU lacks).
// Parses `line` when it has one of the hot shapes: returns true with
// `out` holding exactly the event parse_line_scalar gives. Returns false otherwise, with
// `out` in an unspecified state (the caller parses the line again, which overwrites it).
// Never reads outside `line`.
bool parse(std::string_view line, event& out) noexcept;

// Only where cpu_supports(). kfd::feed_dispatch for a caller whose handlers allow the pass:
// each line that parse() takes is dispatched to `handlers` here, every other one goes to
// parse_line_dispatch with `others` (the same handlers with hot_shapes off, so that the pass
// is not tried twice).
feed_tally feed_dispatch(line_splitter& splitter, const char* data, size_t size, event& scratch,
                         const event_handlers& handlers, const event_handlers& others) noexcept;
} // namespace rocprofiler::kfd::hot_shapes
