// MIT License - see LICENSE.
//
// Every C API entry point that can reach C++ code that may throw runs its body through
// api_call(): no exception ever crosses into the tool or the application.
//
// The body runs with the thread's cancellation disabled (cancellation.hpp): a body that
// takes an int is given the caller's cancellation state, for the waits and tool code that stay
// cancellation points (a flush's wait, a callback it runs inline, the agents query's callback).
//
// The one unwind that passes is a thread's own end: pthread_exit inside the body (from a
// tool's callback such as the agents query's), or a cancellation in those. It is no
// exception of ours: the program asked for it, and glibc aborts the process when it is
// swallowed ("exception not rethrown"). So api_call is not noexcept: a noexcept frame would
// end the program on it just the same.
#pragma once

#include "rocprofiler-sdk/cancellation.hpp"
#include "rocprofiler-sdk/fork_locks.hpp"
#include "rocprofiler-sdk/logging.hpp"

#include <rocprofiler-sdk/fwd.h>

#include <cxxabi.h>

#include <exception>
#include <new>
#include <type_traits>

// For a function that catches abi::__forced_unwind to rethrow it: UBSan is off in that frame
// only (what it calls keeps its checks). The forced unwind has no exception object, so the
// ABI's own way to catch it binds a reference to null (libstdc++ does the same). GCC 12
// ignores no_sanitize("null") for that check (the CI's ASan+UBSan stage failed on it);
// "undefined" it honours.
#define ROCP_CATCHES_FORCED_UNWIND __attribute__((no_sanitize("undefined")))

namespace rocprofiler
{
// The error line of api_call: nothing it throws (out of memory while logging) reaches the
// caller, now that api_call is not noexcept.
inline void
log_api_error(const char* name, const char* what, const char* detail = "") noexcept
{
    try
    {
        ROCP_ERROR << name << ": " << what << detail;
    }
    catch(...)
    {
    }
}

template <typename Fn>
ROCP_CATCHES_FORCED_UNWIND rocprofiler_status_t
api_call(const char* name, Fn&& body)
{
    const cancellation::scoped_state no_cancellation{PTHREAD_CANCEL_DISABLE};
    if(fork_locks::held_by_this_thread()) // a fork handler of the program's or a tool's
    {
        log_api_error(name, "called from a fork handler that runs while the SDK's own holds "
                            "its locks; not available there");
        return ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE;
    }
    try
    {
        if constexpr(std::is_invocable_v<Fn, int>)
            return body(no_cancellation.before());
        else
            return body();
    }
    catch(abi::__forced_unwind&)
    {
        throw;
    }
    catch(const std::bad_alloc&)
    {
        log_api_error(name, "out of memory");
        return ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    catch(const std::exception& e)
    {
        log_api_error(name, "internal error: ", e.what());
        return ROCPROFILER_STATUS_ERROR;
    }
    catch(...)
    {
        log_api_error(name, "unknown internal error");
        return ROCPROFILER_STATUS_ERROR;
    }
}
} // namespace rocprofiler
