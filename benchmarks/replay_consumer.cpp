// MIT License - see LICENSE.
//
// kfd-replay-consumer: the fastest possible reader of the KFD emulator's replay, to measure
// how fast the emulator produces (issue: at least 5M events/s in lossless pace). Run it with
// the emulator preloaded:
//
//   LD_PRELOAD=build/source/lib/kfd-emulator/librocprofiler-sdk-kfd-emulator.so \
//       KFD_EMULATOR_LOG=big.log build/benchmarks/kfd-replay-consumer <events in the log>
//
// It opens /dev/kfd, one SMI fd per GPU of the emulated topology, enables every event, and
// reads (poll, then read until EAGAIN, 64 KiB buffer) until it has received that many lines.
// Prints events/s from the mask write to the last line, reads and polls per event.
#include "common/kfd_abi.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace abi = rocprofiler::kfd_abi;

namespace
{
double
now_s()
{
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// CPU seconds (user + system) of the process (RUSAGE_SELF) or this thread (RUSAGE_THREAD).
double
cpu_s(int who)
{
    rusage u{};
    getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// gpu_ids of nodes 1.. of the (emulated) topology.
std::vector<uint32_t>
gpu_ids()
{
    std::vector<uint32_t> ids;
    for(int node = 1; node < 64; ++node)
    {
        char path[128];
        std::snprintf(path, sizeof(path), "%s/nodes/%d/gpu_id", abi::topology_root, node);
        FILE* f = std::fopen(path, "r");
        if(f == nullptr) break;
        unsigned id = 0;
        if(std::fscanf(f, "%u", &id) == 1 && id != 0) ids.push_back(id);
        std::fclose(f);
    }
    return ids;
}
} // namespace

int
main(int argc, char** argv)
{
    if(argc < 2)
    {
        std::fprintf(stderr, "usage: %s <events to receive> [idle timeout s]\n", argv[0]);
        return 2;
    }
    const uint64_t expected = std::strtoull(argv[1], nullptr, 10);
    const double   idle_s   = argc > 2 ? std::atof(argv[2]) : 5.0;
    int            kfd      = open(abi::device_path, O_RDWR | O_CLOEXEC);
    if(kfd < 0)
    {
        std::perror("open /dev/kfd");
        return 1;
    }
    std::vector<pollfd> fds;
    for(uint32_t id : gpu_ids())
    {
        abi::smi_events_args args{id, 0};
        if(ioctl(kfd, abi::ioc_smi_events, &args) != 0) continue;
        fcntl(static_cast<int>(args.anon_fd), F_SETFL, O_NONBLOCK);
        fds.push_back(pollfd{static_cast<int>(args.anon_fd), POLLIN, 0});
    }
    if(fds.empty())
    {
        std::fprintf(stderr, "no SMI fd\n");
        return 1;
    }
    const uint64_t mask         = ~uint64_t{0} >> 1; // every event id, not ALL_PROCESS
    const double   start        = now_s();
    const double   process_cpu0 = cpu_s(RUSAGE_SELF); // initialization done (open, ioctl)
    const double   reader_cpu0  = cpu_s(RUSAGE_THREAD);
    for(auto& p : fds)
        if(write(p.fd, &mask, sizeof(mask)) != sizeof(mask)) std::perror("mask");

    static char buffer[64 * 1024];
    uint64_t    lines = 0, reads = 0, polls = 0, bytes = 0;
    double      last = start;
    while(lines < expected)
    {
        ++polls;
        int rc = poll(fds.data(), fds.size(), static_cast<int>(idle_s * 1000));
        if(rc == 0) break; // nothing more is coming
        if(rc < 0 && errno == EINTR) continue;
        for(auto& p : fds)
        {
            if((p.revents & POLLIN) == 0) continue;
            while(true)
            {
                ssize_t n = read(p.fd, buffer, sizeof(buffer));
                ++reads;
                if(n <= 0) break;
                bytes += static_cast<uint64_t>(n);
                for(const char* c = buffer;
                    (c = static_cast<const char*>(std::memchr(c, '\n', buffer + n - c))) != nullptr;
                    ++c)
                    ++lines;
                if(static_cast<size_t>(n) < abi::fifo_size_before_6_13 / 2) break;
            }
        }
        last = now_s();
    }
    const double seconds = last - start;
    // The emulator's producer thread has ended (or is idle): what the process used besides
    // this thread is the producer's work, plus the emulator's code inside our read() calls.
    const double reader_cpu   = cpu_s(RUSAGE_THREAD) - reader_cpu0;
    const double producer_cpu = cpu_s(RUSAGE_SELF) - process_cpu0 - reader_cpu;
    std::printf("events %llu of %llu in %.3f s: %.2f M events/s, %.3f reads/event, %.3f "
                "polls/event, %.1f bytes/read\n",
                static_cast<unsigned long long>(lines), static_cast<unsigned long long>(expected),
                seconds, seconds > 0 ? static_cast<double>(lines) / seconds / 1e6 : 0.0,
                lines ? static_cast<double>(reads) / static_cast<double>(lines) : 0.0,
                lines ? static_cast<double>(polls) / static_cast<double>(lines) : 0.0,
                reads ? static_cast<double>(bytes) / static_cast<double>(reads) : 0.0);
    if(lines > 0)
        std::printf("cpu: producer thread %.0f ns/event (%.2f M events/s if it had a core), "
                    "reader thread (with the emulator's read()) %.0f ns/event\n",
                    producer_cpu / static_cast<double>(lines) * 1e9,
                    producer_cpu > 0 ? static_cast<double>(lines) / producer_cpu / 1e6 : 0.0,
                    reader_cpu / static_cast<double>(lines) * 1e9);
    return lines == expected ? 0 : 1;
}
