// MIT License - see LICENSE.
#include "inputs.hpp"

#include <rocprof-kfd-output/earlier_run.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace rocprof_kfd_report
{
namespace fs = std::filesystem;

// summary.json, or STEM_summary.json when rocprof-kfd ran with -o STEM.
static bool
is_summary_name(const std::string& name)
{
    static const std::string suffix = "_summary.json";
    return name == "summary.json" ||
           (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0);
}

bool
find_summaries(const std::vector<std::string>& args, std::vector<std::string>& paths,
               std::string& error)
{
    for(const std::string& arg : args)
    {
        std::error_code ec;
        const auto      status = fs::status(arg, ec);
        if(ec || !fs::exists(status))
        {
            error = arg + ": no such file or directory";
            return false;
        }
        if(!fs::is_directory(status))
        {
            paths.push_back(arg);
            continue;
        }
        std::vector<std::string>         found;
        fs::recursive_directory_iterator it(arg, fs::directory_options::skip_permission_denied, ec);
        for(; !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
            if(is_summary_name(it->path().filename().string()) && it->is_regular_file(ec))
                found.push_back(it->path().string());
        if(ec)
        {
            error = arg + ": " + ec.message();
            return false;
        }
        if(found.empty())
        {
            error = arg + ": no summary.json (or STEM_summary.json) in this directory or below it";
            return false;
        }
        std::sort(found.begin(), found.end());
        paths.insert(paths.end(), found.begin(), found.end());
    }
    return true;
}

namespace
{
// An input's folder and stem: "dir/123_summary.json" is ("dir", "123"); "dir/summary.json"
// ("dir", "").
std::pair<std::string, std::string>
folder_and_stem(const std::string& path)
{
    const fs::path    p{path};
    const std::string name = p.filename().string();
    const std::string stem =
        name.size() > 13 ? name.substr(0, name.size() - 13) : std::string{}; // "_summary.json"
    return {p.parent_path().string(), stem};
}

rocprof_kfd::run_span
span_of(const Metadata& m)
{
    return {static_cast<uint64_t>(m.pid), m.hostname, m.run_id, m.start_ns, m.end_ns,
            m.boot_time_unix_ns};
}
} // namespace

void
skip_earlier_runs(std::vector<Input>& inputs, std::vector<std::string>& notes)
{
    std::vector<bool> dropped(inputs.size(), false);
    for(size_t i = 0; i < inputs.size(); ++i)
    {
        // Only files named as rocprof-kfd names them: their names give their stems.
        if(!is_summary_name(fs::path{inputs[i].path}.filename().string())) continue;
        const auto [folder, stem] = folder_and_stem(inputs[i].path);
        const auto own            = span_of(inputs[i].summary.metadata);
        for(size_t j = 0; j < inputs.size() && !dropped[i]; ++j)
        {
            const auto [other_folder, other_stem] = folder_and_stem(inputs[j].path);
            if(i == j || folder != other_folder) continue;
            if(!is_summary_name(fs::path{inputs[j].path}.filename().string())) continue;
            const auto base = span_of(inputs[j].summary.metadata);
            if(rocprof_kfd::maybe_left_by_earlier_run(stem, own, other_stem, base))
                notes.push_back(inputs[i].path + ": kept: its run (" + *own.run_id +
                                ") did not finish and started before the one of " + inputs[j].path +
                                " (" + *base.run_id + "); if it is an earlier run's, remove it");
            if(!rocprof_kfd::left_by_earlier_run(stem, own, other_stem, base)) continue;
            dropped[i] = true;
            notes.push_back(inputs[i].path + ": skipped: an earlier run (" + *own.run_id +
                            ") left it there; " + inputs[j].path + " is of a later one (" +
                            *base.run_id + ")");
        }
    }
    size_t kept = 0;
    for(size_t i = 0; i < inputs.size(); ++i)
        if(!dropped[i])
        {
            if(kept != i) inputs[kept] = std::move(inputs[i]);
            ++kept;
        }
    inputs.resize(kept);
}

bool
read_file(const std::string& path, std::string& text, std::string& error)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if(fd < 0)
    {
        error = path + ": " + std::strerror(errno);
        return false;
    }
    constexpr size_t kLimit = size_t{256} << 20;
    char             buf[65536];
    text.clear();
    for(;;)
    {
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if(n < 0 && errno == EINTR) continue;
        if(n < 0)
        {
            error = path + ": " + std::strerror(errno);
            ::close(fd);
            return false;
        }
        if(n == 0) break;
        text.append(buf, static_cast<size_t>(n));
        if(text.size() > kLimit)
        {
            error = path + ": larger than 256 MiB, not a summary";
            ::close(fd);
            return false;
        }
    }
    ::close(fd);
    return true;
}

bool
write_file_atomically(const std::string& path, const std::string& text, std::string& error)
{
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if(fd < 0)
    {
        error = tmp + ": " + std::strerror(errno);
        return false;
    }
    size_t done = 0;
    while(done < text.size())
    {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if(n < 0 && errno == EINTR) continue;
        if(n <= 0)
        {
            error = path + ": " + std::strerror(n < 0 ? errno : ENOSPC);
            ::close(fd);
            ::unlink(tmp.c_str());
            return false;
        }
        done += static_cast<size_t>(n);
    }
    if(::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0)
    {
        error = path + ": " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}
} // namespace rocprof_kfd_report
