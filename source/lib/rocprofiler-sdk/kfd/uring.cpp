// MIT License - see LICENSE.
#include "rocprofiler-sdk/kfd/uring.hpp"

#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rocprofiler::kfd::uring
{
namespace
{
long
setup_call(unsigned entries, io_uring_params& params)
{
    return ::syscall(__NR_io_uring_setup, entries, &params);
}

long
register_call(int fd, unsigned opcode, const void* arg, unsigned count)
{
    return ::syscall(__NR_io_uring_register, fd, opcode, arg, count);
}

void*
map_ring(int fd, size_t size, off_t offset)
{
    void* at = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, offset);
    return at == MAP_FAILED ? nullptr : at;
}

// Sets up the ring; COOP_TASKRUN (Linux 5.19: the kernel's retries of the READs run when
// the reader enters the kernel, not by interrupting it) where the kernel has it.
int
setup_ring(unsigned entries, io_uring_params& params)
{
    std::memset(&params, 0, sizeof(params));
    params.flags = IORING_SETUP_COOP_TASKRUN;
    long fd      = setup_call(entries, params);
    if(fd < 0 && errno == EINVAL)
    {
        std::memset(&params, 0, sizeof(params));
        fd = setup_call(entries, params);
    }
    return static_cast<int>(fd);
}
} // namespace

ring::~ring()
{
    // Requests still in flight may write into their buffers: the mappings (and so the ring)
    // are then kept, as the caller keeps the buffers (see reader_uring.cpp).
    if(in_flight_ == 0) unmap();
}

void
ring::unmap() noexcept
{
    if(sq_map_ != nullptr) ::munmap(sq_map_, sq_map_size_);
    if(cq_map_ != nullptr) ::munmap(cq_map_, cq_map_size_);
    if(sqes_ != nullptr) ::munmap(sqes_, sqes_size_);
    sq_map_   = nullptr;
    cq_map_   = nullptr;
    sqes_     = nullptr;
    enter_fd_ = -1;
}

bool
ring::open(unsigned entries, const int* files, unsigned count) noexcept
{
    io_uring_params params{};
    const int       fd = setup_ring(entries, params);
    if(fd < 0) return false;
    int  error = 0;
    auto fail  = [&](int e)
    {
        error = e;
        unmap();
        ::close(fd);
        errno = error;
        return false;
    };
    if((params.features & IORING_FEAT_EXT_ARG) == 0) return fail(ENOTSUP); // Linux 5.11
    sq_entries_  = params.sq_entries;
    sq_map_size_ = params.sq_off.array + params.sq_entries * sizeof(unsigned);
    cq_map_size_ = params.cq_off.cqes + params.cq_entries * sizeof(io_uring_cqe);
    sqes_size_   = params.sq_entries * sizeof(io_uring_sqe);
    sq_map_      = map_ring(fd, sq_map_size_, IORING_OFF_SQ_RING);
    cq_map_      = map_ring(fd, cq_map_size_, IORING_OFF_CQ_RING);
    sqes_        = static_cast<io_uring_sqe*>(map_ring(fd, sqes_size_, IORING_OFF_SQES));
    if(sq_map_ == nullptr || cq_map_ == nullptr || sqes_ == nullptr) return fail(ENOMEM);
    auto* sq  = static_cast<char*>(sq_map_);
    auto* cq  = static_cast<char*>(cq_map_);
    sq_head_  = reinterpret_cast<unsigned*>(sq + params.sq_off.head);
    sq_tail_  = reinterpret_cast<unsigned*>(sq + params.sq_off.tail);
    sq_mask_  = reinterpret_cast<unsigned*>(sq + params.sq_off.ring_mask);
    sq_array_ = reinterpret_cast<unsigned*>(sq + params.sq_off.array);
    cq_head_  = reinterpret_cast<unsigned*>(cq + params.cq_off.head);
    cq_tail_  = reinterpret_cast<unsigned*>(cq + params.cq_off.tail);
    cq_mask_  = reinterpret_cast<unsigned*>(cq + params.cq_off.ring_mask);
    cqes_     = reinterpret_cast<io_uring_cqe*>(cq + params.cq_off.cqes);
    if(register_call(fd, IORING_REGISTER_FILES, files, count) < 0) return fail(errno);
    // The ring by index, its fd closed (Linux 5.18).
    io_uring_rsrc_update slot{};
    slot.offset = ~0u; // any free slot
    slot.data   = static_cast<uint64_t>(fd);
    if(register_call(fd, IORING_REGISTER_RING_FDS, &slot, 1) != 1) return fail(errno);
    ::close(fd);
    enter_fd_ = static_cast<int>(slot.offset);
    // Cancelling every request (Linux 5.19) is how the reader ends without leaving READs into
    // its buffers in flight: tried once here (nothing to cancel: -ENOENT where supported).
    completion done{};
    if(!queue_cancel_all() || submit_and_wait(1, nullptr) != 0 || !next_completion(done) ||
       done.result == -EINVAL)
    {
        error = done.result == -EINVAL ? ENOTSUP : errno;
        if(in_flight_ == 0) unmap();
        enter_fd_ = -1;
        errno     = error;
        return false;
    }
    return true;
}

io_uring_sqe*
ring::next_sqe() noexcept
{
    if(room() == 0) return nullptr;
    const unsigned tail = *sq_tail_;
    const unsigned slot = tail & *sq_mask_;
    io_uring_sqe*  sqe  = &sqes_[slot];
    std::memset(sqe, 0, sizeof(*sqe));
    sq_array_[slot] = slot;
    __atomic_store_n(sq_tail_, tail + 1, __ATOMIC_RELEASE);
    ++to_submit_;
    ++in_flight_;
    return sqe;
}

bool
ring::queue_read(unsigned index, char* buffer, unsigned size, uint64_t user_data) noexcept
{
    io_uring_sqe* sqe = next_sqe();
    if(sqe == nullptr) return false;
    sqe->opcode    = IORING_OP_READ;
    sqe->flags     = IOSQE_FIXED_FILE;
    sqe->fd        = static_cast<int>(index);
    sqe->addr      = reinterpret_cast<uint64_t>(buffer);
    sqe->len       = size;
    sqe->off       = ~uint64_t{0}; // the file's position: the SMI fd has none
    sqe->user_data = user_data;
    return true;
}

unsigned
ring::room() const noexcept
{
    if(sq_head_ == nullptr) return 0;
    const unsigned used = *sq_tail_ - __atomic_load_n(sq_head_, __ATOMIC_ACQUIRE);
    return used >= sq_entries_ ? 0 : sq_entries_ - used;
}

bool
ring::queue_read_after(const wait_time& wait, uint64_t timeout_user_data, unsigned index,
                       char* buffer, unsigned size, uint64_t user_data) noexcept
{
    static_assert(sizeof(wait_time) == sizeof(__kernel_timespec));
    if(room() < 2) return false;
    io_uring_sqe* timeout = next_sqe();
    timeout->opcode       = IORING_OP_TIMEOUT;
    // Linked: the READ is issued when the timeout ends. ETIME_SUCCESS (Linux 5.16): the
    // timeout's expiry does not break the link, as an error would.
    timeout->flags         = IOSQE_IO_LINK;
    timeout->fd            = -1;
    timeout->addr          = reinterpret_cast<uint64_t>(&wait);
    timeout->len           = 1;
    timeout->off           = 0; // a pure timeout: not ended by other completions
    timeout->timeout_flags = IORING_TIMEOUT_ETIME_SUCCESS;
    timeout->user_data     = timeout_user_data;
    return queue_read(index, buffer, size, user_data);
}

bool
ring::queue_cancel(uint64_t target) noexcept
{
    return queue_cancel_request(target, 0);
}

bool
ring::queue_cancel_all() noexcept
{
    return queue_cancel_request(0, IORING_ASYNC_CANCEL_ANY);
}

bool
ring::queue_cancel_request(uint64_t target, unsigned flags) noexcept
{
    io_uring_sqe* sqe = next_sqe();
    if(sqe == nullptr) return false;
    sqe->opcode       = IORING_OP_ASYNC_CANCEL;
    sqe->fd           = -1;
    sqe->addr         = target; // the user_data to match, unless flags say otherwise
    sqe->cancel_flags = flags;
    sqe->user_data    = cancel_user_data;
    return true;
}

int
ring::submit_and_wait(unsigned min_complete, const uint64_t* timeout_ns) noexcept
{
    if(enter_fd_ < 0) return -EBADF;
    unsigned               flags = IORING_ENTER_REGISTERED_RING | IORING_ENTER_GETEVENTS;
    __kernel_timespec      wait{};
    io_uring_getevents_arg arg{};
    const void*            extra      = nullptr;
    size_t                 extra_size = 0;
    if(timeout_ns != nullptr)
    {
        wait.tv_sec  = static_cast<long long>(*timeout_ns / 1'000'000'000);
        wait.tv_nsec = static_cast<long long>(*timeout_ns % 1'000'000'000);
        arg.ts       = reinterpret_cast<uint64_t>(&wait);
        flags |= IORING_ENTER_EXT_ARG;
        extra      = &arg;
        extra_size = sizeof(arg);
    }
    long rc = ::syscall(__NR_io_uring_enter, enter_fd_, to_submit_, min_complete, flags, extra,
                        extra_size);
    if(rc < 0) return -errno;
    to_submit_ -= static_cast<unsigned>(rc) < to_submit_ ? static_cast<unsigned>(rc) : to_submit_;
    return 0;
}

bool
ring::next_completion(completion& out) noexcept
{
    if(cq_head_ == nullptr) return false;
    const unsigned head = *cq_head_;
    if(head == __atomic_load_n(cq_tail_, __ATOMIC_ACQUIRE)) return false;
    const io_uring_cqe& cqe = cqes_[head & *cq_mask_];
    out.user_data           = cqe.user_data;
    out.result              = cqe.res;
    __atomic_store_n(cq_head_, head + 1, __ATOMIC_RELEASE);
    if(in_flight_ > 0) --in_flight_;
    return true;
}
} // namespace rocprofiler::kfd::uring
