// MIT License - see LICENSE.
#pragma once

#include "writer.hpp"

namespace rocprof_kfd
{
// Indexed by operation (1..4).
extern const char* const csv_file_names[5];
extern const char* const csv_headers[5];
// One CSV row (with its '\n') of a record.
std::string csv_row(const record& r, const std::vector<agent_info>& agents);
// One record of results.json (a JSON object on one line, no newline).
std::string                    record_json(const record& r);
std::unique_ptr<record_writer> make_csv_writer();
std::unique_ptr<record_writer> make_json_writer();
std::unique_ptr<record_writer> make_perfetto_writer();
std::unique_ptr<record_writer> make_chrome_writer();
std::unique_ptr<record_writer> make_sqlite_writer();
} // namespace rocprof_kfd
