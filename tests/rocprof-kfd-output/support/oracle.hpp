// MIT License - see LICENSE.
//
// Test support for the rocprof-kfd outputs, written independently of the code under test:
//   - the generator's oracle (.expect.csv) as records, and every number of the summary
//     recomputed from it (counts, durations, percentiles, directions, faults, suspensions,
//     2 MiB ranges, thrashing) with plain exhaustive code;
//   - readers of every output format that turn records back into the oracle's 14-column
//     line (operation,pid,start_ns,end_ns,node_or_from,to,prefetch,preferred,trigger,
//     addr_start,addr_end,read_fault,migrated,rescheduled), so each format is compared
//     field by field with the oracle;
//   - running a program with the emulator and the tool preloaded.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kfd_out_test
{
struct oracle_record
{
    std::string op; // PAGE_FAULT, PAGE_MIGRATE, QUEUE_SUSPEND, UNMAP_FROM_GPU
    uint64_t    pid = 0, start = 0, end = 0, node = 0, to = 0, prefetch = 0, preferred = 0;
    int         trigger    = -1;
    uint64_t    addr_start = 0, addr_end = 0;
    int         read_fault = 0, migrated = 0, rescheduled = 0;
    std::string host; // in a merge of several hosts, the record's (its GPUs are its own)
};

// The records of an .expect.csv whose pid is self_pid (all when self_pid is empty), with
// their pid replaced by new_pid (when non-zero).
std::vector<oracle_record> read_expect(const std::string& path, const std::string& self_pid,
                                       uint64_t new_pid);
// The pid of "#@ self" in a log ("" when none).
std::string self_pid_of_log(const std::string& log_path);
// The oracle's line of a record (what every format reader below returns).
std::string              canonical(const oracle_record& r);
std::vector<std::string> canonical_sorted(const std::vector<oracle_record>& v);

// The contract's trigger names (fwd.h enums, lower case without prefix).
std::string trigger_name_of(const std::string& op, int trigger);
int         trigger_value_of(const std::string& op, const std::string& name);

// --- Format readers: records as canonical lines, sorted ----------------------------------
std::vector<std::string> records_from_csv(const std::string& dir, std::string& error);
std::vector<std::string> records_from_json(const std::string& path, std::string& error);
std::vector<std::string> records_from_sqlite(const std::string& path, std::string& error);
// Names of the indexes of a database (sorted; SQLite's automatic ones left out).
std::vector<std::string> sqlite_indexes(const std::string& path);

struct trace_check
{
    std::vector<std::string> records; // canonical, sorted
    size_t packets = 0, track_descriptors = 0, process_tracks = 0, counter_tracks = 0;
    size_t slice_begins = 0, slice_ends = 0, instants = 0, counters = 0;
    std::vector<std::string> problems;      // structural errors found
    std::vector<std::string> process_names; // ProcessDescriptor names / chrome process_name
    std::vector<uint64_t>    process_pids;
};
trace_check check_chrome_trace(const std::string& path);
trace_check check_pftrace(const std::string& path); // runs protoc --decode_raw

// --- The summary recomputed from the oracle ---------------------------------------------
struct op_expect
{
    uint64_t              count = 0, total = 0, min = UINT64_MAX, max = 0;
    std::vector<uint64_t> durations;
};
// A range is a 2 MiB block of one process's address space: equal addresses of two processes
// (a merge) are two ranges.
struct range_expect
{
    uint64_t pid = 0, block = 0, faults = 0, migrations = 0, htod = 0, dtoh = 0, dtod = 0,
             bytes = 0;
};
struct thrash_expect
{
    uint64_t    pid = 0, block = 0, a = 0, b = 0, migrations = 0, bytes = 0;
    bool        forth = false, back = false;
    std::string host; // a and b are its nodes
};
struct summary_expect
{
    std::map<std::pair<std::string, std::string>, op_expect> ops; // (operation, trigger)
    std::map<std::string, op_expect>                         by_op;
    // Nodes of one host: a GPU is (host, gpu_id), the host "" unless the records name one.
    using gpu = std::pair<std::string, uint64_t>;
    std::map<std::tuple<std::string, uint64_t, uint64_t>, std::tuple<uint64_t, uint64_t, uint64_t>>
        directions; // (host, from, to) -> count, bytes, total_ns
    std::map<gpu, std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>>
                                                 faults;   // gpu -> rm, ru, wm, wu
    std::map<gpu, std::pair<uint64_t, uint64_t>> suspends; // gpu -> count, total
    std::vector<range_expect>                    top_by_faults, top_by_bytes; // sorted, at most 10
    std::vector<thrash_expect>                   thrashing;                   // sorted, at most 10
    uint64_t                                     thrashing_count = 0;         // all, before the cut
    size_t                                       distinct_ranges = 0;
};
summary_expect expect_summary(const std::vector<oracle_record>& records, uint64_t threshold);
// Nearest-rank quantile of values.
uint64_t    nearest_rank(std::vector<uint64_t> values, double q);
std::string hex_of(uint64_t v);

// --- Running ------------------------------------------------------------------------------
struct run_result
{
    int         exit_code = -1; // -1: killed
    int         signal    = 0;
    std::string out; // stdout and stderr together
    long        max_rss_kb = 0;
};
run_result run_program(const std::vector<std::string>&                         argv,
                       const std::vector<std::pair<std::string, std::string>>& env,
                       int                                                     timeout_s = 120);
// Runs /bin/true with the emulator and the tool preloaded, replaying log.
run_result replay_with_tool(const std::string&                                      log,
                            const std::vector<std::pair<std::string, std::string>>& env,
                            const std::string& program = "/bin/true");

const char* emulator_library();
const char* tool_library();
// The LD_PRELOAD value of a replay: the emulator and the tool, after the sanitizer runtime
// in a sanitizer build (which refuses to start otherwise).
std::string tool_preload();
const char* generator_program();
const char* merge_program();
const char* logs_dir();

// A fresh folder under TMPDIR, removed with everything in it.
struct scratch
{
    scratch();
    ~scratch();
    scratch(const scratch&)               = delete;
    scratch&    operator=(const scratch&) = delete;
    std::string path;
    std::string file(const std::string& name) const { return path + "/" + name; }
};
std::string              slurp(const std::string& path);
void                     spit(const std::string& path, const std::string& text);
std::vector<std::string> split(const std::string& text, char sep);
// A log with "#@ timestamps keep" first, so the records keep the oracle's times.
std::string keep_times_copy(const std::string& log, const std::string& dir);
} // namespace kfd_out_test
