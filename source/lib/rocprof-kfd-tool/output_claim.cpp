// MIT License - see LICENSE.
#include "output_claim.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace rocprof_kfd
{
namespace
{
std::string
owner_path(const std::string& directory, const std::string& stem)
{
    return directory + "/." + (stem.empty() ? std::string{} : stem + "_") + "rocprof-kfd-owner";
}

std::string
owner_text(uint32_t pid, const std::string& run_id)
{
    return std::to_string(pid) + " " + run_id + "\n";
}

enum class created
{
    yes,
    exists, // another claim is there
    failed,
};

bool
write_whole(int fd, const std::string& text)
{
    return ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// Creates `path` in place, holding `text`. Seen empty for a moment by another claimant, which
// may take it for an unfinished claim and take it over: the race the link below closes.
created
create_in_place(const std::string& path, const std::string& text)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if(fd < 0) return errno == EEXIST ? created::exists : created::failed;
    const bool wrote = write_whole(fd, text);
    ::close(fd);
    return wrote ? created::yes : created::failed;
}

// Creates `path` holding the claim, whole or not at all: written to a file of a unique name
// first (mkostemp: created exclusively, so nothing planted there is opened), then linked into
// place (link fails if `path` exists). Where that cannot be done (no hard links on FUSE or
// SMB mounts, a quota, a name too long for the suffix), created in place.
created
create_owner(const std::string& path, uint32_t pid, const std::string& run_id)
{
    const std::string text = owner_text(pid, run_id);
    std::string       tmp  = path + ".XXXXXX";
    int               fd   = ::mkostemp(tmp.data(), O_CLOEXEC);
    if(fd >= 0)
    {
        // mkostemp's 0600 would hide the claim from other users' processes sharing the folder.
        const bool wrote  = ::fchmod(fd, 0644) == 0 && write_whole(fd, text);
        const int  closed = ::close(fd);
        const int  linked = wrote && closed == 0 ? ::link(tmp.c_str(), path.c_str()) : -1;
        const int  error  = errno;
        ::unlink(tmp.c_str());
        if(linked == 0) return created::yes;
        if(wrote && error == EEXIST) return created::exists;
    }
    return create_in_place(path, text);
}

// The owner file's pid and run id, read through fd; false when it holds no claim.
bool
read_owner(int fd, uint32_t& pid, std::string& run_id)
{
    char    text[160] = {};
    ssize_t n         = ::pread(fd, text, sizeof(text) - 1, 0);
    if(n <= 0) return false;
    char          id[128] = {};
    unsigned long p       = 0;
    int           fields  = std::sscanf(text, "%lu %127s", &p, id);
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

uint64_t
monotonic_ms()
{
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000 + static_cast<uint64_t>(now.tv_nsec) / 1000000;
}

enum class lock_outcome
{
    locked,
    unsupported, // the file system has no record locks
    timed_out,   // another process held it throughout
};

// The owner file's lock, waited for at most wait_ms, in tries a millisecond apart (F_SETLKW
// has no time-out, and a timer signal to end it would take one of the program's signals).
// A process holds it for one read and one write, so it comes at once; but one stopped in that
// moment (a debugger), or another user's process that keeps it, must not hang the traced
// program.
lock_outcome
lock_within(int fd, struct flock& whole, uint64_t wait_ms)
{
    const uint64_t deadline = monotonic_ms() + wait_ms;
    for(;;)
    {
        if(::fcntl(fd, F_SETLK, &whole) == 0) return lock_outcome::locked;
        if(errno != EACCES && errno != EAGAIN && errno != EINTR) return lock_outcome::unsupported;
        if(monotonic_ms() >= deadline) return lock_outcome::timed_out;
        const timespec pause{0, 1000000};
        ::nanosleep(&pause, nullptr);
    }
}

// Claims the owner file `path` for process pid of run run_id.
attempt
try_claim(const std::string& path, uint32_t pid, const std::string& run_id, uint64_t lock_wait_ms,
          uint32_t& other)
{
    switch(create_owner(path, pid, run_id))
    {
    case created::yes:
        return attempt::claimed;
    case created::failed:
        return attempt::unclaimed;
    case created::exists:
        break;
    }
    // Read and taken over under a lock of the file: of two processes that find an earlier
    // run's claim at once, the second reads the first's (before, both took it over and wrote
    // the same files). A POSIX record lock, not flock: it belongs to this process, so a child
    // forked meanwhile does not keep it held after we close the file. O_NONBLOCK: a FIFO
    // planted there does not block the open.
    bool writable = true;
    int  fd       = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if(fd < 0 && errno == EACCES)
    {
        // Another user's claim: read, never taken over.
        writable = false;
        fd       = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    }
    if(fd < 0) return attempt::unclaimed;
    struct flock whole
    {
    };
    whole.l_type   = writable ? F_WRLCK : F_RDLCK;
    whole.l_whence = SEEK_SET;
    // Where the file system has no record locks (Lustre mounted noflock, NFSv3 without lockd)
    // the claim is read and taken over unlocked, as before the lock existed: a live owner's
    // claim is still seen. A lock held throughout the wait is a takeover in progress (or a
    // holder that keeps it): the claim is read as it is, and never taken over.
    const lock_outcome lock  = lock_within(fd, whole, lock_wait_ms);
    uint32_t           owner = 0;
    std::string        owner_run;
    attempt            result = attempt::unclaimed;
    if(read_owner(fd, owner, owner_run) && owner == pid)
        result = attempt::claimed;
    else if(lock == lock_outcome::timed_out)
    {
        other  = owner;
        result = attempt::taken;
    }
    else if(owner != 0 && ((!run_id.empty() && owner_run == run_id) || is_alive(owner)))
    {
        other  = owner;
        result = attempt::taken;
    }
    else if(writable)
    {
        // An earlier run's, its process gone (or a claim never finished): taken over.
        const std::string text = owner_text(pid, run_id);
        if(::ftruncate(fd, 0) == 0 &&
           ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()))
            result = attempt::claimed;
    }
    ::close(fd); // releases the lock (any close of the file by this process would)
    return result;
}
} // namespace

output_claim
claim_output(const std::string& directory, const std::string& stem, uint32_t pid,
             const std::string& run_id, uint64_t lock_wait_ms)
{
    output_claim result;
    result.stem    = stem;
    uint32_t other = 0;
    if(try_claim(owner_path(directory, stem), pid, run_id, lock_wait_ms, other) != attempt::taken)
        return result;
    // Our files get our pid; a stem of our own is ours whatever its claim says.
    result.stem      = (stem.empty() ? std::string{} : stem + "_") + std::to_string(pid);
    result.renamed   = true;
    result.other_pid = other;
    uint32_t ignored = 0;
    try_claim(owner_path(directory, result.stem), pid, run_id, lock_wait_ms, ignored);
    return result;
}

file_claim
claim_file(const std::string& path, uint32_t pid, const std::string& run_id, uint64_t lock_wait_ms)
{
    file_claim        result;
    const size_t      slash = path.rfind('/');
    const std::string folder =
        slash == std::string::npos ? std::string(".") : path.substr(0, slash);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    result.path            = path;
    uint32_t other         = 0;
    if(try_claim(folder + "/." + name + ".rocprof-kfd-owner", pid, run_id, lock_wait_ms, other) !=
       attempt::taken)
        return result;
    const std::string renamed = std::to_string(pid) + "_" + name;
    result.path               = slash == std::string::npos ? renamed : folder + "/" + renamed;
    result.renamed            = true;
    result.other_pid          = other;
    uint32_t ignored          = 0;
    try_claim(folder + "/." + renamed + ".rocprof-kfd-owner", pid, run_id, lock_wait_ms, ignored);
    return result;
}
} // namespace rocprof_kfd
