// MIT License - see LICENSE.
#include "expect_csv.hpp"

namespace kfd_gen
{
namespace
{
// Column values of one record; empty strings are the columns its operation does not have.
struct columns
{
    std::string values[14];
};

std::string
num(uint64_t v)
{
    return std::to_string(v);
}

std::string
flag(bool v)
{
    return v ? "1" : "0";
}
} // namespace

std::string
expect_line(const record& r)
{
    columns c;
    c.values[1] = num(r.pid);
    c.values[2] = num(r.start_ns);
    c.values[3] = num(r.end_ns);
    c.values[4] = num(r.node);
    switch(r.operation)
    {
    case operation::page_migrate:
        c.values[0]  = "PAGE_MIGRATE";
        c.values[5]  = num(r.to);
        c.values[6]  = num(r.prefetch);
        c.values[7]  = num(r.preferred);
        c.values[8]  = std::to_string(r.trigger);
        c.values[9]  = num(r.addr_start);
        c.values[10] = num(r.addr_end);
        break;
    case operation::page_fault:
        c.values[0]  = "PAGE_FAULT";
        c.values[9]  = num(r.addr_start);
        c.values[11] = flag(r.read_fault);
        c.values[12] = flag(r.migrated);
        break;
    case operation::queue_suspend:
        c.values[0]  = "QUEUE_SUSPEND";
        c.values[8]  = std::to_string(r.trigger);
        c.values[13] = flag(r.rescheduled);
        break;
    case operation::unmap_from_gpu:
        c.values[0]  = "UNMAP_FROM_GPU";
        c.values[8]  = std::to_string(r.trigger);
        c.values[9]  = num(r.addr_start);
        c.values[10] = num(r.addr_end);
        break;
    }
    std::string line = c.values[0];
    for(size_t i = 1; i < 14; ++i)
        line += "," + c.values[i];
    return line;
}

std::string
expect_csv(const workload& w)
{
    std::string text = std::string(expect_header) + "\n";
    for(const auto& r : w.records)
        text += expect_line(r) + "\n";
    return text;
}
} // namespace kfd_gen
