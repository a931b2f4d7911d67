// MIT License - see LICENSE.
//
// Tool used by the end-to-end tests: records every page-migration record (and raw KFD event
// when asked) and writes them, one CSV line each, to $E2E_OUT at finalize, with the status
// of configuration and the SDK's loss counters. The test process compares that file with
// records it computed by hand (or the generator's model) for the replayed log.
//   E2E_OPS=1,2        operations to trace (default: all)
//   E2E_RAW=1          also trace raw KFD events (ext/kfd.h) into a second buffer
//   E2E_RAW_OPS=7,9    ... only these raw operations (default: all)
//   E2E_STOP_AFTER=N   stop the context once N records were delivered; report how many
//                      records were emplaced by then (via flush) as "stopped_with,N"
//   E2E_POLICY=discard|lossless, E2E_BUFFER_BYTES=N
//   E2E_TOGGLE=N       a thread stops and restarts the context N times while events flow
//   E2E_GAP_MARKERS=1  a second context, always started, receives raw UNMAP_FROM_GPU
//                      events as markers; a thread stops the main context once the first
//                      marker arrived and starts it again once the second did (before any
//                      E2E_TOGGLE toggles). With `#@ wait-mask` in the log around the lines
//                      between the markers, the gap is the same on every run.
//   E2E_MARKER_ALSO_OPS=9  the marker context also traces these raw operations (they are
//                      not markers: only UNMAP_FROM_GPU records count as markers)
//   E2E_FINALIZE_AFTER=N  call the SDK's finalize function from inside the callback once N
//                        records were delivered (the SDK must defer it, not deadlock)
//   E2E_CALLBACK=slow|throw|hang|exit (exit: calls exit(0) from the first callback)
//   E2E_CALLBACK=slow|throw|hang  every callback sleeps 50 ms / throws after recording /
//                                 blocks forever (after recording its batch)
//   E2E_HANG_STARTS_MARKERS=1  with E2E_CALLBACK=hang: the marker context (raw UNMAP_FROM_GPU
//                      events) is created but started only by the first callback, just before
//                      it blocks. With `#@ wait-mask <gpu> with b` in the log, the lines after
//                      it reach the SDK only once the callback is stuck (a gate, not a race).
#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include "common/sched_attr.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace
{
std::mutex&
lock_of_lines()
{
    static auto* m = new std::mutex;
    return *m;
}
std::vector<std::string>&
lines()
{
    static auto* v = new std::vector<std::string>;
    return *v;
}
rocprofiler_context_id_t      ctx{};
rocprofiler_buffer_id_t       pm_buffer{};
rocprofiler_buffer_id_t       raw_buffer{};
std::atomic<uint64_t>         delivered{0};
std::atomic<uint64_t>         drops{0};
std::atomic<bool>             stop_requested{false};
std::thread*                  stopper = nullptr;
std::atomic<int>              callbacks{0};
std::atomic<int>              threads_before{0};
std::atomic<int>              threads_after{0};
std::string                   callback_mode;
rocprofiler_client_finalize_t finalize_function = nullptr;
rocprofiler_client_id_t*      my_client_id      = nullptr;
uint64_t                      finalize_after    = 0;
std::atomic<int>              finalize_calls{0};
std::thread*                  toggler    = nullptr;
uint64_t                      stop_after = 0;
rocprofiler_context_id_t      marker_ctx{};
rocprofiler_buffer_id_t       marker_buffer{};
// Never destroyed: a callback thread may still notify while exit runs static destructors
// (as the README advises tools, state lives in heap objects that are never freed).
std::mutex&              marker_mutex        = *new std::mutex;
std::condition_variable& marker_cv           = *new std::condition_variable;
uint64_t                 markers             = 0; // under marker_mutex
bool                     hang_starts_markers = false;
std::atomic<bool>        markers_started{false};

// Waits until `n` markers arrived (bounded, so that a broken run fails instead of hanging).
bool
wait_for_markers(uint64_t n)
{
    std::unique_lock<std::mutex> lock{marker_mutex};
    return marker_cv.wait_for(lock, std::chrono::seconds{30}, [n] { return markers >= n; });
}

std::string
pid_text(uint32_t pid)
{
    return pid == static_cast<uint32_t>(getpid()) ? "SELF" : std::to_string(pid);
}

std::string
format(const rocprofiler_buffer_tracing_page_migration_record_t& r)
{
    char        text[512];
    std::string pid = pid_text(r.pid);
    switch(r.operation)
    {
    case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
        snprintf(text, sizeof(text), "fault,%s,%" PRIu64 ",%" PRIu64 ",%x,%" PRIx64 ",%d,%d",
                 pid.c_str(), r.start_timestamp, r.end_timestamp, r.page_fault.node_id,
                 r.page_fault.address, r.page_fault.read_fault, r.page_fault.migrated);
        break;
    case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        snprintf(text, sizeof(text),
                 "migrate,%s,%" PRIu64 ",%" PRIu64 ",%" PRIx64 ",%" PRIx64 ",%x,%x,%x,%x,%d",
                 pid.c_str(), r.start_timestamp, r.end_timestamp, r.page_migrate.start_addr,
                 r.page_migrate.end_addr, r.page_migrate.from_node, r.page_migrate.to_node,
                 r.page_migrate.prefetch_node, r.page_migrate.preferred_node,
                 static_cast<int>(r.page_migrate.trigger));
        break;
    case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
        snprintf(text, sizeof(text), "queue,%s,%" PRIu64 ",%" PRIu64 ",%x,%d,%d", pid.c_str(),
                 r.start_timestamp, r.end_timestamp, r.queue_suspend.node_id,
                 static_cast<int>(r.queue_suspend.trigger), r.queue_suspend.rescheduled);
        break;
    case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
        snprintf(text, sizeof(text),
                 "unmap,%s,%" PRIu64 ",%" PRIu64 ",%x,%" PRIx64 ",%" PRIx64 ",%d", pid.c_str(),
                 r.start_timestamp, r.end_timestamp, r.unmap_from_gpu.node_id,
                 r.unmap_from_gpu.start_addr, r.unmap_from_gpu.end_addr,
                 static_cast<int>(r.unmap_from_gpu.trigger));
        break;
    default:
        snprintf(text, sizeof(text), "unknown-operation,%d", r.operation);
        break;
    }
    // Every record must say what it is, with the contract's size.
    if(r.size != sizeof(r) || r.kind != ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION)
        return std::string{"bad-record-header,"} + text;
    return text;
}

std::string
format_raw(const rocprofiler_kfd_event_record_t& r)
{
    char text[256];
    snprintf(text, sizeof(text), "raw,%d,%x,%s,%s", r.operation, r.gpu_id, pid_text(r.pid).c_str(),
             r.operation == ROCPROFILER_KFD_EVENT_QUEUE_RESTORE_RESCHEDULED ? "rescheduled" : "-");
    return text;
}

void add_line(std::string line);

// "policy,nice,runtime" of thread `tid` (sched_getattr; runtime: its slice on Linux 6.12+).
std::string
sched_of(long tid)
{
    rocprofiler::linux_abi::sched_attr_v0 a{};
    if(syscall(SYS_sched_getattr, tid, &a, sizeof(a), 0) != 0) return "error";
    return std::to_string(a.sched_policy) + "," + std::to_string(a.sched_nice) + "," +
           std::to_string(a.sched_runtime);
}

// With E2E_REPORT_SCHED, at the first delivery: the scheduling of the reader thread and of
// this callback thread. The reader is then past its setup (it read the records); the tests
// run a program that waits until a callback ends it (E2E_CALLBACK=exit), so the reader still
// runs then.
void
report_sched_once()
{
    static std::atomic<bool> reported{false};
    if(!getenv("E2E_REPORT_SCHED") || reported.exchange(true)) return;
    std::string reader = "none";
    if(DIR* tasks = opendir("/proc/self/task"))
    {
        while(auto* entry = readdir(tasks))
        {
            if(entry->d_name[0] == '.') continue;
            char path[64];
            char name[32] = {};
            snprintf(path, sizeof(path), "/proc/self/task/%s/comm", entry->d_name);
            FILE* comm = fopen(path, "r");
            if(!comm) continue;
            if(fgets(name, sizeof(name), comm) && strcmp(name, "rocprof-kfd\n") == 0)
                reader = sched_of(strtol(entry->d_name, nullptr, 10));
            fclose(comm);
        }
        closedir(tasks);
    }
    add_line("reader_sched," + reader);
    add_line("callback_sched," + sched_of(syscall(SYS_gettid)));
}

void
on_records(rocprofiler_context_id_t, rocprofiler_buffer_id_t buffer,
           rocprofiler_record_header_t** headers, size_t count, void*, uint64_t drop_count)
{
    if(marker_buffer.handle != 0 && buffer.handle == marker_buffer.handle)
    {
        std::lock_guard<std::mutex> lock{marker_mutex};
        for(size_t i = 0; i < count; ++i)
            if(headers[i]->kind == ROCPROFILER_BUFFER_TRACING_KFD_EVENT &&
               static_cast<const rocprofiler_kfd_event_record_t*>(headers[i]->payload)->operation ==
                   ROCPROFILER_KFD_EVENT_UNMAP_FROM_GPU)
                ++markers;
        marker_cv.notify_all();
        return;
    }
    drops += drop_count;
    report_sched_once();
    {
        std::lock_guard<std::mutex> guard{lock_of_lines()};
        for(size_t i = 0; i < count; ++i)
        {
            if(headers[i]->kind == ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION)
            {
                lines().push_back(
                    format(*static_cast<const rocprofiler_buffer_tracing_page_migration_record_t*>(
                        headers[i]->payload)));
                delivered += 1;
            }
            else if(headers[i]->kind == ROCPROFILER_BUFFER_TRACING_KFD_EVENT)
                lines().push_back(format_raw(
                    *static_cast<const rocprofiler_kfd_event_record_t*>(headers[i]->payload)));
        }
    }
    // Misbehave only after recording and outside the tool's own lock (finalize needs it).
    if(finalize_calls.load() > 0) fprintf(stderr, "e2e-tool: CALLBACK AFTER FINALIZE\n");
    if(finalize_after > 0 && delivered.load() >= finalize_after && finalize_function)
    {
        auto fn           = finalize_function;
        finalize_function = nullptr;
        fn(*my_client_id);
    }
    auto call = ++callbacks;
    if(callback_mode == "slow") std::this_thread::sleep_for(std::chrono::milliseconds{50});
    if(callback_mode == "throw") throw std::runtime_error("tool callback failure");
    if(callback_mode == "exit") exit(0); // an application exiting from a callback
    if(callback_mode == "hang")
    {
        // Another thread (detached: this one never returns to join it): the callback thread
        // is about to block.
        if(hang_starts_markers && !markers_started.exchange(true))
            std::thread([] { rocprofiler_start_context(marker_ctx); }).detach();
        for(;;)
            std::this_thread::sleep_for(std::chrono::seconds{1});
    }
    if(stop_after > 0 && delivered.load() >= stop_after && !stop_requested.exchange(true))
    {
        // Stop from another thread, as an application would; then report what the buffer
        // holds at that point: nothing may arrive after it.
        stopper = new std::thread(
            []
            {
                rocprofiler_stop_context(ctx);
                rocprofiler_flush_buffer(pm_buffer);
                std::lock_guard<std::mutex> g{lock_of_lines()};
                lines().push_back("stopped_with," + std::to_string(delivered.load()));
            });
    }
}

std::vector<rocprofiler_tracing_operation_t>
operations_from_env(const char* name)
{
    std::vector<rocprofiler_tracing_operation_t> ops;
    const char*                                  text = getenv(name);
    for(const char* p = text; p && *p;)
    {
        ops.push_back(static_cast<int>(strtol(p, const_cast<char**>(&p), 10)));
        while(*p == ',')
            ++p;
    }
    return ops;
}

void
add_line(std::string line)
{
    std::lock_guard<std::mutex> guard{lock_of_lines()};
    lines().push_back(std::move(line));
}

int
tool_init(rocprofiler_client_finalize_t fini, void*)
{
    finalize_function = fini;
    finalize_after =
        getenv("E2E_FINALIZE_AFTER") ? strtoull(getenv("E2E_FINALIZE_AFTER"), nullptr, 10) : 0;
    callback_mode = getenv("E2E_CALLBACK") ? getenv("E2E_CALLBACK") : "";
    // A nice value for this thread, which starts the SDK's threads (they inherit it).
    if(const char* nice = getenv("E2E_NICE"))
        setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), atoi(nice));
    rocprofiler_at_internal_thread_create(
        [](rocprofiler_runtime_library_t lib, void*)
        {
            if(lib == ROCPROFILER_LIBRARY) ++threads_before;
        },
        [](rocprofiler_runtime_library_t lib, void*)
        {
            if(lib == ROCPROFILER_LIBRARY) ++threads_after;
        },
        ROCPROFILER_LIBRARY, nullptr);
    auto   policy = (getenv("E2E_POLICY") && strcmp(getenv("E2E_POLICY"), "discard") == 0)
                        ? ROCPROFILER_BUFFER_POLICY_DISCARD
                        : ROCPROFILER_BUFFER_POLICY_LOSSLESS;
    size_t bytes =
        getenv("E2E_BUFFER_BYTES") ? strtoull(getenv("E2E_BUFFER_BYTES"), nullptr, 10) : 65536;
    stop_after = getenv("E2E_STOP_AFTER") ? strtoull(getenv("E2E_STOP_AFTER"), nullptr, 10) : 0;
    rocprofiler_create_context(&ctx);
    rocprofiler_create_buffer(ctx, bytes, bytes / 2, policy, on_records, nullptr, &pm_buffer);
    auto ops    = operations_from_env("E2E_OPS");
    auto status = rocprofiler_configure_buffer_tracing_service(
        ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, ops.data(), ops.size(), pm_buffer);
    add_line("configure," + std::to_string(status));
    if(getenv("E2E_RAW"))
    {
        rocprofiler_create_buffer(ctx, 65536, 0, ROCPROFILER_BUFFER_POLICY_LOSSLESS, on_records,
                                  nullptr, &raw_buffer);
        auto raw_ops = operations_from_env("E2E_RAW_OPS");
        auto raw     = rocprofiler_configure_buffer_tracing_service(
                ctx, ROCPROFILER_BUFFER_TRACING_KFD_EVENT, raw_ops.data(), raw_ops.size(), raw_buffer);
        add_line("configure_raw," + std::to_string(raw));
    }
    const bool gap_markers = getenv("E2E_GAP_MARKERS") != nullptr;
    hang_starts_markers = getenv("E2E_HANG_STARTS_MARKERS") != nullptr && callback_mode == "hang";
    if(gap_markers || hang_starts_markers)
    {
        rocprofiler_create_context(&marker_ctx);
        rocprofiler_create_buffer(marker_ctx, 65536, 0, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                  on_records, nullptr, &marker_buffer);
        auto marker_ops = operations_from_env("E2E_MARKER_ALSO_OPS");
        marker_ops.push_back(ROCPROFILER_KFD_EVENT_UNMAP_FROM_GPU);
        auto status = rocprofiler_configure_buffer_tracing_service(
            marker_ctx, ROCPROFILER_BUFFER_TRACING_KFD_EVENT, marker_ops.data(), marker_ops.size(),
            marker_buffer);
        add_line("configure_markers," + std::to_string(status));
        if(gap_markers)
            add_line("start_markers," + std::to_string(rocprofiler_start_context(marker_ctx)));
    }
    add_line("start," + std::to_string(rocprofiler_start_context(ctx)));
    const char* toggles = getenv("E2E_TOGGLE");
    if(toggles || gap_markers)
    {
        int n   = toggles ? atoi(toggles) : 0;
        toggler = new std::thread(
            [n, gap_markers]
            {
                if(gap_markers)
                {
                    // What came before the first marker was read while the context ran.
                    if(!wait_for_markers(1)) add_line("gap_timeout,1");
                    add_line("gap_stop," + std::to_string(rocprofiler_stop_context(ctx)));
                    if(!wait_for_markers(2)) add_line("gap_timeout,2");
                    add_line("gap_start," + std::to_string(rocprofiler_start_context(ctx)));
                }
                int failures = 0;
                for(int i = 0; i < n; ++i)
                {
                    failures += rocprofiler_stop_context(ctx) != ROCPROFILER_STATUS_SUCCESS;
                    std::this_thread::sleep_for(std::chrono::microseconds{200});
                    failures += rocprofiler_start_context(ctx) != ROCPROFILER_STATUS_SUCCESS;
                    std::this_thread::sleep_for(std::chrono::microseconds{200});
                }
                add_line("toggle_failures," + std::to_string(failures));
            });
    }
    return 0;
}

void
tool_fini(void*)
{
    if(++finalize_calls > 1) fprintf(stderr, "e2e-tool: FINALIZED TWICE\n");
    if(toggler)
    {
        toggler->join();
        delete toggler;
        toggler = nullptr;
    }
    if(stopper)
    {
        stopper->join();
        delete stopper;
    }
    rocprofiler_kfd_loss_stats_t s{};
    s.size = sizeof(s);
    if(rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &s) == ROCPROFILER_STATUS_SUCCESS)
    {
        char text[512];
        snprintf(text, sizeof(text),
                 "stats,received=%" PRIu64 ",malformed=%" PRIu64 ",other_process=%" PRIu64
                 ",emitted=%" PRIu64 ",ends_without_start=%" PRIu64 ",aged_out=%" PRIu64
                 ",never_ended=%" PRIu64 ",dropped=%" PRIu64 ",kernel_drops=%" PRIu64
                 ",saturations=%" PRIu64 ",lost_in_gap=%" PRIu64 ",timed_out=%" PRIu64
                 ",trigger_mismatches=%" PRIu64 ",out_of_range=%" PRIu64,
                 s.events_received, s.lines_malformed, s.events_other_process, s.records_emitted,
                 s.ends_without_start, s.starts_aged_out, s.starts_never_ended, s.records_dropped,
                 s.kernel_reported_drops, s.fifo_saturations, s.starts_lost_in_gap,
                 s.starts_timed_out, s.migrate_trigger_mismatches, s.fields_out_of_range);
        add_line(text);
    }
    add_line("buffer_drops," + std::to_string(drops.load()));
    add_line("callbacks," + std::to_string(callbacks.load()));
    add_line("thread_notifications," + std::to_string(threads_before.load()) + "," +
             std::to_string(threads_after.load()));
    const char* out = getenv("E2E_OUT");
    FILE*       f   = out ? fopen(out, "w") : stdout;
    if(!f) return;
    std::lock_guard<std::mutex> guard{lock_of_lines()};
    for(const auto& l : lines())
        fprintf(f, "%s\n", l.c_str());
    if(f != stdout) fclose(f);
}
} // namespace

extern "C" rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t, const char*, uint32_t, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), tool_init, tool_fini, nullptr};
    id->name     = "e2e-tool";
    my_client_id = id;
    return &result;
}
