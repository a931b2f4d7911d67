// MIT License - see LICENSE.
//
// For tests of a callback that ends its own thread (pthread_exit, or a cancellation) inside
// an SDK call: the unwind must pass through the SDK, since glibc aborts the process when it
// is swallowed.
#pragma once

#include <pthread.h>

namespace rocprofiler::test
{
// Runs `body` on a new thread and returns what the thread ended with (pthread_join's value);
// `failed` when the thread could not be created or joined.
inline void*
value_the_thread_ended_with(void* (*body)(void*), void* failed = reinterpret_cast<void*>(-1))
{
    pthread_t thread{};
    if(pthread_create(&thread, nullptr, body, nullptr) != 0) return failed;
    void* result = failed;
    if(pthread_join(thread, &result) != 0) return failed;
    return result;
}
} // namespace rocprofiler::test
