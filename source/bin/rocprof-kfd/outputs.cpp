// MIT License - see LICENSE.
#include "outputs.hpp"

#include "launcher.hpp"
#include "locate.hpp"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace rocprof_kfd
{
namespace
{
// mkdir -p; returns 0 or the errno of the first failure.
int
make_directories(const std::string& path)
{
    std::string partial;
    size_t      start = 0;
    while(start <= path.size())
    {
        size_t slash = path.find('/', start);
        partial      = path.substr(0, slash);
        if(!partial.empty() && mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return errno;
        if(slash == std::string::npos) break;
        start = slash + 1;
    }
    struct stat st;
    if(stat(path.c_str(), &st) != 0) return errno;
    return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

bool
is_file(const std::string& path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
} // namespace

std::string
this_hostname()
{
    char name[256] = {};
    if(gethostname(name, sizeof(name) - 1) != 0) return "";
    return name;
}

std::string
prepare_output_directory(const std::string& directory_template)
{
    std::string dir   = fixed_prefix(directory_template);
    int         error = make_directories(dir);
    if(error == 0 && access(dir.c_str(), W_OK | X_OK) != 0) error = errno;
    if(error == 0) return "";
    return "cannot write output directory '" + dir + "': " + strerror(error);
}

std::vector<std::string>
written_output_directories(const std::string& directory_template, const env_list& env,
                           std::time_t since)
{
    std::vector<std::string> out;
    std::string              pattern = output_glob(directory_template, this_hostname(), env);
    glob_t                   found{};
    if(glob(pattern.c_str(), GLOB_ONLYDIR | GLOB_NOSORT, nullptr, &found) == 0)
    {
        for(size_t i = 0; i < found.gl_pathc; ++i)
        {
            struct stat st;
            std::string dir = found.gl_pathv[i];
            while(dir.size() > 1 && dir.back() == '/') // GLOB_ONLYDIR may add one
                dir.pop_back();
            if(stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_mtime >= since)
                out.push_back(dir);
        }
    }
    globfree(&found);
    return out;
}

void
repair_outputs(const std::vector<std::string>& directories)
{
    std::string merge = find_subcommand("merge");
    if(merge.empty()) return;
    for(const auto& dir : directories)
        run_helper({merge, "--repair", dir});
}

namespace
{
// The summaries of one output folder: summary.json and STEM_summary.json.
std::vector<std::string>
summaries_in(const std::string& dir)
{
    std::vector<std::string> summaries;
    if(is_file(dir + "/summary.json")) summaries.push_back(dir + "/summary.json");
    glob_t found{};
    if(glob((dir + "/*_summary.json").c_str(), 0, nullptr, &found) == 0)
        for(size_t i = 0; i < found.gl_pathc; ++i)
            summaries.emplace_back(found.gl_pathv[i]);
    globfree(&found);
    return summaries;
}

// Whether the summary is the placeholder (`"complete":false`, in its first line) written by
// process `pid` (its metadata, on the second).
bool
is_unfinished_summary_of(const std::string& path, int pid)
{
    std::ifstream in(path);
    std::string   first, second;
    if(!std::getline(in, first) || !std::getline(in, second)) return false;
    if(first.find("\"complete\":false") == std::string::npos) return false;
    return second.find("\"pid\":" + std::to_string(pid) + ",") != std::string::npos;
}
} // namespace

std::vector<std::string>
unfinished_by(const std::vector<std::string>& directories, int pid)
{
    std::vector<std::string> unfinished;
    for(const auto& dir : directories)
        for(const auto& summary : summaries_in(dir))
            if(is_unfinished_summary_of(summary, pid))
            {
                unfinished.push_back(dir);
                break;
            }
    return unfinished;
}

bool
write_html_reports(const std::vector<std::string>& directories)
{
    std::string report = find_subcommand("report");
    if(report.empty())
    {
        fprintf(stderr, "rocprof-kfd: cannot write report.html: rocprof-kfd-report is not "
                        "installed next to rocprof-kfd\n");
        return false;
    }
    bool ok = true;
    for(const auto& dir : directories)
    {
        // summary.json, or STEM_summary.json (-o STEM): one report beside each.
        const auto summaries = summaries_in(dir);
        if(summaries.empty())
        {
            fprintf(stderr, "rocprof-kfd: no report.html for %s: it has no summary.json\n",
                    dir.c_str());
            ok = false;
        }
        for(const auto& summary : summaries)
        {
            // DIR/summary.json -> DIR/report.html; DIR/STEM_summary.json -> DIR/STEM_report.html
            std::string html =
                summary.substr(0, summary.size() - std::strlen("summary.json")) + "report.html";
            if(run_helper({report, "-o", html, summary}) == 0)
                fprintf(stderr, "rocprof-kfd: wrote %s\n", html.c_str());
            else
            {
                fprintf(stderr, "rocprof-kfd: rocprof-kfd-report failed for %s\n", summary.c_str());
                ok = false;
            }
        }
    }
    return ok;
}
} // namespace rocprof_kfd
