// MIT License - see LICENSE.
// rocprof-kfd-report [-o report.html] DIR|FILE...: the thin shell around the pure report
// builder. Exit status: 0 written, 1 the report could not be written, 2 bad usage or input.
#include "inputs.hpp"
#include "page.hpp"
#include "summary.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace
{
using namespace rocprof_kfd_report;

constexpr const char* kUsage =
    "usage: rocprof-kfd-report [-o FILE] DIR|FILE...\n"
    "Writes one self-contained HTML report (default ./report.html) from summary.json files\n"
    "written by rocprof-kfd: a DIR gives every summary.json (and STEM_summary.json, from\n"
    "rocprof-kfd -o STEM) under it; several give a per-rank comparison.\n"
    "  -o, --output FILE   where to write the report\n"
    "  -h, --help          this text\n"
    "      --version       the version\n";

int
usage_error(const std::string& message)
{
    std::fprintf(stderr, "rocprof-kfd-report: %s (see --help)\n", message.c_str());
    return 2;
}

int
run(int argc, char** argv)
{
    std::string              output = "report.html";
    std::vector<std::string> args;
    bool                     options_done = false;
    for(int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if(options_done || a.empty() || a[0] != '-' || a == "-")
            args.push_back(a);
        else if(a == "--")
            options_done = true;
        else if(a == "-h" || a == "--help")
        {
            std::fputs(kUsage, stdout);
            return 0;
        }
        else if(a == "--version")
        {
            std::printf("rocprof-kfd-report %s\n", ROCPROF_KFD_REPORT_VERSION);
            return 0;
        }
        else if(a == "-o" || a == "--output")
        {
            if(i + 1 >= argc || argv[i + 1][0] == '\0')
                return usage_error(a + " needs a file name");
            output = argv[++i];
        }
        else if(a.rfind("--output=", 0) == 0 && a.size() > 9)
            output = a.substr(9);
        else
            return usage_error("unknown option " + a);
    }
    if(args.empty()) return usage_error("no input: give a directory or summary.json files");

    std::vector<std::string> paths;
    std::string              error;
    if(!find_summaries(args, paths, error))
    {
        std::fprintf(stderr, "rocprof-kfd-report: %s\n", error.c_str());
        return 2;
    }
    std::vector<Input> inputs;
    for(const std::string& path : paths)
    {
        std::string text;
        if(!read_file(path, text, error))
        {
            std::fprintf(stderr, "rocprof-kfd-report: %s\n", error.c_str());
            return 2;
        }
        try
        {
            inputs.push_back({path, parse_summary(text)});
        }
        catch(const InputError& e)
        {
            std::fprintf(stderr, "rocprof-kfd-report: %s: %s\n", path.c_str(), e.what());
            return 2;
        }
    }
    std::vector<std::string> skipped;
    skip_earlier_runs(inputs, skipped);
    for(const std::string& line : skipped)
        std::fprintf(stderr, "rocprof-kfd-report: %s\n", line.c_str());
    if(!write_file_atomically(output, render_report(inputs), error))
    {
        std::fprintf(stderr, "rocprof-kfd-report: cannot write the report: %s\n", error.c_str());
        return 1;
    }
    std::fprintf(stderr, "rocprof-kfd-report: wrote %s\n", output.c_str());
    return 0;
}
} // namespace

int
main(int argc, char** argv)
{
    try
    {
        return run(argc, argv);
    }
    catch(const std::exception& e)
    {
        std::fprintf(stderr, "rocprof-kfd-report: %s\n", e.what());
        return 1;
    }
}
