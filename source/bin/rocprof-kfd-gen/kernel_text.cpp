// MIT License - see LICENSE.
#include "kernel_text.hpp"

#include <cstdarg>
#include <cstdio>

namespace kfd_gen
{
namespace
{
std::string printf_text(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

std::string
printf_text(const char* fmt, ...)
{
    char    buf[128]; // the kernel's messages fit in 96 bytes
    va_list args;
    va_start(args, fmt);
    int n = std::vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);
    return std::string(buf, n < 0 ? 0 : static_cast<size_t>(n));
}

using ull = unsigned long long;

std::string
restore_text(const event& ev, enum era e)
{
    if(ev.flag == 'R' && e == era::proposed)
        return printf_text("e %llu -%u %x\n", static_cast<ull>(ev.ns), ev.pid, ev.node);
    std::string head = printf_text("a %llu -%u %x", static_cast<ull>(ev.ns), ev.pid, ev.node);
    if(ev.flag == 'R') return head + " R\n";
    switch(e)
    {
    case era::linux_6_0:
        return head + "\n";
    case era::linux_6_12:
    case era::linux_6_13:
        return head + " " + std::string(1, '\0') + "\n"; // "%c" of 0
    case era::fixed_2026:
    case era::proposed:
        return head + " 0\n";
    }
    return head + "\n";
}
} // namespace

unsigned
fifo_bytes(enum era e)
{
    return (e == era::linux_6_0 || e == era::linux_6_12) ? 1024 : 8192;
}

std::string
kernel_text(const event& ev, enum era e)
{
    ull ns = ev.ns;
    switch(ev.id)
    {
    case 5:
        return printf_text("5 %llu -%u @%llx(%llx) %x->%x %x:%x %d\n", ns, ev.pid,
                           static_cast<ull>(ev.page), static_cast<ull>(ev.npages), ev.from, ev.to,
                           ev.prefetch, ev.preferred, ev.trigger);
    case 6:
        if(e == era::linux_6_0 || e == era::linux_6_12)
            return printf_text("6 %llu -%u @%llx(%llx) %x->%x %d\n", ns, ev.pid,
                               static_cast<ull>(ev.page), static_cast<ull>(ev.npages), ev.from,
                               ev.to, ev.trigger);
        return printf_text("6 %llu -%u @%llx(%llx) %x->%x %d %d\n", ns, ev.pid,
                           static_cast<ull>(ev.page), static_cast<ull>(ev.npages), ev.from, ev.to,
                           ev.trigger, ev.error_code);
    case 7:
    case 8:
        return printf_text("%x %llu -%u @%llx(%x) %c\n", ev.id, ns, ev.pid,
                           static_cast<ull>(ev.page), ev.node, ev.flag);
    case 9:
        return printf_text("9 %llu -%u %x %d\n", ns, ev.pid, ev.node, ev.trigger);
    case 10:
        return restore_text(ev, e);
    case 11:
        return printf_text("b %llu -%u @%llx(%llx) %x %d\n", ns, ev.pid, static_cast<ull>(ev.page),
                           static_cast<ull>(ev.npages), ev.node, ev.trigger);
    case 12:
    case 13:
        return printf_text("%x %x %s\n", ev.id, ev.pid, ev.task.c_str());
    default:
        return std::string();
    }
}
} // namespace kfd_gen
