// MIT License - see LICENSE.
//
// Every environment variable the SDK reads goes through here. Values are read with
// secure_getenv, so a setuid or file-capability program (AT_SECURE) ignores them all, as
// ld.so ignores LD_PRELOAD there. Numbers have one strict parser: decimal digits only, no
// sign, no suffix, no overflow, inside the variable's range; anything else logs one line
// naming the variable and keeps the default.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rocprofiler::env
{
// True when the process runs in secure-execution mode (getauxval(AT_SECURE)).
bool secure_mode() noexcept;

// secure_getenv(name): nullptr when unset, or always under AT_SECURE.
const char* get(const char* name) noexcept;

// True for 1/yes/true/on (case-insensitive).
bool flag(const char* name) noexcept;

// Pure: the value of `text` if it is a decimal number in [min, max], else nothing.
std::optional<uint64_t> parse_u64(std::string_view text, uint64_t min, uint64_t max) noexcept;

// The variable as a number in [min, max]; unset or empty gives `fallback`; anything else
// logs "NAME=...: ..." once and gives `fallback`.
uint64_t number(const char* name, uint64_t min, uint64_t max, uint64_t fallback) noexcept;

// Pure: whether the text of /proc/self/uid_map is the initial user namespace's (one line
// mapping all 4294967295 ids onto themselves). Elsewhere, CAP_SYS_ADMIN reported by capget()
// is not the capability the kernel's capable() checks.
bool is_initial_uid_map(std::string_view uid_map) noexcept;

// Reads /proc/self/uid_map; true also when it cannot be read (kernels without user
// namespaces have no such file).
bool in_initial_user_namespace() noexcept;
} // namespace rocprofiler::env
