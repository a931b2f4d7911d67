// MIT License - see LICENSE.
//
// The kernel logs bundled in share/kfd-logs, as the parser's tests read them whole.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace kfd_test
{
// One log of each scenario and format era.
inline constexpr const char* every_scenario_and_era[] = {
    "eviction-2gpu-2026",  "mixed-4gpu-6.0",      "prefetch-1gpu-6.13",
    "streaming-1gpu-6.13", "thrashing-2gpu-6.12", "unmap-2gpu-6.13-two-processes"};

// The text of share/kfd-logs/<name>.log ("" when it cannot be read).
inline std::string
bundled_log(const std::string& name)
{
    std::ifstream      in{std::string{KFD_LOGS_DIR} + "/" + name + ".log", std::ios::binary};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}
} // namespace kfd_test
