// MIT License - see LICENSE.
//
// kfd-e2e-host: the traced program of benchmarks/e2e.sh. It configures page-migration tracing
// itself (rocprofiler_force_configure: one context, one LOSSLESS buffer whose callback counts
// records), then does nothing but wait, so that whatever CPU its other threads use is the
// SDK's (and the emulator's). It ends when no event arrived for --idle-ms (the replay is
// over), or after --seconds; then it prints, per thread of the process (name, tid), the CPU
// time (ns, from /proc/self/task/<tid>/schedstat; user and system ticks from .../stat) and
// the context switches (.../status), and the SDK's loss statistics. With --seconds, the same
// lines are printed 0.2 s after start too ("begin"), so that the window can be measured.
//
//   kfd-e2e-host [--idle-ms N] [--seconds S]
#include <rocprofiler-sdk/buffer.h>
#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace
{
std::atomic<uint64_t>    g_records{0};
rocprofiler_context_id_t g_context{};
rocprofiler_buffer_id_t  g_buffer{};

void
on_records(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
           size_t n, void*, uint64_t)
{
    g_records.fetch_add(n, std::memory_order_relaxed);
}

int
tool_init(rocprofiler_client_finalize_t, void*)
{
    rocprofiler_create_context(&g_context);
    rocprofiler_create_buffer(g_context, 1 << 20, 1 << 19, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                              on_records, nullptr, &g_buffer);
    if(rocprofiler_configure_buffer_tracing_service(
           g_context, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, nullptr, 0, g_buffer) !=
       ROCPROFILER_STATUS_SUCCESS)
        std::fprintf(stderr, "e2e-host: page-migration tracing is not available\n");
    rocprofiler_start_context(g_context);
    return 0;
}

void
tool_fini(void*)
{
}

rocprofiler_tool_configure_result_t*
configure(uint32_t, const char*, uint32_t, rocprofiler_client_id_t* id)
{
    static rocprofiler_tool_configure_result_t result = {sizeof(result), tool_init, tool_fini,
                                                         nullptr};
    id->name                                          = "kfd-e2e-host";
    return &result;
}

double
now_s()
{
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::string
read_text(const std::string& path)
{
    std::string text;
    if(FILE* f = std::fopen(path.c_str(), "r"))
    {
        char   buffer[4096];
        size_t n = 0;
        while((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0)
            text.append(buffer, n);
        std::fclose(f);
    }
    return text;
}

unsigned long long
status_field(const std::string& status, const char* name)
{
    auto at = status.find(name);
    return at == std::string::npos
               ? 0
               : std::strtoull(status.c_str() + at + std::strlen(name), nullptr, 10);
}

// One line per thread: "<when> <name> tid=<tid> cpu_ns=<n> utime_ticks=<u> stime_ticks=<s>
// vcsw=<v> ivcsw=<i>".
void
print_threads(const char* when)
{
    DIR* dir = opendir("/proc/self/task");
    if(dir == nullptr) return;
    while(dirent* entry = readdir(dir))
    {
        if(entry->d_name[0] == '.') continue;
        const std::string task = std::string("/proc/self/task/") + entry->d_name;
        std::string       comm = read_text(task + "/comm");
        while(!comm.empty() && comm.back() == '\n')
            comm.pop_back();
        for(char& c : comm)
            if(c == ' ') c = '_';
        const unsigned long long cpu_ns =
            std::strtoull(read_text(task + "/schedstat").c_str(), nullptr, 10);
        // utime and stime: fields 14 and 15 of stat, after the ")" that ends the name.
        const std::string  stat  = read_text(task + "/stat");
        unsigned long long utime = 0, stime = 0;
        auto               paren = stat.rfind(')');
        if(paren != std::string::npos)
        {
            const char* p = stat.c_str() + paren + 2;
            for(int field = 3; field < 14 && p != nullptr; ++field)
                p = std::strchr(p, ' ') ? std::strchr(p, ' ') + 1 : nullptr;
            if(p != nullptr) std::sscanf(p, "%llu %llu", &utime, &stime);
        }
        const std::string status = read_text(task + "/status");
        std::printf("%s %s tid=%s cpu_ns=%llu utime_ticks=%llu stime_ticks=%llu vcsw=%llu "
                    "ivcsw=%llu\n",
                    when, comm.c_str(), entry->d_name, cpu_ns, utime, stime,
                    status_field(status, "voluntary_ctxt_switches:"),
                    status_field(status, "nonvoluntary_ctxt_switches:"));
    }
    closedir(dir);
}
} // namespace

int
main(int argc, char** argv)
{
    long   idle_ms = 1000;
    double seconds = 0; // 0: until idle
    for(int i = 1; i + 1 < argc; i += 2)
    {
        if(std::strcmp(argv[i], "--idle-ms") == 0) idle_ms = std::atol(argv[i + 1]);
        if(std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    }
    rocprofiler_force_configure(configure);
    const double                 start     = now_s();
    double                       last_seen = start;
    uint64_t                     last      = 0;
    rocprofiler_kfd_loss_stats_t stats{};
    while(true)
    {
        usleep(20000);
        stats      = rocprofiler_kfd_loss_stats_t{};
        stats.size = sizeof(stats);
        rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &stats);
        const double now = now_s();
        if(stats.events_received != last)
        {
            last      = stats.events_received;
            last_seen = now;
        }
        if(seconds > 0 ? now - start >= seconds
                       : last > 0 && (now - last_seen) * 1000 >= static_cast<double>(idle_ms))
            break;
        if(seconds == 0 && now - start > 600) break; // never hang
    }
    std::printf("events_received=%llu records_emitted=%llu fifo_saturations=%llu "
                "kernel_reported_drops=%llu active_s=%.3f\n",
                static_cast<unsigned long long>(stats.events_received),
                static_cast<unsigned long long>(stats.records_emitted),
                static_cast<unsigned long long>(stats.fifo_saturations),
                static_cast<unsigned long long>(stats.kernel_reported_drops), last_seen - start);
    print_threads("end");
    std::fflush(stdout);
    return 0;
}
