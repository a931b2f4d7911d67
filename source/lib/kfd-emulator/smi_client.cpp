// MIT License - see LICENSE.
#include "smi_client.hpp"

#include "client_calls.hpp"
#include "delivery.hpp"
#include "fd_table.hpp"
#include "real_libc.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace kfd_emu
{
session&
current_session(emulator& emu)
{
    count_client_syscall(sc_getpid);
    if(emu.current == nullptr || emu.current->pid != getpid())
    {
        count_client_syscall(sc_getpid);
        emu.current      = new session;
        emu.current->pid = getpid();
        emu.current->gpus.resize(emu.cfg.gpus.size());
    }
    return *emu.current;
}

int
smi_open(emulator& emu, session& s, abi::smi_events_args* args)
{
    long gpu = emu.cfg.gpu_index(args->gpuid);
    if(gpu < 0 || s.gpus[static_cast<size_t>(gpu)].vanished) return fail(EINVAL);
    if(int error = emu.cfg.smi_error(args->gpuid)) return fail(error);

    int sv[2];
    count_client_syscall(sc_socketpair);
    if(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -1;
    int high = fcntl(sv[1], F_DUPFD_CLOEXEC, high_fd_floor());
    count_client_syscall(sc_fcntl, 3);
    if(high >= 0)
    {
        count_client_syscall(sc_close);
        libc().close(sv[1]);
        sv[1] = high;
    }
    fcntl(sv[1], F_SETFD, FD_CLOEXEC);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    struct stat feed_stat
    {
    };
    count_client_syscall(sc_fstat);
    fstat(sv[1], &feed_stat);
    fd_entry entry;
    entry.kind  = fd_kind::smi;
    entry.owner = &s;
    auto* c     = new client(static_cast<size_t>(gpu), emu.cfg.fifo_bytes);
    c->fd       = sv[0];
    c->feed_fd  = sv[1];
    c->feed_ino = feed_stat.st_ino;
    count_client_syscall(sc_getpid);
    c->pid    = getpid();
    entry.smi = c;
    if(!remember_fd(emu, sv[0], entry))
    {
        int error = errno;
        delete c;
        libc().close(sv[0]);
        libc().close(sv[1]);
        return fail(error);
    }
    gpu_state& state = s.gpus[static_cast<size_t>(gpu)];
    trim_clients(state);
    state.clients.push_back(c);
    args->anon_fd = static_cast<uint32_t>(sv[0]);
    return 0;
}

namespace
{
// A read makes room for a producer that waits for it, and may complete the replay for the exit
// wait; nobody else needs a wake-up (one per read would cost a futex call each).
void
wake_after_read(const session& s, const client& c, read_wakeups& wake)
{
    wake.producer  = s.producer_waiting;
    wake.exit_wait = s.producer_finished && c.fifo.empty();
}
} // namespace

namespace
{
// Takes up to n published bytes out of the socket and drops them (a read whose copy to the
// caller failed); returns how many.
size_t
discard_published(client& c, size_t n)
{
    char   scratch[4096];
    size_t taken = 0;
    while(taken < n)
    {
        count_client_syscall(sc_recvfrom);
        ssize_t got = recv(c.fd, scratch, std::min(sizeof(scratch), n - taken), MSG_DONTWAIT);
        if(got <= 0) break;
        taken += static_cast<size_t>(got);
    }
    return taken;
}
} // namespace

ssize_t
smi_read(emulator& emu, session& s, client& c, void* buf, size_t count, read_wakeups& wake)
{
    const read_fault& rule = emu.cfg.read_fault_rule;
    // Bytes queued since the last send (flush_wakeups sends a batch only when a reader may
    // wait for it), or that the socket refused: into the socket before the read takes any.
    if(c.published < c.fifo.size()) publish(c);
    if(c.published == 0) return fail(c.vanished ? ENODEV : EAGAIN);
    if(count == 0) return fail(EAGAIN); // the kernel's kfifo_out of 0 bytes
    if(emu.cfg.reads_wait_for_replay && !s.producer_finished) return fail(EAGAIN);
    if(rule.error != 0)
    {
        ++c.data_reads;
        bool fire = rule.once ? c.data_reads == 1 : c.data_reads % rule.every == 0;
        if(fire)
        {
            ++c.n.injected_read_errors;
            if(rule.error == EFAULT)
            {
                // The kernel has already taken the bytes out of the FIFO when copy_to_user
                // fails: they are lost.
                size_t lost = discard_published(c, std::min(count, c.published));
                c.n.lines_lost_efault += c.fifo.count_newlines(lost);
                c.n.bytes_lost_efault += lost;
                take_from_fifo(c, lost);
                ++s.progress;
                poke_producer(s);
                wake_after_read(s, c, wake);
            }
            return fail(rule.error);
        }
    }
    // The client's end is the fd the caller passed, whose identity lookup() checked.
    count_client_syscall(sc_recvfrom);
    ssize_t got = recv(c.fd, buf, count, MSG_DONTWAIT);
    if(got <= 0)
    {
        // The bytes were taken by a read the emulator did not see (recv, io_uring), or the
        // socket ended with the GPU (vanished).
        const int error = c.vanished ? ENODEV : got < 0 && errno == EFAULT ? EFAULT : EAGAIN;
        sync_fill(c);
        return fail(error);
    }
    take_from_fifo(c, static_cast<size_t>(got));
    c.n.bytes_read += static_cast<size_t>(got);
    ++s.progress;
    poke_producer(s);
    wake_after_read(s, c, wake);
    return got;
}
} // namespace kfd_emu
