// MIT License - see LICENSE.
//
// Just enough of the protobuf wire format to write a Perfetto trace: varints,
// length-delimited fields and 64-bit doubles (https://protobuf.dev/programming-guides/encoding/).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace rocprof_kfd
{
struct proto_message
{
    std::string bytes;

    void varint(uint64_t v)
    {
        while(v >= 0x80)
        {
            bytes += static_cast<char>((v & 0x7f) | 0x80);
            v >>= 7;
        }
        bytes += static_cast<char>(v);
    }
    void key(uint32_t field, uint32_t wire_type) { varint((uint64_t{field} << 3) | wire_type); }
    void add_uint(uint32_t field, uint64_t v)
    {
        key(field, 0);
        varint(v);
    }
    void add_bool(uint32_t field, bool v) { add_uint(field, v ? 1 : 0); }
    void add_string(uint32_t field, std::string_view s)
    {
        key(field, 2);
        varint(s.size());
        bytes.append(s);
    }
    void add_message(uint32_t field, const proto_message& m) { add_string(field, m.bytes); }
    void add_double(uint32_t field, double d)
    {
        key(field, 1);
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof(bits));
        for(int i = 0; i < 8; ++i)
            bytes += static_cast<char>((bits >> (8 * i)) & 0xff);
    }
};
} // namespace rocprof_kfd
