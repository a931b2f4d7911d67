// MIT License - see LICENSE.
//
// Whether one process's outputs in a folder are an earlier run's leftovers. Processes that
// share a folder each claim it in turn (output_claim.hpp): the first writes plain names, each
// other one `<pid>_<name>` (`STEM_<pid>_<name>` with -o STEM). A rerun into that folder
// replaces the plain files, but the `<pid>_` ones of the earlier run's other processes stay;
// taken with the rerun's, they would add an old run's records to it. rocprof-kfd-merge and
// rocprof-kfd-report both skip them by this rule. Header-only and pure: the report links none
// of the output library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rocprof_kfd
{
// What the rule needs of an output's metadata (summary.json's, or the record file's).
struct run_span
{
    uint64_t                   pid = 0;
    std::string                hostname;
    std::optional<std::string> run_id;       // the rocprof-kfd invocation; none without it
    uint64_t                   start_ns = 0; // CLOCK_BOOTTIME; 0 unknown
    uint64_t                   end_ns   = 0; // 0 unknown (a run that has not ended)
    std::optional<uint64_t>    boot_time_unix_ns;
};

// Whether two runs of one host share a boot clock: without boot times, assumed; with them,
// when they are less than a second apart (a boot time is read as the Unix time minus the
// boot clock, so a step of the real-time clock moves it; a reboot moves it by far more).
inline bool
same_boot(const run_span& a, const run_span& b)
{
    if(a.hostname != b.hostname) return false;
    if(!a.boot_time_unix_ns && !b.boot_time_unix_ns) return true;
    if(!a.boot_time_unix_ns || !b.boot_time_unix_ns) return false;
    const uint64_t x = *a.boot_time_unix_ns, y = *b.boot_time_unix_ns;
    return (x > y ? x - y : y - x) < 1'000'000'000;
}

// Whether time `a_ns` of run `a` comes before time `b_ns` of run `b`: on their boot clock
// where they share one (immune to steps of the real-time clock between the two runs), else
// on Unix time through their boot times (a reboot between two runs restarts the boot
// clock); unknown (false) without either.
inline bool
before(const run_span& a, uint64_t a_ns, const run_span& b, uint64_t b_ns)
{
    if(same_boot(a, b)) return a_ns < b_ns;
    if(!a.boot_time_unix_ns || !b.boot_time_unix_ns) return false;
    return static_cast<unsigned __int128>(*a.boot_time_unix_ns) + a_ns <
           static_cast<unsigned __int128>(*b.boot_time_unix_ns) + b_ns;
}

// Whether run `earlier` had ended when run `later` started; never when `earlier`'s end is
// unknown.
inline bool
ended_before_start_of(const run_span& earlier, const run_span& later)
{
    return earlier.end_ns != 0 && later.start_ns != 0 &&
           before(earlier, earlier.end_ns, later, later.start_ns);
}

// Whether `stem` is the name a process `pid` gave its files when `base_stem` was taken:
// `<pid>` beside plain names, `STEM_<pid>` beside `STEM`.
inline bool
renamed_from(const std::string& stem, uint64_t pid, const std::string& base_stem)
{
    const std::string p = std::to_string(pid);
    if(base_stem.empty()) return stem == p;
    return stem == base_stem + "_" + p;
}

// Whether output `own` (stem `stem`) is an earlier run's, beside `base` (stem `base_stem`, in
// the same folder): named after its process as renamed from `base_stem`, of another
// rocprof-kfd run than `base`'s, and ended before `base`'s started. Runs that overlapped in
// time are all current: `mpirun -np 8 rocprof-kfd -d out` starts one run per rank.
inline bool
left_by_earlier_run(const std::string& stem, const run_span& own, const std::string& base_stem,
                    const run_span& base)
{
    return stem != base_stem && renamed_from(stem, own.pid, base_stem) && own.run_id &&
           base.run_id && *own.run_id != *base.run_id && ended_before_start_of(own, base);
}

// Whether output `own` may be an earlier run's that the rule cannot tell: as above, but its
// run has no end (it did not finish: killed, or still running) and started before `base`'s.
// Kept, since a run still going is current; the tools say so, so that a user can remove it.
inline bool
maybe_left_by_earlier_run(const std::string& stem, const run_span& own,
                          const std::string& base_stem, const run_span& base)
{
    return stem != base_stem && renamed_from(stem, own.pid, base_stem) && own.run_id &&
           base.run_id && *own.run_id != *base.run_id && own.end_ns == 0 && own.start_ns != 0 &&
           base.start_ns != 0 && before(own, own.start_ns, base, base.start_ns);
}
} // namespace rocprof_kfd
