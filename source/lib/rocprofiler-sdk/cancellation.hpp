// MIT License - see LICENSE.
//
// Thread cancellation of the program's threads inside the SDK. A program may cancel any of its
// threads (pthread_cancel, deferred): the thread then ends at its next cancellation point, by
// an unwind. Inside the SDK that unwind would cross noexcept code (std::terminate) or leave
// state half-changed (a context half-started), so every API call runs with cancellation
// disabled, as glibc's own functions that are no cancellation points do: a cancellation that
// is pending stays pending until the program's next cancellation point. The exceptions are
// the waits for a tool's code and that code itself where the SDK handles the unwind (a
// flush's or a destroy's wait for a callback, a callback a flush runs on the caller's thread,
// the agents query's callback): they get the caller's state back. The tool's
// configure, initialize, thread notifications and finalize do not (an unwind there is not
// handled). The SDK's own threads run with cancellation disabled throughout
// (internal_threading.cpp). Deferred cancellation only: with asynchronous cancellation POSIX
// allows no call but the three async-cancel-safe ones, this library's included.
#pragma once

#include <pthread.h>

namespace rocprofiler::cancellation
{
// Gives the calling thread the cancellation state `state` (PTHREAD_CANCEL_DISABLE or
// PTHREAD_CANCEL_ENABLE) for its lifetime, then restores the one before: nested scopes give
// back the outer state, never simply ENABLE.
class scoped_state
{
public:
    explicit scoped_state(int state) noexcept { pthread_setcancelstate(state, &m_before); }
    ~scoped_state() { pthread_setcancelstate(m_before, nullptr); }
    scoped_state(const scoped_state&)            = delete;
    scoped_state& operator=(const scoped_state&) = delete;

    // The state before this scope: the caller's, for the waits and tool code it may cancel.
    int before() const noexcept { return m_before; }

private:
    int m_before = PTHREAD_CANCEL_DISABLE;
};
} // namespace rocprofiler::cancellation
