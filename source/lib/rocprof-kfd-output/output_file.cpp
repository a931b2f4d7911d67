// MIT License - see LICENSE.
#include "output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rocprof_kfd
{
output_file::~output_file()
{
    close();
}

bool
output_file::open(const std::string& path)
{
    close();
    path_      = path;
    failed_    = false;
    committed_ = 0;
    buffer_.clear();
    // O_NONBLOCK: a FIFO planted at the path must not block the host in open() (without a
    // reader it fails with ENXIO); a FIFO or socket is refused, and the flag is cleared.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
                 0644);
    if(fd_ < 0)
    {
        fail("cannot create", errno);
        return false;
    }
    struct stat st;
    if(::fstat(fd_, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
    {
        ::close(fd_);
        fd_ = -1;
        fail("cannot create", EINVAL);
        return false;
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    buffer_.reserve(buffer_size);
    return true;
}

void
output_file::append(std::string_view unit)
{
    if(fd_ < 0 || failed_) return;
    buffer_.append(unit);
    if(buffer_.size() >= buffer_size) flush();
}

bool
output_file::write_at(uint64_t offset, std::string_view data)
{
    size_t done = 0;
    while(done < data.size())
    {
        ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done,
                             static_cast<off_t>(offset + done));
        if(n < 0 && errno == EINTR) continue;
        if(n <= 0)
        {
            if(n == 0) errno = ENOSPC;
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

bool
output_file::flush()
{
    if(fd_ < 0 || failed_) return false;
    // Data and tail in one write: the file is whole units followed by the tail, or (after an
    // error) cut back to the whole units written before.
    size_t units = buffer_.size();
    buffer_.append(tail_); // taken off again below: the buffer keeps its capacity
    std::string_view data(buffer_);
    committed_before_ = committed_;
    bool written      = write_at(committed_, data);
    buffer_.resize(units);
    if(!written)
    {
        int error = errno;
        if(::ftruncate(fd_, static_cast<off_t>(committed_)) == 0 && !tail_.empty())
            write_at(committed_, tail_);
        fail("cannot write", error);
        return false;
    }
    committed_ += units;
    buffer_.clear();
    size_t previous_tail = written_tail_;
    written_tail_        = tail_.size();
    if(committed_ + tail_.size() < committed_before_ + previous_tail &&
       ::ftruncate(fd_, static_cast<off_t>(committed_ + tail_.size())) != 0)
    {
        // A shorter tail than before left bytes behind: the document would be invalid.
        fail("cannot truncate", errno);
        return false;
    }
    return true;
}

bool
output_file::close()
{
    if(fd_ < 0) return !failed_;
    bool ok = flush();
    if(::close(fd_) != 0 && ok)
    {
        fail("cannot close", errno);
        ok = false;
    }
    fd_ = -1;
    return ok && !failed_;
}

void
output_file::fail(const char* what, int error)
{
    if(failed_) return;
    failed_ = true;
    std::fprintf(stderr, "rocprof-kfd: %s %s: %s\n", what, path_.c_str(), std::strerror(error));
}

bool
make_directories(const std::string& path)
{
    if(path.empty()) return true;
    std::string partial;
    size_t      pos = 0;
    while(pos <= path.size())
    {
        size_t next = path.find('/', pos);
        if(next == std::string::npos) next = path.size();
        partial = path.substr(0, next);
        if(!partial.empty() && ::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
        pos = next + 1;
    }
    struct stat st;
    if(::stat(path.c_str(), &st) != 0) return false;
    if(!S_ISDIR(st.st_mode))
    {
        errno = ENOTDIR;
        return false;
    }
    return true;
}
} // namespace rocprof_kfd
