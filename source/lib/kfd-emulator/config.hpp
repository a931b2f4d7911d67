// MIT License - see LICENSE.
//
// The emulator's configuration: the `#@` directives of the log (see docs/kfd-emulator.md) and
// what a scan of the whole log tells before replay starts (GPU list, self pid, first
// timestamp, how many lines each GPU will get). The log is streamed, never loaded.
#pragma once

#include "line_format.hpp"
#include "line_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kfd_emu
{
enum class pace_kind
{
    lossless, // wait for FIFO space, never drop
    realtime, // the log's own timing
    max,      // as fast as possible, drop when full
    rate,     // a fixed number of events per second, drop when full
};

struct gpu_spec
{
    uint32_t    gpu_id = 0;
    std::string name; // gfx target, e.g. gfx90a
};

struct smi_fault
{
    uint32_t gpu_id = 0;
    int      error  = 0;
};

struct read_fault
{
    int      error = 0; // 0: none; EINTR or EFAULT
    uint64_t every = 0; // fail every Nth read that would return data; 0 with once
    bool     once  = false;
};

struct vanish_fault
{
    uint32_t gpu_id  = 0;
    uint64_t line    = 0; // 1-based line number of the log
    bool     pollerr = false;
};

// Positional state of a pass over the log: `#@ route` changes where events without a node
// field go.
struct route_state
{
    long gpu_index = 0; // -1: nowhere (unroutable)
};

inline constexpr uint32_t default_version_major = 1;
inline constexpr uint32_t default_version_minor = 17;
inline constexpr size_t   min_fifo_bytes        = 96;
inline constexpr size_t   max_fifo_bytes        = 1u << 20;
inline constexpr size_t   max_gpus              = 64;
// Warnings kept (the rest are only counted), and the length each one is cut to.
inline constexpr size_t max_warnings     = 100;
inline constexpr size_t max_warning_text = 300;

// A file as fstat() saw it: the producer reads the log again, and trusts the scan's checks
// of its lines only while it is the same file, unchanged.
struct file_identity
{
    uint64_t dev      = 0;
    uint64_t ino      = 0;
    int64_t  size     = -1;
    int64_t  mtime_ns = 0;

    bool operator==(const file_identity& o) const
    {
        return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
    }
};

// The identity of an open fd (size -1 when fstat fails).
file_identity identity_of(int fd);

struct config
{
    std::string               log_path;
    std::vector<gpu_spec>     gpus; // emulated GPUs, topology nodes 1..N in this order
    bool                      gpus_from_directives = false;
    size_t                    fifo_bytes           = 8192;
    uint32_t                  version_major        = default_version_major;
    uint32_t                  version_minor        = default_version_minor;
    int                       version_error        = 0; // fault: GET_VERSION fails with it
    bool                      superuser            = false;
    bool                      all_process_required = false; // 6.0-6.15: superuser needs bit 63
    bool                      has_self             = false;
    uint32_t                  self_pid             = 0;
    bool                      self_from_directive  = false;
    bool                      rebase               = true;
    pace_kind                 pace                 = pace_kind::lossless;
    double                    rate                 = 0;
    int                       open_error           = 0; // fault: open("/dev/kfd") fails with it
    std::vector<smi_fault>    smi_faults;
    read_fault                read_fault_rule;
    bool                      reads_wait_for_replay = false; // fault read eagain until-replayed
    std::vector<vanish_fault> vanish_faults;

    // From the scan of the log.
    bool                     has_first_ns = false;
    int64_t                  first_ns     = 0;
    uint64_t                 line_count   = 0; // physical lines
    uint64_t                 event_lines  = 0; // lines that are events (routable or not)
    uint64_t                 unroutable   = 0; // malformed, or for a GPU not emulated
    uint64_t                 malformed    = 0; // refused by parse_event, or cut at max_line
    file_identity            log_file;         // the log as the scan read it
    std::vector<uint64_t>    lines_per_gpu;
    std::vector<std::string> warnings;             // at most max_warnings
    uint64_t                 warnings_omitted = 0; // those beyond
    std::string              load_error;           // why the log cannot be replayed, if so

    long gpu_index(uint32_t gpu_id) const;
    int  smi_error(uint32_t gpu_id) const; // 0 when the SMI ioctl succeeds for it
};

// What one log line is, after directives were applied.
enum class line_kind
{
    ignored,    // blank or comment
    directive,  // "#@ ..."
    event,      // routed to gpu
    unroutable, // malformed or for no emulated GPU
};

// `#@ wait-mask <gpu_id> with|without <id>`: the replay delivers the next event only once
// the GPU's clients' masks enable (with: at least one live client) or no longer enable
// (without: no live client) that event id.
struct mask_wait
{
    bool     active = false;
    long     gpu    = -1; // index in config::gpus
    uint32_t id     = 0;  // 1..64
    bool     with   = false;
};

struct classified_line
{
    line_kind    kind = line_kind::ignored;
    parsed_event event;
    long         gpu = -1;
    mask_wait    wait; // a `#@ wait-mask` directive line
};

// Classifies a line of the log during a pass with a final configuration (`#@ route` and
// `#@ wait-mask` are the directives that matter here: route updates `route`, wait-mask
// fills `wait`).
// trusted: the scan found every event line of this same file well formed, so only the fields
// that route and rewrite it are read (parse_routing_fields).
classified_line classify_line(std::string_view line, bool too_long, const config& cfg,
                              route_state& route, bool trusted = false);

struct file_io
{
    int (*open_fn)(const char*, int, ...);
    read_function read_fn;
    int (*close_fn)(int);
};

// Reads the directives and scans the log. Returns false (and error) when the log cannot be
// read; bad directives only add warnings.
bool load_config(const std::string& path, const file_io& io, config& out, std::string& error);

// Adds a warning, keeping at most max_warnings of max_warning_text bytes each.
void add_warning(config& cfg, std::string text);

// Applies one directive line (starting with "#@") to cfg; adds a warning when it is invalid.
void apply_directive(std::string_view line, uint64_t line_number, config& cfg);

const char* pace_name(pace_kind pace);
int         errno_from_name(std::string_view name); // 0 when unknown
const char* errno_name(int error);
} // namespace kfd_emu
