// MIT License - see LICENSE.
//
// The little of io_uring the reader needs, on raw system calls (no liburing): one ring whose
// files are registered (read through the ring's own references to them, never by number), a
// READ per file kept queued, and one io_uring_enter() per wake-up that both submits the next
// READs and waits for completions. The poll reader makes three calls per wake-up (ppoll, the
// fd-identity check, read); this one makes one, and needs no identity check: a registered
// file is the file, whatever the program does with the numbers.
//
// Nor does the ring keep an fd number of its own: it is registered to the thread that opened
// it (IORING_REGISTER_RING_FDS) and its fd closed at once, so a close_range() or dup2() of the
// program can neither close it nor make the SDK use the program's own ring by mistake. Only
// that thread (the reader) may use it.
//
// A READ of a file that is O_NONBLOCK and has nothing queued is retried by the kernel when the
// file becomes readable (the SMI fd has no FMODE_NOWAIT, and returns -EAGAIN when its FIFO is
// empty, so io_uring waits only because the SDK sets O_NONBLOCK; without it each READ would
// block an io-wq worker thread).
#pragma once

#include <cstddef>
#include <cstdint>

struct io_uring_sqe;
struct io_uring_cqe;

namespace rocprofiler::kfd::uring
{
// A relative wait, laid out as the kernel's __kernel_timespec.
struct wait_time
{
    int64_t tv_sec  = 0;
    int64_t tv_nsec = 0;
};

struct completion
{
    uint64_t user_data = 0;
    int32_t  result    = 0; // bytes read, or -errno
};

class ring
{
public:
    ring() = default;
    ~ring();
    ring(const ring&)            = delete;
    ring& operator=(const ring&) = delete;

    // Sets up a ring of at least `entries` submissions with `files` registered (index i is
    // files[i]; -1 leaves a slot empty), on the calling thread. False with errno where the
    // kernel refuses io_uring (ENOSYS; EPERM from a seccomp filter or
    // kernel.io_uring_disabled) or lacks what this reader needs (Linux 5.19: registered
    // rings, timeouts on the wait, cancelling every request).
    bool open(unsigned entries, const int* files, unsigned count) noexcept;
    bool is_open() const noexcept { return enter_fd_ >= 0; }

    // Queues a READ of registered file `index` into buffer (submitted by the next wait).
    // False when the submission queue is full.
    bool queue_read(unsigned index, char* buffer, unsigned size, uint64_t user_data) noexcept;
    // Queues the same READ linked after a timeout of `wait` (interrupt mitigation: the kernel
    // issues the READ when the timeout ends, with no system call of the reader's; both are
    // submitted by the next wait). The timeout's completion has timeout_user_data and result
    // -ETIME (or -ECANCELED: the READ's then too). `wait` is read when submitted: it must stay
    // valid until the next submit_and_wait. False when the queue lacks room for both.
    bool queue_read_after(const wait_time& wait, uint64_t timeout_user_data, unsigned index,
                          char* buffer, unsigned size, uint64_t user_data) noexcept;
    // Queues the cancellation of the request with `target` user_data (its completion has
    // cancel_user_data; -ENOENT when the target had ended).
    bool queue_cancel(uint64_t target) noexcept;
    // Queues the cancellation of every request in flight (its own completion has user_data
    // cancel_user_data).
    bool queue_cancel_all() noexcept;

    // Submits what is queued, then waits until at least `min_complete` completions are there
    // (0: none; only what is already done, with the kernel's pending work run) or until
    // timeout_ns (when non-null) passes. 0, or -errno (ETIME: the timeout passed; EINTR).
    int submit_and_wait(unsigned min_complete, const uint64_t* timeout_ns) noexcept;

    // Takes the next completion; false when there is none.
    bool next_completion(completion& out) noexcept;

    // Requests in flight: queued or submitted READs, timeouts and cancels whose completion was
    // not taken.
    unsigned in_flight() const noexcept { return in_flight_; }

    static constexpr uint64_t cancel_user_data = ~uint64_t{0};

private:
    // Free submission entries (queued but not yet submitted ones use them).
    unsigned      room() const noexcept;
    io_uring_sqe* next_sqe() noexcept;
    bool          queue_cancel_request(uint64_t target, unsigned flags) noexcept;
    void          unmap() noexcept;

    int           enter_fd_    = -1; // the registered ring's index (IORING_ENTER_REGISTERED_RING)
    unsigned      to_submit_   = 0;
    unsigned      in_flight_   = 0;
    unsigned      sq_entries_  = 0;
    unsigned*     sq_head_     = nullptr;
    unsigned*     sq_tail_     = nullptr;
    unsigned*     sq_mask_     = nullptr;
    unsigned*     sq_array_    = nullptr;
    io_uring_sqe* sqes_        = nullptr;
    unsigned*     cq_head_     = nullptr;
    unsigned*     cq_tail_     = nullptr;
    unsigned*     cq_mask_     = nullptr;
    io_uring_cqe* cqes_        = nullptr;
    void*         sq_map_      = nullptr;
    size_t        sq_map_size_ = 0;
    void*         cq_map_      = nullptr;
    size_t        cq_map_size_ = 0;
    size_t        sqes_size_   = 0;
};
} // namespace rocprofiler::kfd::uring
