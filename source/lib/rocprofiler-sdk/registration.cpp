// MIT License - see LICENSE.
#include "rocprofiler-sdk/registration.hpp"
#include "common/deadline.hpp"
#include "common/never_destroyed.hpp"
#include "rocprofiler-sdk/api_guard.hpp"
#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/callback_thread.hpp"
#include "rocprofiler-sdk/cancellation.hpp"
#include "rocprofiler-sdk/context.hpp"
#include "rocprofiler-sdk/env.hpp"
#include "rocprofiler-sdk/kfd/service.hpp"

#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/version.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace rocprofiler::registration
{
namespace
{
// How far finalization of one tool got (under life().mutex).
enum class finish_state : uint8_t
{
    not_started,
    running,     // on thread `finisher`
    interrupted, // left early (a tool's callback ended the finishing thread): exit finishes it
    done,
};

struct client
{
    uint32_t                      id = 0;
    std::string                   source; // where the tool was found, for log lines
    rocprofiler_client_id_t*      client_id  = nullptr;
    rocprofiler_tool_initialize_t initialize = nullptr;
    rocprofiler_tool_finalize_t   finalize   = nullptr;
    void*                         tool_data  = nullptr;
    std::atomic<bool>             active{false}; // configured, and not withdrawn
    // Its initialize runs now / returned success (or it has none). Only an initialized tool is
    // finalized at exit (finish_client). Changed under life().mutex.
    std::atomic<bool> initializing{false};
    std::atomic<bool> initialized{false};
    std::atomic<bool> finalized{false};
    finish_state      finish          = finish_state::not_started;
    pthread_t         finisher        = {};
    bool              finalize_called = false;   // its finalize runs at most once
    std::atomic<bool> finalize_requested{false}; // asked from its own callback
};

std::atomic<int>      current{static_cast<int>(phase::uninitialized)};
std::atomic<uint32_t> configuring{UINT32_MAX};
std::atomic<bool>     forked_child{false};
std::atomic<bool>     deferred_finalizations{false};

// Finalized flag per client id, readable from any thread without a lock.
constexpr size_t max_clients = 256;
std::array<std::atomic<bool>, max_clients + 1>&
finalized_clients()
{
    static common::never_destroyed<std::array<std::atomic<bool>, max_clients + 1>> flags;
    return flags.get();
}

void
mark_finalized(uint32_t id)
{
    if(id <= max_clients) finalized_clients()[id].store(true);
}

// The life cycle's state changes (phase, each tool's finalization) happen under this small
// lock, which is never held while a tool's code runs: configure, initialize, finalize and
// the thread notifications run with no SDK lock held, so a tool may wait there for a thread
// of its own that calls any API. Threads that must wait for another thread's step (exit for
// a running initialize or finalize) wait on `changed`, bounded by the exit deadline.
struct life_state
{
    std::mutex              mutex;
    std::condition_variable changed;
    pthread_t               initializer = {}; // the thread running initialize()
};

life_state&
life()
{
    static common::never_destroyed<life_state> l;
    return l.get();
}

bool
is_initializer_thread()
{
    return current_phase() == phase::initializing &&
           pthread_equal(life().initializer, pthread_self()) != 0;
}

// Never destroyed: tools and the atexit handler may use them until the very end.
std::vector<rocprofiler_configure_func_t>&
forced_configures()
{
    static common::never_destroyed<std::vector<rocprofiler_configure_func_t>> v;
    return v.get();
}

// Clients by id (1..client_count), appended only by the initializing thread and never
// removed, so any thread may read them without a lock.
std::array<std::atomic<client*>, max_clients + 1>&
client_table()
{
    static common::never_destroyed<std::array<std::atomic<client*>, max_clients + 1>> t;
    return t.get();
}
std::atomic<uint32_t> client_count{0};

client*
find_client(uint64_t id)
{
    if(id == 0 || id > client_count.load()) return nullptr;
    return client_table()[id].load();
}

template <typename F>
void
for_each_client(F&& f)
{
    for(uint32_t id = 1, n = client_count.load(); id <= n; ++id)
        if(auto* c = client_table()[id].load()) f(*c);
}

void
set_phase(phase p)
{
    current.store(static_cast<int>(p));
}

struct candidate
{
    rocprofiler_configure_func_t fn;
    std::string                  source;
};

void
add_candidate(std::vector<candidate>& out, rocprofiler_configure_func_t fn, std::string source)
{
    if(fn == nullptr) return;
    for(const auto& c : out)
        if(c.fn == fn) return; // the same tool found twice (e.g. preloaded and listed)
    out.push_back({fn, std::move(source)});
}

std::vector<std::string>
split_tool_list(const char* text)
{
    std::vector<std::string> out;
    std::string              current_entry;
    for(const char* p = text; p != nullptr && *p != '\0'; ++p)
    {
        if(*p == ':' || *p == ',' || *p == ' ' || *p == '\t' || *p == '\n')
        {
            if(!current_entry.empty()) out.push_back(current_entry);
            current_entry.clear();
        }
        else
            current_entry.push_back(*p);
    }
    if(!current_entry.empty()) out.push_back(current_entry); // the last entry counts too
    return out;
}

// Set while this thread loads the libraries of ROCP_TOOL_LIBRARIES: their constructors run
// then, and one that calls rocprofiler_force_configure is recorded for the discovery going on
// (initializing from inside it would re-enter that discovery).
thread_local bool loading_listed_tools = false;
// How many such calls this thread's listed tools made (a library's own, not another thread's).
thread_local uint32_t forced_while_loading = 0;

void
find_listed_tools(std::vector<candidate>& out)
{
    if(env::secure_mode())
    {
        // As ld.so ignores LD_PRELOAD here: a setuid or file-capability program must not run
        // code named by its caller's environment.
        if(std::getenv("ROCP_TOOL_LIBRARIES") != nullptr)
            ROCP_WARNING << "ROCP_TOOL_LIBRARIES ignored: this program runs in secure-execution "
                            "mode (setuid or file capabilities); no tool is loaded";
        return;
    }
    const char* list = env::get("ROCP_TOOL_LIBRARIES");
    for(const auto& path : split_tool_list(list))
    {
        uint32_t forced_before = forced_while_loading;
        loading_listed_tools   = true;
        void* handle           = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        loading_listed_tools   = false;
        bool forced_itself     = forced_while_loading != forced_before;
        if(handle == nullptr)
        {
            const char* why = dlerror();
            ROCP_WARNING << "ROCP_TOOL_LIBRARIES: cannot load " << path << ": "
                         << (why ? why : "unknown error");
            continue;
        }
        auto fn =
            reinterpret_cast<rocprofiler_configure_func_t>(dlsym(handle, "rocprofiler_configure"));
        if(fn == nullptr)
        {
            if(forced_itself) continue; // its constructor called rocprofiler_force_configure
            ROCP_WARNING << "ROCP_TOOL_LIBRARIES: " << path
                         << " does not export rocprofiler_configure; ignored";
            continue;
        }
        add_candidate(out, fn, path); // the handle stays open for the process's lifetime
    }
}

int
collect_loaded_object(struct dl_phdr_info* info, size_t, void* data)
{
    // Only collect names here: calling dlopen/dlsym inside dl_iterate_phdr's callback would
    // take the loader's locks in the opposite order of a concurrent dlopen.
    auto* names = static_cast<std::vector<std::string>*>(data);
    names->emplace_back(info->dlpi_name ? info->dlpi_name : "");
    return 0;
}

void
find_loaded_tools(std::vector<candidate>& out)
{
    std::vector<std::string> names;
    dl_iterate_phdr(collect_loaded_object, &names);
    for(const auto& name : names)
    {
        void* handle = name.empty() ? dlopen(nullptr, RTLD_LAZY | RTLD_NOLOAD)
                                    : dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        if(handle == nullptr) continue;
        auto fn =
            reinterpret_cast<rocprofiler_configure_func_t>(dlsym(handle, "rocprofiler_configure"));
        // The SDK will call this tool until exit: pin it, so that a dlclose by the program
        // cannot unmap code the SDK still calls.
        if(fn != nullptr) pin_library_of(reinterpret_cast<const void*>(fn));
        add_candidate(out, fn, name.empty() ? "the application" : name);
        dlclose(handle);
    }
}

// Every tool: those given to rocprofiler_force_configure first, then those listed in
// ROCP_TOOL_LIBRARIES, then those loaded in the process. No SDK lock held.
std::vector<candidate>
discover_tools()
{
    // Loaded once per process: discovery runs at load time and again when initializing,
    // and a library that cannot be loaded is reported once. Before the forced ones are read:
    // a listed tool's constructor may add one.
    static auto* listed = []
    {
        auto* found = new std::vector<candidate>{};
        find_listed_tools(*found);
        return found;
    }();
    std::vector<rocprofiler_configure_func_t> forced;
    {
        std::lock_guard<std::mutex> lock{life().mutex};
        forced = forced_configures(); // every force_configure that got SUCCESS is in it
    }
    std::vector<candidate> out;
    for(auto fn : forced)
        add_candidate(out, fn, "rocprofiler_force_configure");
    for(const auto& c : *listed)
        add_candidate(out, c.fn, c.source);
    find_loaded_tools(out);
    return out;
}

void
configure_tool(const candidate& found, uint32_t priority)
{
    auto id = client_count.load() + 1;
    if(id > max_clients)
    {
        ROCP_WARNING << "tool from " << found.source << ": more than " << max_clients
                     << " tools; ignored";
        return;
    }
    auto* c      = new client{};
    c->id        = id;
    c->source    = found.source;
    c->client_id = new rocprofiler_client_id_t{nullptr, c->id};
    client_table()[id].store(c);
    client_count.store(id);

    configuring.store(c->id);
    rocprofiler_tool_configure_result_t* result = nullptr;
    try
    {
        result = found.fn(ROCPROFILER_VERSION, ROCPROFILER_VERSION_STRING, priority, c->client_id);
    }
    catch(...)
    {
        ROCP_WARNING << "tool from " << found.source << ": rocprofiler_configure threw; ignored";
        result = nullptr;
    }
    configuring.store(UINT32_MAX);
    if(result == nullptr) return; // the tool declined
    if(result->size < sizeof(size_t) + sizeof(rocprofiler_tool_initialize_t))
    {
        ROCP_WARNING << "tool from " << found.source
                     << ": configure result has an invalid size; ignored";
        return;
    }
    c->initialize = result->initialize;
    pin_library_of(reinterpret_cast<const void*>(result->initialize));
    if(result->size >= offsetof(rocprofiler_tool_configure_result_t, tool_data) + sizeof(void*))
    {
        c->finalize  = result->finalize;
        c->tool_data = result->tool_data;
    }
    else if(result->size >= offsetof(rocprofiler_tool_configure_result_t, finalize) + sizeof(void*))
        c->finalize = result->finalize;
    pin_library_of(reinterpret_cast<const void*>(c->finalize));
    c->active = true;
}

void finalize_client(rocprofiler_client_id_t id);

const char*
name_of(const client& c)
{
    return c.client_id->name ? c.client_id->name : c.source.c_str();
}

// A tool that is not (or no longer) initialized: its contexts stop, its buffers are closed
// (it is never called back; what they held is counted as dropped), its API calls return
// FINALIZED, and its finalize is never called. c.finalized is set by the caller.
void
withdraw(client& c)
{
    mark_finalized(c.id);
    context::stop_all(c.id);
    c.active.store(false);
    for(size_t i = 1; i <= buffer::count(); ++i)
        if(auto* ctx = context::find(buffer::owner_context(i)); ctx && ctx->client == c.id)
            if(auto abandoned = buffer::close(i); abandoned > 0)
                kfd::service::count_abandoned_records(abandoned);
}

// False when an exit finalized the tools first (it gave up waiting for this initialization):
// the tool is withdrawn then, and must not be initialized.
bool
begin_initialize(client& c)
{
    std::lock_guard<std::mutex> lock{life().mutex};
    if(c.finalized.load()) return false;
    c.initializing.store(true);
    return true;
}

void
end_initialize(client& c, bool success)
{
    std::lock_guard<std::mutex> lock{life().mutex};
    c.initializing.store(false);
    c.initialized.store(success && !c.finalized.load());
}

int
run_initialize(client& c)
{
    if(c.initialize == nullptr) return 0; // nothing to run: initialized
    configuring.store(c.id);
    int rc = 0;
    try
    {
        rc = c.initialize(&finalize_client, c.tool_data);
    }
    catch(...)
    {
        rc = -1;
    }
    configuring.store(UINT32_MAX);
    return rc;
}

void
initialize_tool(client& c)
{
    if(!c.active.load() || !begin_initialize(c)) return;
    int rc = run_initialize(c);
    end_initialize(c, rc == 0);
    if(rc != 0)
    {
        ROCP_WARNING << "tool " << name_of(c) << ": initialize returned " << rc
                     << "; the tool is withdrawn";
        {
            std::lock_guard<std::mutex> lock{life().mutex};
            c.finalized.store(true);
        }
        withdraw(c);
    }
}

// How long finalization waits for one buffer's callbacks: ROCPROFILER_FINALIZE_TIMEOUT_MS
// (0 to one hour), default 10 s.
std::chrono::milliseconds
finalize_timeout()
{
    static const uint64_t ms =
        env::number("ROCPROFILER_FINALIZE_TIMEOUT_MS", 0, 3600 * 1000, 10000);
    return std::chrono::milliseconds{ms};
}

using common::deadline_t;
using common::remaining;

// Delivers what the client's buffers hold, then calls its finalize once. Slow callbacks are
// waited for until `deadline` (one deadline for every buffer of every tool at exit). A tool
// whose callback is still running on another thread then is not finalized: its finalize
// would run concurrently with its own callback (a tool freeing its state in finalize would
// pull it from under that callback). Records never delivered are counted as dropped.
// `at_exit`: the event sources were already drained by the caller.
ROCP_CATCHES_FORCED_UNWIND void
finish_client_now(client& c, bool at_exit, deadline_t deadline)
{
    mark_finalized(c.id);
    // Events the kernel queued before this point still belong to the tool's contexts.
    if(!at_exit) kfd::service::drain_now();
    // A callback thread that a tool's callback ended gets a new one at exit: its buffers are
    // then delivered there, never on the exiting thread (see buffer::begin_exit).
    if(at_exit) callback_thread::restart_ended_by_tool();
    context::stop_all(c.id);
    bool callback_stuck = false;
    for(size_t i = 1; i <= buffer::count(); ++i)
    {
        auto* ctx = context::find(buffer::owner_context(i));
        if(ctx == nullptr || ctx->client != c.id) continue;
        auto status = buffer::flush(i, remaining(deadline));
        // At exit the callback may end its thread in this very flush: started again, a few
        // times at most (each such callback was handed every record pending then).
        for(int restarts = 0; at_exit && restarts < 4 && status == ROCPROFILER_STATUS_ERROR &&
                              buffer::callback_thread_ended_by_tool(i);
            ++restarts)
        {
            callback_thread::restart_ended_by_tool();
            status = buffer::flush(i, remaining(deadline));
        }
        // On this buffer's own callback thread (a finalization deferred from a callback):
        // nothing is being delivered now, so deliver here.
        // (Inside a callback, e.g. exit() called from one, nothing more can be delivered.)
        if(status == ROCPROFILER_STATUS_ERROR_BUFFER_BUSY)
        {
            if(buffer::inside_delivery())
                ROCP_WARNING << "buffer " << i << ": finalizing from inside a tool callback; "
                             << "records still buffered are not delivered";
            else
                buffer::deliver(i);
        }
        if(status == ROCPROFILER_STATUS_ERROR && buffer::callback_thread_ended_by_tool(i))
            ROCP_WARNING << "buffer " << i << ": the tool's callback ended its callback thread "
                         << "at exit; the rest of its records are dropped (a callback that "
                            "ends its thread is never run on the exiting thread)";
        else if(status == ROCPROFILER_STATUS_ERROR)
            ROCP_WARNING << "buffer " << i << " was not delivered by the finalization deadline ("
                         << finalize_timeout().count()
                         << " ms); the rest of its records are dropped";
        if(auto abandoned = buffer::close(i); abandoned > 0) // no callback after finalize
        {
            kfd::service::count_abandoned_records(abandoned);
            ROCP_WARNING << "buffer " << i << ": " << abandoned
                         << " records never delivered, counted in records_dropped";
        }
        callback_stuck = callback_stuck || buffer::callback_running_elsewhere(i);
    }
    if(callback_stuck)
    {
        ROCP_WARNING << "tool " << name_of(c)
                     << ": a callback is still running at the finalization deadline; its "
                        "finalize is not called (it would run concurrently with that callback)";
        return;
    }
    if(c.active.load() && c.finalize != nullptr && !c.finalize_called)
    {
        c.finalize_called = true;
        try
        {
            c.finalize(c.tool_data);
        }
        catch(abi::__forced_unwind&)
        {
            throw; // it ended its thread (pthread_exit): see finish_client
        }
        catch(...)
        {
            ROCP_WARNING << "tool " << c.source << ": finalize threw; ignored";
        }
    }
}

// At exit, a tool whose initialize never ran (exit() from an earlier tool's configure or
// initialize, or an exit that gave up waiting for initialization) or still runs (exit() from
// inside it, or on another thread while it runs) is withdrawn: its finalize would run without
// or inside its initialize, on state it never set up. Its callbacks are not called either.
// (A tool that asks for its own finalization from its initialize is finalized as it asked.)
// c.finalized is set (under life().mutex) by the caller.
void
withdraw_at_exit(client& c)
{
    if(c.initializing.load())
        ROCP_WARNING << "tool " << name_of(c)
                     << ": the program exits while its initialize is still running; its "
                        "finalize is not called";
    else if(c.active.load())
        ROCP_INFO << "tool " << name_of(c)
                  << ": the program exits before its initialize ran; its finalize is not called";
    withdraw(c);
}

// Finalizes a tool once, whichever thread asks first. A second thread asking while another
// one finalizes it returns at once (the finishing thread, in the tool's finalize, may be
// waiting for it), except at exit, which waits for it until the deadline: the process must
// not go on exiting in the middle of a tool's finalize.
// A tool's callback (or finalize) may end the finishing thread with pthread_exit, in a
// delivery made here: the finalization is then left `interrupted`, nobody waits for it, and
// exit finishes it (its remaining records delivered on a restarted callback thread, its
// finalize called if it had not run).
void
finish_client(client& c, bool at_exit, deadline_t deadline)
{
    {
        std::unique_lock<std::mutex> lock{life().mutex};
        bool                         redo = at_exit && c.finish == finish_state::interrupted;
        if(c.finish != finish_state::not_started && !redo)
        {
            if(at_exit && c.finish == finish_state::running &&
               pthread_equal(c.finisher, pthread_self()) == 0)
                life().changed.wait_until(lock, deadline,
                                          [&] { return c.finish != finish_state::running; });
            if(c.finish != finish_state::interrupted || !at_exit) return;
            redo = true; // interrupted while exit waited for it
        }
        if(!redo && c.finalized.exchange(true)) // withdrawn when its initialize failed
        {
            c.finish = finish_state::done;
            return;
        }
        // Exit finalizes only the tools whose initialize returned; see withdraw_at_exit.
        if(at_exit && !redo && !c.initialized.load())
        {
            c.finish = finish_state::done;
            lock.unlock();
            withdraw_at_exit(c);
            return;
        }
        c.finish   = finish_state::running;
        c.finisher = pthread_self();
    }
    // Runs on the way out too, when a tool's callback ends this thread in the middle.
    struct end_of_finish
    {
        client& c;
        bool    completed = false;
        ~end_of_finish()
        {
            std::lock_guard<std::mutex> lock{life().mutex};
            c.finish = completed ? finish_state::done : finish_state::interrupted;
            life().changed.notify_all();
        }
    } end{c};
    finish_client_now(c, at_exit, deadline);
    end.completed = true;
}

// Finalizations a tool asked for where they could not run at once: from inside its own
// callback (they would wait for that very callback; run on the callback thread after the
// delivery) or from another thread while tools initialize (run by initialize() at its end).
ROCP_CATCHES_FORCED_UNWIND void
run_deferred_finalizations()
{
    if(!deferred_finalizations.load()) return;
    // Whoever runs it (a callback thread, a flush on a program's thread, initialize()), as
    // finalize_client: the tool's finalize and the waits for the reader are not cancellable.
    const cancellation::scoped_state no_cancellation{PTHREAD_CANCEL_DISABLE};
    if(is_finalized_or_finalizing())
    {
        deferred_finalizations.store(false); // exit finalization finishes every tool
        return;
    }
    if(current_phase() != phase::initialized) return; // initialize() runs them at its end
    deferred_finalizations.store(false);
    try
    {
        for_each_client(
            [](client& c)
            {
                if(c.finalize_requested.exchange(false))
                    finish_client(c, false, std::chrono::steady_clock::now() + finalize_timeout());
            });
    }
    catch(abi::__forced_unwind&)
    {
        // A tool's callback ended this callback thread (its end handles the rest; from
        // initialize(), which is noexcept, the process ends either way: README's "not
        // covered"). Clients not reached yet are left to the next delivery's check.
        deferred_finalizations.store(true);
        throw;
    }
    catch(...)
    {
    }
}

ROCP_CATCHES_FORCED_UNWIND void
finalize_client(rocprofiler_client_id_t id)
{
    const cancellation::scoped_state no_cancellation{
        PTHREAD_CANCEL_DISABLE}; // an API call (api_guard.hpp)
    try
    {
        // During exit finalization every tool is finished anyway; waiting here (e.g. from
        // a callback) would only stall exit.
        if(is_finalized_or_finalizing() || in_forked_child()) return;
        // From a fork handler running inside the SDK's own (fork_locks.hpp): the locks it
        // would take are this thread's. Refused, as the API calls are there.
        if(fork_locks::held_by_this_thread())
        {
            log_api_error("finalize", "called from a fork handler that runs while the SDK's "
                                      "own holds its locks; not available there");
            return;
        }
        client* target = find_client(id.handle);
        if(target == nullptr) return;
        // From inside a callback (on a callback thread, or delivered inline by a flush): after
        // it returned, or the tool's finalize would run nested in its own callback.
        if(callback_thread::on_any_callback_thread() || buffer::inside_delivery())
        {
            target->finalize_requested.store(true);
            deferred_finalizations.store(true);
            return;
        }
        {
            // Another thread while tools initialize: the tool may be in the middle of its
            // configure or initialize there; it is finalized when initialization ends.
            std::lock_guard<std::mutex> lock{life().mutex};
            if(current_phase() == phase::initializing && !is_initializer_thread())
            {
                target->finalize_requested.store(true);
                deferred_finalizations.store(true);
                return;
            }
        }
        finish_client(*target, false, std::chrono::steady_clock::now() + finalize_timeout());
    }
    catch(abi::__forced_unwind&)
    {
        throw; // a callback delivered here ended the tool's own thread, as it asked
    }
    catch(...)
    {
    }
}

// fork(): the prepare handler holds the SDK's locks so that the child gets them in a
// consistent state; the child handler only sets flags and forgets threads
// (no system call on the SMI fds: they are CLOEXEC and simply never read in the child; the
// KFD emulator's own handler runs after ours).
// Every lock a child can reach through the API is held across fork, in the order the SDK
// takes them (context start/stop, then the service, then buffers, then callback threads);
// none of them is ever held while a tool's code runs, so the forking thread never holds one.
void
atfork_prepare()
{
    fork_locks::taken_by_this_thread();
    context::lock_for_fork();
    kfd::service::lock_for_fork();
    buffer::lock_all_for_fork();
    callback_thread::lock_all_for_fork();
    // Last: no other lock is ever taken under it. A child forked by the initializing thread
    // (from a tool's configure or initialize) goes on initializing, and takes it.
    life().mutex.lock();
}

void
unlock_after_fork()
{
    life().mutex.unlock();
    callback_thread::unlock_all_after_fork();
    buffer::unlock_all_after_fork();
    kfd::service::unlock_after_fork();
    context::unlock_after_fork();
    fork_locks::released();
}

void
atfork_parent()
{
    unlock_after_fork();
}

void
atfork_child()
{
    unlock_after_fork();
    if(current_phase() == phase::uninitialized) return;
    forked_child.store(true);
    // An initialization running on another thread of the parent never ends here (that thread
    // does not exist in the child): it counts as ended, with the configuration closed. The
    // child stayed "initializing" forever, and any thread of it could configure as the tool
    // whose initialize the parent was running.
    if(current_phase() == phase::initializing && !is_initializer_thread())
    {
        configuring.store(UINT32_MAX);
        set_phase(phase::initialized);
    }
    callback_thread::forget_after_fork();
    buffer::discard_after_fork();
    kfd::service::forget_after_fork();
    for(size_t i = 0; i < context::count(); ++i)
        if(auto* ctx = context::at(i)) ctx->active.store(false);
}

void
register_exit_handlers()
{
    static bool done = false;
    if(done) return;
    done = true;
    // Registered before any tool runs, so that handlers registered later (e.g. by the KFD
    // emulator when /dev/kfd is opened) run before the SDK finalizes.
    std::atexit([] { finalize(); });
    // Not at_quick_exit: quick_exit() is the exit a signal handler may call, and finalizing
    // there (locks, allocation, files) could hang for good on a lock the interrupted code
    // held. A program that ends with it is treated as one that ends with _exit: the tool's
    // flusher wrote all but its last second, and rocprof-kfd repairs its outputs.
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    callback_thread::set_after_delivery_hook(run_deferred_finalizations);
}
} // namespace

namespace
{
void
pin_now(const void* code) noexcept
{
    Dl_info info{};
    if(dladdr(code, &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] == '\0') return;
    // RTLD_NOLOAD | RTLD_NODELETE on a loaded object marks it never to be unloaded; the
    // reference this takes is never released either.
    if(void* pinned = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE)) (void)pinned;
}

// Pins asked for by other threads while tools initialize. When the program dlopens a tool
// that links the SDK, initialization runs in the SDK's constructor, inside that dlopen, which
// holds the loader's lock until it returns: a tool's thread calling dlopen (to pin) then
// waits for it, and a tool's initialize waiting for that thread (as README allows) waited
// forever. So such a pin is recorded here and made by the initializing thread (which holds
// the loader's lock already) when initialization ends. Fixed storage: recording allocates
// nothing and takes no lock.
constexpr size_t                                        max_deferred_pins = 256;
std::array<std::atomic<const void*>, max_deferred_pins> deferred_pins{};
std::atomic<size_t>                                     deferred_pin_count{0};

// On the initializing thread, once initialization ended (the phase changed first).
void
pin_deferred_libraries() noexcept
{
    const size_t count = std::min(deferred_pin_count.load(), max_deferred_pins);
    for(size_t i = 0; i < count; ++i)
        if(const void* code = deferred_pins[i].exchange(nullptr)) pin_now(code);
}
} // namespace

void
pin_library_of(const void* code) noexcept
{
    if(code == nullptr) return;
    if(current_phase() == phase::initializing && !is_initializer_thread())
    {
        const size_t slot = deferred_pin_count.fetch_add(1);
        if(slot < max_deferred_pins)
        {
            deferred_pins[slot].store(code);
            // Initialization may have ended meanwhile, its deferred pins made before this
            // store: then pin here (each side's store precedes its load: one sees the other).
            if(current_phase() == phase::initializing) return;
        }
    }
    pin_now(code);
}

phase
current_phase() noexcept
{
    return static_cast<phase>(current.load());
}

rocprofiler_status_t
check_configuration_open() noexcept
{
    uint32_t client = UINT32_MAX;
    return check_configuration_open(client);
}

rocprofiler_status_t
check_configuration_open(uint32_t& client) noexcept
{
    client = configuring.load();
    switch(current_phase())
    {
    case phase::initializing:
        if(client == UINT32_MAX) return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
        // A tool that called its finalize function from initialize configures nothing more.
        return is_client_finalized(client) ? ROCPROFILER_STATUS_ERROR_FINALIZED
                                           : ROCPROFILER_STATUS_SUCCESS;
    case phase::finalizing:
    case phase::finalized:
        return ROCPROFILER_STATUS_ERROR_FINALIZED;
    default:
        return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
    }
}

bool
is_client_finalized(uint32_t client_id) noexcept
{
    return client_id <= max_clients && finalized_clients()[client_id].load();
}

bool
is_finalized_or_finalizing() noexcept
{
    auto p = current_phase();
    return p == phase::finalizing || p == phase::finalized;
}

uint32_t
configuring_client() noexcept
{
    return configuring.load();
}

bool
in_forked_child() noexcept
{
    return forked_child.load();
}

void
on_library_load() noexcept
{
    const cancellation::scoped_state no_cancellation{
        PTHREAD_CANCEL_DISABLE}; // see cancellation.hpp
    try
    {
        if(current_phase() != phase::uninitialized) return;
        if(discover_tools().empty()) return; // wait for rocprofiler_force_configure
    }
    catch(...)
    {
        return;
    }
    initialize();
}

void
initialize() noexcept
{
    // Tool code (configure, initialize, the thread notifications of start_all) runs with no
    // SDK lock held; other threads see the phase `initializing` meanwhile.
    auto end_initialization = []
    {
        std::lock_guard<std::mutex> lock{life().mutex};
        // An exit that gave up waiting for this initialization owns the phase now.
        if(current_phase() == phase::initializing) set_phase(phase::initialized);
        life().changed.notify_all();
    };
    try
    {
        {
            std::lock_guard<std::mutex> lock{life().mutex};
            if(current_phase() != phase::uninitialized) return;
            set_phase(phase::initializing);
            life().initializer = pthread_self();
            register_exit_handlers();
        }
        auto found = discover_tools();
        for(size_t i = 0; i < found.size(); ++i)
            configure_tool(found[i], static_cast<uint32_t>(i));
        for_each_client([](client& c) { initialize_tool(c); });
        // Callback threads start here, on the initializing thread (never on the KFD reader),
        // after the tools registered their thread-creation notifications.
        callback_thread::start_all();
        buffer::request_pending_deliveries();
        end_initialization();
        pin_deferred_libraries();     // after the phase changed: see pin_library_of
        run_deferred_finalizations(); // asked for by other threads while tools initialized
        ROCP_INFO << "initialized with " << found.size() << " tool(s)";
    }
    catch(const std::exception& e)
    {
        ROCP_ERROR << "initialization failed: " << e.what();
        end_initialization();
        pin_deferred_libraries();
    }
}

void
finalize() noexcept
{
    const cancellation::scoped_state no_cancellation{
        PTHREAD_CANCEL_DISABLE}; // see cancellation.hpp
    try
    {
        if(in_forked_child())
        {
            // The parent owns the tools and their output: a forked child finalizes nothing,
            // and takes no lock another thread of the parent may have held at fork time.
            set_phase(phase::finalized);
            return;
        }
        // One deadline for the whole exit (ROCPROFILER_FINALIZE_TIMEOUT_MS), however many
        // tools and buffers: exit never takes much longer than that.
        auto deadline = std::chrono::steady_clock::now() + finalize_timeout();
        {
            std::unique_lock<std::mutex> lock{life().mutex};
            // Tools initializing on another thread: let them finish first (no tool's finalize
            // while its initialize runs), until the deadline. exit() from inside a tool's
            // configure or initialize (this thread) goes on at once.
            if(current_phase() == phase::initializing && !is_initializer_thread())
                life().changed.wait_until(lock, deadline,
                                          [] { return current_phase() != phase::initializing; });
            auto p = current_phase();
            if(p == phase::finalizing || p == phase::finalized) return;
            if(p == phase::uninitialized)
            {
                set_phase(phase::finalized);
                return;
            }
            set_phase(phase::finalizing);
        }
        // 0. No buffer is delivered on this exiting thread by a callback known to end its
        // thread (finish_client_now restarts the callback threads such callbacks ended).
        buffer::begin_exit();
        // 1. Drain the event sources while contexts are still active.
        kfd::service::shutdown(remaining(deadline));
        // 2. Per tool: stop contexts, deliver buffers, call finalize.
        for_each_client([&](client& c) { finish_client(c, true, deadline); });
        // Idle callback threads need a moment to see the stop even when a stuck callback used
        // up the deadline: at least 100 ms, so that only truly stuck ones are abandoned.
        callback_thread::stop_all(std::max(remaining(deadline), std::chrono::milliseconds{100}));
        set_phase(phase::finalized);
    }
    catch(...)
    {
        set_phase(phase::finalized);
    }
}
} // namespace rocprofiler::registration

extern "C"
{
    rocprofiler_status_t rocprofiler_is_initialized(int* status)
    {
        if(status == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
        using rocprofiler::registration::phase;
        auto p  = rocprofiler::registration::current_phase();
        *status = (p == phase::uninitialized) ? 0 : (p == phase::initializing ? -1 : 1);
        return ROCPROFILER_STATUS_SUCCESS;
    }

    rocprofiler_status_t rocprofiler_is_finalized(int* status)
    {
        if(status == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
        using rocprofiler::registration::phase;
        auto p  = rocprofiler::registration::current_phase();
        *status = (p == phase::finalized) ? 1 : (p == phase::finalizing ? -1 : 0);
        return ROCPROFILER_STATUS_SUCCESS;
    }

    rocprofiler_status_t rocprofiler_force_configure(rocprofiler_configure_func_t configure_func)
    {
        using namespace rocprofiler;
        return api_call(
            __func__,
            [&]()
            {
                if(configure_func == nullptr) return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
                if(registration::in_forked_child()) // no lock the parent may have held
                    return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
                // From a listed tool's constructor: the discovery that loads it (at load time,
                // or in initialize on this thread) takes it.
                bool loading = registration::loading_listed_tools;
                {
                    std::lock_guard<std::mutex> lock{registration::life().mutex};
                    if(!loading &&
                       registration::current_phase() != registration::phase::uninitialized)
                        return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
                    registration::forced_configures().push_back(configure_func);
                }
                if(loading) ++registration::forced_while_loading;
                registration::pin_library_of(reinterpret_cast<const void*>(configure_func));
                if(!loading) registration::initialize();
                return ROCPROFILER_STATUS_SUCCESS;
            });
    }
}
