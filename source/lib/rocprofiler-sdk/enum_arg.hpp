// MIT License - see LICENSE.
//
// Enum arguments of the C API arrive from C code that may pass any integer. Loading an
// out-of-range value as the C++ enum type is undefined behaviour (UBSan's -fsanitize=enum
// reports it), so every entry point reads such an argument's bytes as its underlying
// integer first, validates that, and converts to the enum only once it is known valid.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace rocprofiler
{
template <typename E>
int64_t
enum_arg(const E& value) noexcept
{
    static_assert(std::is_enum_v<E>, "enum arguments only");
    std::underlying_type_t<E> raw{};
    std::memcpy(&raw, &value, sizeof(raw)); // the bytes, not a load of the enum type
    return static_cast<int64_t>(raw);
}
} // namespace rocprofiler
