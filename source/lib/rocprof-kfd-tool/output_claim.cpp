// MIT License - see LICENSE.
#include "output_claim.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace rocprof_kfd
{
namespace
{
std::string
owner_path(const std::string& directory, const std::string& stem)
{
    return directory + "/." + (stem.empty() ? std::string{} : stem + "_") + "rocprof-kfd-owner";
}

bool
write_owner(int fd, uint32_t pid, const std::string& run_id)
{
    std::string text = std::to_string(pid) + " " + run_id + "\n";
    bool        ok   = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

// The owner file's pid and run id; false when it cannot be read.
bool
read_owner(const std::string& path, uint32_t& pid, std::string& run_id)
{
    FILE* f = std::fopen(path.c_str(), "re");
    if(f == nullptr) return false;
    char          id[128] = {};
    unsigned long p       = 0;
    int           fields  = std::fscanf(f, "%lu %127s", &p, id);
    std::fclose(f);
    if(fields < 1) return false;
    pid    = static_cast<uint32_t>(p);
    run_id = fields == 2 ? id : "";
    return true;
}

bool
is_alive(uint32_t pid)
{
    return pid != 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

enum class attempt
{
    claimed,   // ours now
    taken,     // another process of this run, or a live one, holds it
    unclaimed, // no claim possible: write as if there were none
};

// Claims the owner file `path` for process pid of run run_id.
attempt
try_claim(const std::string& path, uint32_t pid, const std::string& run_id, uint32_t& other)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if(fd >= 0) return write_owner(fd, pid, run_id) ? attempt::claimed : attempt::unclaimed;
    if(errno != EEXIST) return attempt::unclaimed;
    uint32_t    owner = 0;
    std::string owner_run;
    if(!read_owner(path, owner, owner_run)) return attempt::unclaimed;
    if(owner == pid) return attempt::claimed;
    const bool same_run = !run_id.empty() && owner_run == run_id;
    if(same_run || is_alive(owner))
    {
        other = owner;
        return attempt::taken;
    }
    // An earlier run's, its process gone: taken over.
    fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if(fd < 0) return attempt::unclaimed;
    return write_owner(fd, pid, run_id) ? attempt::claimed : attempt::unclaimed;
}
} // namespace

output_claim
claim_output(const std::string& directory, const std::string& stem, uint32_t pid,
             const std::string& run_id)
{
    output_claim result;
    result.stem    = stem;
    uint32_t other = 0;
    if(try_claim(owner_path(directory, stem), pid, run_id, other) != attempt::taken) return result;
    // Our files get our pid; a stem of our own is ours whatever its claim says.
    result.stem      = (stem.empty() ? std::string{} : stem + "_") + std::to_string(pid);
    result.renamed   = true;
    result.other_pid = other;
    uint32_t ignored = 0;
    try_claim(owner_path(directory, result.stem), pid, run_id, ignored);
    return result;
}

file_claim
claim_file(const std::string& path, uint32_t pid, const std::string& run_id)
{
    file_claim        result;
    const size_t      slash = path.rfind('/');
    const std::string folder =
        slash == std::string::npos ? std::string(".") : path.substr(0, slash);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    result.path            = path;
    uint32_t other         = 0;
    if(try_claim(folder + "/." + name + ".rocprof-kfd-owner", pid, run_id, other) != attempt::taken)
        return result;
    const std::string renamed = std::to_string(pid) + "_" + name;
    result.path               = slash == std::string::npos ? renamed : folder + "/" + renamed;
    result.renamed            = true;
    result.other_pid          = other;
    uint32_t ignored          = 0;
    try_claim(folder + "/." + renamed + ".rocprof-kfd-owner", pid, run_id, ignored);
    return result;
}
} // namespace rocprof_kfd
