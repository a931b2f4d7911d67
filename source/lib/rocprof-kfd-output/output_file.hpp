// MIT License - see LICENSE.
//
// An output file that stays a valid document whatever happens: the writers append whole
// units (CSV lines, JSON records, Perfetto packets), and the file only ever holds whole
// units. Optionally a closing "tail" (e.g. `]}` of a JSON document) is written after the
// data at every flush and overwritten by the next one, so a process killed at any point
// leaves a closed document. A write error (disk full, I/O error) cuts the file back to the
// last whole unit, writes the tail once more if it can, logs one line naming the file, and
// turns every later call into a no-op: the host program is never affected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rocprof_kfd
{
class output_file
{
public:
    output_file() = default;
    ~output_file();
    output_file(const output_file&)            = delete;
    output_file& operator=(const output_file&) = delete;

    // Creates (truncates) path with O_WRONLY|O_CREAT|O_TRUNC|O_NOFOLLOW|O_CLOEXEC, 0644.
    // False (and one line on stderr) when it cannot.
    bool open(const std::string& path);
    // Appends one whole unit; flushes when the buffer passes its size.
    void append(std::string_view unit);
    // Sets the closing text written after the data (written at the next flush).
    void set_tail(std::string_view tail) { tail_ = tail; }
    // Writes the buffered units and the tail. False once the file has failed.
    bool flush();
    // Flushes and closes. False if anything failed.
    bool close();

    bool               is_open() const { return fd_ >= 0; }
    bool               failed() const { return failed_; }
    const std::string& path() const { return path_; }
    uint64_t           committed_bytes() const { return committed_; }

    // Bytes buffered before a flush.
    static constexpr size_t buffer_size = 64 * 1024;

private:
    void fail(const char* what, int error);
    bool write_at(uint64_t offset, std::string_view data);

    int         fd_ = -1;
    std::string path_;
    std::string buffer_;
    std::string tail_;
    uint64_t    committed_        = 0; // bytes of whole units in the file (before the tail)
    uint64_t    committed_before_ = 0; // committed_ at the start of the last flush
    size_t      written_tail_     = 0; // bytes of tail now in the file
    bool        failed_           = false;
};

// mkdir -p with mode 0755; false (errno set) when a component cannot be made.
bool make_directories(const std::string& path);
} // namespace rocprof_kfd
