// MIT License - see LICENSE.
//
// Just enough JSON to read the emulator's statistics file in the tests: objects, arrays,
// strings (with \" \\ \uXXXX escapes), numbers, true/false/null. Independent of the
// emulator's writer on purpose.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kfd_test
{
struct json
{
    enum class type
    {
        null,
        boolean,
        number,
        string,
        array,
        object,
    };

    type                        kind = type::null;
    bool                        b    = false;
    double                      num  = 0;
    std::string                 str;
    std::vector<json>           items;
    std::map<std::string, json> fields;

    // Missing keys and out-of-range indexes give a null value rather than throwing.
    const json& operator[](const std::string& key) const;
    const json& operator[](size_t index) const;
    uint64_t    u64() const { return static_cast<uint64_t>(num); }
    bool        has(const std::string& key) const { return fields.count(key) != 0; }

    // Returns false (and leaves out null) when text is not one valid JSON value.
    static bool parse(const std::string& text, json& out);
};
} // namespace kfd_test
