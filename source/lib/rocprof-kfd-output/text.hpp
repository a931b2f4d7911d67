// MIT License - see LICENSE.
//
// Small text helpers of the writers: JSON string escaping, hex addresses, RFC 4180 fields.
#pragma once

#include "byte_buffer.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace rocprof_kfd
{
// `"..."` with JSON escapes (control characters as \u00XX, invalid UTF-8 bytes as \u00XX of
// the byte, so the output is always valid JSON).
std::string json_string(std::string_view text);
// "0x1a2b" (lower case, no padding).
std::string hex(uint64_t value);
// The field as is, or quoted with doubled quotes when it holds , " CR or LF (RFC 4180).
std::string csv_field(std::string_view text);
// A double as JSON/CSV text: finite with up to 6 significant decimals, 0 for NaN/inf.
std::string decimal(double value);
// Nanoseconds as microseconds with 3 decimals ("12.345"), for the Chrome trace.
std::string micros(uint64_t ns);

// Appenders for the writers' hot paths: the same text as std::to_string / hex(), written
// into a buffer the caller reuses (no allocation once it has grown).
void append_decimal(byte_buffer& out, uint64_t value);
void append_signed(byte_buffer& out, int64_t value);
void append_hex(byte_buffer& out, uint64_t value);
} // namespace rocprof_kfd
