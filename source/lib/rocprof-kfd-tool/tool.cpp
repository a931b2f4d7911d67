// MIT License - see LICENSE.
//
// librocprofiler-sdk-tool-kfd.so: the bundled tool of rocprof-kfd. Configured by the
// environment of docs/rocprof-kfd-design.md; streams every page-migration record to the
// writers as buffers arrive (bounded memory: only the summary's aggregates stay), writes the
// summary at finalization and prints `rocprof-kfd: wrote PATH` lines.
//
// It never harms the host: no exception leaves it, every error is one line on stderr naming
// the file, and an output that cannot be written is skipped while the program runs on.
// rocprofiler_configure may run before this library's C++ static constructors: all state
// lives behind one plain pointer set there.
#include "config.hpp"
#include "flusher.hpp"
#include "output_claim.hpp"

#include <rocprof-kfd-output/output_file.hpp>
#include <rocprof-kfd-output/summary.hpp>
#include <rocprof-kfd-output/writer.hpp>

#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace rocprof_kfd
{
namespace
{
struct tool_state
{
    tool_config                                 config;
    run_info                                    run;
    std::string                                 directory;
    std::string                                 stem;
    std::unique_ptr<summary_builder>            summary;
    std::vector<std::unique_ptr<record_writer>> writers;
    output_file                                 raw;
    std::string                                 raw_line; // reused: no allocation per event
    bool                                        raw_enabled = false;
    // The GPU of the raw file's last `#@ route` directive (0: none yet).
    uint32_t                 raw_route      = 0;
    bool                     summary_format = false;
    std::mutex               lock;
    rocprofiler_context_id_t context       = {};
    rocprofiler_buffer_id_t  buffer        = {}; // page-migration records (handle 0: none)
    rocprofiler_buffer_id_t  raw_buffer    = {}; // raw KFD events (handle 0: none)
    uint64_t                 records_taken = 0;  // page-migration records on_records took in
    periodic_flusher         flusher;            // see flusher.hpp
    bool                     finalized = false;
};

tool_state* state = nullptr; // plain data: set in rocprofiler_configure

const char*
env(const char* name)
{
    return secure_getenv(name);
}

// The program's stderr when the tool was configured, by identity. A program may close fd 2
// and open a file of its own there (or GNU cat closes it at exit): text written to fd 2 at
// exit would then land in the program's data. So the tool writes to fd 2 only while it is the
// same file as then (plain data: set in rocprofiler_configure, before any thread of ours).
struct file_identity
{
    dev_t device = 0;
    ino_t inode  = 0;
    bool  valid  = false;
};
file_identity stderr_identity;

file_identity
identity_of(int fd)
{
    struct stat st;
    if(::fstat(fd, &st) != 0) return {};
    return {st.st_dev, st.st_ino, true};
}

bool
stderr_is_the_programs()
{
    const file_identity now = identity_of(STDERR_FILENO);
    return stderr_identity.valid && now.valid && now.device == stderr_identity.device &&
           now.inode == stderr_identity.inode;
}

void
write_to_stderr(const std::string& text)
{
    if(!stderr_is_the_programs()) return;
    ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    (void)n;
}

void
say(const std::string& line)
{
    write_to_stderr("rocprof-kfd: " + line + "\n");
}

uint64_t
boottime_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The Unix time at which the boot clock was 0: the real-time clock read between two readings of
// the boot clock, less their midpoint. Absent if the real-time clock reads before the boot.
std::optional<uint64_t>
boot_time_unix_ns()
{
    timespec real{};
    uint64_t before = boottime_ns();
    clock_gettime(CLOCK_REALTIME, &real);
    uint64_t after = boottime_ns();
    uint64_t unix_ns =
        static_cast<uint64_t>(real.tv_sec) * 1000000000ull + static_cast<uint64_t>(real.tv_nsec);
    uint64_t boot_ns = before + (after - before) / 2;
    if(unix_ns < boot_ns) return std::nullopt;
    return unix_ns - boot_ns;
}

std::vector<std::string>
command_line(const tool_config& config)
{
    std::vector<std::string> args;
    if(!config.command_line.empty())
    {
        // One word a line (a word may hold spaces: a log's path).
        std::string word;
        for(char c : config.command_line + "\n")
        {
            if(c == '\n')
            {
                if(!word.empty()) args.push_back(word);
                word.clear();
            }
            else
                word += c;
        }
        return args;
    }
    FILE* f = std::fopen("/proc/self/cmdline", "re");
    if(!f) return args;
    std::string arg;
    int         c;
    size_t      total = 0;
    while((c = std::fgetc(f)) != EOF && total++ < 65536)
    {
        if(c == '\0')
        {
            args.push_back(arg);
            arg.clear();
        }
        else
            arg += static_cast<char>(c);
    }
    if(!arg.empty()) args.push_back(arg);
    std::fclose(f);
    return args;
}

rocprofiler_status_t
collect_agents(rocprofiler_agent_version_t, const void** agents, size_t count, void* data)
{
    auto* out = static_cast<std::vector<agent_info>*>(data);
    for(size_t i = 0; i < count; ++i)
    {
        const auto* a = static_cast<const rocprofiler_agent_v0_t*>(agents[i]);
        agent_info  info;
        info.gpu_id  = a->gpu_id;
        info.node_id = a->node_id;
        info.is_gpu  = a->type == ROCPROFILER_AGENT_TYPE_GPU;
        info.name    = info.is_gpu ? (a->name ? a->name : "GPU") : "CPU";
        out->push_back(info);
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

void
fill_run_info(tool_state& s)
{
    run_info& run  = s.run;
    run.command    = command_line(s.config);
    run.pid        = static_cast<uint32_t>(getpid());
    run.ppid       = static_cast<uint32_t>(getppid());
    char host[256] = {};
    if(gethostname(host, sizeof(host) - 1) == 0) run.hostname = host;
    std::string rank = rank_from(env);
    if(!rank.empty()) run.rank = rank;
    uint32_t major = 0, minor = 0, patch = 0;
    rocprofiler_get_version(&major, &minor, &patch);
    run.sdk_version =
        std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    utsname u{};
    if(uname(&u) == 0) run.kernel_release = u.release;
    const char* emulator = env("KFD_EMULATOR_LOG");
    run.emulated         = emulator && *emulator;
    const char* run_id   = env("ROCPROF_KFD_RUN_ID");
    if(run_id && *run_id) run.run_id = run_id;
    run.start_ns          = boottime_ns();
    run.boot_time_unix_ns = boot_time_unix_ns();
    rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, collect_agents,
                                       sizeof(rocprofiler_agent_v0_t), &run.agents);
}

// Text of a raw event: the bytes up to the last non-NUL one (lines may hold NUL bytes), and
// the NUL of a line that ended in " \0" (a 6.12 restore: the record's padding hides it, and
// without it the line is no restore the parser knows). No other kernel line ends in a space.
std::string_view
raw_text(const rocprofiler_kfd_event_record_t& e)
{
    size_t n = sizeof(e.text);
    while(n > 0 && e.text[n - 1] == '\0')
        --n;
    if(n > 0 && n < sizeof(e.text) && e.text[n - 1] == ' ') ++n;
    return std::string_view(e.text, n);
}

// Whether the event's line has a node field: the emulator sends a line without one (VM
// fault, thermal, reset, process, id 14) to the GPU of the last `#@ route` directive.
bool
raw_line_names_its_gpu(int32_t operation)
{
    return operation >= ROCPROFILER_KFD_EVENT_MIGRATE_START &&
           operation <= ROCPROFILER_KFD_EVENT_UNMAP_FROM_GPU;
}

void
open_raw_file(tool_state& s, const placeholder_values& values)
{
    std::string path  = expand_placeholders(s.config.raw_file, values, env);
    size_t      slash = path.rfind('/');
    if(slash != std::string::npos && slash > 0 && !make_directories(path.substr(0, slash)))
    {
        say("cannot create the directory of " + path + ": " + std::strerror(errno));
        return;
    }
    // Several processes of one run may be given one raw file (a --raw without %pid%, and a
    // program that runs others): each writes its own, as for the output folders.
    const char* run_id = env("ROCPROF_KFD_RUN_ID");
    auto        claim  = claim_file(path, s.run.pid, run_id ? run_id : "");
    if(claim.renamed)
        say("process " + std::to_string(claim.other_pid) + " writes " + path +
            " too: this process's raw events go to " + claim.path);
    path = claim.path;
    if(!s.raw.open(path)) return;
    s.raw_enabled = true;
    // Emulator directives (comments for anything else) so the file replays as it was read.
    std::string header = "# rocprof-kfd raw KFD SMI events of pid " + std::to_string(s.run.pid) +
                         " on " + s.run.hostname + "\n";
    for(const auto& a : s.run.agents)
    {
        if(!a.is_gpu) continue;
        char line[128];
        std::snprintf(line, sizeof(line), "#@ gpu %llx %s\n",
                      static_cast<unsigned long long>(a.gpu_id), a.name.c_str());
        header += line;
    }
    header += "#@ self " + std::to_string(s.run.pid) + "\n";
    s.raw.append(header);
    s.raw.flush();
}

void
on_records(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t** headers,
           size_t count, void*, uint64_t drops)
{
    tool_state* s = state;
    if(!s) return;
    try
    {
        std::lock_guard<std::mutex> guard(s->lock);
        if(s->finalized) return;
        s->run.loss.buffer_drops += drops;
        for(size_t i = 0; i < count; ++i)
        {
            const rocprofiler_record_header_t* h = headers[i];
            if(!h || !h->payload || h->category != ROCPROFILER_BUFFER_CATEGORY_TRACING) continue;
            if(h->kind == ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION)
            {
                const auto& r = *static_cast<const record*>(h->payload);
                s->summary->add(r);
                for(auto& w : s->writers)
                    w->write(r);
                ++s->records_taken;
            }
            else if(h->kind == static_cast<uint32_t>(ROCPROFILER_BUFFER_TRACING_KFD_EVENT) &&
                    s->raw_enabled)
            {
                const auto& e = *static_cast<const rocprofiler_kfd_event_record_t*>(h->payload);
                s->raw_line.clear();
                if(!raw_line_names_its_gpu(e.operation) && e.gpu_id != s->raw_route)
                {
                    char route[32];
                    std::snprintf(route, sizeof(route), "#@ route %x\n", e.gpu_id);
                    s->raw_line += route;
                    s->raw_route = e.gpu_id;
                }
                s->raw_line.append(raw_text(e));
                s->raw_line += '\n';
                s->raw.append(s->raw_line); // one line, one unit
            }
        }
        for(auto& w : s->writers)
            w->end_batch();
        if(s->raw_enabled) s->raw.flush();
    }
    catch(const std::exception& e)
    {
        say(std::string("dropped a batch of records: ") + e.what());
    }
    catch(...)
    {
        say("dropped a batch of records");
    }
}

// The SDK's record counters are the process's: another tool tracing page migration in this
// process adds its records to records_emitted and its buffer's drops to records_dropped
// (and raw_events_dropped). This tool's losses are its own buffers': those three come from
// them (0 for a buffer it does not have). False when a buffer's counts cannot be read.
bool
count_own_records(tool_state& s)
{
    rocprofiler_kfd_buffer_stats_t records{}, raw{};
    records.size = raw.size = sizeof(rocprofiler_kfd_buffer_stats_t);
    if(s.buffer.handle != 0 &&
       rocprofiler_kfd_get_buffer_stats(s.buffer, &records) != ROCPROFILER_STATUS_SUCCESS)
        return false;
    if(s.raw_buffer.handle != 0 &&
       rocprofiler_kfd_get_buffer_stats(s.raw_buffer, &raw) != ROCPROFILER_STATUS_SUCCESS)
        return false;
    s.run.loss.stats.records_emitted    = records.records_stored;
    s.run.loss.stats.records_dropped    = records.records_dropped;
    s.run.loss.stats.raw_events_dropped = raw.records_dropped;
    // Handed to on_records but not taken in: a batch whose handling failed part way.
    const uint64_t handed           = records.records_delivered + records.records_in_delivery;
    s.run.loss.records_not_received = handed > s.records_taken ? handed - s.records_taken : 0;
    return true;
}

// rocprof-kfd's list of this run's outputs (ROCPROF_KFD_RUN_LIST, a file it created): one
// line "<pid>\t<stem>\t<absolute folder>" per process, appended in one write (O_APPEND: lines
// of processes writing at once do not interleave). rocprof-kfd repairs and reports exactly
// these folders after the program ended, whatever placeholders or working folders made them.
void
note_in_run_list(uint32_t pid, const std::string& directory, const std::string& stem)
{
    const char* list = env("ROCPROF_KFD_RUN_LIST");
    if(list == nullptr || *list == '\0') return;
    char* absolute = realpath(directory.c_str(), nullptr);
    if(absolute == nullptr) return;
    std::string line = std::to_string(pid) + "\t" + stem + "\t" + absolute + "\n";
    std::free(absolute);
    if(line.find('\n') != line.size() - 1) return; // a name with a line break: not listable
    int fd = ::open(list, O_WRONLY | O_APPEND | O_CLOEXEC);
    if(fd < 0) return;
    ssize_t n = ::write(fd, line.data(), line.size());
    (void)n;
    ::close(fd);
}

// The flusher's work (flusher.hpp): hands each buffer holding records to on_records. Runs on
// the flusher's thread with no lock of the tool held (on_records takes s.lock).
void
flush_pending(const tool_state& s)
{
    for(const auto& id : {s.buffer, s.raw_buffer})
    {
        rocprofiler_kfd_buffer_stats_t st{};
        st.size = sizeof(st);
        if(id.handle != 0 &&
           rocprofiler_kfd_get_buffer_stats(id, &st) == ROCPROFILER_STATUS_SUCCESS &&
           st.records_pending != 0)
            rocprofiler_flush_buffer(id);
    }
}

bool
create_buffer(rocprofiler_context_id_t ctx, rocprofiler_buffer_id_t* buffer)
{
    // 4 MiB delivered at 3 MiB: few callbacks, and a LOSSLESS buffer never drops below its cap.
    return rocprofiler_create_buffer(ctx, 4 << 20, 3 << 20, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                     on_records, nullptr, buffer) == ROCPROFILER_STATUS_SUCCESS;
}

int
tool_initialize(rocprofiler_client_finalize_t, void*)
{
    tool_state* s = state;
    if(!s) return 0;
    try
    {
        for(const auto& w : s->config.warnings)
            say(w);
        fill_run_info(*s);
        placeholder_values values{s->run.pid, s->run.ppid, s->run.hostname,
                                  s->run.rank ? *s->run.rank : ""};
        s->directory = expand_placeholders(s->config.directory, values, env);
        s->stem      = expand_placeholders(s->config.stem, values, env);
        s->summary   = std::make_unique<summary_builder>(s->config.thrashing_threshold);
        if(!make_directories(s->directory))
        {
            say("cannot create the output directory " + s->directory + ": " + std::strerror(errno) +
                "; nothing will be written");
            s->summary.reset(); // finalization then writes nothing either
            return 0;
        }
        // Another process of this run writes here already (a -d without %pid%): ours get
        // our pid rather than overwrite its files.
        const char* run_id = env("ROCPROF_KFD_RUN_ID");
        auto        claim  = claim_output(s->directory, s->stem, s->run.pid, run_id ? run_id : "");
        if(claim.renamed)
            say("process " + std::to_string(claim.other_pid) + " writes its files in " +
                s->directory + " too: this process's are named " + claim.stem + "_<name>");
        s->stem = claim.stem;
        note_in_run_list(s->run.pid, s->directory, s->stem);
        // A summary marked incomplete now: replaced at finalization; after a crash
        // `rocprof-kfd-merge --repair` rebuilds it from the records.
        write_summary_files(s->directory, s->stem, s->run, *s->summary, false, false);
        for(const auto& f : s->config.formats)
        {
            if(f == "summary")
            {
                s->summary_format = true;
                continue;
            }
            auto w = make_writer(f);
            if(w && w->open(s->directory, s->stem, s->run)) s->writers.push_back(std::move(w));
        }
        if(!s->config.raw_file.empty()) open_raw_file(*s, values);

        rocprofiler_buffer_id_t buffer = {};
        if(rocprofiler_create_context(&s->context) != ROCPROFILER_STATUS_SUCCESS ||
           !create_buffer(s->context, &buffer))
        {
            say("cannot create a context or buffer; not tracing");
            return 0;
        }
        std::vector<rocprofiler_tracing_operation_t> ops(s->config.operations.begin(),
                                                         s->config.operations.end());
        rocprofiler_status_t status = rocprofiler_configure_buffer_tracing_service(
            s->context, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, ops.data(), ops.size(), buffer);
        if(status == ROCPROFILER_STATUS_SUCCESS) s->buffer = buffer;
        if(status != ROCPROFILER_STATUS_SUCCESS)
        {
            say(std::string("page-migration tracing not available: ") +
                rocprofiler_get_status_string(status));
            return 0;
        }
        if(s->raw_enabled)
        {
            rocprofiler_buffer_id_t raw_buffer = {};
            if(!create_buffer(s->context, &raw_buffer) ||
               rocprofiler_configure_buffer_tracing_service(
                   s->context, ROCPROFILER_BUFFER_TRACING_KFD_EVENT, nullptr, 0, raw_buffer) !=
                   ROCPROFILER_STATUS_SUCCESS)
                say("raw KFD events not available; " + s->raw.path() + " stays empty");
            else
                s->raw_buffer = raw_buffer;
        }
        if(rocprofiler_start_context(s->context) != ROCPROFILER_STATUS_SUCCESS)
            say("cannot start tracing");
        else if(!s->flusher.start(std::chrono::seconds(1), [s] { flush_pending(*s); }))
            say("cannot start the flushing thread; a program killed by a signal loses the "
                "records not yet written");
    }
    catch(const std::exception& e)
    {
        say(std::string("initialization failed: ") + e.what());
    }
    catch(...)
    {
        say("initialization failed");
    }
    return 0;
}

void
tool_finalize(void*)
{
    tool_state* s = state;
    if(!s) return;
    try
    {
        s->flusher.stop(); // before s->lock: a flush in progress waits for on_records
        std::lock_guard<std::mutex> guard(s->lock);
        if(s->finalized || !s->summary) return;
        s->finalized           = true;
        s->run.end_ns          = boottime_ns();
        s->run.loss.stats.size = sizeof(rocprofiler_kfd_loss_stats_t);
        s->run.loss.valid =
            rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &s->run.loss.stats) ==
                ROCPROFILER_STATUS_SUCCESS &&
            count_own_records(*s);
        std::vector<std::string> written;
        for(auto& w : s->writers)
        {
            w->finish(s->run, *s->summary);
            for(const auto& f : w->files())
                written.push_back(f);
        }
        if(s->raw_enabled && s->raw.close()) written.push_back(s->raw.path());
        for(const auto& f : write_summary_files(s->directory, s->stem, s->run, *s->summary, true,
                                                s->summary_format))
            written.push_back(f);
        if(s->summary_format && s->config.summary_stderr)
        {
            write_to_stderr(summary_text(s->run, *s->summary));
        }
        for(const auto& f : written)
            say("wrote " + f);
        s->writers.clear();
    }
    catch(const std::exception& e)
    {
        say(std::string("finalization failed: ") + e.what());
    }
    catch(...)
    {
        say("finalization failed");
    }
}
} // namespace
} // namespace rocprof_kfd

extern "C" __attribute__((visibility("default"))) rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t, const char*, uint32_t, rocprofiler_client_id_t* id)
{
    using namespace rocprof_kfd;
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), tool_initialize, tool_finalize, nullptr};
    try
    {
        // Listed twice (LD_PRELOAD and ROCP_TOOL_LIBRARIES): only the first registration
        // traces, or every record would be written twice.
        if(state) return nullptr;
        stderr_identity = identity_of(STDERR_FILENO);
        if(id) id->name = "rocprof-kfd";
        state         = new tool_state();
        state->config = read_config(env);
        return &result;
    }
    catch(...)
    {
        say("cannot configure; not tracing");
        return nullptr;
    }
}
