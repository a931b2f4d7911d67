// MIT License - see LICENSE.
//
// rocprof-kfd with the real bundled tool (built only once its component is in the tree):
// the files of docs/rocprof-kfd-design.md appear where the options say, the CSV files hold
// one row per record of the generator's oracle, a user's tool alongside still receives
// every record, and a program killed by SIGTERM leaves complete JSON documents.
#include "cli_support.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <map>
#include <thread>

using namespace cli_test;

namespace
{
const std::string command   = ROCPROF_KFD;
const std::string program   = TEST_PROGRAM;
const std::string user_tool = USER_TOOL;
const std::string logs_dir  = KFD_LOGS_DIR;
const std::string workload  = "managed-2gpu-6.13";

env_list
real_env(const scratch& dir)
{
    return {"PATH=/usr/bin:/bin", "TMPDIR=" + dir.path(), "ROCPROFILER_LOG_LEVEL=error"};
}

std::vector<std::string>
names_in(const std::string& folder)
{
    std::vector<std::string> out;
    if(DIR* d = opendir(folder.c_str()))
    {
        while(dirent* e = readdir(d))
            if(e->d_name[0] != '.') out.emplace_back(e->d_name);
        closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Records per operation of the bundled log's traced process, from its .expect.csv.
std::map<std::string, size_t>
expected_counts()
{
    std::string self;
    for(const auto& line : lines_of(read_file(logs_dir + "/" + workload + ".log")))
        if(line.rfind("#@ self ", 0) == 0) self = line.substr(8);
    std::map<std::string, size_t> counts;
    auto rows = lines_of(read_file(logs_dir + "/" + workload + ".expect.csv"));
    for(size_t i = 1; i < rows.size(); ++i)
    {
        auto first  = rows[i].find(',');
        auto second = rows[i].find(',', first + 1);
        if(rows[i].substr(first + 1, second - first - 1) == self)
            ++counts[rows[i].substr(0, first)];
    }
    return counts;
}

// Data rows of a CSV file of numbers and names (no quoted line breaks in these files).
size_t
csv_rows(const std::string& path)
{
    auto lines = lines_of(read_file(path));
    return lines.empty() ? 0 : lines.size() - 1;
}

bool
looks_complete_json(const std::string& text)
{
    auto first = text.find_first_not_of(" \t\r\n");
    auto last  = text.find_last_not_of(" \t\r\n");
    return first != std::string::npos && text[first] == '{' && text[last] == '}';
}
} // namespace

TEST(RealTool, EmulateWithoutProgramWritesEveryChosenFile)
{
    scratch dir;
    auto    out = dir.file("out");
    auto    r   = run({command, "--emulate", logs_dir + "/" + workload + ".log", "-d", out,
                       "--output-format", "csv,json,perfetto,summary,chrome-trace,sqlite"},
                      real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    auto files = names_in(out);
    for(const char* name :
        {"summary.txt", "summary.json", "page_fault.csv", "page_migrate.csv", "queue_suspend.csv",
         "unmap_from_gpu.csv", "results.json", "trace.pftrace", "trace.chrome.json", "kfd.db"})
    {
        EXPECT_NE(std::find(files.begin(), files.end(), name), files.end()) << name;
        EXPECT_NE(r.err.find("rocprof-kfd: wrote " + out + "/" + name), std::string::npos)
            << name << "\n"
            << r.err;
    }
    auto counts = expected_counts();
    EXPECT_EQ(csv_rows(out + "/page_fault.csv"), counts["PAGE_FAULT"]);
    EXPECT_EQ(csv_rows(out + "/page_migrate.csv"), counts["PAGE_MIGRATE"]);
    EXPECT_EQ(csv_rows(out + "/queue_suspend.csv"), counts["QUEUE_SUSPEND"]);
    EXPECT_EQ(csv_rows(out + "/unmap_from_gpu.csv"), counts["UNMAP_FROM_GPU"]);
    EXPECT_TRUE(looks_complete_json(read_file(out + "/summary.json")));
    EXPECT_TRUE(looks_complete_json(read_file(out + "/results.json")));
}

TEST(RealTool, DefaultFormatsAndFileStem)
{
    scratch dir;
    auto    out = dir.file("out");
    auto    r = run({command, "--no-summary", "--emulate", logs_dir + "/" + workload + ".log", "-d",
                     out, "-o", "run"},
                    real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    auto files = names_in(out);
    for(const char* name :
        {"run_summary.txt", "run_summary.json", "run_page_fault.csv", "run_trace.pftrace"})
        EXPECT_NE(std::find(files.begin(), files.end(), name), files.end()) << name;
    for(const char* name : {"run_results.json", "run_kfd.db", "run_trace.chrome.json"})
        EXPECT_EQ(std::find(files.begin(), files.end(), name), files.end()) << name;
}

TEST(RealTool, DirectoryPlaceholdersExpandPerProcess)
{
    scratch dir;
    char    host[256] = {};
    gethostname(host, sizeof(host) - 1);
    auto r = run({command, "--emulate", logs_dir + "/" + workload + ".log", "-d",
                  dir.file("out") + "/%hostname%/%pid%", "--", program, "exit", "0"},
                 real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    auto pids = names_in(dir.file("out") + "/" + host);
    ASSERT_EQ(pids.size(), 1u);
    EXPECT_EQ(pids[0].find_first_not_of("0123456789"), std::string::npos) << pids[0];

    // A rank of a Slurm job, and a variable of the job's environment.
    auto env = real_env(dir);
    env.push_back("SLURM_PROCID=3");
    env.push_back("JOB_TAG=nightly");
    auto ranked = run({command, "--no-summary", "--emulate", logs_dir + "/" + workload + ".log",
                       "-d", dir.file("ranks") + "/%hostname%-%rank%-%env{JOB_TAG}%"},
                      env);
    ASSERT_EQ(ranked.status, 0) << ranked.err;
    EXPECT_EQ(names_in(dir.file("ranks")),
              (std::vector<std::string>{std::string{host} + "-3-nightly"}));
}

TEST(RealTool, RawCaptureReplaysIntoTheSameRecords)
{
    scratch dir;
    auto    raw   = dir.file("raw.log");
    auto    first = run({command, "--no-summary", "--emulate", logs_dir + "/" + workload + ".log",
                         "-d", dir.file("a"), "--raw", raw, "--output-format", "csv"},
                        real_env(dir));
    ASSERT_EQ(first.status, 0) << first.err;
    // The capture is a log in its own right: replayed with no program, the same records.
    auto again = run(
        {command, "--no-summary", "--emulate", raw, "-d", dir.file("b"), "--output-format", "csv"},
        real_env(dir));
    ASSERT_EQ(again.status, 0) << again.err;
    auto counts = expected_counts();
    for(const auto& op : {std::pair<const char*, const char*>{"page_fault.csv", "PAGE_FAULT"},
                          {"page_migrate.csv", "PAGE_MIGRATE"},
                          {"queue_suspend.csv", "QUEUE_SUSPEND"},
                          {"unmap_from_gpu.csv", "UNMAP_FROM_GPU"}})
    {
        EXPECT_EQ(csv_rows(dir.file("a") + "/" + op.first), counts[op.second]) << op.first;
        EXPECT_EQ(csv_rows(dir.file("b") + "/" + op.first), counts[op.second]) << op.first;
    }
}

TEST(RealTool, UserToolAlongsideReceivesEveryRecord)
{
    scratch dir;
    auto    env = real_env(dir);
    env.push_back("ROCP_TOOL_LIBRARIES=" + user_tool);
    env.push_back("CLI_TEST_USER_OUT=" + dir.file("user.txt"));
    auto r = run({command, "--no-summary", "--emulate", logs_dir + "/" + workload + ".log", "-d",
                  dir.file("out")},
                 env);
    ASSERT_EQ(r.status, 0) << r.err;
    std::map<std::string, size_t> seen;
    for(const auto& line : lines_of(read_file(dir.file("user.txt"))))
        ++seen[line.substr(0, line.find(','))];
    auto counts = expected_counts();
    for(const char* op : {"PAGE_FAULT", "PAGE_MIGRATE", "QUEUE_SUSPEND", "UNMAP_FROM_GPU"})
        EXPECT_EQ(seen[op], counts[op]) << op;
    EXPECT_EQ(seen["FINALIZED"], 1u);
    EXPECT_EQ(seen["DROPS"], 0u);
}

#ifdef HAVE_REPORT
TEST(RealTool, HtmlFormatWritesTheReport)
{
    scratch dir;
    auto    out = dir.file("out");
    auto    r = run({command, "--no-summary", "--emulate", logs_dir + "/" + workload + ".log", "-d",
                     out, "--output-format", "summary,html"},
                    real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("rocprof-kfd: wrote " + out + "/report.html"), std::string::npos) << r.err;
    EXPECT_NE(read_file(out + "/report.html").find("<html"), std::string::npos);
}

TEST(RealTool, HtmlFormatWritesTheReportBesideAStemmedSummary)
{
    // -o STEM: the summary is STEM_summary.json, the report STEM_report.html (it was not
    // written at all, without a word).
    scratch dir;
    auto    out = dir.file("out");
    auto    r = run({command, "--no-summary", "--emulate", logs_dir + "/" + workload + ".log", "-d",
                     out, "-o", "run1", "--output-format", "summary,html"},
                    real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("rocprof-kfd: wrote " + out + "/run1_report.html"), std::string::npos)
        << r.err;
    EXPECT_NE(read_file(out + "/run1_report.html").find("<html"), std::string::npos);
}
#endif

#ifdef HAVE_MERGE
TEST(RealTool, RanksOnTwoHostsMergeIntoOneTraceAndSummary)
{
    scratch                  dir;
    std::vector<std::string> folders;
    for(const auto& rank :
        {std::pair<const char*, const char*>{"hostA", "0"}, {"hostA", "1"}, {"hostB", "2"}})
    {
        auto env = real_env(dir);
        env.push_back(std::string{"FAKE_HOST="} + rank.first);
        env.push_back(std::string{"SLURM_PROCID="} + rank.second);
        auto r = run({command, "--no-summary", "--emulate", logs_dir + "/" + workload + ".log",
                      "-d", dir.file("out") + "/%env{FAKE_HOST}%-%rank%", "--output-format",
                      "summary,sqlite,json"},
                     env);
        ASSERT_EQ(r.status, 0) << r.err;
        folders.push_back(dir.file("out") + "/" + rank.first + "-" + rank.second);
    }
    std::vector<std::string> merge = {command, "merge", "-q", "-o", dir.file("merged")};
    merge.insert(merge.end(), folders.begin(), folders.end());
    auto m = run(merge, real_env(dir));
    ASSERT_EQ(m.status, 0) << m.err;
    auto files = names_in(dir.file("merged"));
    for(const char* name : {"trace.pftrace", "summary.json"})
        EXPECT_NE(std::find(files.begin(), files.end(), name), files.end()) << name;
    EXPECT_TRUE(looks_complete_json(read_file(dir.file("merged") + "/summary.json")));
}

// CSV files carry no metadata: a rerun with --output-format summary leaves the earlier run's
// CSV beside its summary.json, and a merge read those records under the rerun's name. CSV
// files written before the summary's run started are now an earlier run's. (The earlier
// CSV's time is set an hour back: the rule allows a second for the clocks.)
TEST(RealTool, MergeDoesNotTakeAnEarlierRunsCsvFiles)
{
    scratch    dir;
    const auto out      = dir.file("out");
    const auto run_with = [&](const char* formats)
    {
        return run({command, "--no-summary", "--output-format", formats, "--emulate",
                    logs_dir + "/" + workload + ".log", "-d", out},
                   real_env(dir));
    };
    ASSERT_EQ(run_with("summary,csv").status, 0);
    const std::string csv            = out + "/page_fault.csv";
    const timeval     an_hour_ago[2] = {{time(nullptr) - 3600, 0}, {time(nullptr) - 3600, 0}};
    ASSERT_EQ(utimes(csv.c_str(), an_hour_ago), 0);
    ASSERT_EQ(run_with("summary").status, 0);
    ASSERT_TRUE(std::ifstream(csv).good());

    auto m = run({command, "merge", "-o", dir.file("merged"), out}, real_env(dir));
    EXPECT_NE(m.err.find(out + ": its record files are another run's than its summary.json (" +
                         csv + ")"),
              std::string::npos)
        << m.err;
    EXPECT_EQ(m.status, 1); // an input that could not be read
    // Nothing of the earlier run's records is merged: no input in the merged summary.
    EXPECT_EQ(read_file(dir.file("merged/summary.json")).find("\"stem\":"), std::string::npos);
}

// A merge whose output folder lies inside the folder it merges, run again, finds its own
// earlier output among the inputs: that holds no records of its own and is skipped with a
// line saying so (it failed as an input with "no kfd.db, results.json or CSV files").
TEST(RealTool, MergeRunAgainSkipsItsOwnEarlierOutput)
{
    scratch    dir;
    const auto out = dir.file("out");
    for(const char* rank : {"a", "b"})
        ASSERT_EQ(run({command, "--no-summary", "--output-format", "summary,json", "--emulate",
                       logs_dir + "/" + workload + ".log", "-d", out + "/" + rank},
                      real_env(dir))
                      .status,
                  0);
    const std::vector<std::string> merge = {command, "merge", "-o", out + "/merged", out};
    ASSERT_EQ(run(merge, real_env(dir)).status, 0);
    auto again = run(merge, real_env(dir));
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_NE(again.err.find(out + "/merged/summary.json: skipped: the output of a merge"),
              std::string::npos)
        << again.err;
    EXPECT_EQ(again.err.find("no kfd.db"), std::string::npos) << again.err;
    const std::string merged = read_file(out + "/merged/summary.json");
    EXPECT_NE(merged.find("\"directory\":\"" + out + "/a\""), std::string::npos);
    EXPECT_NE(merged.find("\"directory\":\"" + out + "/b\""), std::string::npos);
    EXPECT_EQ(merged.find("\"directory\":\"" + out + "/merged\""), std::string::npos);
}

// Runs the program in `mode` (an exit that runs no exit handler) with status `status`: the
// command says so, repairs the outputs the tool left as placeholders, and keeps the status.
void
expect_repaired_after(const char* mode, int status)
{
    scratch dir;
    auto    out = dir.file("out");
    auto    r   = run({command, "--output-format", "summary,json", "--emulate",
                       logs_dir + "/" + workload + ".log", "-d", out, "--", program, mode,
                       std::to_string(status)},
                      real_env(dir));
    EXPECT_EQ(r.status, status) << r.err;
    EXPECT_NE(r.err.find("rocprof-kfd: " + out +
                         ": the program exited without running its exit handlers (_exit or "
                         "quick_exit)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("rocprof-kfd-merge: repaired " + out + "/summary.json"), std::string::npos)
        << r.err;
    EXPECT_TRUE(looks_complete_json(read_file(out + "/summary.json")));
    EXPECT_TRUE(looks_complete_json(read_file(out + "/results.json")));
}

// A program that ends with _exit (as dash's `exit` does) never finalizes its tool: the
// command says so and closes its outputs, which were left as placeholders without a word.
TEST(RealTool, ProgramEndingWithUnderscoreExitIsRepairedAndSaysWhy)
{
    expect_repaired_after("_exit", 3);
}

// quick_exit() runs no atexit handler. It is the exit a signal handler may call, where the SDK's
// finalization could hang on a lock the interrupted code held: the SDK does not finalize there,
// and the command treats it as an _exit (its outputs repaired, and it says so).
TEST(RealTool, ProgramEndingWithQuickExitIsRepairedAsAfterUnderscoreExit)
{
    expect_repaired_after("quick_exit", 4);
}

// A program and its child given one folder (no %pid% in -d): neither overwrites the other's
// files (they were the same files: one process's results replaced the other's, or JSON
// written by both at once was invalid).
TEST(RealTool, TwoProcessesInOneFolderKeepTheirOwnFiles)
{
    scratch dir;
    auto    out = dir.file("out");
    auto    r   = run({command, "--no-summary", "--output-format", "summary,json", "--emulate",
                       logs_dir + "/" + workload + ".log", "-d", out, "--", program, "child",
                       dir.file("child-env.txt")},
                      real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> summaries, results;
    for(const auto& name : names_in(out))
    {
        if(name.size() >= 12 && name.compare(name.size() - 12, 12, "summary.json") == 0)
            summaries.push_back(name);
        if(name.size() >= 12 && name.compare(name.size() - 12, 12, "results.json") == 0)
            results.push_back(name);
    }
    EXPECT_EQ(summaries.size(), 2u) << r.err;
    EXPECT_EQ(results.size(), 2u) << r.err;
    for(const auto& name : summaries)
        EXPECT_TRUE(looks_complete_json(read_file(out + "/" + name))) << name;
    for(const auto& name : results)
        EXPECT_TRUE(looks_complete_json(read_file(out + "/" + name))) << name;
    EXPECT_NE(r.err.find("writes its files in " + out + " too"), std::string::npos) << r.err;
}

// The <pid>_ files a program's child wrote into a shared folder stay there when the program
// runs again into that folder (the rerun replaces the plain files only). A merge of the folder
// took them too, adding the earlier run's records to the rerun's, and a report of the folder
// showed them as a process of the rerun; both skip them now, and say so.
TEST(RealTool, MergeAndReportOfARerunsFolderSkipTheEarlierRunsLeftovers)
{
    scratch    dir;
    const auto out   = dir.file("out");
    const auto twice = [&]
    {
        return run({command, "--no-summary", "--output-format", "summary,json", "--emulate",
                    logs_dir + "/" + workload + ".log", "-d", out, "--", program, "child",
                    dir.file("child-env.txt")},
                   real_env(dir));
    };
    auto pid_stems = [&]
    {
        std::vector<std::string> stems;
        for(const auto& name : names_in(out))
            if(name.size() > 13 && name.compare(name.size() - 13, 13, "_summary.json") == 0)
                stems.push_back(name.substr(0, name.size() - 13));
        return stems;
    };
    ASSERT_EQ(twice().status, 0);
    const auto first = pid_stems();
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(twice().status, 0);
    auto       second  = pid_stems();
    const auto earlier = std::find(second.begin(), second.end(), first[0]);
    ASSERT_NE(earlier, second.end()); // the earlier run's files stay
    second.erase(earlier);
    ASSERT_EQ(second.size(), 1u);

    auto m = run({command, "merge", "-o", dir.file("merged"), out}, real_env(dir));
    ASSERT_EQ(m.status, 0) << m.err;
    EXPECT_NE(m.err.find("rocprof-kfd-merge: " + out + ": skipped the " + first[0] +
                         "_* files of pid " + first[0] + ": an earlier run"),
              std::string::npos)
        << m.err;
    const std::string merged = read_file(dir.file("merged/summary.json"));
    EXPECT_EQ(merged.find("\"pid\":" + first[0] + ","), std::string::npos) << merged.substr(0, 900);
    EXPECT_NE(merged.find("\"stem\":\"" + second[0] + "\""), std::string::npos)
        << merged.substr(0, 900);
    EXPECT_NE(merged.find("\"stem\":\"\""), std::string::npos) << merged.substr(0, 900);

    auto r = run({command, "report", "-o", dir.file("report.html"), out}, real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("rocprof-kfd-report: " + out + "/" + first[0] +
                         "_summary.json: skipped: an earlier run"),
              std::string::npos)
        << r.err;
    const std::string report = read_file(dir.file("report.html"));
    // "pid N" and not the start of a longer pid
    const auto shows_pid = [&](const std::string& pid)
    {
        for(size_t at = report.find("pid " + pid); at != std::string::npos;
            at        = report.find("pid " + pid, at + 1))
            if(!std::isdigit(static_cast<unsigned char>(report[at + 4 + pid.size()]))) return true;
        return false;
    };
    EXPECT_FALSE(shows_pid(first[0]));
    EXPECT_TRUE(shows_pid(second[0]));
}

// Runs at once into one folder (`mpirun -np 8 rocprof-kfd -d out`: a run per rank) are all
// current: the merge takes every one. It skipped the `<pid>_` files of any that started before
// the run that got the plain names, as if an earlier run had left them.
TEST(RealTool, MergeOfRunsAtOnceIntoOneFolderTakesThemAll)
{
    scratch    dir;
    const auto out   = dir.file("out");
    const auto ready = dir.file("ready");
    ASSERT_EQ(mkdir(ready.c_str(), 0755), 0);
    const int runs = 6;
    // Each program waits for all: the runs overlap (a run that had ended before another
    // started would be an earlier run to it, whose plain files the later one replaces).
    const std::string once = command + " --no-summary --output-format summary,json --emulate " +
                             logs_dir + "/" + workload + ".log -d " + out + " -- " + program +
                             " barrier " + ready + " " + std::to_string(runs);
    std::string script;
    for(int i = 0; i < runs; ++i)
        script += once + " & ";
    auto r = run({"/bin/sh", "-c", script + "wait"}, real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    auto m = run({command, "merge", "-o", dir.file("merged"), out}, real_env(dir));
    ASSERT_EQ(m.status, 0) << m.err;
    EXPECT_EQ(m.err.find("an earlier run"), std::string::npos) << m.err;
    const std::string merged = read_file(dir.file("merged/summary.json"));
    size_t            stems  = 0;
    for(size_t at = merged.find("\"stem\":"); at != std::string::npos;
        at        = merged.find("\"stem\":", at + 1))
        ++stems;
    EXPECT_EQ(stems, static_cast<size_t>(runs)) << merged.substr(0, 900);
}

// A folder reused with other --output-format values keeps the earlier run's kfd.db beside the
// rerun's summary.json and results.json. A merge read its records (kfd.db first), an earlier
// run's, under the rerun's name; it takes the record file of summary.json's run now.
TEST(RealTool, MergeReadsTheRecordFileOfTheSummarysRunNotAStaleOne)
{
    scratch    dir;
    const auto out      = dir.file("out");
    const auto run_with = [&](const char* formats)
    {
        return run({command, "--no-summary", "--output-format", formats, "--emulate",
                    logs_dir + "/" + workload + ".log", "-d", out, "--", program, "exit", "0"},
                   real_env(dir));
    };
    ASSERT_EQ(run_with("summary,sqlite").status, 0);
    const auto pid_in = [](const std::string& json)
    {
        const auto at = json.find("\"pid\":");
        return at == std::string::npos ? std::string{}
                                       : json.substr(at + 6, json.find(',', at) - at - 6);
    };
    const std::string first = pid_in(read_file(out + "/summary.json"));
    ASSERT_EQ(run_with("summary,json").status, 0);
    const std::string second = pid_in(read_file(out + "/summary.json"));
    ASSERT_NE(first, second);
    ASSERT_TRUE(std::ifstream(out + "/kfd.db").good()); // the earlier run's, still there

    auto m = run({command, "merge", "-o", dir.file("merged"), out}, real_env(dir));
    ASSERT_EQ(m.status, 0) << m.err;
    const std::string merged = read_file(dir.file("merged/summary.json"));
    EXPECT_NE(merged.find("\"pid\":" + second + ","), std::string::npos) << merged.substr(0, 900);
    EXPECT_EQ(merged.find("\"pid\":" + first + ","), std::string::npos) << merged.substr(0, 900);
}

// A normal exit needs no repair, and says nothing of one.
// Two processes of one run given one --raw file: each writes its own (once both wrote the one
// file, interleaving their lines into a log that replayed wrongly), and each replays into the
// records of the log both replayed.
TEST(RealTool, TwoProcessesGivenOneRawFileWriteOneEach)
{
    scratch dir;
    auto    raw = dir.file("raw.log");
    auto    r   = run({command, "--no-summary", "--output-format", "csv", "--emulate",
                       logs_dir + "/" + workload + ".log", "-d", dir.file("out/%pid%"), "--raw", raw,
                       "--", program, "child", dir.file("child-env.txt")},
                      real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> raws;
    for(const auto& name : names_in(dir.path()))
        if(name.size() >= 7 && name.compare(name.size() - 7, 7, "raw.log") == 0)
            raws.push_back(name);
    ASSERT_EQ(raws.size(), 2u) << r.err;
    EXPECT_NE(r.err.find("writes " + raw + " too"), std::string::npos) << r.err;
    const auto counts = expected_counts();
    for(const auto& name : raws)
    {
        const auto replayed = dir.file("replayed-" + name);
        auto again = run({command, "--no-summary", "--emulate", dir.file(name), "-d", replayed,
                          "--output-format", "csv"},
                         real_env(dir));
        ASSERT_EQ(again.status, 0) << again.err;
        EXPECT_EQ(again.err.find("warning"), std::string::npos) << name << ": " << again.err;
        EXPECT_EQ(csv_rows(replayed + "/page_fault.csv"), counts.at("PAGE_FAULT")) << name;
        EXPECT_EQ(csv_rows(replayed + "/page_migrate.csv"), counts.at("PAGE_MIGRATE")) << name;
    }
}

// rocprof-kfd reports (and repairs) the folders the tools listed, not those a glob of the
// template finds by modification time. That once missed a rerun into an existing folder (its
// mtime did not change), a %env{}% value with a '/' (the tool writes '_'), and a relative -d
// of a program that changed directory; and it took folders the program itself made for
// outputs ("no report.html for src").
TEST(RealTool, HtmlReportsAreWrittenForTheFoldersTheToolsWrote)
{
    scratch    dir;
    const auto log = logs_dir + "/" + workload + ".log";
    auto       env = real_env(dir);
    env.push_back("JOBNAME=a/b");
    // %env{}% with a '/' in the value, twice into the same folder.
    for(int i = 0; i < 2; ++i)
    {
        std::remove(dir.file("out/a_b/report.html").c_str());
        auto r = run({command, "--output-format", "summary,html", "--no-summary", "--emulate", log,
                      "-d", dir.file("out/%env{JOBNAME}%")},
                     env);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_TRUE(exists(dir.file("out/a_b/report.html"))) << "run " << i << ": " << r.err;
        EXPECT_EQ(r.err.find("no report.html"), std::string::npos) << r.err;
    }
    // A relative -d, and a program that changes directory and makes folders of its own.
    ASSERT_EQ(mkdir(dir.file("work").c_str(), 0755), 0);
    const std::string inner =
        "mkdir -p src && cd '" + dir.file("work") + "' && exec '" + program + "' exit 0";
    auto r = run({"/bin/sh", "-c",
                  "cd '" + dir.path() + "' && exec '" + command +
                      "' --output-format summary,html --no-summary --emulate '" + log +
                      "' -d rel -- /bin/sh -c \"" + inner + "\""},
                 env);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("no report.html"), std::string::npos) << r.err;
    // The shell's outputs (in rel/) and the program's (in work/rel/, its working folder then).
    EXPECT_TRUE(exists(dir.file("rel/report.html"))) << r.err;
    EXPECT_TRUE(exists(dir.file("work/rel/report.html"))) << r.err;
}

// A program that closed stderr and opened its own file in its place (fd 2): the tool's
// summary and "wrote" lines at exit once went into that file.
TEST(RealTool, ToolWritesNothingIntoAFileThatTookTheProgramsStderr)
{
    scratch dir;
    auto    data = dir.file("data.txt");
    auto r = run({command, "--emulate", logs_dir + "/" + workload + ".log", "-d", dir.file("out"),
                  "--", program, "reopen-stderr", data},
                 real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(data), "data\n");
    EXPECT_TRUE(exists(dir.file("out/summary.json"))); // the outputs were written all the same
}

// A replay's metadata names the log as given, spaces and all (it was split into words).
TEST(RealTool, ReplayMetadataKeepsALogPathWithSpaces)
{
    scratch    dir;
    const auto log = dir.file("my log.log");
    write_file(log, read_file(logs_dir + "/" + workload + ".log"));
    auto r = run({command, "--no-summary", "--emulate", log, "-d", dir.file("out")}, real_env(dir));
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string summary = read_file(dir.file("out/summary.json"));
    EXPECT_NE(summary.find("\"command\":[\"rocprof-kfd\",\"--emulate\",\"" + log + "\"]"),
              std::string::npos)
        << summary.substr(0, 400);
}

TEST(RealTool, ProgramEndingNormallyIsNotRepaired)
{
    scratch dir;
    auto    out = dir.file("out");
    auto    r = run({command, "--no-summary", "--emulate", logs_dir + "/" + workload + ".log", "-d",
                     out, "--", program, "exit", "0"},
                    real_env(dir));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("exit handlers"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("repaired"), std::string::npos) << r.err;
}

// The command repairs what the killed program left.
TEST(RealTool, ProgramKilledBySigtermLeavesCompleteDocuments)
{
    scratch dir;
    auto    out = dir.file("out");
    auto    r   = start({command, "--output-format", "summary,json,chrome-trace", "--emulate",
                         logs_dir + "/" + workload + ".log", "-d", out, "--", program, "wait", "3"},
                        real_env(dir), dir);
    ASSERT_EQ(read_gate_line(r), "ready");
    ASSERT_EQ(kill(r.pid, SIGTERM), 0);
    auto done = finish(r);
    EXPECT_EQ(done.status, 143) << done.err;
    for(const auto& name : names_in(out))
    {
        if(name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
        {
            EXPECT_TRUE(looks_complete_json(read_file(out + "/" + name))) << name;
        }
    }
}

TEST(RealTool, ProgramKilledBySignalKeepsTheRecordsItsToolReceived)
{
    // The records of the replayed log reach the SDK at once, far fewer than the tool's buffer
    // delivers at (3 MiB): once they sat there until exit, and a program killed by a signal
    // lost every one. The tool's flusher writes them within about a second: the gate waits
    // (up to a minute) for the CSV files to hold every record, then the program is killed.
    scratch dir;
    auto    out = dir.file("out");
    auto    r   = start({command, "--output-format", "summary,csv", "--emulate",
                         logs_dir + "/" + workload + ".log", "-d", out, "--", program, "wait", "3"},
                        real_env(dir), dir);
    ASSERT_EQ(read_gate_line(r), "ready");
    const auto expected = expected_counts();
    const auto rows_now = [&]
    {
        std::map<std::string, size_t> counts;
        for(const auto& [op, file] :
            std::map<std::string, std::string>{{"PAGE_FAULT", "page_fault.csv"},
                                               {"PAGE_MIGRATE", "page_migrate.csv"},
                                               {"QUEUE_SUSPEND", "queue_suspend.csv"},
                                               {"UNMAP_FROM_GPU", "unmap_from_gpu.csv"}})
            if(size_t n = csv_rows(out + "/" + file)) counts[op] = n;
        return counts;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while(rows_now() != expected && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(kill(r.pid, SIGTERM), 0);
    auto done = finish(r);
    EXPECT_EQ(done.status, 143) << done.err;
    EXPECT_EQ(rows_now(), expected);
    EXPECT_NE(done.err.find("rocprof-kfd: the program was killed by signal 15"), std::string::npos)
        << done.err;
}
#endif
