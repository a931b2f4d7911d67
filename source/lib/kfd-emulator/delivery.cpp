// MIT License - see LICENSE.
#include "delivery.hpp"

#include "client_calls.hpp"
#include "fd_table.hpp"
#include "real_libc.hpp"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <algorithm>

namespace kfd_emu
{
// Sends the bytes queued since the last batch into the client's socket, where any read of
// the fd finds them (read, recv, readv, io_uring). Each send is a new readiness edge, as the
// kernel wakes its readers for new messages, so an edge-triggered epoll reader is woken for
// each batch. Returns whether it sent some (which may wake a reader).
//
// A send the socket refuses leaves the bytes queued, unread but counted in the FIFO's fill:
// the next batch, or the next intercepted read, sends them. (A socket's buffer counts each
// send's overhead as well as its bytes: a FIFO of 1 MiB filled a message at a time can
// exceed it.)
bool
publish(client& c)
{
    if(c.vanished || c.feed_fd < 0 || c.published >= c.fifo.size()) return false;
    if(!is_our_socket(c.feed_fd, c.feed_ino))
    {
        c.feed_fd = -1; // closed behind our back: never use (or close) that number again
        return false;
    }
    byte_fifo::spans bytes  = c.fifo.peek(c.published, c.fifo.size() - c.published);
    iovec            iov[2] = {{const_cast<char*>(bytes.first.data), bytes.first.size},
                               {const_cast<char*>(bytes.second.data), bytes.second.size}};
    msghdr           msg{};
    msg.msg_iov    = iov;
    msg.msg_iovlen = bytes.second.size != 0 ? 2 : 1;
    count_client_syscall(sc_sendmsg);
    ssize_t sent = sendmsg(c.feed_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if(sent <= 0) return false;
    c.published += static_cast<size_t>(sent);
    c.read_since_publish = false;
    return true;
}

void
take_from_fifo(client& c, size_t n)
{
    c.fifo.pop(nullptr, n);
    c.published -= std::min(n, c.published);
    c.read_since_publish = true;
}

// Asks the socket how many published bytes are still unread: those a reader took without an
// intercepted read() leave the FIFO here. Returns how many that was.
size_t
sync_fill(client& c)
{
    if(c.published == 0 || c.closed || !is_our_socket(c.fd, c.fd_ino)) return 0;
    int unread = 0;
    count_client_syscall(sc_ioctl);
    // libc's ioctl, not ours: ours would take the emulator's lock, which the caller holds.
    if(libc().ioctl(c.fd, SIOCINQ, &unread) != 0 || unread < 0 ||
       static_cast<size_t>(unread) >= c.published)
        return 0;
    size_t taken = c.published - static_cast<size_t>(unread);
    take_from_fifo(c, taken);
    c.n.bytes_read += taken;
    c.bypassing_reader = true;
    return taken;
}

namespace
{
// Whether the client may take bytes the emulator does not see: it read without read() before
// (recv, io_uring), or it has read nothing yet. While every byte read so far went through an
// intercepted read(), the FIFO is exact and the socket need not be asked.
bool
reads_unseen(const client& c)
{
    return c.bypassing_reader || c.n.bytes_read == 0;
}

// Where the FIFO looks full: asks the socket only for such a client (two system calls saved
// per full FIFO in the common case).
size_t
sync_fill_if_bypassed(client& c)
{
    return reads_unseen(c) ? sync_fill(c) : 0;
}
} // namespace

bool
may_read_unseen(const gpu_state& gpu)
{
    for(const client* c : gpu.clients)
        if(is_live(*c) && reads_unseen(*c)) return true;
    return false;
}

namespace
{
enum class verdict
{
    deliver,
    filtered_mask,
    filtered_pid,
};

verdict
judge(const config& cfg, const client& c, uint32_t id, uint32_t pid)
{
    if((c.mask & abi::event_mask(id)) == 0) return verdict::filtered_mask;
    if(pid != 0 && pid != static_cast<uint32_t>(c.pid))
    {
        // Other processes' events: superuser only; before 6.16 also bit 63 (ALL_PROCESS).
        bool all_bit = (c.mask & abi::event_mask(abi::event_all_process)) != 0;
        if(!cfg.superuser || (cfg.all_process_required && !all_bit)) return verdict::filtered_pid;
    }
    return verdict::deliver;
}
} // namespace

bool
is_live(const client& c)
{
    return !c.closed && !c.vanished;
}

namespace
{
// Lossless pace: whether the client has room for msg. Room means one message (96 bytes) more
// than msg, so that the FIFO never fills beyond capacity - 96: a reader that takes a nearly
// full FIFO as a sign of kernel drops sees none.
bool
has_room(client& c, size_t size)
{
    size_t capacity = c.fifo.capacity();
    size_t room     = size + abi::message_size <= capacity ? size + abi::message_size : size;
    if(room > capacity || c.fifo.available() >= room) return true;
    return sync_fill_if_bypassed(c) != 0 && c.fifo.available() >= room;
}
} // namespace

// Lossless pace: true while some client that would get msg has no room for it yet.
bool
must_wait_for_space(const config& cfg, gpu_state& gpu, uint32_t id, uint32_t pid, size_t size)
{
    for(client* c : gpu.clients)
    {
        if(!is_live(*c) || judge(cfg, *c, id, pid) != verdict::deliver) continue;
        if(!has_room(*c, size)) return true;
    }
    return false;
}

// `#@ wait-mask`: whether the GPU's live clients' masks now satisfy the wait (always, for
// no wait, a GPU that is not emulated or one that vanished).
bool
mask_wait_done(const session& s, const mask_wait& wait)
{
    if(!wait.active || wait.gpu < 0 || static_cast<size_t>(wait.gpu) >= s.gpus.size()) return true;
    const gpu_state& gpu = s.gpus[static_cast<size_t>(wait.gpu)];
    if(gpu.vanished) return true;
    bool enabled = false;
    for(const client* c : gpu.clients)
        enabled = enabled || (is_live(*c) && (c->mask & abi::event_mask(wait.id)) != 0);
    return enabled == wait.with;
}

namespace
{
// Only <stats>.drops reads the marks: without KFD_EMULATOR_STATS none are kept. A replay
// that drops steadily would otherwise add up to 1 MiB per GPU to the traced process, more
// the longer it runs, and that is what the peak-RSS benchmark measured (benchmarks/rss.sh
// passes no stats file). The full capacity is reserved at the first drop: address space
// only, pages are touched as marks come, and no doubling reallocates (and copies) them.
void
mark_drop(gpu_state& gpu)
{
    if(g_stats_path[0] == '\0' || gpu.drop_marks.size() >= max_drop_marks) return;
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    try
    {
        if(gpu.drop_marks.capacity() == 0) gpu.drop_marks.reserve(max_drop_marks);
        gpu.drop_marks.push_back(
            drop_mark{gpu.n.events_emitted - 1, static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
                                                    static_cast<uint64_t>(ts.tv_nsec)});
    }
    catch(...)
    {
    }
}

// One client's part of deliver, by its verdict; returns whether it dropped msg (its FIFO full).
bool
deliver_to(gpu_state& gpu, client& c, verdict v, std::string_view msg)
{
    switch(v)
    {
    case verdict::filtered_mask:
        ++c.n.filtered_mask;
        ++gpu.n.filtered_mask;
        return false;
    case verdict::filtered_pid:
        ++c.n.filtered_pid;
        ++gpu.n.filtered_pid;
        return false;
    case verdict::deliver:
        break;
    }
    if(!c.fifo.push_whole(msg.data(), msg.size()) &&
       !(sync_fill_if_bypassed(c) != 0 && c.fifo.push_whole(msg.data(), msg.size())))
    {
        // The kernel drops a message that does not fit, silently.
        ++c.n.dropped_fifo_full;
        ++gpu.n.dropped_fifo_full;
        mark_drop(gpu);
        return true;
    }
    ++c.n.queued;
    ++gpu.n.events_queued;
    c.n.bytes_queued += msg.size();
    c.n.max_fifo_fill = std::max<uint64_t>(c.n.max_fifo_fill, c.fifo.size());
    c.wake            = true; // the readiness edge comes with the batch (flush_wakeups)
    return false;
}
} // namespace

// Returns how many clients dropped msg because their FIFO was full.
uint64_t
deliver(const config& cfg, gpu_state& gpu, uint32_t id, uint32_t pid, std::string_view msg)
{
    uint64_t drops = 0;
    ++gpu.n.events_emitted;
    bool any_client = false;
    for(client* c : gpu.clients)
    {
        if(!is_live(*c)) continue;
        any_client = true;
        if(deliver_to(gpu, *c, judge(cfg, *c, id, pid), msg)) ++drops;
    }
    if(!any_client) ++gpu.n.no_client;
    return drops;
}

bool
deliver_when_room(const config& cfg, gpu_state& gpu, uint32_t id, uint32_t pid,
                  std::string_view msg, uint64_t& drops)
{
    if(gpu.clients.size() == 1 && is_live(*gpu.clients.front()))
    {
        client&       c = *gpu.clients.front();
        const verdict v = judge(cfg, c, id, pid);
        if(v == verdict::deliver && !has_room(c, msg.size())) return false;
        ++gpu.n.events_emitted;
        drops = deliver_to(gpu, c, v, msg) ? 1 : 0;
        return true;
    }
    if(must_wait_for_space(cfg, gpu, id, pid, msg.size())) return false;
    drops = deliver(cfg, gpu, id, pid, msg);
    return true;
}

namespace
{
// Whether a batch's bytes go into the socket now (flush_wakeups), or wait for the client's
// next intercepted read, which sends what is queued before it takes any (smi_read). Now when
// the socket is empty (a reader may sleep until it is readable), when the client read since
// the last send (an edge-triggered reader waits for a new edge, as the kernel wakes its
// readers per message). Not on every batch: a send per batch under the lock made the
// producer late at 500k events/s, and late it held the lock from batch to batch while the
// SDK's read waited for it (8 KiB FIFOs dropped 7-9% of the events, against none).
//
// A reader that takes bytes without read() (io_uring, recv) sends nothing itself, and gets a
// send only when its socket is empty (asked with SIOCINQ). A socket read takes what is sent
// while it runs, so sends into a socket being read gave single reads of up to 1.5 times a
// 1 KiB FIFO, which no kernel read returns (and the SDK then takes the FIFO for a larger one).
// It also keeps such a reader from paying for a socket buffer per batch.
bool
wants_bytes_now(client& c)
{
    // A client never seen to read: has it taken the bytes without read()?
    if(!c.bypassing_reader && c.published != 0 && c.n.bytes_read == 0) sync_fill(c);
    if(c.bypassing_reader)
    {
        if(c.published != 0) sync_fill(c);
        return c.published == 0;
    }
    return c.published == 0 || c.read_since_publish;
}
} // namespace

// The producer queues messages in batches under one lock hold, and gives each client that
// received some one wake-up (a new readiness edge) per batch, before it releases the lock or
// waits: a reader sees the batch at once, with a system call or two per batch rather than
// per message.
bool
flush_wakeups(session& s)
{
    bool raised = false;
    for(auto& gpu : s.gpus)
        for(client* c : gpu.clients)
            if(c->wake)
            {
                c->wake = false;
                if(is_live(*c) && wants_bytes_now(*c) && publish(*c)) raised = true;
            }
    return raised;
}

void
publish_all(session& s)
{
    for(auto& gpu : s.gpus)
        for(client* c : gpu.clients)
            if(is_live(*c) && c->published < c->fifo.size()) publish(*c);
}

void
vanish_gpu(gpu_state& gpu, uint64_t line, bool pollerr)
{
    gpu.vanished      = true;
    gpu.vanished_line = line;
    for(client* c : gpu.clients)
    {
        if(!is_live(*c)) continue;
        publish(*c); // the messages before the vanish stay readable
        // A byte left unread in our end when it closes makes the peer report POLLERR
        // (ECONNRESET) besides POLLHUP.
        if(pollerr && is_our_socket(c->fd, c->fd_ino))
            send(c->fd, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        if(c->fd >= 0 && c->fd < max_tracked_fd) g_feed_of[c->fd].store(0);
        if(is_our_socket(c->feed_fd, c->feed_ino)) libc().close(c->feed_fd);
        c->feed_fd  = -1;
        c->vanished = true;
    }
}

void
apply_vanish_fault(const config& cfg, session& s, const vanish_fault& fault)
{
    long gpu = cfg.gpu_index(fault.gpu_id);
    if(gpu >= 0 && !s.gpus[static_cast<size_t>(gpu)].vanished)
        vanish_gpu(s.gpus[static_cast<size_t>(gpu)], fault.line, fault.pollerr);
}

void
close_client(client& c)
{
    if(c.fd >= 0 && c.fd < max_tracked_fd) g_feed_of[c.fd].store(0);
    sync_fill_if_bypassed(c); // while not closed: what is still unread is counted below
    c.closed               = true;
    c.n.fifo_bytes_at_exit = c.fifo.size();
    c.fifo.release();
    if(is_our_socket(c.feed_fd, c.feed_ino))
    {
        count_client_syscall(sc_close);
        libc().close(c.feed_fd);
    }
    c.feed_fd = -1;
}

// Keeps the per-GPU client list bounded: forgets the oldest closed client.
void
trim_clients(gpu_state& gpu)
{
    if(gpu.clients.size() < max_clients_kept) return;
    auto it = std::find_if(gpu.clients.begin(), gpu.clients.end(),
                           [](const client* c) { return c->closed; });
    if(it == gpu.clients.end()) return;
    delete *it;
    gpu.clients.erase(it);
    ++gpu.clients_omitted;
}

} // namespace kfd_emu
