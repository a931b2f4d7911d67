// MIT License - see LICENSE.
//
// Reading a run's outputs back (rocprof-kfd-merge and --repair): the records, metadata and
// agents of one output directory, from kfd.db, results.json or the CSV files (the first
// that exists), streamed one record at a time so memory stays flat.
#pragma once

#include "model.hpp"

#include <functional>
#include <string>
#include <vector>

namespace rocprof_kfd
{
// The stems of the outputs in dir ("" for plain names, "x" for x_summary.json, ...), sorted;
// empty when dir holds no rocprof-kfd output. A folder holds several when processes shared
// it (each but the first names its files <pid>_<name>) or runs with -o STEM wrote there.
std::vector<std::string> find_stems(const std::string& dir);
// The first of find_stems, or nullopt.
std::optional<std::string> find_stem(const std::string& dir);

// Output directories under root (root itself, or its subdirectories up to depth 4), sorted.
std::vector<std::string> find_output_dirs(const std::string& root);

using record_callback = std::function<void(const record&)>;

struct source_result
{
    bool        ok = false;
    std::string source; // the file read
    std::string error;  // when !ok
    uint64_t    records  = 0;
    bool        complete = false; // the run finished (not truncated)
};

// Reads metadata, agents and loss into run (from summary.json first, then the record
// file), then calls fn for every record. prefer: "" (best available), "sqlite", "json", "csv".
source_result read_output(const std::string& dir, const std::string& stem, run_info& run,
                          const record_callback& fn, const std::string& prefer = "");

// Reads what read_output() reads into run before the records, from the same files, and
// nothing more: false when the outputs have no record file (read_output() fails on them).
// Whether the output is rocprof-kfd-merge's (its summary.json lists the merged `inputs`, and
// no record file is beside it): it holds no records of its own to merge again.
bool is_merge_output(const std::string& dir, const std::string& stem);

bool read_output_metadata(const std::string& dir, const std::string& stem, run_info& run);

// Parses one record object of results.json (false when it is not one).
bool parse_record_json(const std::string& line, record& r);
} // namespace rocprof_kfd
