// MIT License - see LICENSE.
//
// Checks a summary.json (parsed) against the summary recomputed from the oracle, number by
// number (gtest expectations).
#pragma once

#include "oracle.hpp"

#include <nlohmann/json.hpp>

namespace kfd_out_test
{
void check_summary(const nlohmann::json& summary, const std::vector<oracle_record>& oracle,
                   uint64_t threshold, const std::string& label);
}
