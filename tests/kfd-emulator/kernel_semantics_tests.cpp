// MIT License - see LICENSE.
//
// The emulated kernel behaves like amdkfd (../shared/docs/kfd-smi-interface.md): FIFO size and
// silent drops of whole messages, mask filtering, split reads, EAGAIN, poll, the 8-byte mask
// write, unknown GPUs, pid delivery, routing of events to GPUs, the topology.
#include "emulator_fixture.hpp"

#include <algorithm>
#include <sstream>

namespace kfd_test
{
namespace
{
constexpr uint32_t gpu_a = 0x1ea0;
constexpr uint32_t gpu_b = 0xfc7d;
constexpr uint32_t self  = 100;
constexpr uint32_t other = 200;

// Fault starts of self on gpu_a whose page numbers have varied widths (so varied lengths).
std::vector<std::string>
varied_faults(size_t count, uint32_t pid)
{
    std::vector<std::string> lines;
    uint64_t                 page = 0x7;
    for(size_t i = 0; i < count; ++i)
    {
        page = page * 31 + 11;
        if(page > 0xfffffffffull) page = 0x5 + i;
        lines.push_back(fault_start(1000 + i, pid, page, gpu_a));
    }
    return lines;
}

std::vector<std::string>
with_header(std::vector<std::string> header, const std::vector<std::string>& events)
{
    header.insert(header.end(), events.begin(), events.end());
    return header;
}

// What a kernel FIFO of capacity bytes holds after every message was offered to it with no
// reader: each message that fits goes in, each that does not is dropped.
struct fifo_model
{
    std::string         kept;
    size_t              queued  = 0;
    size_t              dropped = 0;
    std::vector<size_t> dropped_indices; // of the messages dropped, in order
};

fifo_model
offer_all(const std::vector<std::string>& messages, size_t capacity)
{
    fifo_model model;
    for(const auto& message : messages)
    {
        if(model.kept.size() + message.size() + 1 <= capacity)
        {
            model.kept += message + "\n";
            ++model.queued;
        }
        else
        {
            ++model.dropped;
            model.dropped_indices.push_back(static_cast<size_t>(&message - messages.data()));
        }
    }
    return model;
}

// A FIFO size, and how the reader reads: read() (which the emulator intercepts) or a raw
// syscall(SYS_read), as io_uring, recv and readv read, which it does not see.
struct fifo_case
{
    size_t      capacity;
    const char* drain;
};

void
PrintTo(const fifo_case& c, std::ostream* os)
{
    *os << c.capacity << " bytes, " << c.drain;
}

class FifoCapacity : public EmulatorTest, public ::testing::WithParamInterface<fifo_case>
{
};

TEST_P(FifoCapacity, QueuesWholeMessagesAndDropsTheRestSilently)
{
    size_t capacity = GetParam().capacity;
    auto   events   = varied_faults(capacity / 20, self); // about twice what fits
    auto   path     = log(with_header({"#@ gpu 1ea0", "#@ fifo " + std::to_string(capacity),
                                       "#@ pace max", "#@ timestamps keep", "#@ self 100"},
                                      events));
    // No read until the producer is long done: the FIFO fills as with a late reader.
    auto result = probe(path, {"pid", "open", "smi:1ea0", "mask:0:" + all_events, "sleep:500",
                               std::string(GetParam().drain) + ":0:65536:1000", "close:0"});
    ASSERT_EQ(result.exit_code, 0) << result.err;

    // The expected bytes are the log's lines with the probe's pid for the log's self pid.
    uint32_t                 pid = probe_pid(result);
    std::vector<std::string> rewritten;
    for(size_t i = 0; i < events.size(); ++i)
        rewritten.push_back(events[i].substr(0, events[i].find(" -")) + " -" + std::to_string(pid) +
                            events[i].substr(events[i].find(" @")));
    fifo_model expected = offer_all(rewritten, capacity);
    ASSERT_GT(expected.dropped, 0u);
    EXPECT_EQ(drained(result, 0), expected.kept);

    json s = stats();
    EXPECT_EQ(s["total"]["events_queued"].u64(), expected.queued);
    EXPECT_EQ(s["total"]["dropped_fifo_full"].u64(), expected.dropped);
    EXPECT_EQ(s["gpus"][0]["clients"][0]["max_fifo_fill"].u64(), expected.kept.size());
    EXPECT_LE(expected.kept.size(), capacity);

    // <stats>.drops: one line per dropped message, "<gpu index> <event index> <ns>", in order.
    std::istringstream  marks(read_file(stats_path() + ".drops"));
    std::vector<size_t> indices;
    uint64_t            gpu = 0, index = 0, ns = 0, previous_ns = 0;
    while(marks >> gpu >> index >> ns)
    {
        EXPECT_EQ(gpu, 0u);
        EXPECT_GE(ns, previous_ns);
        previous_ns = ns;
        indices.push_back(index);
    }
    EXPECT_EQ(indices, expected.dropped_indices);
}

INSTANTIATE_TEST_SUITE_P(KernelSizes, FifoCapacity,
                         ::testing::Values(fifo_case{1024, "drain"}, fifo_case{8192, "drain"},
                                           fifo_case{1024, "rawdrain"},
                                           fifo_case{8192, "rawdrain"}),
                         [](const ::testing::TestParamInfo<fifo_case>& param_info)
                         {
                             return std::to_string(param_info.param.capacity) +
                                    (param_info.param.drain[0] == 'r' ? "_raw_reads"
                                                                      : "_read_calls");
                         });

using Kernel = EmulatorTest;

// The bytes of an SMI fd are in its socket, so a reader that does not call read() (io_uring,
// recv, readv: here raw read system calls) gets them too. In lossless pace the producer then
// learns of the room it makes from the socket, not from an intercepted read, and no message is
// lost; at exit the wait sees the FIFO drained the same way (no close before exit here).
// A reader that has not read yet may read without read(): what the producer queues after
// its first batch, while that batch is still unread, reaches the socket by the end of the
// replay at the latest (here the reader starts after the producer has finished).
TEST_F(Kernel, AReaderThatBypassesReadGetsTheBatchesQueuedBeforeItsFirstRead)
{
    auto lines  = with_header({"#@ gpu 1ea0", "#@ pace rate 50", "#@ self 100"},
                              varied_faults(4, self)); // 3 gaps of 20 ms: 4 batches
    auto result = probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "sleep:300",
                                     "rawdrain:0:8192:200:4"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 4u) << result.out;
    EXPECT_EQ(stats()["producer"]["exit_wait"].str, "complete");
}

TEST_F(Kernel, ReadsThatBypassReadGetEveryMessageInLosslessPace)
{
    auto events = varied_faults(400, self); // about 20 times what a 1 KiB FIFO holds
    auto path   = log(
          with_header({"#@ gpu 1ea0", "#@ fifo 1024", "#@ timestamps keep", "#@ self 100"}, events));
    auto result =
        probe(path, {"pid", "open", "smi:1ea0", "mask:0:" + all_events, "rawdrain:0:8192:200:400"});
    ASSERT_EQ(result.exit_code, 0) << result.err;

    uint32_t    pid = probe_pid(result);
    std::string expected;
    for(const auto& e : events)
        expected +=
            e.substr(0, e.find(" -")) + " -" + std::to_string(pid) + e.substr(e.find(" @")) + "\n";
    EXPECT_EQ(drained(result, 0), expected);

    json        s      = stats();
    const json& client = s["gpus"][0]["clients"][0];
    EXPECT_EQ(s["total"]["events_queued"].u64(), events.size());
    EXPECT_EQ(s["total"]["dropped_fifo_full"].u64(), 0u);
    EXPECT_EQ(client["bytes_read"].u64(), client["bytes_queued"].u64());
    EXPECT_EQ(client["fifo_bytes_at_exit"].u64(), 0u);
    EXPECT_EQ(s["total"]["reads_intercepted"].u64(), 0u) << "every read bypassed read()";
    EXPECT_EQ(s["producer"]["exit_wait"].str, "complete");
}

TEST_F(Kernel, MaskSelectsEventIds)
{
    auto path   = log({"#@ self 100", migrate_start(1, self, 0x10, 2, 0, gpu_a),
                       fault_start(2, self, 0x10, gpu_a), fault_end(3, self, 0x10, gpu_a),
                       migrate_end(4, self, 0x10, 2, 0, gpu_a), queue_evict(5, self, gpu_a),
                       queue_restore(6, self, gpu_a), unmap(7, self, 0x10, 2, gpu_a)});
    auto result = probe(
        path, {"open", "smi:1ea0", "mask:0:" + mask_of({7, 8}), "drain:0:8192:1000:2", "close:0"});
    auto lines = split_lines(drained(result, 0));
    ASSERT_EQ(lines.size(), 2u) << result.out;
    EXPECT_EQ(lines[0].substr(0, 2), "7 ");
    EXPECT_EQ(lines[1].substr(0, 2), "8 ");
    json s = stats();
    EXPECT_EQ(s["total"]["filtered_mask"].u64(), 5u);
    EXPECT_EQ(s["total"]["events_queued"].u64(), 2u);
}

TEST_F(Kernel, SmallReadsSplitLinesAndLoseNothing)
{
    auto                     events = varied_faults(6, self);
    auto                     path = log(with_header({"#@ pace max", "#@ timestamps keep"}, events));
    std::vector<std::string> commands{"open", "smi:1ea0", "mask:0:" + all_events, "sleep:600"};
    for(int i = 0; i < 80; ++i)
        commands.push_back("read:0:7");
    auto result = probe(path, commands);

    std::string joined;
    auto        reads = lines_with(result, "read 0 ");
    ASSERT_FALSE(reads.empty());
    for(const auto& r : reads)
    {
        if(r == "err EAGAIN") break;
        size_t sp = r.find(' ');
        EXPECT_LE(std::stoul(r.substr(0, sp)), 7u);
        joined += unescape(r.substr(sp + 1));
    }
    // The first 7-byte read ends inside a line; together they are the whole log.
    EXPECT_EQ(unescape(reads[0].substr(2)).find('\n'), std::string::npos);
    EXPECT_EQ(split_lines(joined).size(), events.size());
    EXPECT_EQ(reads.back(), "err EAGAIN");
}

TEST_F(Kernel, EmptyFifoAndZeroByteReadsGiveEagain)
{
    auto path   = log({"#@ pace max", fault_start(1, self, 0x10, gpu_a)});
    auto result = probe(path, {"open", "smi:1ea0", "read:0:100", "mask:0:" + all_events,
                               "sleep:600", "read:0:0", "read:0:100", "read:0:100"});
    auto reads  = lines_with(result, "read 0 ");
    ASSERT_EQ(reads.size(), 4u) << result.out;
    EXPECT_EQ(reads[0], "err EAGAIN");                       // nothing queued yet
    EXPECT_EQ(reads[1], "err EAGAIN");                       // kfifo_out of 0 bytes
    EXPECT_NE(reads[2].compare(0, 3, "err"), 0) << reads[2]; // data: still there
    EXPECT_EQ(reads[3], "err EAGAIN");                       // drained
}

TEST_F(Kernel, PollReportsPollinExactlyWhileNotEmpty)
{
    auto path   = log({"#@ pace max", fault_start(1, self, 0x10, gpu_a)});
    auto result = probe(path, {"open", "smi:1ea0", "poll:0:0", "mask:0:" + all_events,
                               "poll:0:2000", "read:0:8192", "poll:0:0"});
    auto polls  = lines_with(result, "poll 0");
    ASSERT_EQ(polls.size(), 3u) << result.out;
    EXPECT_EQ(polls[0], " none");
    EXPECT_EQ(polls[1], " IN");
    EXPECT_EQ(polls[2], " none");
}

TEST_F(Kernel, MaskWriteNeedsEightBytes)
{
    auto path   = log({"#@ pace max", fault_start(1, self, 0x10, gpu_a)});
    auto result = probe(path, {"open", "smi:1ea0", "maskshort:0:4", "maskshort:0:7", "sleep:200",
                               "read:0:100", "maskshort:0:16", "sleep:600", "read:0:100"});
    auto masks  = lines_with(result, "mask 0 ");
    ASSERT_EQ(masks.size(), 3u) << result.out;
    EXPECT_EQ(masks[0], "err EFAULT");
    EXPECT_EQ(masks[1], "err EFAULT");
    EXPECT_EQ(masks[2], "8"); // a longer write takes the first 8 bytes and returns 8
    auto reads = lines_with(result, "read 0 ");
    ASSERT_EQ(reads.size(), 2u);
    EXPECT_EQ(reads[0], "err EAGAIN"); // the short writes enabled nothing
    EXPECT_NE(reads[1].compare(0, 3, "err"), 0) << reads[1];
}

TEST_F(Kernel, SmiIoctlForUnknownGpuIsEinvalAndLeavesAnonFd)
{
    auto path   = log({fault_start(1, self, 0x10, gpu_a)});
    auto result = probe(path, {"open", "smi:1234", "smi:0", "smi:1ea0", "nonblock:0"});
    auto smis   = lines_with(result, "smi ");
    ASSERT_EQ(smis.size(), 3u) << result.out;
    EXPECT_EQ(smis[0], "err EINVAL anon_fd=deadbeef");
    EXPECT_EQ(smis[1], "err EINVAL anon_fd=deadbeef");
    EXPECT_EQ(smis[2], "0 ok");
    EXPECT_EQ(line_with(result, "nonblock"), " ok");
}

TEST_F(Kernel, DefaultVersionIsCurrent)
{
    auto result = probe(log({fault_start(1, self, 0x10, gpu_a)}), {"open", "version"});
    EXPECT_EQ(line_with(result, "version "), "1 17");
}

TEST_F(Kernel, EachClientHasItsOwnFifo)
{
    // Replay starts when every GPU has an enabled client: gpu b's comes last, so both
    // clients of gpu a are enabled by then.
    auto path =
        log({"#@ pace max", "#@ gpu 1ea0", "#@ gpu fc7d", fault_start(1, self, 0x10, gpu_a)});
    auto result = probe(path, {"open", "smi:1ea0", "smi:1ea0", "mask:0:" + all_events,
                               "mask:1:" + all_events, "smi:fc7d", "mask:2:" + all_events,
                               "sleep:600", "read:0:8192", "read:1:8192", "read:0:8192"});
    auto first  = lines_with(result, "read 0 ");
    auto second = lines_with(result, "read 1 ");
    ASSERT_EQ(first.size(), 2u) << result.out;
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(first[0], second[0]); // both got the line
    EXPECT_EQ(first[1], "err EAGAIN");
}

// --- who receives what --------------------------------------------------------------------

std::vector<std::string>
pid_log(const std::vector<std::string>& header)
{
    return with_header(header,
                       {fault_start(1, self, 0x10, gpu_a), fault_start(2, other, 0x20, gpu_a),
                        vmfault(other, "other"), fault_end(3, self, 0x10, gpu_a)});
}

// The first character of each delivered line, and whether the other process's fault came.
struct delivered
{
    size_t lines       = 0;
    bool   other_fault = false;
    bool   vmfault     = false;
};

delivered
summarize(const std::string& bytes)
{
    delivered d;
    for(const auto& line : split_lines(bytes))
    {
        ++d.lines;
        d.other_fault = d.other_fault || line.find(" -200 ") != std::string::npos;
        d.vmfault     = d.vmfault || line.compare(0, 2, "1 ") == 0;
    }
    return d;
}

TEST_F(Kernel, NonSuperuserGetsOwnAndPidZeroEvents)
{
    auto      result = probe(log(pid_log({"#@ self 100"})),
                             {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:1000"});
    delivered d      = summarize(drained(result, 0));
    EXPECT_EQ(d.lines, 3u) << result.out;
    EXPECT_FALSE(d.other_fault);
    EXPECT_TRUE(d.vmfault); // delivered by pid 0 although it names process 200
    EXPECT_EQ(stats()["total"]["filtered_pid"].u64(), 1u);
}

TEST_F(Kernel, SuperuserGetsEveryProcess)
{
    auto      result = probe(log(pid_log({"#@ self 100", "#@ superuser yes"})),
                             {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:1000"});
    delivered d      = summarize(drained(result, 0));
    EXPECT_EQ(d.lines, 4u) << result.out;
    EXPECT_TRUE(d.other_fault);
}

TEST_F(Kernel, BeforeLinux616SuperuserNeedsAllProcessBit)
{
    auto path    = log(pid_log({"#@ self 100", "#@ superuser yes", "#@ all-process required"}));
    auto without = probe(path, {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:1000"});
    EXPECT_FALSE(summarize(drained(without, 0)).other_fault) << without.out;
    auto with = probe(path, {"open", "smi:1ea0", "mask:0:8000000000007fff", "drain:0:8192:1000"});
    EXPECT_TRUE(summarize(drained(with, 0)).other_fault) << with.out;
}

TEST_F(Kernel, SelfPidIsRewrittenToTheTracedProcess)
{
    auto result  = probe(log({"#@ self 100", "#@ superuser yes", fault_start(1, self, 0x10, gpu_a),
                              vmfault(self, "me"), fault_start(2, other, 0x20, gpu_a)}),
                         {"pid", "open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:1000:3"});
    uint32_t pid = probe_pid(result);
    auto     lines = split_lines(drained(result, 0));
    ASSERT_EQ(lines.size(), 3u) << result.out;
    EXPECT_NE(lines[0].find(" -" + std::to_string(pid) + " @10(1ea0) R"), std::string::npos);
    EXPECT_EQ(lines[1], format("1 %x:me", pid));
    EXPECT_NE(lines[2].find(" -200 "), std::string::npos); // other processes stay
}

TEST_F(Kernel, EventsGoToTheClientsOfTheirGpu)
{
    auto path   = log({"#@ gpu 1ea0", "#@ gpu fc7d", fault_start(1, self, 0x10, gpu_a),
                       fault_start(2, self, 0x20, gpu_b), migrate_start(3, self, 0x30, 1, 0, gpu_b),
                       migrate_start(4, self, 0x40, 1, gpu_a, 0), queue_evict(5, self, gpu_b),
                       unmap(6, self, 0x50, 1, gpu_a), vmfault(self, "first-gpu")});
    auto result = probe(path, {"open", "smi:1ea0", "smi:fc7d", "mask:0:" + all_events,
                               "mask:1:" + all_events, "drainall:8192:1000"});
    auto on_a   = split_lines(drained(result, 0));
    auto on_b   = split_lines(drained(result, 1));
    auto ids    = [](const std::vector<std::string>& lines)
    {
        std::string out;
        for(const auto& l : lines)
            out += l.substr(0, 1);
        return out;
    };
    // a: its fault, the migration away from it (to RAM), its unmap, the node-less vmfault.
    EXPECT_EQ(ids(on_a), "75b1") << result.out;
    // b: its fault, the migration to it, its queue eviction.
    EXPECT_EQ(ids(on_b), "759");
    json s = stats();
    EXPECT_EQ(s["gpus"][0]["lines_read"].u64(), 4u);
    EXPECT_EQ(s["gpus"][1]["lines_read"].u64(), 3u);
}

TEST_F(Kernel, ClientsOfOneGpuWithOtherMasksEachGetTheirLinesInOrder)
{
    // Lines of both GPUs and of two ids interleaved, lossless pace, more than the 8 KiB FIFOs
    // hold: one client of gpu a takes every id, the other page-fault ends (id 8) only. Each
    // gets exactly its lines, in the log's order (the producer copies a client's lines of a
    // batch in runs, broken where the other client's mask skips a line).
    std::vector<std::string> events, all_on_a, ends_on_a, on_b;
    for(uint32_t i = 0; i < 600; ++i)
    {
        std::string on_a = i % 3 == 0 ? fault_end(10 + i, self, 0x100 + i, gpu_a)
                                      : fault_start(10 + i, self, 0x100 + i, gpu_a);
        std::string b    = fault_start(10 + i, self, 0x2000 + i, gpu_b);
        events.push_back(on_a);
        events.push_back(b);
        all_on_a.push_back(on_a);
        if(i % 3 == 0) ends_on_a.push_back(on_a);
        on_b.push_back(b);
    }
    auto path   = log(with_header({"#@ gpu 1ea0", "#@ gpu fc7d", "#@ fifo 8192"}, events));
    auto result = probe(path, {"open", "smi:1ea0", "smi:1ea0", "mask:0:" + all_events,
                               "mask:1:0000000000000080", "smi:fc7d", "mask:2:" + all_events,
                               "drainall:8192:1000"});
    // The timestamps may be rebased and the pid rewritten: lines are compared from the page on.
    auto from_pid = [](const std::vector<std::string>& lines)
    {
        std::vector<std::string> out;
        for(const auto& l : lines)
            out.push_back(l.substr(0, 1) + l.substr(l.find(" @")));
        return out;
    };
    EXPECT_EQ(from_pid(split_lines(drained(result, 0))), from_pid(all_on_a)) << result.out;
    EXPECT_EQ(from_pid(split_lines(drained(result, 1))), from_pid(ends_on_a));
    EXPECT_EQ(from_pid(split_lines(drained(result, 2))), from_pid(on_b));
    json s = stats();
    EXPECT_EQ(s["gpus"][0]["events_emitted"].u64(), 600u);
    EXPECT_EQ(s["gpus"][0]["events_queued"].u64(), 800u); // 600 + 200
    EXPECT_EQ(s["gpus"][0]["filtered_mask"].u64(), 400u);
    EXPECT_EQ(s["gpus"][0]["dropped_fifo_full"].u64(), 0u);
    EXPECT_EQ(s["gpus"][1]["events_queued"].u64(), 600u);
}

// --- the topology ---------------------------------------------------------------------------

std::string
property(const std::string& text, const std::string& key)
{
    for(const auto& line : split_lines(text))
        if(line.compare(0, key.size() + 1, key + " ") == 0) return line.substr(key.size() + 1);
    return "";
}

TEST_F(Kernel, TopologyShowsCpuThenEmulatedGpus)
{
    const std::string root = "/sys/class/kfd/kfd/topology/nodes/";
    auto path   = log({"#@ gpu fc7d gfx942", "#@ gpu 1ea0", fault_start(1, self, 1, gpu_a)});
    auto result = probe(
        path, {"cat:" + root + "0/gpu_id", "cat:" + root + "0/properties",
               "cat:" + root + "1/gpu_id", "cat:" + root + "1/name", "cat:" + root + "1/properties",
               "cat:" + root + "2/gpu_id", "fcat:" + root + "2/name",
               "cat:" + root + "2/properties", "cat:" + root + "1/mem_banks/0/properties",
               "cat:" + root + "2/io_links/0/properties", "cat:" + root + "3/gpu_id"});
    auto cats = lines_with(result, "cat ");
    ASSERT_EQ(cats.size(), 11u) << result.out << result.err;
    auto text = [&](size_t i) { return unescape(cats[i].substr(3)); };
    EXPECT_EQ(text(0), "0\n");
    EXPECT_GT(std::stoul(property(text(1), "cpu_cores_count")), 0u);
    EXPECT_EQ(property(text(1), "simd_count"), "0");
    EXPECT_EQ(text(2), std::to_string(0xfc7d) + "\n"); // directive order, decimal
    EXPECT_EQ(text(3), "gfx942\n");
    EXPECT_EQ(property(text(4), "gfx_target_version"), "90402");
    EXPECT_EQ(property(text(4), "vendor_id"), "4098");
    EXPECT_EQ(property(text(4), "cpu_cores_count"), "0");
    EXPECT_GT(std::stoul(property(text(4), "simd_count")), 0u);
    EXPECT_EQ(property(text(4), "drm_render_minor"), "128");
    EXPECT_EQ(text(5), std::to_string(0x1ea0) + "\n");
    EXPECT_EQ(text(6), "gfx90a\n"); // the default name, read through fopen()
    EXPECT_EQ(property(text(7), "gfx_target_version"), "90010");
    EXPECT_EQ(property(text(7), "drm_render_minor"), "129");
    EXPECT_NE(property(text(8), "size_in_bytes"), "");
    EXPECT_EQ(property(text(9), "node_to"), "0");
    EXPECT_EQ(cats[10], "err ENOENT"); // the probing stops after the last GPU
}

TEST_F(Kernel, TopologyFolderIsRemovedAtExit)
{
    auto result = probe(log({fault_start(1, self, 1, gpu_a)}),
                        {"cat:/sys/class/kfd/kfd/topology/nodes/1/gpu_id"});
    EXPECT_EQ(line_with(result, "cat "), "ok 7840\\n");
    // The emulator made its folder in TMPDIR (our scratch folder): nothing of it is left.
    auto listing = run_child("/bin/ls", {dir.path()}, {});
    EXPECT_EQ(listing.out.find("kfd-emulator-"), std::string::npos) << listing.out;
}

// --- pass-through -------------------------------------------------------------------------

TEST_F(Kernel, OtherFilesAndPipesPassThrough)
{
    auto path   = log({fault_start(1, self, 1, gpu_a)});
    auto plain  = dir.write("plain.txt", "hello kfd\n");
    auto result = probe(path, {"open", "file:" + dir.file("round-trip"), "pipe", "cat:" + plain,
                               "cat:/sys/class/kfd/kfd/topologyX", "cat:/dev/kfdX"});
    EXPECT_EQ(line_with(result, "file"), " ok");
    EXPECT_EQ(line_with(result, "pipe"), " ok");
    auto cats = lines_with(result, "cat ");
    ASSERT_EQ(cats.size(), 3u) << result.out;
    EXPECT_EQ(cats[0], "ok hello kfd\\n");
    EXPECT_EQ(cats[1], "err ENOENT"); // a look-alike path is not redirected
    EXPECT_EQ(cats[2], "err ENOENT");
}

TEST_F(Kernel, WithoutTheLogVariableNothingChanges)
{
    std::vector<std::string> commands{"open", "cat:/sys/class/kfd/kfd/topology/nodes/1/gpu_id",
                                      "file:" + dir.file("f"), "pipe"};
    env_map                  env{{"TMPDIR", dir.path()}};
    auto                     preloaded = run_probe("", commands, env, true);
    auto                     plain     = run_probe("", commands, env, false);
    EXPECT_EQ(preloaded.exit_code, 0);
    EXPECT_EQ(preloaded.out, plain.out);
    EXPECT_EQ(preloaded.err, "");
    EXPECT_EQ(line_with(preloaded, "file"), " ok");
    // No /dev/kfd on this machine: the open fails exactly as without the emulator.
    EXPECT_EQ(line_with(plain, "open"), " err ENOENT");
}

TEST_F(Kernel, FortifiedAndOpenatVariantsReachTheDevice)
{
    auto path = log({"#@ pace max", fault_start(1, self, 1, gpu_a)});
    for(const char* how : {"open64", "openat", "open2"})
    {
        auto result = probe(path, {how, "version", "smi:1ea0", "mask:0:" + all_events, "sleep:600",
                                   "readchk:0:8192"});
        EXPECT_EQ(line_with(result, "open "), "ok") << how;
        EXPECT_EQ(line_with(result, "version "), "1 17") << how;
        EXPECT_NE(line_with(result, "read 0 ").find("@1(1ea0) R\\n"), std::string::npos)
            << result.out;
    }
}

TEST_F(Kernel, RelativeLogPathSurvivesChdir)
{
    dir.write("relative.log", fault_start(1, self, 1, gpu_a) + "\n");
    // The probe starts in the scratch folder, names the log relatively, then leaves the
    // folder before its first /dev/kfd open (when the emulator reads the log).
    auto result = run_child(
        "/bin/sh",
        {"-c", "cd '" + dir.path() + "' && exec '" + probe_program() + "' chdir:/ open version"},
        {{"LD_PRELOAD", emulator_library()},
         {"KFD_EMULATOR_LOG", "relative.log"},
         {"TMPDIR", dir.path()}});
    EXPECT_EQ(line_with(result, "chdir "), "ok");
    EXPECT_EQ(line_with(result, "version "), "1 17") << result.err;
}
} // namespace
} // namespace kfd_test
