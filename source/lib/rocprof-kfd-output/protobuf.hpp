// MIT License - see LICENSE.
//
// Just enough of the protobuf wire format to write a Perfetto trace: varints,
// length-delimited fields and 64-bit doubles (https://protobuf.dev/programming-guides/encoding/).
// A message is a byte string the writer reuses (clear() keeps its capacity), so writing a
// packet allocates nothing once the buffers have grown.
#pragma once

#include "byte_buffer.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace rocprof_kfd
{
// Bytes of v as a varint.
constexpr size_t
varint_size(uint64_t v)
{
    // 7 bits a byte: the number of significant bits, rounded up to sevens (1 for 0).
    return static_cast<size_t>((64 - __builtin_clzll(v | 1) + 6) / 7);
}

constexpr uint64_t
field_key(uint32_t field, uint32_t wire_type)
{
    return (uint64_t{field} << 3) | wire_type;
}

// Bytes of a varint field (key and value).
constexpr size_t
uint_field_size(uint32_t field, uint64_t v)
{
    return varint_size(field_key(field, 0)) + varint_size(v);
}

// Bytes of a length-delimited field holding size bytes.
constexpr size_t
bytes_field_size(uint32_t field, size_t size)
{
    return varint_size(field_key(field, 2)) + varint_size(size) + size;
}

struct proto_message
{
    byte_buffer bytes;

    void   clear() { bytes.clear(); }
    size_t size() const { return bytes.size(); }
    void   varint(uint64_t v)
    {
        if(v < 0x80) // keys, iids, flags: most varints are one byte
        {
            bytes.push_back(static_cast<char>(v));
            return;
        }
        char*  at = bytes.room(10); // a varint has at most 10 bytes
        size_t n  = 0;
        for(; v >= 0x80; v >>= 7)
            at[n++] = static_cast<char>((v & 0x7f) | 0x80);
        at[n++] = static_cast<char>(v);
        bytes.commit(n);
    }
    void key(uint32_t field, uint32_t wire_type) { varint(field_key(field, wire_type)); }
    void add_uint(uint32_t field, uint64_t v)
    {
        key(field, 0);
        varint(v);
    }
    void add_bool(uint32_t field, bool v) { add_uint(field, v ? 1 : 0); }
    // The key and length of a nested message of size bytes; its fields follow.
    void begin_message(uint32_t field, size_t size)
    {
        key(field, 2);
        varint(size);
    }
    void add_string(uint32_t field, std::string_view s)
    {
        begin_message(field, s.size());
        bytes.append(s);
    }
    void add_message(uint32_t field, const proto_message& m) { add_string(field, m.bytes.view()); }
    void add_double(uint32_t field, double d)
    {
        key(field, 1);
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof(bits));
        char* at = bytes.room(8);
        for(int i = 0; i < 8; ++i)
            at[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
        bytes.commit(8);
    }
};
} // namespace rocprof_kfd
