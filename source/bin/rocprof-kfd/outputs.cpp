// MIT License - see LICENSE.
#include "outputs.hpp"

#include "launcher.hpp"
#include "locate.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

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

std::string
create_run_list()
{
    const char* tmp = std::getenv("TMPDIR");
    std::string path =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/rocprof-kfd-run.XXXXXX";
    int fd = mkostemp(path.data(), O_CLOEXEC);
    if(fd < 0) return "";
    close(fd);
    return path;
}

std::vector<run_output>
read_run_list(const std::string& path)
{
    std::vector<run_output> outputs;
    if(path.empty()) return outputs;
    std::ifstream in(path);
    std::string   line;
    while(std::getline(in, line))
    {
        size_t first = line.find('\t'), second = line.find('\t', first + 1);
        if(first == std::string::npos || second == std::string::npos) continue;
        run_output o;
        o.pid       = std::atoi(line.substr(0, first).c_str());
        o.stem      = line.substr(first + 1, second - first - 1);
        o.directory = line.substr(second + 1);
        if(o.pid > 0 && !o.directory.empty()) outputs.push_back(o);
    }
    unlink(path.c_str());
    return outputs;
}

namespace
{
// DIR/summary.json, or DIR/STEM_summary.json.
std::string
summary_of(const run_output& o)
{
    return o.directory + "/" + (o.stem.empty() ? "" : o.stem + "_") + "summary.json";
}

bool
is_alive(int pid)
{
    return kill(pid, 0) == 0 || errno == EPERM;
}
} // namespace

void
repair_outputs(const std::vector<run_output>& outputs)
{
    std::string merge = find_subcommand("merge");
    if(merge.empty()) return;
    // Per folder (--repair repairs each process's outputs in it), once: not while a process
    // of this run still writes there (a child the program left running).
    std::map<std::string, int> folders; // folder -> a live writer, or 0
    for(const auto& o : outputs)
    {
        int& live = folders[o.directory];
        if(live == 0 && is_alive(o.pid)) live = o.pid;
    }
    for(const auto& [dir, live] : folders)
    {
        if(live != 0)
            fprintf(stderr,
                    "rocprof-kfd: %s: not repaired: process %d of this run still writes there "
                    "(rocprof-kfd-merge --repair %s once it ended)\n",
                    dir.c_str(), live, dir.c_str());
        else
            run_helper({merge, "--repair", dir});
    }
}

namespace
{
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

std::vector<run_output>
unfinished_by(const std::vector<run_output>& outputs, int pid)
{
    std::vector<run_output> unfinished;
    for(const auto& o : outputs)
        if(o.pid == pid && is_unfinished_summary_of(summary_of(o), pid)) unfinished.push_back(o);
    return unfinished;
}

bool
write_html_reports(const std::vector<run_output>& outputs)
{
    std::string report = find_subcommand("report");
    if(report.empty())
    {
        fprintf(stderr, "rocprof-kfd: cannot write report.html: rocprof-kfd-report is not "
                        "installed next to rocprof-kfd\n");
        return false;
    }
    bool ok = true;
    for(const auto& o : outputs)
    {
        // DIR/summary.json -> DIR/report.html; DIR/STEM_summary.json -> DIR/STEM_report.html
        const std::string summary = summary_of(o);
        if(!is_file(summary))
        {
            fprintf(stderr, "rocprof-kfd: no report.html for %s: it has no summary.json\n",
                    summary.c_str());
            ok = false;
            continue;
        }
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
    return ok;
}
} // namespace rocprof_kfd
