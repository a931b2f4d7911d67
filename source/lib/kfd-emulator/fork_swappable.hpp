// MIT License - see LICENSE.
#pragma once

#include <atomic>

namespace kfd_emu
{
// A pointer to state that a fork child replaces with its own (the parent's lock, fd table
// and session are left as they were at fork(): another thread may have been inside them).
// The parent's threads, which do not exist in the child, may have read the pointer just
// before fork() with nothing ordering that read before the child's replacement; an atomic
// makes the replacement well defined (ThreadSanitizer reported it as a data race in an
// exec'd child). Reads and writes look like a plain pointer's.
template <typename T> class fork_swappable
{
public:
    fork_swappable& operator=(T* value) noexcept
    {
        pointer_.store(value, std::memory_order_release);
        return *this;
    }
    T* get() const noexcept { return pointer_.load(std::memory_order_acquire); }
    T* operator->() const noexcept { return get(); }
    T& operator*() const noexcept { return *get(); }
       operator T*() const noexcept { return get(); }

private:
    std::atomic<T*> pointer_{nullptr};
};
} // namespace kfd_emu
