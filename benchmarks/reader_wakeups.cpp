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
// Prints per run: events, drops, reader wake-ups and system calls per event (counted at each
// call site), and the reader thread's user and system CPU per event (RUSAGE_THREAD).
//
//   reader-wakeups poll|io_uring|io_uring_wait RATE SECONDS [FIFO_BYTES [WAIT_US]]
//
// RATE events/s, evenly spaced (the producer sleeps to each event's time with a 1 us timer
// slack, as the emulator's KFD_EMULATOR_TIMER_SLACK_NS=1000); FIFO_BYTES at least 4096 (a
// pipe's smallest size), default 8192. Raw system calls: no liburing needed.
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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

// A minimal ring: the SQ and CQ rings and the SQE array, mapped as io_uring_setup(2) says.
struct ring
{
    int           fd       = -1;
    unsigned*     sq_tail  = nullptr;
    unsigned*     sq_mask  = nullptr;
    unsigned*     sq_array = nullptr;
    io_uring_sqe* sqes     = nullptr;
    unsigned*     cq_head  = nullptr;
    unsigned*     cq_tail  = nullptr;
    unsigned*     cq_mask  = nullptr;
    io_uring_cqe* cqes     = nullptr;
};

bool
setup(ring& r, unsigned entries)
{
    io_uring_params p{};
    r.fd = static_cast<int>(syscall(__NR_io_uring_setup, entries, &p));
    if(r.fd < 0) return false;
    const size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    const size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
    auto*        sq      = static_cast<char*>(mmap(nullptr, sq_size, PROT_READ | PROT_WRITE,
                                                   MAP_SHARED | MAP_POPULATE, r.fd, IORING_OFF_SQ_RING));
    auto*        cq      = static_cast<char*>(mmap(nullptr, cq_size, PROT_READ | PROT_WRITE,
                                                   MAP_SHARED | MAP_POPULATE, r.fd, IORING_OFF_CQ_RING));
    r.sqes = static_cast<io_uring_sqe*>(mmap(nullptr, p.sq_entries * sizeof(io_uring_sqe),
                                             PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                                             r.fd, IORING_OFF_SQES));
    if(sq == MAP_FAILED || cq == MAP_FAILED || r.sqes == MAP_FAILED) return false;
    r.sq_tail  = reinterpret_cast<unsigned*>(sq + p.sq_off.tail);
    r.sq_mask  = reinterpret_cast<unsigned*>(sq + p.sq_off.ring_mask);
    r.sq_array = reinterpret_cast<unsigned*>(sq + p.sq_off.array);
    r.cq_head  = reinterpret_cast<unsigned*>(cq + p.cq_off.head);
    r.cq_tail  = reinterpret_cast<unsigned*>(cq + p.cq_off.tail);
    r.cq_mask  = reinterpret_cast<unsigned*>(cq + p.cq_off.ring_mask);
    r.cqes     = reinterpret_cast<io_uring_cqe*>(cq + p.cq_off.cqes);
    return true;
}

io_uring_sqe&
next_sqe(ring& r)
{
    const unsigned tail = *r.sq_tail;
    const unsigned slot = tail & *r.sq_mask;
    io_uring_sqe&  sqe  = r.sqes[slot];
    std::memset(&sqe, 0, sizeof(sqe));
    r.sq_array[slot] = slot;
    __atomic_store_n(r.sq_tail, tail + 1, __ATOMIC_RELEASE);
    return sqe;
}

// Queues a timeout of `wait`, linked before the next SQE: its expiry counts as success
// (ETIME_SUCCESS), so the linked READ then runs; no CQE is posted for it (CQE_SKIP_SUCCESS).
void
queue_wait(ring& r, __kernel_timespec& wait)
{
    io_uring_sqe& sqe = next_sqe(r);
    sqe.opcode        = IORING_OP_TIMEOUT;
    sqe.flags         = IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
    sqe.addr          = reinterpret_cast<uint64_t>(&wait);
    sqe.len           = 1;
    sqe.timeout_flags = IORING_TIMEOUT_ETIME_SUCCESS;
    sqe.user_data     = 2;
}

// Queues a READ of registered file `index` into buf (user_data = index).
void
queue_read(ring& r, unsigned index, char* buf, size_t size)
{
    io_uring_sqe& sqe = next_sqe(r);
    sqe.opcode        = IORING_OP_READ;
    sqe.flags         = IOSQE_FIXED_FILE;
    sqe.fd            = static_cast<int>(index);
    sqe.addr          = reinterpret_cast<uint64_t>(buf);
    sqe.len           = static_cast<unsigned>(size);
    sqe.off           = static_cast<uint64_t>(-1); // the file's position: a pipe has none
    sqe.user_data     = index;
}

// The io_uring reader: the FIFO and the stop eventfd registered; a READ of each kept queued.
void
read_with_io_uring(int fd, int stop_fd, size_t fifo, uint64_t wait_ns, counts& c)
{
    __kernel_timespec wait{0, static_cast<long long>(wait_ns)};
    ring              r;
    if(!setup(r, 8))
    {
        std::fprintf(stderr, "reader-wakeups: io_uring_setup: %s\n", std::strerror(errno));
        std::exit(2);
    }
    int files[2] = {fd, stop_fd};
    if(syscall(__NR_io_uring_register, r.fd, IORING_REGISTER_FILES, files, 2) != 0)
    {
        std::fprintf(stderr, "reader-wakeups: IORING_REGISTER_FILES: %s\n", std::strerror(errno));
        std::exit(2);
    }
    static char buf[65536];
    static char stop_buf[8];
    queue_read(r, 0, buf, fifo);
    queue_read(r, 1, stop_buf, sizeof(stop_buf));
    unsigned to_submit = 2;
    for(bool stopping = false; !stopping;)
    {
        ++c.syscalls;
        long rc =
            syscall(__NR_io_uring_enter, r.fd, to_submit, 1, IORING_ENTER_GETEVENTS, nullptr, 0);
        if(rc < 0 && errno != EINTR) break;
        if(rc >= 0) to_submit = 0;
        unsigned head = *r.cq_head;
        for(; head != __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE); ++head)
        {
            const io_uring_cqe& cqe = r.cqes[head & *r.cq_mask];
            if(cqe.user_data == 1)
            {
                stopping = true;
                continue;
            }
            if(cqe.user_data == 2) continue; // a failed timeout (none expected)
            ++c.wakeups;
            if(cqe.res > 0) c.bytes += static_cast<uint64_t>(cqe.res);
            if(wait_ns > 0)
            {
                queue_wait(r, wait);
                ++to_submit;
            }
            queue_read(r, 0, buf, fifo);
            ++to_submit;
        }
        __atomic_store_n(r.cq_head, head, __ATOMIC_RELEASE);
    }
    thread_cpu(c);
    close(r.fd);
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
