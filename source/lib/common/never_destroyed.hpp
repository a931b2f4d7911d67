// MIT License - see LICENSE.
//
// A process-wide object built on first use in static storage and never destroyed.
//
// The SDK's tables and locks are used until the very end (tools and the atexit handler call
// in after static destructors may have run, and a thread that outlived a timed-out stop may
// still touch them), so they are never destroyed. They used to be `static T* t = new T{}`:
// that first use allocates, and it often happens inside noexcept code (an API call's first
// check, a fork handler, a thread's end), where an out-of-memory bad_alloc would end the host
// with std::terminate. Built here in static storage, the first use cannot fail: every T here
// has a default constructor that neither allocates nor throws (std::chrono's time_point,
// which some contain, is not declared noexcept, so that is not checked at compile time).
#pragma once

#include <new>

namespace rocprofiler::common
{
template <typename T> class never_destroyed
{
public:
    never_destroyed() noexcept { new(&m_storage) T{}; }
    never_destroyed(const never_destroyed&)            = delete;
    never_destroyed& operator=(const never_destroyed&) = delete;

    T& get() noexcept { return *std::launder(reinterpret_cast<T*>(&m_storage)); }

private:
    alignas(T) unsigned char m_storage[sizeof(T)];
};
} // namespace rocprofiler::common
