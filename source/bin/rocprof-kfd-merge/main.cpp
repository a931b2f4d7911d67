// MIT License - see LICENSE.
//
// rocprof-kfd-merge -o OUT DIR...   combine the outputs of several processes or ranks
// rocprof-kfd-merge --repair DIR... close the documents of a run that died of a signal
#include "merge.hpp"

#include <rocprof-kfd-output/record_source.hpp>
#include <rocprof-kfd-output/repair.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include <unistd.h>

namespace
{
const char* const usage =
    "usage: rocprof-kfd-merge [options] -o OUT DIR...\n"
    "       rocprof-kfd-merge --repair DIR...\n"
    "Combines the outputs of several processes or ranks (their kfd.db, results.json or CSV\n"
    "files; DIR may hold them or output directories below it) into OUT/trace.pftrace (one\n"
    "process group per rank and host), OUT/summary.json and OUT/summary.txt.\n"
    "With --repair, makes the documents of a run that was killed before it finished valid\n"
    "(see docs/rocprof-kfd-outputs.md) and rebuilds its summary from its records.\n"
    "\n"
    "  -o, --output DIR          output directory of the merge (created)\n"
    "  --repair                  repair the given directories instead of merging\n"
    "  --thrashing-threshold N   migrations back and forth that make a range thrashing (4)\n"
    "  -q, --quiet               no progress lines\n"
    "  -h, --help                this text\n";

int
bad_usage(const std::string& message)
{
    std::fprintf(stderr, "rocprof-kfd-merge: %s (see --help)\n", message.c_str());
    return 2;
}

int
run(int argc, char** argv)
{
    rocprof_kfd::merge_options options;
    bool                       repair = false;
    bool                       quiet  = false;
    for(int i = 1; i < argc; ++i)
    {
        std::string a = argv[i];
        if(a == "-h" || a == "--help")
        {
            std::fputs(usage, stdout);
            return 0;
        }
        if(a == "-o" || a == "--output")
        {
            if(i + 1 >= argc) return bad_usage(a + " needs a directory");
            options.output = argv[++i];
        }
        else if(a.rfind("--output=", 0) == 0)
            options.output = a.substr(9);
        else if(a == "--repair")
            repair = true;
        else if(a == "-q" || a == "--quiet")
            quiet = true;
        else if(a == "--thrashing-threshold")
        {
            if(i + 1 >= argc) return bad_usage(a + " needs a number");
            char*              end = nullptr;
            unsigned long long n   = std::strtoull(argv[++i], &end, 10);
            if(*end != '\0' || n < 1 || argv[i][0] == '-')
                return bad_usage(std::string("bad --thrashing-threshold '") + argv[i] + "'");
            options.thrashing_threshold = n;
        }
        else if(a == "--")
        {
            for(++i; i < argc; ++i)
                options.inputs.push_back(argv[i]);
        }
        else if(!a.empty() && a[0] == '-')
            return bad_usage("unknown option '" + a + "'");
        else
            options.inputs.push_back(a);
    }
    if(options.inputs.empty()) return bad_usage("no input directory");
    if(repair)
    {
        int status = 0;
        for(const auto& root : options.inputs)
        {
            auto dirs = rocprof_kfd::find_output_dirs(root);
            if(dirs.empty())
            {
                std::fprintf(stderr, "rocprof-kfd-merge: %s: no rocprof-kfd output found\n",
                             root.c_str());
                status = 1;
            }
            for(const auto& dir : dirs)
            {
                auto report = rocprof_kfd::repair_directory(dir, options.thrashing_threshold);
                for(const auto& line : report.repaired)
                    std::fprintf(stderr, "rocprof-kfd-merge: repaired %s\n", line.c_str());
                for(const auto& line : report.errors)
                    std::fprintf(stderr, "rocprof-kfd-merge: cannot repair %s\n", line.c_str());
                if(!report.errors.empty()) status = 1;
            }
        }
        return status;
    }
    if(options.output.empty()) return bad_usage("no output directory (-o OUT)");
    options.progress = !quiet && isatty(STDERR_FILENO);
    return rocprof_kfd::merge_outputs(options);
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
        std::fprintf(stderr, "rocprof-kfd-merge: %s\n", e.what());
        return 1;
    }
}
