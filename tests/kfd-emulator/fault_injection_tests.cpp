// MIT License - see LICENSE.
//
// The fault-injection directives, one test each: /dev/kfd missing or forbidden, the version
// ioctl failing, the SMI ioctl failing for one GPU, read() failing with EINTR or EFAULT, and a
// GPU vanishing in the middle of the log.
#include "emulator_fixture.hpp"

namespace kfd_test
{
namespace
{
constexpr uint32_t gpu_a = 0x1ea0;
constexpr uint32_t gpu_b = 0xfc7d;
constexpr uint32_t self  = 100;

using Fault = EmulatorTest;

// count faults of pid 100 with lines of equal length (4-digit ns and page).
std::vector<std::string>
same_size_faults(size_t count, uint32_t node = gpu_a)
{
    std::vector<std::string> lines;
    for(size_t i = 0; i < count; ++i)
        lines.push_back(fault_start(1000 + i, self, 0x1000 + i, node));
    return lines;
}

std::vector<std::string>
concat(std::vector<std::string> a, const std::vector<std::string>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

TEST_F(Fault, DeviceMissingOrForbidden)
{
    auto missing = probe(log({"#@ fault open enoent", fault_start(1, self, 1, gpu_a)}),
                         {"open", "cat:/sys/class/kfd/kfd/topology/nodes/1/gpu_id"});
    EXPECT_EQ(line_with(missing, "open "), "err ENOENT");
    // The topology stays visible (a container without the device node).
    EXPECT_EQ(line_with(missing, "cat "), "ok 7840\\n");
    auto forbidden = probe(log({"#@ fault open eacces", fault_start(1, self, 1, gpu_a)}), {"open"});
    EXPECT_EQ(line_with(forbidden, "open "), "err EACCES");
}

TEST_F(Fault, VersionIoctlFails)
{
    auto result =
        probe(log({"#@ fault version eperm", fault_start(1, self, 1, gpu_a)}), {"open", "version"});
    EXPECT_EQ(line_with(result, "version "), "err EPERM");
}

TEST_F(Fault, SmiIoctlFailsForOneGpuAndReplayGoesOnForTheOthers)
{
    auto lines  = concat({"#@ gpu 1ea0", "#@ gpu fc7d", "#@ fault smi fc7d"},
                         concat(same_size_faults(3, gpu_a), same_size_faults(2, gpu_b)));
    auto result = probe(log(lines), {"open", "smi:fc7d", "smi:1ea0", "mask:0:" + all_events,
                                     "drain:0:8192:1000:3"});
    EXPECT_EQ(line_with(result, "smi err"), " EINVAL anon_fd=deadbeef") << result.out;
    // Lossless replay does not wait for a GPU nobody can subscribe to.
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 3u);
    json s = stats();
    EXPECT_EQ(s["gpus"][1]["no_client"].u64(), 2u);

    auto other_errno =
        probe(log(concat({"#@ fault smi 1ea0 enomem"}, same_size_faults(1))), {"open", "smi:1ea0"});
    EXPECT_EQ(line_with(other_errno, "smi err"), " ENOMEM anon_fd=deadbeef");
}

TEST_F(Fault, ReadEintrOnceLosesNothing)
{
    auto lines  = concat({"#@ fault read eintr once", "#@ pace max"}, same_size_faults(3));
    auto result = probe(log(lines), {"open", "smi:1ea0", "read:0:8192", "mask:0:" + all_events,
                                     "sleep:600", "read:0:8192", "read:0:8192", "read:0:8192"});
    auto reads  = lines_with(result, "read 0 ");
    ASSERT_EQ(reads.size(), 4u) << result.out;
    EXPECT_EQ(reads[0], "err EAGAIN"); // an empty FIFO is not a read that fails
    EXPECT_EQ(reads[1], "err EINTR");
    EXPECT_EQ(split_lines(unescape(reads[2].substr(reads[2].find(' ') + 1))).size(), 3u);
    EXPECT_EQ(reads[3], "err EAGAIN");
    json client = stats()["gpus"][0]["clients"][0];
    EXPECT_EQ(client["injected_read_errors"].u64(), 1u);
    EXPECT_EQ(client["bytes_lost_efault"].u64(), 0u);
}

TEST_F(Fault, ReadEfaultEveryNLosesTheBytesLikeTheKernel)
{
    // Superuser: pid 100 is another process, so the lines stay verbatim (26 bytes each).
    auto lines = concat({"#@ fault read efault every 2", "#@ pace max", "#@ superuser yes",
                         "#@ self 4", "#@ timestamps keep"},
                        same_size_faults(10));
    ASSERT_EQ(lines.back().size() + 1, 26u);
    std::vector<std::string> commands{"open", "smi:1ea0", "mask:0:" + all_events, "sleep:600"};
    for(int i = 0; i < 11; ++i)
        commands.push_back("read:0:26");
    auto result = probe(log(lines), commands);
    auto reads  = lines_with(result, "read 0 ");
    ASSERT_EQ(reads.size(), 11u) << result.out;
    for(size_t i = 0; i < 10; i += 2)
    {
        EXPECT_EQ(reads[i].substr(0, 3), "26 ") << i;
        EXPECT_EQ(reads[i + 1], "err EFAULT") << i;
    }
    // Every second line went with its failed read: lines 1, 3, 5, 7, 9 arrived.
    EXPECT_NE(reads[2].find("@1002(1ea0)"), std::string::npos);
    EXPECT_EQ(reads[10], "err EAGAIN");
    json client = stats()["gpus"][0]["clients"][0];
    EXPECT_EQ(client["injected_read_errors"].u64(), 5u);
    EXPECT_EQ(client["lines_lost_efault"].u64(), 5u);
    EXPECT_EQ(client["bytes_lost_efault"].u64(), 130u);
}

TEST_F(Fault, VanishingGpuHangsUpItsClients)
{
    // Line 6 of the file is the fourth event: three are delivered, then the GPU is gone.
    auto lines  = concat({"#@ gpu 1ea0", "#@ fault vanish 1ea0 6"}, same_size_faults(10));
    auto result = probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events,
                                     "drain:0:8192:2000", "poll:0:0", "smi:1ea0"});
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 3u) << result.out;
    EXPECT_EQ(line_with(result, "drainerr 0 "), "ENODEV");
    std::string poll = line_with(result, "poll 0");
    EXPECT_NE(poll.find("HUP"), std::string::npos) << poll;
    EXPECT_EQ(poll.find("ERR"), std::string::npos) << poll;
    EXPECT_EQ(line_with(result, "smi err"), " EINVAL anon_fd=deadbeef"); // gone from the GPUs
    json gpu = stats()["gpus"][0];
    EXPECT_TRUE(gpu["vanished"].b);
    EXPECT_EQ(gpu["vanished_at_line"].u64(), 6u);
    EXPECT_EQ(gpu["events_queued"].u64(), 3u);
    EXPECT_EQ(gpu["after_vanish"].u64(), 7u);
}

// The producer reads and parses lines ahead of delivering them (without the lock): a vanish
// fault still takes effect at its own line, whatever kind of line that is, in line order.
TEST_F(Fault, VanishingAtACommentLineTakesEffectBeforeTheNextEvent)
{
    auto lines =
        concat({"#@ gpu 1ea0", "#@ fault vanish 1ea0 6"},
               concat(same_size_faults(3), concat({"# not an event"}, same_size_faults(7))));
    auto result =
        probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:2000"});
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 3u) << result.out;
    json gpu = stats()["gpus"][0];
    EXPECT_TRUE(gpu["vanished"].b);
    EXPECT_EQ(gpu["vanished_at_line"].u64(), 6u);
    EXPECT_EQ(gpu["events_queued"].u64(), 3u);
    EXPECT_EQ(gpu["after_vanish"].u64(), 7u);
}

TEST_F(Fault, VanishFaultsGivenOutOfOrderTakeEffectAtTheEarliestLine)
{
    // Lines 4-6 and 8-14 are events, line 7 a comment: the faults at lines 8 and 7 both fall
    // between the third and the fourth event; the GPU vanishes at line 7.
    auto lines =
        concat({"#@ gpu 1ea0", "#@ fault vanish 1ea0 8", "#@ fault vanish 1ea0 7"},
               concat(same_size_faults(3), concat({"# not an event"}, same_size_faults(7))));
    auto result =
        probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:2000"});
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 3u) << result.out;
    json gpu = stats()["gpus"][0];
    EXPECT_EQ(gpu["vanished_at_line"].u64(), 7u);
    EXPECT_EQ(gpu["events_queued"].u64(), 3u);
    EXPECT_EQ(gpu["after_vanish"].u64(), 7u);
}

TEST_F(Fault, VanishingAfterTheLastEventStillHappens)
{
    auto lines = concat({"#@ gpu 1ea0", "#@ fault vanish 1ea0 8"},
                        concat(same_size_faults(5), {"# the end"}));
    auto result =
        probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "drain:0:8192:2000"});
    EXPECT_EQ(split_lines(drained(result, 0)).size(), 5u) << result.out;
    EXPECT_EQ(line_with(result, "drainerr 0 "), "ENODEV");
    json gpu = stats()["gpus"][0];
    EXPECT_TRUE(gpu["vanished"].b);
    EXPECT_EQ(gpu["vanished_at_line"].u64(), 8u);
    EXPECT_EQ(gpu["events_queued"].u64(), 5u);
    EXPECT_EQ(gpu["after_vanish"].u64(), 0u);
}

TEST_F(Fault, VanishingGpuCanReportPollerr)
{
    auto lines = concat({"#@ gpu 1ea0", "#@ fault vanish 1ea0 4 err"}, same_size_faults(4));
    auto result =
        probe(log(lines), {"open", "smi:1ea0", "mask:0:" + all_events, "sleep:600", "poll:0:0"});
    std::string poll = line_with(result, "poll 0");
    EXPECT_NE(poll.find("ERR"), std::string::npos) << poll;
    EXPECT_NE(poll.find("HUP"), std::string::npos) << poll;
}
} // namespace
} // namespace kfd_test
