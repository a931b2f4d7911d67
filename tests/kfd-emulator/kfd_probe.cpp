// MIT License - see LICENSE.
//
// A stand-in for the SDK's reader, run by the tests as a child process with the emulator
// preloaded. It uses nothing but plain libc calls, exactly as the SDK does, and prints what
// each call returned, one line per command. Commands are argv words, fields split by ':':
//
//   open | open64 | openat | open2       open /dev/kfd (open2: the fortified __open_2)
//   version                              AMDKFD_IOC_GET_VERSION
//   smi:<gpu hex>                        AMDKFD_IOC_SMI_EVENTS; the new client gets the next index
//   mask:<k>:<hex>  maskshort:<k>:<n>    write the 8-byte mask / write only n bytes
//   read:<k>:<n>  readchk:<k>:<n>        one read() / fortified __read_chk() of n bytes
//   poll:<k>:<ms>                        poll() for POLLIN, print revents
//   drain:<k>:<buf>:<idle ms>[:<lines>]  poll+read until nothing arrives for idle ms; given
//                                        lines, not before that many arrived (a gate: a slow
//                                        producer does not end it early; 30 s at most)
//   drainall:<buf>:<idle ms>             the same over every client at once
//   rawdrain:<k>:<buf>:<idle ms>[:<lines>]  drain, with O_NONBLOCK set and every read a raw
//                                        syscall(SYS_read), which the emulator does not see
//                                        (as io_uring's reads, recv or readv)
//   nonblock:<k>                         fcntl F_SETFL O_NONBLOCK and F_SETFD FD_CLOEXEC
//   close:<k>  closekfd                  close an SMI fd / the /dev/kfd fd
//   sleep:<ms>  pid  now                 wait / print getpid() / print CLOCK_BOOTTIME ns
//   chdir:<path>                         change the working folder
//   cat:<path>  fcat:<path>              open()+read() / fopen()+fread() a file, print it
//   file:<path>  pipe                    pass-through round trips (regular file, pipe)
//   bgdrain:<buf>                        drain every client from a background thread, forever
//   forkread:<k>                         a forked child reads client k, then exits
//   atforkclose                          register (now) a fork child handler that closes
//                                        every SMI fd, as the SDK does
//   forkfresh:<gpu hex>:<idle ms>[:<lines>]  a forked child opens /dev/kfd itself and drains
//   exitnow                              return from main at once (atexit handlers run)
//   vforkclose:<k>                       a vfork() child closes client k, then _exit()s
//   vforkread:<k>:<n>                    a vfork() child reads n bytes of client k, _exit()s
//                                        with 0 if it got some, 1 on EAGAIN, 2 otherwise
//   closerange:<k>                       close_range(fd of client k, ~0): behind our back
//   fillfds:<k>:<n>                      dup2 /dev/null onto every free fd of the n numbers
//                                        from client k's fd on (reuses closed numbers)
//   checkfds                             how many of those fds are no longer open
//   errnoopen                            set errno to EDOM, open /dev/kfd, print errno
//   epollet:<k>  epwait:<ms>             add client k to an EPOLLET epoll / wait, print count
//   spawn:<cmd>,<cmd>...                 fork and exec this program with those commands
//   selfkill                             die by SIGKILL (no exit handlers run)
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/kfd_abi.hpp"

extern "C" int     __open_2(const char* path, int flags);
extern "C" ssize_t __read_chk(int fd, void* buf, size_t count, size_t buflen);

namespace
{
namespace abi = rocprofiler::kfd_abi;

int              g_kfd = -1;
std::vector<int> g_clients;
std::vector<int> g_filled; // fds made by fillfds
int              g_epoll = -1;
std::string      g_self; // argv[0]

void
say(const std::string& line)
{
    std::string text = line + "\n";
    // write(), not stdio: output must not wait in a buffer when the process is killed.
    size_t done = 0;
    while(done < text.size())
    {
        ssize_t n = write(STDOUT_FILENO, text.data() + done, text.size() - done);
        if(n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

std::string
errno_text(int error)
{
    switch(error)
    {
    case EAGAIN:
        return "EAGAIN";
    case EINTR:
        return "EINTR";
    case EFAULT:
        return "EFAULT";
    case EINVAL:
        return "EINVAL";
    case ENOENT:
        return "ENOENT";
    case EACCES:
        return "EACCES";
    case EBADF:
        return "EBADF";
    case ENODEV:
        return "ENODEV";
    case ENOTTY:
        return "ENOTTY";
    case EPERM:
        return "EPERM";
    case ENOMEM:
        return "ENOMEM";
    case EDOM:
        return "EDOM";
    default:
        return "E" + std::to_string(error);
    }
}

std::string
escape(const char* data, size_t size)
{
    std::string out;
    for(size_t i = 0; i < size; ++i)
    {
        unsigned char c = static_cast<unsigned char>(data[i]);
        if(c == '\\')
            out += "\\\\";
        else if(c == '\n')
            out += "\\n";
        else if(c < 0x20 || c >= 0x7f)
        {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\x%02x", c);
            out += buf;
        }
        else
            out += static_cast<char>(c);
    }
    return out;
}

std::vector<std::string>
split(const std::string& word)
{
    std::vector<std::string> parts;
    size_t                   start = 0;
    while(true)
    {
        size_t colon = word.find(':', start);
        parts.push_back(word.substr(start, colon - start));
        if(colon == std::string::npos) return parts;
        start = colon + 1;
    }
}

int64_t
boottime_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string
revents_text(short revents)
{
    std::string out;
    if(revents & POLLIN) out += " IN";
    if(revents & POLLHUP) out += " HUP";
    if(revents & POLLERR) out += " ERR";
    if(revents & POLLNVAL) out += " NVAL";
    return out.empty() ? " none" : out;
}

int
client_fd(const std::string& index)
{
    size_t k = std::strtoul(index.c_str(), nullptr, 10);
    return k < g_clients.size() ? g_clients[k] : -1;
}

void
do_open(const std::string& how)
{
    int fd = -1;
    if(how == "open") fd = open(abi::device_path, O_RDWR | O_CLOEXEC);
    if(how == "open64") fd = open64(abi::device_path, O_RDWR | O_CLOEXEC);
    if(how == "openat") fd = openat(AT_FDCWD, abi::device_path, O_RDWR | O_CLOEXEC);
    if(how == "open2") fd = __open_2(abi::device_path, O_RDWR | O_CLOEXEC);
    if(fd < 0)
    {
        say("open err " + errno_text(errno));
        return;
    }
    g_kfd = fd;
    say("open ok");
}

void
do_version()
{
    abi::get_version_args args{};
    if(ioctl(g_kfd, abi::ioc_get_version, &args) != 0)
        say("version err " + errno_text(errno));
    else
        say("version " + std::to_string(args.major_version) + " " +
            std::to_string(args.minor_version));
}

void
do_smi(const std::string& gpu)
{
    abi::smi_events_args args{};
    args.gpuid   = static_cast<uint32_t>(std::strtoul(gpu.c_str(), nullptr, 16));
    args.anon_fd = 0xdeadbeef; // must stay untouched on failure
    if(ioctl(g_kfd, abi::ioc_smi_events, &args) != 0)
    {
        char buf[16];
        std::snprintf(buf, sizeof(buf), "%x", args.anon_fd);
        say("smi err " + errno_text(errno) + " anon_fd=" + buf);
        return;
    }
    g_clients.push_back(static_cast<int>(args.anon_fd));
    say("smi " + std::to_string(g_clients.size() - 1) + " ok");
}

void
do_mask(const std::vector<std::string>& p)
{
    // maskshort writes n bytes (up to 16) of an all-ones mask instead of the 8 of the mask.
    uint64_t words[2] = {std::strtoull(p[2].c_str(), nullptr, 16), 0};
    size_t   size     = sizeof(words[0]);
    if(p[0] == "maskshort")
    {
        words[0] = ~uint64_t{0} >> 1;
        size     = std::min<size_t>(std::strtoul(p[2].c_str(), nullptr, 10), sizeof(words));
    }
    ssize_t n = write(client_fd(p[1]), words, size);
    if(n < 0)
        say("mask " + p[1] + " err " + errno_text(errno));
    else
        say("mask " + p[1] + " " + std::to_string(n));
}

void
do_read(const std::string& k, size_t size, bool fortified)
{
    std::vector<char> buf(size + 1);
    ssize_t           n = fortified ? __read_chk(client_fd(k), buf.data(), size, buf.size())
                                    : read(client_fd(k), buf.data(), size);
    if(n < 0)
        say("read " + k + " err " + errno_text(errno));
    else
        say("read " + k + " " + std::to_string(n) + " " + escape(buf.data(), n));
}

void
do_poll(const std::string& k, int timeout_ms)
{
    pollfd p{client_fd(k), POLLIN, 0};
    int    n = poll(&p, 1, timeout_ms);
    say("poll " + k + (n < 0 ? " err" : revents_text(p.revents)));
}

size_t
lines_in(const std::vector<std::string>& data)
{
    size_t n = 0;
    for(const auto& d : data)
        n += static_cast<size_t>(std::count(d.begin(), d.end(), '\n'));
    return n;
}

// Drains the given clients until none has had data for idle_ms, and at least `lines` lines
// arrived (or 30 s passed); errors are reported inline.
void
drain(const std::vector<size_t>& which, size_t buf_size, int idle_ms, size_t lines = 0,
      bool raw = false)
{
    std::vector<std::string> data(which.size());
    std::vector<char>        buf(buf_size);
    const auto               give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while(true)
    {
        std::vector<pollfd> fds;
        for(size_t k : which)
            fds.push_back(pollfd{g_clients[k], POLLIN, 0});
        int n = poll(fds.data(), fds.size(), idle_ms);
        if(n < 0 && errno == EINTR) continue;
        if(n == 0 && lines_in(data) < lines && std::chrono::steady_clock::now() < give_up) continue;
        if(n <= 0) break;
        bool hangup = false;
        for(size_t i = 0; i < fds.size(); ++i)
        {
            if(!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            while(true)
            {
                ssize_t got = raw ? syscall(SYS_read, fds[i].fd, buf.data(), buf.size())
                                  : read(fds[i].fd, buf.data(), buf.size());
                if(got > 0)
                {
                    data[i].append(buf.data(), static_cast<size_t>(got));
                    continue;
                }
                if(got < 0 && errno != EAGAIN)
                    say("drainerr " + std::to_string(which[i]) + " " + errno_text(errno));
                if(got < 0 && errno == ENODEV) hangup = true;
                break;
            }
        }
        if(hangup) break;
    }
    for(size_t i = 0; i < which.size(); ++i)
        say("drain " + std::to_string(which[i]) + " " + std::to_string(data[i].size()) + " " +
            escape(data[i].data(), data[i].size()));
}

void
do_cat(const std::string& path, bool stdio)
{
    std::string content;
    char        buf[4096];
    if(stdio)
    {
        FILE* f = fopen(path.c_str(), "r");
        if(f == nullptr)
        {
            say("cat err " + errno_text(errno));
            return;
        }
        size_t n = 0;
        while((n = fread(buf, 1, sizeof(buf), f)) > 0)
            content.append(buf, n);
        fclose(f);
    }
    else
    {
        int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if(fd < 0)
        {
            say("cat err " + errno_text(errno));
            return;
        }
        ssize_t n = 0;
        while((n = read(fd, buf, sizeof(buf))) > 0)
            content.append(buf, static_cast<size_t>(n));
        close(fd);
    }
    say("cat ok " + escape(content.data(), content.size()));
}

void
do_file(const std::string& path)
{
    const char text[] = "pass-through 0123456789";
    int        fd     = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    bool       ok     = fd >= 0 && write(fd, text, sizeof(text)) == sizeof(text) && close(fd) == 0;
    char       back[sizeof(text)] = {};
    fd                            = ok ? openat(AT_FDCWD, path.c_str(), O_RDONLY) : -1;
    ok                            = ok && fd >= 0 && read(fd, back, sizeof(back)) == sizeof(back) &&
         std::memcmp(back, text, sizeof(text)) == 0 && close(fd) == 0;
    say(ok ? "file ok" : "file failed " + errno_text(errno));
}

void
do_pipe()
{
    int  fds[2];
    char back[5] = {};
    bool ok      = pipe(fds) == 0 && write(fds[1], "abcd", 5) == 5 &&
              read(fds[0], back, sizeof(back)) == 5 && std::strcmp(back, "abcd") == 0 &&
              close(fds[0]) == 0 && close(fds[1]) == 0;
    say(ok ? "pipe ok" : "pipe failed");
}

// What the background drain reads: the clients open when it started (its own copy: main
// goes on changing g_clients, and destroys it at exit while this thread still runs). Held by
// a global, so that a forked child (where this thread does not exist) still reaches it.
struct drain_job
{
    std::vector<int>    clients;
    std::vector<char>   buf;
    std::vector<pollfd> fds;
};
drain_job* g_drain_job = nullptr;

void*
background_drain(void* arg)
{
    auto& job = *static_cast<drain_job*>(arg);
    while(true)
    {
        std::vector<pollfd>& fds = job.fds;
        std::vector<char>&   buf = job.buf;
        fds.clear();
        for(int fd : job.clients)
            fds.push_back(pollfd{fd, POLLIN, 0});
        if(poll(fds.data(), fds.size(), 100) <= 0) continue;
        for(const auto& p : fds)
            while(p.revents & POLLIN && read(p.fd, buf.data(), buf.size()) > 0)
            {
            }
    }
    return nullptr;
}

// Runs in the child before the emulator's own handler when registered first.
void
close_clients_in_child()
{
    for(int fd : g_clients)
        close(fd);
    say("child closed " + std::to_string(g_clients.size()));
}

void
do_fork_read(const std::string& k)
{
    pid_t child = fork();
    if(child == 0)
    {
        char    buf[256];
        ssize_t n = read(client_fd(k), buf, sizeof(buf));
        say(n < 0 ? "child read err " + errno_text(errno) : "child read " + std::to_string(n));
        abi::get_version_args args{};
        say(ioctl(g_kfd, abi::ioc_get_version, &args) == 0
                ? "child version ok"
                : "child version err " + errno_text(errno));
        std::exit(0); // runs the inherited atexit handlers on purpose
    }
    int status = 0;
    waitpid(child, &status, 0);
    say("forkread done " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
}

void
do_fork_fresh(const std::string& gpu, int idle_ms, size_t lines)
{
    pid_t child = fork();
    if(child == 0)
    {
        g_clients.clear();
        do_open("open");
        do_smi(gpu);
        uint64_t mask = ~uint64_t{0} >> 1;
        if(!g_clients.empty() && write(g_clients.back(), &mask, sizeof(mask)) == 8)
            drain({g_clients.size() - 1}, 8192, idle_ms, lines);
        std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    say("forkfresh done " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
}

void
do_vfork_read(const std::string& k, size_t size)
{
    int               fd = client_fd(k);
    std::vector<char> buf(size);
    pid_t             child = vfork();
    if(child == 0)
    {
        ssize_t n = read(fd, buf.data(), buf.size()); // in the parent's memory, another pid
        _exit(n > 0 ? 0 : (n < 0 && errno == EAGAIN) ? 1 : 2);
    }
    int status = 0;
    waitpid(child, &status, 0);
    say("vforkread done " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
}

void
do_vfork_close(const std::string& k)
{
    int   fd    = client_fd(k);
    pid_t child = vfork();
    if(child == 0)
    {
        close(fd); // the emulator sees another pid sharing the parent's memory
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    say("vforkclose done " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
}

void
do_fill_fds(const std::string& k, int count)
{
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int first   = client_fd(k);
    for(int fd = first; fd < first + count; ++fd)
        if(fd != devnull && fcntl(fd, F_GETFD) < 0 && dup2(devnull, fd) == fd)
            g_filled.push_back(fd);
    say("fillfds " + std::to_string(g_filled.size()));
}

void
do_spawn(const std::string& list)
{
    std::vector<std::string> words{g_self};
    size_t                   start = 0;
    while(start <= list.size())
    {
        size_t comma = list.find(',', start);
        if(comma == std::string::npos) comma = list.size();
        words.push_back(list.substr(start, comma - start));
        start = comma + 1;
    }
    std::vector<char*> argv;
    for(auto& w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);
    pid_t child = fork();
    if(child == 0)
    {
        execv("/proc/self/exe", argv.data());
        _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    say("spawn done " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
}

bool
run(const std::string& word)
{
    auto        p   = split(word);
    const auto& cmd = p[0];
    auto        arg = [&](size_t i) { return i < p.size() ? p[i] : std::string(); };
    auto        num = [&](size_t i) { return std::strtoul(arg(i).c_str(), nullptr, 10); };

    if(cmd == "open" || cmd == "open64" || cmd == "openat" || cmd == "open2")
        do_open(cmd);
    else if(cmd == "version")
        do_version();
    else if(cmd == "smi")
        do_smi(arg(1));
    else if(cmd == "mask" || cmd == "maskshort")
        do_mask(p);
    else if(cmd == "read" || cmd == "readchk")
        do_read(arg(1), num(2), cmd == "readchk");
    else if(cmd == "poll")
        do_poll(arg(1), static_cast<int>(num(2)));
    else if(cmd == "drain")
        drain({num(1)}, num(2), static_cast<int>(num(3)), num(4));
    else if(cmd == "rawdrain")
    {
        int fd = client_fd(arg(1));
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        drain({num(1)}, num(2), static_cast<int>(num(3)), num(4), true);
    }
    else if(cmd == "drainall")
    {
        std::vector<size_t> all;
        for(size_t k = 0; k < g_clients.size(); ++k)
            all.push_back(k);
        drain(all, num(1), static_cast<int>(num(2)));
    }
    else if(cmd == "nonblock")
    {
        int fd = client_fd(arg(1));
        int ok = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 &&
                 fcntl(fd, F_SETFD, FD_CLOEXEC) == 0;
        say(ok ? "nonblock ok" : "nonblock err " + errno_text(errno));
    }
    else if(cmd == "close")
        say("close " + arg(1) + " " + std::to_string(close(client_fd(arg(1)))));
    else if(cmd == "closekfd")
        say("closekfd " + std::to_string(close(g_kfd)));
    else if(cmd == "sleep")
        usleep(static_cast<useconds_t>(num(1) * 1000));
    else if(cmd == "pid")
        say("pid " + std::to_string(getpid()));
    else if(cmd == "chdir")
        say(chdir(word.substr(6).c_str()) == 0 ? "chdir ok" : "chdir err");
    else if(cmd == "now")
        say("now " + std::to_string(boottime_ns()));
    else if(cmd == "cat" || cmd == "fcat")
        do_cat(word.substr(cmd.size() + 1), cmd == "fcat");
    else if(cmd == "file")
        do_file(word.substr(5));
    else if(cmd == "pipe")
        do_pipe();
    else if(cmd == "bgdrain")
    {
        pthread_t thread;
        g_drain_job = new drain_job{g_clients, std::vector<char>(num(1)), {}};
        pthread_create(&thread, nullptr, background_drain, g_drain_job);
        pthread_detach(thread);
    }
    else if(cmd == "forkread")
        do_fork_read(arg(1));
    else if(cmd == "atforkclose")
        pthread_atfork(nullptr, nullptr, close_clients_in_child);
    else if(cmd == "forkfresh")
        do_fork_fresh(arg(1), static_cast<int>(num(2)), num(3));
    else if(cmd == "vforkread")
        do_vfork_read(arg(1), num(2));
    else if(cmd == "vforkclose")
        do_vfork_close(arg(1));
    else if(cmd == "closerange")
        say("closerange " +
            std::to_string(syscall(SYS_close_range, client_fd(arg(1)), ~0u, 0) == 0 ? 0 : errno));
    else if(cmd == "fillfds")
        do_fill_fds(arg(1), static_cast<int>(num(2)));
    else if(cmd == "checkfds")
    {
        size_t closed = 0;
        for(int fd : g_filled)
            closed += fcntl(fd, F_GETFD) < 0 ? 1 : 0;
        say("checkfds closed " + std::to_string(closed));
    }
    else if(cmd == "errnoopen")
    {
        errno  = EDOM;
        int fd = open(abi::device_path, O_RDWR | O_CLOEXEC);
        say(std::string("errnoopen ") + (fd >= 0 ? "ok " : "err ") + errno_text(errno));
        if(fd >= 0) g_kfd = fd;
    }
    else if(cmd == "epollet")
    {
        if(g_epoll < 0) g_epoll = epoll_create1(EPOLL_CLOEXEC);
        epoll_event ev{};
        ev.events  = EPOLLIN | EPOLLET;
        ev.data.fd = client_fd(arg(1));
        say("epollet " + std::to_string(epoll_ctl(g_epoll, EPOLL_CTL_ADD, ev.data.fd, &ev)));
    }
    else if(cmd == "epwait")
    {
        epoll_event ev{};
        say("epwait " + std::to_string(epoll_wait(g_epoll, &ev, 1, static_cast<int>(num(1)))));
    }
    else if(cmd == "spawn")
        do_spawn(word.substr(6));
    else if(cmd == "selfkill")
        raise(SIGKILL);
    else if(cmd == "exitnow")
        return false;
    else
        say("unknown command " + word);
    return true;
}
} // namespace

int
main(int argc, char** argv)
{
    g_self = argv[0];
    for(int i = 1; i < argc; ++i)
        if(!run(argv[i])) break;
    return 0;
}
