// MIT License - see LICENSE.
//
// The statistics count what the emulator costs the program's threads: every intercepted
// read() of its fds, and the system calls the emulator makes inside them, by kind. Expected
// counts come from what the probe does and the rules of docs/kfd-emulator.md: one fd-identity
// check (fstat) per read, no getpid, one recvfrom (taking the bytes out of the fd's socket) per
// read that finds data, none for a read that finds the FIFO empty; a getpid only for a read
// that waits for the emulator's lock.
#include "emulator_fixture.hpp"

namespace kfd_test
{
namespace
{
constexpr uint32_t gpu_a = 0x1ea0;
constexpr uint32_t self  = 100;

using ClientCalls = EmulatorTest;

// Three messages, all in the FIFO before the first read: the poll returns once the producer's
// one batch (the whole log) is queued.
std::vector<std::string>
three_faults()
{
    return {"#@ gpu 1ea0",
            "#@ self 100",
            "#@ timestamps keep",
            fault_start(1000, self, 0x1000, gpu_a),
            fault_start(1001, self, 0x1001, gpu_a),
            fault_start(1002, self, 0x1002, gpu_a)};
}

struct counts
{
    uint64_t reads = 0, getpid = 0, fstat = 0, recvfrom = 0, lock_waits = 0;
};

counts
counts_of(const json& stats)
{
    const json& total = stats["total"];
    const json& sys   = total["client_thread_syscalls"];
    counts      c;
    c.reads      = total["reads_intercepted"].u64();
    c.getpid     = sys["getpid"].u64();
    c.fstat      = sys["fstat"].u64();
    c.recvfrom   = sys["recvfrom"].u64();
    c.lock_waits = sys["futex_lock_wait"].u64();
    return c;
}

std::vector<std::string>
with_reads(const std::vector<std::string>& reads)
{
    std::vector<std::string> commands{"open", "smi:1ea0", "mask:0:" + all_events, "poll:0:5000"};
    commands.insert(commands.end(), reads.begin(), reads.end());
    commands.push_back("close:0");
    return commands;
}

TEST_F(ClientCalls, EachInterceptedReadIsCountedWithItsSystemCalls)
{
    // A read that leaves data (10 bytes of the first line), then one that empties the FIFO.
    auto first = probe(log(three_faults()), with_reads({"read:0:10", "read:0:8192"}), {}, 20);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    counts a = counts_of(stats());
    EXPECT_EQ(a.reads, 2u);
    EXPECT_EQ(a.recvfrom, 2u) << "each read that finds data takes it from the socket";

    // The same, plus three reads of the empty FIFO and reads of a regular file (not ours).
    std::string other  = dir.write("other.txt", "not an SMI fd\n");
    auto        second = probe(log(three_faults()),
                               with_reads({"read:0:10", "read:0:8192", "read:0:8192", "cat:" + other,
                                           "read:0:64", "read:0:1"}),
                               {}, 20);
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(lines_with(second, "read 0 err EAGAIN").size(), 3u) << second.out;
    counts b = counts_of(stats());
    EXPECT_EQ(b.reads - a.reads, 3u) << "reads of other fds are not the emulator's";
    EXPECT_EQ(b.fstat - a.fstat, 3u) << "one fd-identity check per read";
    // A read makes a getpid() only when it waits for the lock (futex_lock_wait).
    EXPECT_EQ(b.getpid - b.lock_waits, a.getpid - a.lock_waits) << "a read makes no getpid()";
    EXPECT_EQ(b.recvfrom, 2u) << "a read of an empty FIFO makes no recvfrom";
}

TEST_F(ClientCalls, StatisticsNameEveryKind)
{
    auto result = probe(log(three_faults()), with_reads({"read:0:8192"}), {}, 20);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    json sys = stats()["total"]["client_thread_syscalls"];
    for(const char* kind : {"getpid", "fstat", "recvfrom", "sendto", "close", "fcntl", "socketpair",
                            "memfd_create", "getrlimit", "futex_wake", "futex_lock_wait",
                            "futex_unlock_wake", "thread_create", "ioctl", "sendmsg"})
        EXPECT_TRUE(sys.has(kind)) << kind;
    // What the probe's open, SMI ioctl and mask write made: one memfd for /dev/kfd, one socket
    // pair for the client, one producer thread; one read found data.
    EXPECT_EQ(sys["memfd_create"].u64(), 1u);
    EXPECT_EQ(sys["socketpair"].u64(), 1u);
    EXPECT_EQ(sys["thread_create"].u64(), 1u);
    EXPECT_EQ(sys["recvfrom"].u64(), 1u);
    EXPECT_EQ(sys["sendmsg"].u64(), 0u) << "batches are sent by the producer thread";
    EXPECT_EQ(sys["ioctl"].u64(), 0u) << "a FIFO read only through read() is known exactly";
}
// read() knows without getpid() that the state is this process's. A vfork() child, which
// runs in the parent's memory with the parent's sockets, then reads the parent's client, as a
// read of the shared file would in the kernel, unless the emulator's lock is taken (the
// producer finishing): then it checks the pid and its read fails with EAGAIN, the fd inert as
// in a child (docs/kfd-emulator.md, fork()). Either way nothing is lost or read twice, and the
// child never blocks.
TEST_F(ClientCalls, VforkChildReadsTheSharedClientOrNothing)
{
    auto result = probe(log(three_faults()),
                        {"open", "smi:1ea0", "mask:0:" + all_events, "poll:0:5000",
                         "vforkread:0:8192", "poll:0:0", "read:0:8192"},
                        {}, 20);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string child = line_with(result, "vforkread done ");
    ASSERT_TRUE(child == "0" || child == "1") << result.out;
    auto polls = lines_with(result, "poll 0 ");
    ASSERT_EQ(polls.size(), 2u) << result.out;
    EXPECT_EQ(polls[0], "IN");
    const std::string parent = line_with(result, "read 0 ");
    if(child == "0")
    {
        EXPECT_EQ(polls[1], "none") << "the child took the data";
        EXPECT_EQ(parent, "err EAGAIN") << result.out;
    }
    else
    {
        EXPECT_EQ(polls[1], "IN");
        size_t lines = 0; // the probe escapes each '\n' as the two characters \ and n
        for(size_t at = parent.find("\\n"); at != std::string::npos;
            at        = parent.find("\\n", at + 2))
            ++lines;
        EXPECT_EQ(lines, 3u) << result.out;
    }
    json        s      = stats();
    const json& client = s["gpus"][0]["clients"][0];
    EXPECT_EQ(client["queued"].u64(), 3u);
    EXPECT_EQ(client["bytes_read"].u64(), client["bytes_queued"].u64());
    EXPECT_EQ(client["fifo_bytes_at_exit"].u64(), 0u);
}
} // namespace
} // namespace kfd_test
