// MIT License - see LICENSE.
//
// State a fork() child keeps on purpose, made visible as such to a leak checker.
//
// After fork() the child has one thread, but the parent's other threads' stacks are still
// mapped in its memory, with the heap objects they point to (a reader's buffers, a producer's
// line). Those objects are not lost: the library deliberately never frees what a thread that
// no longer exists may have been using. LeakSanitizer, run at the child's exit, sees only
// the roots it knows: globals and the stacks of live threads. So:
//  - thread_stack_root: each internal thread registers its own stack as a root for its life
//    (in the parent that changes nothing: a live thread's stack is a root anyway);
//  - keep_reachable(): an object abandoned in a fork child (a std::thread of a thread that
//    does not exist there) is stored in a global table instead of dropped.
// Without LeakSanitizer both are a few stores: the LSan entry points are weak symbols.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>

extern "C" void __lsan_register_root_region(const void* begin, size_t size) __attribute__((weak));
extern "C" void __lsan_unregister_root_region(const void* begin, size_t size) __attribute__((weak));

namespace rocprofiler::common
{
class thread_stack_root
{
public:
    thread_stack_root() noexcept
    {
        if(__lsan_register_root_region == nullptr) return;
        pthread_attr_t attr;
        if(pthread_getattr_np(pthread_self(), &attr) != 0) return;
        if(pthread_attr_getstack(&attr, &m_begin, &m_size) != 0) m_begin = nullptr;
        pthread_attr_destroy(&attr);
        if(m_begin != nullptr) __lsan_register_root_region(m_begin, m_size);
    }
    ~thread_stack_root()
    {
        if(m_begin != nullptr && __lsan_unregister_root_region != nullptr)
            __lsan_unregister_root_region(m_begin, m_size);
    }
    thread_stack_root(const thread_stack_root&)            = delete;
    thread_stack_root& operator=(const thread_stack_root&) = delete;

private:
    void*  m_begin = nullptr;
    size_t m_size  = 0;
};

// Objects a fork child abandons (at most a few per fork: one per internal thread).
inline std::atomic<const void*> kept_after_fork[64];
inline std::atomic<size_t>      kept_after_fork_count{0};

inline void
keep_reachable(const void* object) noexcept
{
    size_t slot = kept_after_fork_count.fetch_add(1, std::memory_order_relaxed);
    if(object != nullptr && slot < sizeof(kept_after_fork) / sizeof(kept_after_fork[0]))
        kept_after_fork[slot].store(object, std::memory_order_relaxed);
}
} // namespace rocprofiler::common
