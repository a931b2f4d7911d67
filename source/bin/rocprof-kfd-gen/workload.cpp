// MIT License - see LICENSE.
//
// Scenarios are built from operations (a GPU fault that migrates a range, a write-back to
// RAM, a prefetch, an eviction storm, an munmap). Each operation appends its events and the
// records they pair into. Operations of one GPU never overlap in time, operations of
// different GPUs do, so the log interleaves GPUs like a real capture while no two
// outstanding faults or migrations ever share a pairing key.
//
// Queue evictions are produced by a model of the kernel's own state, not by pairing text:
// queue_timeline() replays kfd_process_evict_queues() / kfd_process_restore_queues() /
// kfd_smi_event_queue_restore_rescheduled() calls in time order against the device queue
// manager's eviction count (qpd->evicted), and the QUEUE_SUSPEND record is the interval in
// which that count was non-zero: the queues stop when it leaves 0 and run again when it
// returns to 0. Evictions of different triggers overlap (an SVM or userptr eviction inside a
// TTM one), and a rescheduled restore ('R': the restore worker failed and requeued itself)
// leaves the count unchanged, so the queues stay evicted until a later real restore.
#include "workload.hpp"

#include <algorithm>
#include <array>

namespace kfd_gen
{
namespace
{
constexpr uint64_t chunk_pages = 0x200; // 2 MiB, the SVM migration granularity

// splitmix64: small, fast, and the same on every platform (std:: distributions are not).
class rng
{
public:
    explicit rng(uint64_t seed) : state_(seed) {}

    uint64_t next()
    {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
    uint64_t between(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }
    bool     chance(unsigned percent) { return below(100) < percent; }

private:
    uint64_t state_;
};

// Migration triggers, queue eviction triggers, unmap triggers (kfd_ioctl.h).
enum : int
{
    migrate_prefetch      = 0,
    migrate_pagefault_gpu = 1,
    migrate_pagefault_cpu = 2,
    migrate_ttm_eviction  = 3,
};
enum : int
{
    evict_svm     = 0,
    evict_userptr = 1,
    evict_ttm     = 2,
    evict_suspend = 3,
};
enum : int
{
    unmap_mmu_notify         = 0,
    unmap_mmu_notify_migrate = 1,
    unmap_from_cpu           = 2,
};

// A GPU's own timeline and the managed buffer it streams through.
struct actor
{
    uint32_t gpu    = 0;
    uint64_t clock  = 0;
    uint64_t buffer = 0; // first page
    uint64_t chunk  = 0; // next chunk to touch
};

class builder
{
public:
    builder(const options& opts, workload& out)
        : opts_(opts), out_(out), rng_(opts.seed * 0x2545f4914f6cdd1dull + 0x1234567)
    {
    }

    void run();

private:
    // --- budget, time, identities ---
    uint64_t remaining() const { return budget_ - used_; }
    bool     fits(uint64_t n) const { return n <= remaining(); }
    uint64_t gap() { return rng_.between(1000, 40000); }      // between operations, ns
    uint64_t short_step() { return rng_.between(800, 9000); } // inside an operation
    uint64_t migrate_time(uint64_t npages) { return 20000 + npages * rng_.between(150, 400); }
    uint32_t pick_pid()
    {
        if(others_.empty() || rng_.below(4) != 0) return out_.self_pid;
        return others_[rng_.below(others_.size())];
    }
    uint64_t pick_npages()
    {
        static constexpr std::array<uint64_t, 6> sizes = {0x200, 0x200, 0x100, 0x40, 0x10, 0x400};
        return sizes[rng_.below(sizes.size())];
    }
    // Page numbers of user addresses (below 0x7fffffffffff).
    uint64_t new_buffer() { return 0x7f0000000ull + rng_.below(0x7f000) * chunk_pages; }
    actor&   earliest_actor();
    uint64_t all_clocks_max() const;
    void     set_all_clocks(uint64_t t);

    // --- events and records ---
    event& add(uint32_t id, uint64_t ns, uint32_t pid);
    void   add_fault(uint64_t t0, uint64_t t1, uint32_t pid, uint64_t page, uint32_t gpu, char rw,
                     char mu);
    void   add_migrate(uint64_t t0, uint64_t t1, uint32_t pid, uint64_t page, uint64_t npages,
                       uint32_t from, uint32_t to, uint32_t prefetch, uint32_t preferred,
                       int trigger);
    void   add_unmap(uint64_t t, uint32_t pid, uint64_t page, uint64_t npages, uint32_t gpu,
                     int trigger);
    // One call of the kernel's queue eviction API on a process's GPU.
    struct queue_call
    {
        enum kind
        {
            evict,      // kfd_process_evict_queues(): QUEUE_EVICTION, qpd->evicted++
            restore,    // kfd_process_restore_queues(): QUEUE_RESTORE, qpd->evicted--
            reschedule, // restore worker retry: QUEUE_RESTORE ... R, qpd->evicted unchanged
        };
        uint64_t ns      = 0;
        kind     what    = evict;
        int      trigger = 0;
    };
    void queue_timeline(uint32_t pid, uint32_t gpu, std::vector<queue_call> calls);
    // Calls of one suspension from t0 to t1 with `trigger`: maybe a nested eviction of
    // another trigger inside it, maybe rescheduled restore attempts. Returns the calls.
    std::vector<queue_call> suspension_calls(uint64_t t0, uint64_t t1, int trigger,
                                             unsigned nested_percent, unsigned retry_percent);
    record                  base_record(enum operation op, uint32_t pid, uint64_t t0, uint64_t t1);

    // --- operations; each returns false when it does not fit the budget ---
    bool gpu_fault_migrate(actor& a);
    bool gpu_fault_in_place(actor& a);
    bool write_back(actor& a);
    bool prefetch_burst(actor& a);
    bool thrash_round();
    bool eviction_storm();
    bool munmap_round();
    bool step(enum scenario s);
    void fill_with_unmaps();

    const options&        opts_;
    workload&             out_;
    rng                   rng_;
    std::vector<actor>    actors_;
    std::vector<uint32_t> others_;
    uint64_t              budget_ = 0;
    uint64_t              used_   = 0;
    uint64_t              seq_    = 0;
    uint64_t              shared_ = 0; // the thrashing range
    std::vector<long>     owner_;      // per shared chunk: GPU index, -1 = RAM
};

actor&
builder::earliest_actor()
{
    return *std::min_element(actors_.begin(), actors_.end(),
                             [](const actor& a, const actor& b) { return a.clock < b.clock; });
}

uint64_t
builder::all_clocks_max() const
{
    uint64_t t = 0;
    for(const auto& a : actors_)
        t = std::max(t, a.clock);
    return t;
}

void
builder::set_all_clocks(uint64_t t)
{
    for(auto& a : actors_)
        a.clock = t;
}

event&
builder::add(uint32_t id, uint64_t ns, uint32_t pid)
{
    event ev;
    ev.id  = id;
    ev.ns  = ns;
    ev.pid = pid;
    ev.seq = seq_++;
    ++used_;
    out_.events.push_back(ev);
    return out_.events.back();
}

record
builder::base_record(enum operation op, uint32_t pid, uint64_t t0, uint64_t t1)
{
    record r;
    r.operation = op;
    r.seq       = seq_++;
    r.pid       = pid;
    r.start_ns  = t0;
    r.end_ns    = t1;
    return r;
}

void
builder::add_fault(uint64_t t0, uint64_t t1, uint32_t pid, uint64_t page, uint32_t gpu, char rw,
                   char mu)
{
    event& start = add(7, t0, pid);
    start.page   = page;
    start.node   = gpu;
    start.flag   = rw;
    event& end   = add(8, t1, pid);
    end.page     = page;
    end.node     = gpu;
    end.flag     = mu;

    record r     = base_record(operation::page_fault, pid, t0, t1);
    r.node       = gpu;
    r.addr_start = page << 12;
    r.read_fault = rw == 'R';
    r.migrated   = mu == 'M';
    out_.records.push_back(r);
}

void
builder::add_migrate(uint64_t t0, uint64_t t1, uint32_t pid, uint64_t page, uint64_t npages,
                     uint32_t from, uint32_t to, uint32_t prefetch, uint32_t preferred, int trigger)
{
    for(uint32_t id : {5u, 6u})
    {
        event& ev    = add(id, id == 5 ? t0 : t1, pid);
        ev.page      = page;
        ev.npages    = npages;
        ev.from      = from;
        ev.to        = to;
        ev.prefetch  = prefetch;
        ev.preferred = preferred;
        ev.trigger   = trigger;
        // A migration that could not move every page reports an error (6.13+ only).
        if(id == 6 && rng_.below(50) == 0) ev.error_code = -12;
    }
    record r     = base_record(operation::page_migrate, pid, t0, t1);
    r.node       = from;
    r.to         = to;
    r.prefetch   = prefetch;
    r.preferred  = preferred;
    r.trigger    = trigger;
    r.addr_start = page << 12;
    r.addr_end   = ((page + npages) << 12) - 1; // inclusive
    out_.records.push_back(r);
}

void
builder::add_unmap(uint64_t t, uint32_t pid, uint64_t page, uint64_t npages, uint32_t gpu,
                   int trigger)
{
    event& ev  = add(11, t, pid);
    ev.page    = page;
    ev.npages  = npages;
    ev.node    = gpu;
    ev.trigger = trigger;

    record r     = base_record(operation::unmap_from_gpu, pid, t, t);
    r.node       = gpu;
    r.trigger    = trigger;
    r.addr_start = page << 12;
    r.addr_end   = (page + npages) << 12; // exclusive
    out_.records.push_back(r);
}

void
builder::queue_timeline(uint32_t pid, uint32_t gpu, std::vector<queue_call> calls)
{
    std::stable_sort(calls.begin(), calls.end(),
                     [](const queue_call& a, const queue_call& b) { return a.ns < b.ns; });
    // The device queue manager's state for this process on this GPU.
    unsigned evicted      = 0;     // qpd->evicted
    uint64_t stopped_at   = 0;     // when the queues stopped (evicted left 0)
    int      stop_trigger = 0;     // the trigger of the call that stopped them
    bool     retried      = false; // a restore attempt failed while they were stopped
    for(const auto& call : calls)
    {
        event& ev = add(call.what == queue_call::evict ? 9 : 10, call.ns, pid);
        ev.node   = gpu;
        switch(call.what)
        {
        case queue_call::evict:
            ev.trigger = call.trigger;
            if(evicted++ == 0)
            {
                stopped_at   = call.ns;
                stop_trigger = call.trigger;
                retried      = false;
            }
            break;
        case queue_call::reschedule:
            ev.flag = 'R';
            retried = true;
            break;
        case queue_call::restore:
            if(evicted == 0 || --evicted > 0) break; // still evicted by another caller
            record r      = base_record(operation::queue_suspend, pid, stopped_at, call.ns);
            r.node        = gpu;
            r.trigger     = stop_trigger;
            r.rescheduled = retried;
            out_.records.push_back(r);
            break;
        }
    }
}

std::vector<builder::queue_call>
builder::suspension_calls(uint64_t t0, uint64_t t1, int trigger, unsigned nested_percent,
                          unsigned retry_percent)
{
    std::vector<queue_call> calls = {{t0, queue_call::evict, trigger},
                                     {t1, queue_call::restore, 0}};
    // Rescheduled restores come from the SVM and userptr restore workers, while their own
    // eviction is outstanding: [w0, w1] is that eviction's interval, if there is one.
    bool     worker = trigger == evict_svm || trigger == evict_userptr;
    uint64_t w0 = t0, w1 = t1;
    if(t1 - t0 >= 8 && rng_.chance(nested_percent))
    {
        // Another subsystem evicts while the queues are already evicted (SVM or userptr
        // inside TTM, TTM inside SVM or userptr); its restore comes before the final one.
        int inner =
            trigger == evict_ttm ? (rng_.chance(50) ? evict_svm : evict_userptr) : evict_ttm;
        uint64_t ti = rng_.between(t0 + 1, t1 - 4);
        uint64_t tr = rng_.between(ti + 2, t1 - 1);
        calls.push_back({ti, queue_call::evict, inner});
        calls.push_back({tr, queue_call::restore, 0});
        if(!worker && inner != evict_ttm)
        {
            worker = true;
            w0     = ti;
            w1     = tr;
        }
    }
    if(worker && w1 - w0 >= 2 && rng_.chance(retry_percent))
    {
        uint64_t retries = rng_.between(1, 3);
        for(uint64_t i = 0; i < retries; ++i)
            calls.push_back({rng_.between(w0 + 1, w1 - 1), queue_call::reschedule, 0});
    }
    return calls;
}

// A GPU touches a page of its buffer: the range moves from RAM to VRAM inside the fault.
bool
builder::gpu_fault_migrate(actor& a)
{
    if(!fits(4)) return false;
    uint32_t pid       = pick_pid();
    uint64_t npages    = pick_npages();
    uint64_t range     = a.buffer + (a.chunk++ % 64) * 0x400;
    uint64_t page      = range + rng_.below(npages);
    uint64_t t0        = a.clock + gap();
    uint64_t m0        = t0 + short_step();
    uint64_t m1        = m0 + migrate_time(npages);
    uint64_t t1        = m1 + short_step();
    uint32_t prefetch  = rng_.chance(20) ? a.gpu : node_undefined;
    uint32_t preferred = rng_.chance(30) ? (rng_.chance(50) ? 0 : a.gpu) : node_undefined;
    add_fault(t0, t1, pid, page, a.gpu, rng_.chance(60) ? 'R' : 'W', 'M');
    add_migrate(m0, m1, pid, range, npages, 0, a.gpu, prefetch, preferred, migrate_pagefault_gpu);
    a.clock = t1;
    return true;
}

// A GPU fault on a page already in place (or mapped remotely): no migration.
bool
builder::gpu_fault_in_place(actor& a)
{
    if(!fits(2)) return false;
    uint32_t pid  = pick_pid();
    uint64_t page = a.buffer + rng_.below(64 * 0x400);
    uint64_t t0   = a.clock + gap();
    uint64_t t1   = t0 + short_step();
    add_fault(t0, t1, pid, page, a.gpu, rng_.chance(50) ? 'R' : 'W', 'U');
    a.clock = t1;
    return true;
}

// The CPU reads results: a range goes back to RAM; the GPU mapping is dropped on the way.
bool
builder::write_back(actor& a)
{
    if(!fits(3)) return false;
    uint32_t pid    = pick_pid();
    uint64_t npages = pick_npages();
    uint64_t range  = a.buffer + rng_.below(64) * 0x400;
    uint64_t t0     = a.clock + gap();
    uint64_t u      = t0 + short_step();
    uint64_t t1     = u + migrate_time(npages);
    add_migrate(t0, t1, pid, range, npages, a.gpu, 0, node_undefined, node_undefined,
                migrate_pagefault_cpu);
    add_unmap(u, pid, range, npages, a.gpu, unmap_mmu_notify_migrate);
    a.clock = t1;
    return true;
}

// hipMemPrefetchAsync bursts: back-to-back migrations, preferred location undefined.
bool
builder::prefetch_burst(actor& a)
{
    if(!fits(2)) return false;
    uint64_t count = rng_.between(3, 12);
    uint32_t pid   = pick_pid();
    uint64_t t     = a.clock + gap();
    uint64_t done  = 0;
    for(; done < count; ++done)
    {
        uint64_t npages = pick_npages();
        uint64_t range  = a.buffer + (a.chunk++ % 64) * 0x400;
        uint64_t t1     = t + migrate_time(npages);
        bool     to_cpu = rng_.chance(20);
        if(!fits(to_cpu ? 3 : 2)) break;
        if(!to_cpu)
            add_migrate(t, t1, pid, range, npages, 0, a.gpu, a.gpu, node_undefined,
                        migrate_prefetch);
        else
        {
            // Prefetch back to the CPU: the GPU mapping goes too.
            add_migrate(t, t1, pid, range, npages, a.gpu, 0, 0, node_undefined, migrate_prefetch);
            add_unmap(t + short_step(), pid, range, npages, a.gpu, unmap_mmu_notify_migrate);
        }
        t = t1 + rng_.between(200, 2000);
    }
    a.clock = t;
    return done > 0;
}

// The same few chunks bounce between the CPU and the GPUs; two GPUs fault the same page at
// once (one migrates, the other is updated in place).
bool
builder::thrash_round()
{
    bool     two_gpus = actors_.size() > 1;
    unsigned need     = 4 + (two_gpus ? 2 : 0) + 3;
    if(!fits(need)) return false;
    uint32_t pid   = out_.self_pid;
    size_t   chunk = rng_.below(owner_.size());
    uint64_t range = shared_ + chunk * 0x40;
    uint64_t page  = range + rng_.below(0x40);
    size_t   g     = rng_.below(actors_.size());
    uint32_t gpu   = actors_[g].gpu;
    uint64_t t0    = all_clocks_max() + gap();
    uint64_t t     = t0 + short_step();

    if(owner_[chunk] >= 0 && static_cast<size_t>(owner_[chunk]) != g && fits(need + 3))
    {
        // On another GPU: first back to RAM (the other GPU does that migration).
        uint32_t holder = actors_[static_cast<size_t>(owner_[chunk])].gpu;
        uint64_t t1     = t + migrate_time(0x40);
        add_migrate(t, t1, pid, range, 0x40, holder, 0, node_undefined, node_undefined,
                    migrate_pagefault_gpu);
        add_unmap(t + short_step() / 2, pid, range, 0x40, holder, unmap_mmu_notify_migrate);
        t = t1 + short_step();
    }
    uint64_t m1 = t + migrate_time(0x40);
    add_migrate(t, m1, pid, range, 0x40, 0, gpu, node_undefined, node_undefined,
                migrate_pagefault_gpu);
    uint64_t t1 = m1 + short_step();
    add_fault(t0, t1, pid, page, gpu, 'W', 'M');
    uint64_t end = t1 + short_step();
    if(two_gpus)
    {
        uint32_t other     = actors_[(g + 1) % actors_.size()].gpu;
        uint64_t other_end = t1 + short_step();
        add_fault(t0 + short_step() / 4, other_end, pid, page, other, 'R', 'U');
        end = std::max(end, other_end);
    }
    owner_[chunk] = static_cast<long>(g);
    if(rng_.chance(60))
    {
        // The CPU touches it again: back to RAM.
        uint64_t c0 = end + gap();
        uint64_t c1 = c0 + migrate_time(0x40);
        add_migrate(c0, c1, pid, range, 0x40, gpu, 0, node_undefined, node_undefined,
                    migrate_pagefault_cpu);
        add_unmap(c0 + short_step() / 2, pid, range, 0x40, gpu, unmap_mmu_notify_migrate);
        owner_[chunk] = -1;
        end           = c1;
    }
    set_all_clocks(end);
    return true;
}

// VRAM pressure: every GPU's queues are evicted, ranges go to RAM, queues come back.
bool
builder::eviction_storm()
{
    if(!fits(7)) return false; // one suspension's queue calls at most
    uint64_t start = all_clocks_max() + gap();
    uint64_t end   = start;
    for(auto& a : actors_)
    {
        if(!fits(2)) break;
        uint32_t pid = pick_pid();
        uint64_t t0  = start + rng_.between(0, 20000);
        uint64_t t   = t0 + short_step();
        int trigger  = rng_.chance(85) ? evict_ttm : (rng_.chance(50) ? evict_svm : evict_userptr);
        // Room for the most queue calls one suspension has (2 + a nested pair + 3 retries).
        const uint64_t calls = 7;
        if(!fits(calls)) break;
        uint64_t moves = rng_.between(1, 4);
        for(uint64_t i = 0; i < moves && fits(3 + calls); ++i)
        {
            uint64_t npages = pick_npages();
            uint64_t range  = a.buffer + rng_.below(64) * 0x400;
            uint64_t t1     = t + migrate_time(npages);
            add_migrate(t, t1, pid, range, npages, a.gpu, 0, node_undefined, node_undefined,
                        migrate_ttm_eviction);
            add_unmap(t + short_step() / 2, pid, range, npages, a.gpu, unmap_mmu_notify_migrate);
            t = t1 + rng_.between(500, 3000);
        }
        uint64_t t1 = t + rng_.between(50000, 400000);
        queue_timeline(pid, a.gpu, suspension_calls(t0, t1, trigger, 40, 60));
        end = std::max(end, t1);
    }
    set_all_clocks(end);
    return true;
}

// munmap() of a range the GPUs had mapped: one unmap per GPU; with XNACK off the queues
// are evicted around it.
bool
builder::munmap_round()
{
    bool     with_queues = rng_.chance(40);
    uint64_t per_gpu     = with_queues ? 3 : 1;
    if(!fits(per_gpu)) return false;
    uint32_t pid     = pick_pid();
    uint64_t npages  = pick_npages();
    uint64_t range   = new_buffer();
    uint64_t t       = all_clocks_max() + gap();
    uint64_t end     = t;
    int      trigger = rng_.chance(80) ? unmap_from_cpu : unmap_mmu_notify;
    for(auto& a : actors_)
    {
        if(!fits(per_gpu)) break;
        uint64_t t0 = t + rng_.between(0, 5000);
        uint64_t u  = t0 + short_step();
        add_unmap(u, pid, range, npages, a.gpu, trigger);
        end = std::max(end, u);
        if(with_queues)
        {
            // The SVM eviction around the unmap; sometimes a TTM eviction overlaps it, and
            // the SVM restore worker may have to retry (MMU-notifier churn).
            uint64_t t1    = u + rng_.between(20000, 200000);
            auto     calls = suspension_calls(t0, t1, evict_svm, 15, 10);
            if(!fits(calls.size())) calls.resize(2); // evict and restore only
            queue_timeline(pid, a.gpu, calls);
            end = std::max(end, t1);
        }
    }
    set_all_clocks(end);
    return true;
}

bool
builder::step(enum scenario s)
{
    switch(s)
    {
    case scenario::streaming:
    {
        actor&   a    = earliest_actor();
        uint64_t kind = rng_.below(10);
        if(kind < 6) return gpu_fault_migrate(a);
        if(kind < 8) return gpu_fault_in_place(a);
        return write_back(a);
    }
    case scenario::thrashing:
        return thrash_round();
    case scenario::prefetch:
        return prefetch_burst(earliest_actor());
    case scenario::eviction:
        return eviction_storm();
    case scenario::unmap:
        return munmap_round();
    case scenario::mixed:
    {
        static constexpr std::array<enum scenario, 5> kinds = {
            scenario::streaming, scenario::thrashing, scenario::prefetch, scenario::eviction,
            scenario::unmap};
        return step(kinds[rng_.below(kinds.size())]);
    }
    case scenario::managed:
        // Mostly streaming through the GPUs' buffers; one round in four fights over the
        // shared ranges, so they thrash between the CPU and the GPUs.
        return rng_.chance(25) ? thrash_round() : step(scenario::streaming);
    }
    return false;
}

// The last few events of the budget: single unmaps (MMU notifier) on the earliest GPU.
void
builder::fill_with_unmaps()
{
    while(remaining() > 0)
    {
        actor& a = earliest_actor();
        a.clock += gap();
        add_unmap(a.clock, pick_pid(), a.buffer + rng_.below(64) * 0x400, 0x10, a.gpu,
                  unmap_mmu_notify);
    }
}

void
builder::run()
{
    out_.self_pid = opts_.pid != 0 ? opts_.pid : static_cast<uint32_t>(rng_.between(1000, 60000));
    for(unsigned i = 0; i < opts_.other_pids; ++i)
        others_.push_back(out_.self_pid + 1 + static_cast<uint32_t>(rng_.between(1, 5000)));
    while(out_.gpu_ids.size() < opts_.gpus)
    {
        uint32_t id = static_cast<uint32_t>(rng_.between(0x1000, 0xfffe));
        if(std::find(out_.gpu_ids.begin(), out_.gpu_ids.end(), id) == out_.gpu_ids.end())
            out_.gpu_ids.push_back(id);
    }
    for(uint32_t id : out_.gpu_ids)
        actors_.push_back(actor{id, opts_.start_ns, new_buffer(), 0});
    shared_ = new_buffer();
    owner_.assign(4, -1);

    budget_ = opts_.events;
    if(opts_.process_events && budget_ >= 2) budget_ -= 2;
    while(remaining() > 0 && step(opts_.scenario))
    {
    }
    fill_with_unmaps();

    std::stable_sort(out_.events.begin(), out_.events.end(),
                     [](const event& a, const event& b)
                     { return a.ns != b.ns ? a.ns < b.ns : a.seq < b.seq; });
    std::stable_sort(out_.records.begin(), out_.records.end(),
                     [](const record& a, const record& b) {
                         return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.seq < b.seq;
                     });
    if(opts_.process_events && opts_.events >= 2)
    {
        // The process appears before its first event and disappears after its last.
        event start;
        start.id   = 12;
        start.pid  = out_.self_pid;
        start.task = "kfd-workload";
        event end  = start;
        end.id     = 13;
        out_.events.insert(out_.events.begin(), start);
        out_.events.push_back(end);
    }
}
} // namespace

workload
generate(const options& opts)
{
    workload out;
    builder(opts, out).run();
    return out;
}

namespace
{
struct scenario_entry
{
    const char*   name;
    enum scenario value;
};
constexpr scenario_entry scenario_table[] = {
    {"streaming", scenario::streaming}, {"thrashing", scenario::thrashing},
    {"prefetch", scenario::prefetch},   {"eviction", scenario::eviction},
    {"unmap", scenario::unmap},         {"mixed", scenario::mixed},
    {"managed", scenario::managed},
};

struct era_entry
{
    const char* name;
    enum era    value;
};
constexpr era_entry era_table[] = {
    {"6.0", era::linux_6_0},     {"6.0-6.11", era::linux_6_0}, {"6.12", era::linux_6_12},
    {"6.13", era::linux_6_13},   {"6.13+", era::linux_6_13},   {"2026", era::fixed_2026},
    {"proposed", era::proposed},
};
} // namespace

bool
parse_scenario(const std::string& name, enum scenario& out)
{
    for(const auto& entry : scenario_table)
        if(name == entry.name) return out = entry.value, true;
    return false;
}

bool
parse_era(const std::string& name, enum era& out)
{
    for(const auto& entry : era_table)
        if(name == entry.name) return out = entry.value, true;
    return false;
}

const char*
scenario_name(enum scenario s)
{
    for(const auto& entry : scenario_table)
        if(entry.value == s) return entry.name;
    return "?";
}

const char*
era_name(enum era e)
{
    for(const auto& entry : era_table)
        if(entry.value == e) return entry.name;
    return "?";
}
} // namespace kfd_gen
