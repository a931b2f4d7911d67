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
// the agents query's callback): they get the caller's state back (state_for_wait). The tool's
// configure, initialize, thread notifications and finalize do not (an unwind there is not
// handled). The SDK's own threads run with cancellation disabled throughout
// (internal_threading.cpp). Deferred cancellation only: with asynchronous cancellation POSIX
// allows no call but the three async-cancel-safe ones, this library's included.
#pragma once

#include <pthread.h>

namespace rocprofiler::cancellation
{
// Disables cancellation of the calling thread for its lifetime, then restores the caller's
// state (a pending cancellation then waits for the program's next cancellation point).
class disabled_scope
{
public:
    disabled_scope() noexcept { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &m_callers); }
    ~disabled_scope() { pthread_setcancelstate(m_callers, nullptr); }
    disabled_scope(const disabled_scope&)            = delete;
    disabled_scope& operator=(const disabled_scope&) = delete;

    // PTHREAD_CANCEL_ENABLE or PTHREAD_CANCEL_DISABLE, as the caller had it.
    int callers_state() const noexcept { return m_callers; }

private:
    int m_callers = PTHREAD_CANCEL_DISABLE;
};

// Gives a wait the cancellation state `state` for its lifetime, then restores the one before.
class state_for_wait
{
public:
    explicit state_for_wait(int state) noexcept { pthread_setcancelstate(state, &m_before); }
    ~state_for_wait() { pthread_setcancelstate(m_before, nullptr); }
    state_for_wait(const state_for_wait&)            = delete;
    state_for_wait& operator=(const state_for_wait&) = delete;

private:
    int m_before = PTHREAD_CANCEL_DISABLE;
};
} // namespace rocprofiler::cancellation
