// MIT License - see LICENSE.
#include "text.hpp"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace rocprof_kfd
{
namespace
{
// Length of the valid UTF-8 sequence at text[i], 0 when invalid.
size_t
utf8_length(std::string_view text, size_t i)
{
    const auto c = static_cast<unsigned char>(text[i]);
    size_t     n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if(n == 0 || i + n > text.size()) return 0;
    for(size_t k = 1; k < n; ++k)
        if((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
    return n;
}
} // namespace

std::string
json_string(std::string_view text)
{
    std::string out = "\"";
    for(size_t i = 0; i < text.size(); ++i)
    {
        const auto c = static_cast<unsigned char>(text[i]);
        if(c == '"' || c == '\\')
        {
            out += '\\';
            out += static_cast<char>(c);
        }
        else if(c == '\n')
            out += "\\n";
        else if(c == '\t')
            out += "\\t";
        else if(c < 0x20 || c == 0x7f)
        {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
        }
        else if(c < 0x80)
            out += static_cast<char>(c);
        else if(size_t n = utf8_length(text, i))
        {
            out.append(text.substr(i, n));
            i += n - 1;
        }
        else
        {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
        }
    }
    out += '"';
    return out;
}

std::string
hex(uint64_t value)
{
    byte_buffer out;
    append_hex(out, value);
    return out.str();
}

void
append_decimal(byte_buffer& out, uint64_t value)
{
    char* at = out.room(20); // UINT64_MAX has 20 digits
    out.commit(static_cast<size_t>(std::to_chars(at, at + 20, value).ptr - at));
}

void
append_signed(byte_buffer& out, int64_t value)
{
    char* at = out.room(20); // INT64_MIN: a sign and 19 digits
    out.commit(static_cast<size_t>(std::to_chars(at, at + 20, value).ptr - at));
}

void
append_hex(byte_buffer& out, uint64_t value)
{
    char* at = out.room(18); // "0x" and 16 digits
    at[0]    = '0';
    at[1]    = 'x';
    out.commit(static_cast<size_t>(std::to_chars(at + 2, at + 18, value, 16).ptr - at));
}

std::string
csv_field(std::string_view text)
{
    if(text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
    std::string out = "\"";
    for(char c : text)
    {
        if(c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string
decimal(double value)
{
    if(!std::isfinite(value)) return "0";
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", value);
    return buf;
}

std::string
micros(uint64_t ns)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
    return buf;
}
} // namespace rocprof_kfd
