// MIT License - see LICENSE.
// The whole report page: one self-contained HTML document (inline CSS and SVG, one inline
// hover script, no external resource), from the parsed inputs.
#pragma once

#include "tables.hpp"

#include <string>
#include <vector>

namespace rocprof_kfd_report
{
std::string render_report(const std::vector<Input>& inputs);
} // namespace rocprof_kfd_report
