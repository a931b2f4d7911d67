// MIT License - see LICENSE.
#include "client_calls.hpp"

namespace kfd_emu
{
client_call_counters       g_client_calls;
std::atomic<unsigned long> g_producer_thread{0};

client_call_report
client_calls_so_far()
{
    client_call_report r;
    r.reads_intercepted = g_client_calls.reads_intercepted.load(std::memory_order_relaxed);
    for(size_t i = 0; i < client_syscall_kinds; ++i)
        r.syscalls[i] = g_client_calls.syscalls[i].load(std::memory_order_relaxed);
    return r;
}

void
reset_client_calls()
{
    g_client_calls.reads_intercepted.store(0, std::memory_order_relaxed);
    for(auto& n : g_client_calls.syscalls)
        n.store(0, std::memory_order_relaxed);
}
} // namespace kfd_emu
