// MIT License - see LICENSE.
#pragma once

#include "byte_buffer.hpp"
#include "writer.hpp"

#include <utility>

namespace rocprof_kfd
{
// Indexed by operation (1..4).
extern const char* const csv_file_names[5];
extern const char* const csv_headers[5];
// The agents' names as CSV fields (csv_field of agent_name), found without allocating.
class csv_agent_names
{
public:
    csv_agent_names() = default;
    explicit csv_agent_names(const std::vector<agent_info>& agents);
    void append(byte_buffer& out, uint64_t gpu_id) const;

private:
    std::vector<std::pair<uint64_t, std::string>> fields_; // gpu_id, quoted name
};
// One CSV row (with its '\n') of a record, appended to out.
void append_csv_row(byte_buffer& out, const record& r, const csv_agent_names& names);
// The same row as a string (tests, tools off the hot path).
std::string csv_row(const record& r, const std::vector<agent_info>& agents);
// One record of results.json (a JSON object on one line, no newline).
std::string                    record_json(const record& r);
std::unique_ptr<record_writer> make_csv_writer();
std::unique_ptr<record_writer> make_json_writer();
std::unique_ptr<record_writer> make_perfetto_writer();
std::unique_ptr<record_writer> make_chrome_writer();
std::unique_ptr<record_writer> make_sqlite_writer();
} // namespace rocprof_kfd
