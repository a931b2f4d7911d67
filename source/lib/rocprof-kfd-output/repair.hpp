// MIT License - see LICENSE.
//
// Repairing the outputs of a process that died before the tool's finalization (a signal):
// every document is made one its readers accept, keeping every whole record.
//   - results.json, trace.chrome.json: already closed by the streaming tail unless cut
//     inside a write; then cut after the last whole line and closed with
//     `],"truncated":true}`;
//   - CSV: an incomplete last line is removed;
//   - trace.pftrace: cut after the last whole packet;
//   - kfd.db: opened read-write, which rolls an unfinished transaction back; checked with
//     PRAGMA quick_check;
//   - summary.json (placeholder or missing) and summary.txt: rebuilt from the records
//     (kfd.db, results.json or CSV), marked "complete": false.
#pragma once

#include <string>
#include <vector>

namespace rocprof_kfd
{
struct repair_report
{
    std::vector<std::string> repaired; // "PATH: what was done"
    std::vector<std::string> errors;   // "PATH: why it could not be repaired"
};

repair_report repair_directory(const std::string& dir, uint64_t thrashing_threshold = 4);

// The single steps (also used by the tests).
// JSON document with one element per line after its array's opening line; open_line_prefix
// starts that line ("\"records\":[" or "{\"traceEvents\":["). Returns true if changed.
bool repair_line_json(const std::string& path, const std::string& open_line_prefix,
                      std::string& error);
bool repair_csv(const std::string& path, std::string& error);
bool repair_pftrace(const std::string& path, std::string& error);
bool check_sqlite(const std::string& path, std::string& error);
} // namespace rocprof_kfd
