// MIT License - see LICENSE.
#include "rocprofiler-sdk/internal_threading.hpp"
#include "common/fork_reachable.hpp"
#include "common/never_destroyed.hpp"
#include "rocprofiler-sdk/api_guard.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/registration.hpp"

#include <rocprofiler-sdk/internal_threading.h>

#include <pthread.h>
#include <signal.h>

#include <mutex>
#include <vector>

namespace rocprofiler::internal_threading
{
namespace
{
struct notifier
{
    rocprofiler_internal_thread_library_cb_t precreate;
    rocprofiler_internal_thread_library_cb_t postcreate;
    int                                      libs;
    void*                                    data;
    uint32_t                                 client; // a finalized tool is not called
};

// Registered only while tools initialize; read when threads start. Bounded by the number of
// registrations a tool makes during initialization.
std::mutex&
notifier_mutex()
{
    static common::never_destroyed<std::mutex> m;
    return m.get();
}

std::vector<notifier>&
notifiers()
{
    static common::never_destroyed<std::vector<notifier>> v;
    return v.get();
}

// Never throws: after the thread exists, an exception here would destroy it while joinable
// (std::terminate). Out of memory for the copy (tools are never called under our lock), the
// notifications are skipped with one line.
void
notify(bool before) noexcept
{
    std::vector<notifier> copy;
    try
    {
        std::lock_guard<std::mutex> lock{notifier_mutex()};
        copy = notifiers();
    }
    catch(...)
    {
        ROCP_ERROR << "out of memory: the tools' internal-thread notifications are skipped";
        return;
    }
    for(const auto& n : copy)
    {
        if((n.libs & ROCPROFILER_LIBRARY) == 0 || registration::is_client_finalized(n.client))
            continue;
        auto fn = before ? n.precreate : n.postcreate;
        if(fn == nullptr) continue;
        try
        {
            fn(ROCPROFILER_LIBRARY, n.data);
        }
        catch(...)
        {
            ROCP_WARNING << "an internal-thread notification callback threw; ignored";
        }
    }
}
} // namespace

namespace
{
// Every asynchronous signal, so that the program's signals are never delivered to an SDK
// thread (a program that blocks SIGTERM in main and sigwait()s for it must get it). The
// synchronous ones stay open: they are raised by a fault in the thread itself.
sigset_t
asynchronous_signals()
{
    sigset_t set;
    sigfillset(&set);
    for(int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS})
        sigdelset(&set, sig);
    return set;
}

// Blocks them in the creating thread for as long as it starts one thread (which inherits
// the mask, so the new thread never runs a moment with them open), as glibc's own helper
// threads are created.
struct signals_blocked
{
    signals_blocked()
    {
        auto set = asynchronous_signals();
        ok       = pthread_sigmask(SIG_BLOCK, &set, &saved) == 0;
    }
    ~signals_blocked()
    {
        if(ok) pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    }
    signals_blocked(const signals_blocked&)            = delete;
    signals_blocked& operator=(const signals_blocked&) = delete;
    sigset_t         saved{};
    bool             ok = false;
};

// An SDK thread's body. Cancellation is disabled: a request to cancel an SDK thread (a
// tool's callback may call pthread_cancel(pthread_self())) stays pending and is never acted
// on, so no cancellation point in the SDK's own code (a condition wait, the write of a log
// line, in a destructor or a noexcept function) can start an unwind that would end the
// process. A tool's callback that ends the thread with pthread_exit unwinds on to the
// thread's end: glibc aborts the process when that unwind is swallowed.
ROCP_CATCHES_FORCED_UNWIND void
run_body(const char* name, const std::function<void()>& fn)
{
    common::thread_stack_root stack_root; // see common/fork_reachable.hpp
    pthread_setname_np(pthread_self(), name);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, nullptr);
    try
    {
        fn();
    }
    catch(abi::__forced_unwind&)
    {
        throw;
    }
    catch(...)
    {
        ROCP_ERROR << "internal thread " << name << " stopped on an exception";
    }
}
} // namespace

std::unique_ptr<std::thread>
start_thread(const char* name, std::function<void()> body) noexcept
{
    try
    {
        notify(true);
        std::unique_ptr<std::thread> thr;
        {
            signals_blocked blocked;
            thr = std::make_unique<std::thread>([name, fn = std::move(body)]()
                                                { run_body(name, fn); });
        }
        notify(false);
        return thr;
    }
    catch(const std::exception& e)
    {
        ROCP_ERROR << "cannot start internal thread " << name << ": " << e.what();
        return nullptr;
    }
}
} // namespace rocprofiler::internal_threading

extern "C"
{
    rocprofiler_status_t
    rocprofiler_at_internal_thread_create(rocprofiler_internal_thread_library_cb_t precreate,
                                          rocprofiler_internal_thread_library_cb_t postcreate,
                                          int libs, void* data)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            if(precreate == nullptr && postcreate == nullptr)
                                return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
                            uint32_t client = UINT32_MAX;
                            if(auto locked = registration::check_configuration_open(client);
                               locked != ROCPROFILER_STATUS_SUCCESS)
                                return locked;
                            registration::pin_library_of(reinterpret_cast<const void*>(precreate));
                            registration::pin_library_of(reinterpret_cast<const void*>(postcreate));
                            std::lock_guard<std::mutex> lock{internal_threading::notifier_mutex()};
                            internal_threading::notifiers().push_back(
                                {precreate, postcreate, libs, data, client});
                            return ROCPROFILER_STATUS_SUCCESS;
                        });
    }

    rocprofiler_status_t
    rocprofiler_create_callback_thread(rocprofiler_callback_thread_t* cb_thread_id)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            if(cb_thread_id == nullptr)
                                return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
                            if(auto locked = registration::check_configuration_open();
                               locked != ROCPROFILER_STATUS_SUCCESS)
                                return locked;
                            return callback_thread::create(&cb_thread_id->handle);
                        });
    }

    rocprofiler_status_t
    rocprofiler_assign_callback_thread(rocprofiler_buffer_id_t       buffer_id,
                                       rocprofiler_callback_thread_t cb_thread_id)
    {
        using namespace rocprofiler;
        return api_call(__func__,
                        [&]()
                        {
                            if(auto locked = registration::check_configuration_open();
                               locked != ROCPROFILER_STATUS_SUCCESS)
                                return locked;
                            return callback_thread::assign(buffer_id.handle, cb_thread_id.handle);
                        });
    }
}
