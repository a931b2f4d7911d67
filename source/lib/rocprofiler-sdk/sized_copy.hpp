// MIT License - see LICENSE.
//
// Structs the C API fills for the caller start with `uint64_t size`, set by the caller to the
// size it knows: one built against an older, smaller struct gets the prefix it has room for.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace rocprofiler
{
// Copies what of `out` fits in the caller's `into` (its size field says how much) and sets
// that size field to the bytes copied. The caller checked that `into` holds the size field.
template <typename Struct>
void
copy_sized(const Struct& out, Struct* into) noexcept
{
    const size_t n = std::min<size_t>(into->size, sizeof(Struct));
    std::memcpy(into, &out, n);
    into->size = n;
}
} // namespace rocprofiler
