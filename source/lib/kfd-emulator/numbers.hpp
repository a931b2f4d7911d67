// MIT License - see LICENSE.
//
// The one way the emulator reads a number from text (log directives, its environment, its
// statistics file, folder names): digits only (no sign, space or "0x" here), at most `max`,
// checked before each step so that nothing can overflow. Anything else is refused.
#pragma once

#include <cstdint>
#include <string_view>

namespace kfd_emu
{
inline bool
parse_number(std::string_view text, int base, uint64_t max, uint64_t& value)
{
    if(text.empty() || (base != 10 && base != 16)) return false;
    uint64_t v = 0;
    for(char c : text)
    {
        int digit = -1;
        if(c >= '0' && c <= '9') digit = c - '0';
        if(base == 16 && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        if(base == 16 && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        if(digit < 0) return false;
        uint64_t d = static_cast<uint64_t>(digit);
        if(v > (max - d) / static_cast<uint64_t>(base)) return false; // v * base + d > max
        v = v * static_cast<uint64_t>(base) + d;
    }
    value = v;
    return true;
}

// The leading decimal digits of text (up to the first non-digit), at most max.
inline bool
parse_number_prefix(std::string_view text, uint64_t max, uint64_t& value, size_t& length)
{
    length = 0;
    while(length < text.size() && text[length] >= '0' && text[length] <= '9')
        ++length;
    return parse_number(text.substr(0, length), 10, max, value);
}
} // namespace kfd_emu
