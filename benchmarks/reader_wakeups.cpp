// MIT License - see LICENSE.
//
// reader-wakeups: what an io_uring reader would save over the SDK's reader, measured on a real
// kernel object, before either is built into the SDK (issue 10: system calls per event, and the
// user CPU this VM charges for each). Not the SDK: a producer thread writes kernel-like lines
// into a pipe of FIFO size (a write that does not fit is a drop, as the kernel's kfifo drops),
// and one of two readers drains it:
//   poll     the SDK's pattern per wake-up: ppoll(), the identity check (kcmp against a private
//            duplicate), then one read() of the FIFO's size (reader.cpp);
//   io_uring one READ of a registered file kept queued; one io_uring_enter() per wake-up both
//            submits the next READ and waits for a completion. A registered file is held by
//            reference, not by number: no identity check is needed (the program may close or
//            reuse the number without the reader ever reading another file).
//   io_uring_wait  the same, each READ linked after a timeout of WAIT_US (default 50): lines
//            gather that long before the next read (interrupt mitigation), one call a wake-up.
// Both io_uring readers use the SDK's ring (source/lib/rocprofiler-sdk/kfd/uring.cpp: registered
// files and ring fd, COOP_TASKRUN; Linux 5.19); before 2026-12-08 they had a ring of their own.
// Prints per run: events, drops, reader wake-ups and system calls per event (counted at each
// call site), and the reader thread's user and system CPU per event (RUSAGE_THREAD).
//
//   reader-wakeups poll|io_uring|io_uring_wait RATE SECONDS [FIFO_BYTES [WAIT_US]]
//
// RATE events/s, evenly spaced (the producer sleeps to each event's time with a 1 us timer
// slack, as the emulator's KFD_EMULATOR_TIMER_SLACK_NS=1000); FIFO_BYTES at least 4096 (a
// pipe's smallest size), default 8192. Raw system calls: no liburing needed.
#include "rocprofiler-sdk/kfd/uring.hpp"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

namespace
{
uint64_t
now_ns()
{
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

struct counts
{
    uint64_t wakeups  = 0;
    uint64_t syscalls = 0;
    uint64_t bytes    = 0;
    double   user_s = 0, sys_s = 0;
};

// A page-fault start line of a 6.13 kernel (45 bytes with its newline).
constexpr char line[] = "7 1234567890123 -4242 @7f12345678(8eae) W\n";

// Writes `rate` lines a second for `seconds` into fd (non-blocking): returns the drops.
uint64_t
produce(int fd, uint64_t rate, double seconds, uint64_t& events)
{
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    const uint64_t total = static_cast<uint64_t>(static_cast<double>(rate) * seconds);
    const uint64_t start = now_ns();
    uint64_t       drops = 0;
    for(uint64_t i = 0; i < total; ++i)
    {
        const uint64_t due = start + i * 1000000000ull / rate;
        if(now_ns() < due)
        {
            timespec t{static_cast<time_t>(due / 1000000000ull),
                       static_cast<long>(due % 1000000000ull)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr);
        }
        if(write(fd, line, sizeof(line) - 1) < 0) ++drops; // EAGAIN: the FIFO is full
    }
    events = total;
    return drops;
}

void
thread_cpu(counts& c)
{
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    c.user_s =
        static_cast<double>(u.ru_utime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec) / 1e6;
    c.sys_s =
        static_cast<double>(u.ru_stime.tv_sec) + static_cast<double>(u.ru_stime.tv_usec) / 1e6;
}

// The SDK's reader: ppoll, identity check, one read of the FIFO's size.
void
read_with_poll(int fd, int stop_fd, size_t fifo, counts& c)
{
    const int reference = fcntl(fd, F_DUPFD_CLOEXEC, 100);
    char      buf[65536];
    pid_t     self = getpid();
    for(;;)
    {
        pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
        ++c.syscalls;
        if(ppoll(fds, 2, nullptr, nullptr) < 0) continue;
        if((fds[0].revents & POLLIN) == 0)
        {
            if(fds[1].revents != 0) break;
            continue;
        }
        ++c.wakeups;
        ++c.syscalls;
        if(syscall(SYS_kcmp, self, self, KCMP_FILE, fd, reference) != 0) break;
        ++c.syscalls;
        ssize_t n = read(fd, buf, fifo);
        if(n > 0) c.bytes += static_cast<uint64_t>(n);
    }
    thread_cpu(c);
    close(reference);
}

// The io_uring reader, on the SDK's own ring (uring.hpp): the FIFO and the stop pipe
// registered; a READ of each kept queued (the FIFO's linked after a timeout of wait_ns when
// that is not 0, as the SDK's reader links it).
void
read_with_io_uring(int fd, int stop_fd, size_t fifo, uint64_t wait_ns, counts& c)
{
    namespace uring             = rocprofiler::kfd::uring;
    constexpr uint64_t fifo_tag = 1, stop_tag = 2, timeout_tag = 3;
    uring::ring        r;
    const int          files[2] = {fd, stop_fd};
    if(!r.open(8, files, 2))
    {
        std::fprintf(stderr, "reader-wakeups: io_uring: %s\n", std::strerror(errno));
        std::exit(2);
    }
    const uring::wait_time wait{0, static_cast<int64_t>(wait_ns)};
    static char            buf[65536];
    static char            stop_buf[8];
    const auto             size = static_cast<unsigned>(fifo);
    r.queue_read(0, buf, size, fifo_tag);
    r.queue_read(1, stop_buf, sizeof(stop_buf), stop_tag);
    for(bool stopping = false; !stopping;)
    {
        ++c.syscalls;
        const int rc = r.submit_and_wait(1, nullptr);
        if(rc < 0 && rc != -EINTR) break;
        uring::completion done{};
        while(r.next_completion(done))
        {
            if(done.user_data == stop_tag)
            {
                stopping = true;
                continue;
            }
            if(done.user_data != fifo_tag) continue; // a timeout's completion
            ++c.wakeups;
            if(done.result > 0) c.bytes += static_cast<uint64_t>(done.result);
            if(wait_ns > 0)
                r.queue_read_after(wait, timeout_tag, 0, buf, size, fifo_tag);
            else
                r.queue_read(0, buf, size, fifo_tag);
        }
    }
    thread_cpu(c);
}
} // namespace

int
main(int argc, char** argv)
{
    if(argc < 4)
    {
        std::fprintf(stderr, "usage: reader-wakeups poll|io_uring RATE SECONDS [FIFO_BYTES]\n");
        return 2;
    }
    const std::string mode    = argv[1];
    const uint64_t    rate    = std::strtoull(argv[2], nullptr, 10);
    const double      seconds = std::strtod(argv[3], nullptr);
    const size_t      fifo    = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 8192;
    const uint64_t    wait_us = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 50;
    if((mode != "poll" && mode != "io_uring" && mode != "io_uring_wait") || rate == 0 ||
       seconds <= 0 || fifo < 4096)
    {
        std::fprintf(stderr, "reader-wakeups: bad arguments\n");
        return 2;
    }
    int pipe_fds[2];
    if(pipe2(pipe_fds, O_CLOEXEC) != 0 || fcntl(pipe_fds[1], F_SETFL, O_NONBLOCK) != 0 ||
       fcntl(pipe_fds[1], F_SETPIPE_SZ, static_cast<int>(fifo)) < 0)
    {
        std::perror("reader-wakeups: pipe");
        return 2;
    }
    // Lines written one by one coalesce into the pipe's pages: it holds FIFO_BYTES of them.
    int stop_pipe[2];
    if(pipe2(stop_pipe, O_CLOEXEC) != 0) return 2;

    counts      c;
    std::thread reader(
        [&]
        {
            if(mode == "poll")
                read_with_poll(pipe_fds[0], stop_pipe[0], fifo, c);
            else
                read_with_io_uring(pipe_fds[0], stop_pipe[0], fifo,
                                   mode == "io_uring_wait" ? wait_us * 1000 : 0, c);
        });
    uint64_t events = 0;
    uint64_t drops  = produce(pipe_fds[1], rate, seconds, events);
    // Let the reader drain what is left, then stop it.
    for(int pending = 1; pending > 0;)
    {
        timespec t{0, 1000000};
        nanosleep(&t, nullptr);
        if(ioctl(pipe_fds[0], FIONREAD, &pending) != 0) break;
    }
    if(write(stop_pipe[1], "x", 1) != 1) return 2;
    reader.join();
    const double n = static_cast<double>(events);
    std::printf("%-8s rate %8llu  events %8llu  drops %6llu  wake-ups/event %.3f  "
                "syscalls/event %.3f  user ns/event %6.1f  sys ns/event %6.1f\n",
                mode.c_str(), static_cast<unsigned long long>(rate),
                static_cast<unsigned long long>(events), static_cast<unsigned long long>(drops),
                static_cast<double>(c.wakeups) / n, static_cast<double>(c.syscalls) / n,
                c.user_s * 1e9 / n, c.sys_s * 1e9 / n);
    return 0;
}
