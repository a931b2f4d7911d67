// MIT License - see LICENSE.
//
// What every record writer does: open its files, take records as they arrive (one call per
// record, end_batch() after each delivered buffer), and close its documents at finish().
// Writers never throw to their caller and never stop the run: a file that fails reports
// one line and stops growing, and what it holds stays valid.
#pragma once

#include "model.hpp"
#include "summary.hpp"

#include <memory>
#include <string>
#include <vector>

namespace rocprof_kfd
{
class record_writer
{
public:
    virtual ~record_writer() = default;
    // dir: the output directory; stem: the file-name stem ("" = none). run: metadata and
    // agents (the loss counters are not known yet). False when no file could be created.
    virtual bool open(const std::string& dir, const std::string& stem, const run_info& run) = 0;
    virtual void write(const record& r)                                                     = 0;
    virtual void end_batch() {}
    // run now has end_ns and the loss counters; s is the run's summary.
    virtual void finish(const run_info& run, const summary_builder& s) = 0;
    // The files this writer wrote without error (valid after finish()).
    virtual std::vector<std::string> files() const = 0;
};

// dir/name or dir/stem_name.
std::string output_path(const std::string& dir, const std::string& stem, const std::string& name);

// The writer of one format: "csv", "json", "perfetto", "chrome-trace", "sqlite"
// (nullptr for anything else; "summary" is written by write_summary_files).
std::unique_ptr<record_writer> make_writer(const std::string& format);

// summary.json (always) and summary.txt; returns the paths written.
std::vector<std::string> write_summary_files(const std::string& dir, const std::string& stem,
                                             const run_info& run, const summary_builder& s,
                                             bool complete, bool with_text);
// Writes text to path through output_file (O_NOFOLLOW, 0644); false on error (reported).
bool write_whole_file(const std::string& path, const std::string& text);
} // namespace rocprof_kfd
