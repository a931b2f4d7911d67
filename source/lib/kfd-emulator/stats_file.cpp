// MIT License - see LICENSE.
#include "stats_file.hpp"

#include "client_calls.hpp"

#include "numbers.hpp"
#include "real_libc.hpp"
#include "unique_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

namespace kfd_emu
{
stats_input
collect_stats(const emulator& emu, const session& s, const char* exit_wait)
{
    stats_input in;
    in.cfg                     = &emu.cfg;
    in.pid                     = s.pid;
    in.ns_offset               = s.ns_offset;
    in.producer_started        = s.producer_started;
    in.producer_finished       = s.producer_finished;
    in.exit_wait               = exit_wait;
    in.producer_error          = s.producer_error;
    in.producer_timer_slack_ns = s.producer_timer_slack_ns;
    in.client_calls            = client_calls_so_far();
    for(size_t i = 0; i < s.gpus.size(); ++i)
    {
        gpu_report gpu;
        gpu.n               = s.gpus[i].n;
        gpu.vanished        = s.gpus[i].vanished;
        gpu.vanished_line   = s.gpus[i].vanished_line;
        gpu.clients_omitted = s.gpus[i].clients_omitted;
        for(const client* c : s.gpus[i].clients)
        {
            client_report r;
            r.fd       = c->fd;
            r.pid      = c->pid;
            r.mask     = c->mask;
            r.closed   = c->closed;
            r.vanished = c->vanished;
            r.n        = c->n;
            if(!c->closed) r.n.fifo_bytes_at_exit = c->fifo.size();
            gpu.clients.push_back(r);
        }
        in.gpus.push_back(gpu);
    }
    return in;
}

void
write_stats_file(const std::string& path, const std::string& text)
{
    std::string tmp;
    int         fd = create_unique_file(path, tmp); // O_EXCL|O_NOFOLLOW, random name
    bool        ok = fd >= 0 && write_all(fd, text.data(), text.size());
    if(fd >= 0) ok = (libc().close(fd) == 0) && ok;
    if(ok && std::rename(tmp.c_str(), path.c_str()) == 0) return;
    report("cannot write the statistics to " + path + ": " + std::strerror(errno));
    if(fd >= 0) unlink(tmp.c_str());
}

namespace
{
// The pid written in a statistics file ("pid":N), 0 when there is none.
pid_t
pid_in_stats_file(const std::string& path)
{
    int fd = libc().open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if(fd < 0) return 0;
    struct stat st
    {
    };
    char    buf[8192];
    ssize_t n =
        fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? libc().read(fd, buf, sizeof(buf) - 1) : -1;
    libc().close(fd);
    if(n <= 0) return 0;
    buf[n]             = '\0';
    const char* at     = std::strstr(buf, ",\"pid\":"); // a '"' inside a string value is escaped
    uint64_t    pid    = 0;
    size_t      digits = 0;
    return at && parse_number_prefix(at + 7, INT32_MAX, pid, digits) ? static_cast<pid_t>(pid) : 0;
}

} // namespace

// Where this process writes its statistics (empty: nowhere). A forked child writes
// <path>.<pid>; so does any other process (an exec'd program, say) while the process whose
// pid is in <path> still runs. The first one claims <path> at once with its pid.
std::string
claim_stats_path()
{
    std::string path = g_stats_path;
    if(path.empty()) return path;
    pid_t       me  = getpid();
    std::string own = path + "." + std::to_string(me);
    if(me != g_image_pid) return own;
    pid_t other = pid_in_stats_file(path);
    if(other > 0 && other != me && (kill(other, 0) == 0 || errno == EPERM)) return own;
    write_stats_file(path, "{\"schema\":\"kfd-emulator-stats/1\",\"pid\":" + std::to_string(me) +
                               ",\"state\":\"running\"}\n");
    return path;
}

// Without a usable log the emulator is a machine without /dev/kfd; the statistics say why.
void
write_error_stats(emulator& emu)
{
    static std::atomic<pid_t> written{0};
    if(written.exchange(getpid()) == getpid()) return;
    std::string path = claim_stats_path();
    if(path.empty()) return;
    stats_input in;
    in.cfg       = &emu.cfg;
    in.pid       = getpid();
    in.exit_wait = "not-started";
    write_stats_file(path, stats_to_json(in));
}

} // namespace kfd_emu
