// MIT License - see LICENSE.
//
// The oracle test: for every bundled generated log (every scenario and kernel-format era,
// 1 to 4 GPUs), a tool built from the contract receives exactly the records in the log's
// .expect.csv, which the generator computed from its own model of the workload, never by
// parsing the text it wrote.
#include "run_process.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using test_support::lines_of;
using test_support::read_file;
using test_support::run_process;
using test_support::scratch_dir;
using test_support::write_file;

namespace
{
const std::string emulator = ROCP_TEST_EMULATOR;
const std::string tool     = ROCP_TEST_E2E_TOOL;
const std::string app      = ROCP_TEST_APP_PLAIN;
const std::string logs_dir = ROCP_TEST_LOGS_DIR;

std::vector<std::string>
split_csv(const std::string& line)
{
    std::vector<std::string> out;
    std::string              field;
    std::stringstream        s{line};
    while(std::getline(s, field, ','))
        out.push_back(field);
    if(!line.empty() && line.back() == ',') out.emplace_back();
    return out;
}

std::string
hex(const std::string& decimal)
{
    char text[32];
    snprintf(text, sizeof(text), "%llx", std::stoull(decimal));
    return text;
}

// One row of the generator's .expect.csv in the e2e tool's record format.
std::string
to_tool_format(const std::vector<std::string>& f, const std::string& self_pid)
{
    // operation,pid,start_ns,end_ns,node_or_from,to,prefetch,preferred,trigger,addr_start,
    // addr_end,read_fault,migrated,rescheduled
    const std::string pid  = f[1] == self_pid ? "SELF" : f[1];
    const std::string head = pid + "," + f[2] + "," + f[3] + ",";
    if(f[0] == "PAGE_FAULT")
        return "fault," + head + hex(f[4]) + "," + hex(f[9]) + "," + f[11] + "," + f[12];
    if(f[0] == "PAGE_MIGRATE")
        return "migrate," + head + hex(f[9]) + "," + hex(f[10]) + "," + hex(f[4]) + "," +
               hex(f[5]) + "," + hex(f[6]) + "," + hex(f[7]) + "," + f[8];
    if(f[0] == "QUEUE_SUSPEND") return "queue," + head + hex(f[4]) + "," + f[8] + "," + f[13];
    if(f[0] == "UNMAP_FROM_GPU")
        return "unmap," + head + hex(f[4]) + "," + hex(f[9]) + "," + hex(f[10]) + "," + f[8];
    return "unexpected-operation," + f[0];
}

// Value of the first "#@ <name> <value>" directive of a log, or "".
std::string
directive_of(const std::string& log, const std::string& name)
{
    const std::string head = "#@ " + name + " ";
    for(const auto& line : lines_of(log))
        if(line.rfind(head, 0) == 0) return line.substr(head.size());
    return "";
}

std::string
self_pid_of(const std::string& log)
{
    return directive_of(log, "self");
}

// Replays a bundled log; returns the records (sorted) the tool received and, in `expected`,
// those of the generator's model for this process.
void
replay_log(const std::string& name, std::vector<std::string>& expected,
           std::vector<std::string>&                        actual,
           std::vector<std::pair<std::string, std::string>> extra_env = {},
           const std::string& directives = "", std::vector<std::string>* other_lines = nullptr)
{
    auto log          = read_file(logs_dir + "/" + name + ".log");
    auto expected_csv = read_file(logs_dir + "/" + name + ".expect.csv");
    ASSERT_FALSE(log.empty()) << name;
    ASSERT_FALSE(expected_csv.empty()) << name;
    auto self = self_pid_of(log);
    ASSERT_FALSE(self.empty()) << name;

    bool header = true;
    for(const auto& line : lines_of(expected_csv))
    {
        if(header || line.empty())
        {
            header = false;
            continue;
        }
        auto fields = split_csv(line);
        ASSERT_EQ(fields.size(), 14u) << line;
        if(fields[1] != self) continue; // other processes' records reach only superusers
        expected.push_back(to_tool_format(fields, self));
    }
    std::sort(expected.begin(), expected.end());
    ASSERT_FALSE(expected.empty()) << name;

    scratch_dir dir;
    write_file(dir.file("events.log"),
               "#@ timestamps keep\n" + directives + log); // the log's own times
    // The SDK must know the emulated FIFO's size (it reads the host kernel's version
    // otherwise): a read it took for a full FIFO would drop outstanding starts.
    if(auto fifo = directive_of(directives + log, "fifo"); !fifo.empty())
        extra_env.emplace_back("ROCPROFILER_KFD_FIFO_BYTES", fifo);
    extra_env.emplace_back("LD_PRELOAD", emulator + ":" + tool);
    extra_env.emplace_back("KFD_EMULATOR_LOG", dir.file("events.log"));
    extra_env.emplace_back("E2E_OUT", dir.file("out.csv"));
    auto result = run_process({app}, extra_env);
    auto output = read_file(dir.file("out.csv"));
    ASSERT_EQ(result.exit_code, 0) << name;

    for(const auto& line : lines_of(output))
    {
        auto head = line.substr(0, line.find(','));
        if(head == "fault" || head == "migrate" || head == "queue" || head == "unmap" ||
           head.rfind("bad-", 0) == 0)
            actual.push_back(line);
        else if(other_lines)
            other_lines->push_back(line);
        if(head == "stats") EXPECT_NE(line.find("malformed=0,"), std::string::npos) << line;
    }
    std::sort(actual.begin(), actual.end());
}

void
check_log(const std::string& name)
{
    std::vector<std::string> expected, actual;
    replay_log(name, expected, actual);
    EXPECT_EQ(actual.size(), expected.size()) << name;
    EXPECT_EQ(actual, expected) << name;
}
} // namespace

TEST(generated_logs, streaming_1gpu_6_13)
{
    check_log("streaming-1gpu-6.13");
}
TEST(generated_logs, thrashing_2gpu_6_12)
{
    check_log("thrashing-2gpu-6.12");
}
TEST(generated_logs, eviction_2gpu_2026)
{
    check_log("eviction-2gpu-2026");
}
TEST(generated_logs, eviction_1gpu_6_12)
{
    check_log("eviction-1gpu-6.12");
}
TEST(generated_logs, eviction_2gpu_proposed_id14_rescheduled_restores)
{
    check_log("eviction-2gpu-proposed");
}
TEST(generated_logs, mixed_4gpu_6_0)
{
    check_log("mixed-4gpu-6.0");
}
TEST(generated_logs, prefetch_1gpu_6_13)
{
    check_log("prefetch-1gpu-6.13");
}
TEST(generated_logs, unmap_2gpu_two_processes)
{
    check_log("unmap-2gpu-6.13-two-processes");
}

TEST(generated_logs, context_toggled_while_events_flow_gets_only_correct_records)
{
    // Stopping and starting a context while events flow loses what arrives while it is
    // stopped, but every record delivered is exactly right (no record across a gap). A gap
    // is opened on every run: before the bundled log, an eviction is read while the context
    // runs (then an unmap marker makes the tool stop it), its restore and a new eviction
    // arrive while it is stopped (`#@ wait-mask` holds them until the stop, and the second
    // marker makes the tool start it again), and a last restore arrives after the restart.
    // Pairing that restore with the first eviction would be a record not in the expected set.
    // Then 50 more toggles while the replay (400 events at 1000/s) flows; they end with the
    // context started, so records do arrive.
    const std::string name = "mixed-4gpu-6.0";
    const std::string log  = read_file(logs_dir + "/" + name + ".log");
    const std::string gpu  = directive_of(log, "gpu").substr(0, directive_of(log, "gpu").find(' '));
    const std::string self = self_pid_of(log);
    ASSERT_FALSE(gpu.empty());
    const std::string pid = " -" + self + " ";
    const std::string gap = "#@ wait-mask " + gpu +
                            " with 9\n"
                            "9 39990000000000" +
                            pid + gpu +
                            " 2\n"
                            "b 39990000001000" +
                            pid + "@100(1) " + gpu +
                            " 0\n"
                            "#@ wait-mask " +
                            gpu +
                            " without 9\n"
                            "a 39990000002000" +
                            pid + gpu +
                            "\n"
                            "9 39990000003000" +
                            pid + gpu +
                            " 1\n"
                            "b 39990000004000" +
                            pid + "@200(1) " + gpu +
                            " 0\n"
                            "#@ wait-mask " +
                            gpu +
                            " with 9\n"
                            "a 39990000005000" +
                            pid + gpu + "\n";
    std::vector<std::string> expected, actual;
    std::vector<std::string> values;
    replay_log(name, expected, actual, {{"E2E_TOGGLE", "50"}, {"E2E_GAP_MARKERS", "1"}},
               "#@ pace rate 1000\n" + gap, &values);
    // The markers are correct records too; whether the context gets them races with the
    // stop and start their raw copies trigger.
    expected.push_back("unmap,SELF,39990000001000,39990000001000," + gpu + ",100000,101000,0");
    expected.push_back("unmap,SELF,39990000004000,39990000004000," + gpu + ",200000,201000,0");
    std::sort(expected.begin(), expected.end());
    ASSERT_FALSE(actual.empty());
    for(const auto& r : actual)
        EXPECT_TRUE(std::binary_search(expected.begin(), expected.end(), r)) << r;
    // the gap was real: the first eviction was outstanding at the stop and dropped
    bool stopped = false, restarted = false, lost = false;
    for(const auto& v : values)
    {
        stopped   = stopped || v == "gap_stop,0";
        restarted = restarted || v == "gap_start,0";
        lost =
            lost || (v.rfind("stats,", 0) == 0 && v.find(",lost_in_gap=0,") == std::string::npos);
        EXPECT_EQ(v.rfind("gap_timeout", 0), std::string::npos) << v;
    }
    EXPECT_TRUE(stopped);
    EXPECT_TRUE(restarted);
    EXPECT_TRUE(lost);
}
