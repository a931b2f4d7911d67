// MIT License - see LICENSE.
#include "repair.hpp"

#include "csv_writer.hpp"
#include "output_file.hpp"
#include "record_source.hpp"
#include "sqlite_schema.hpp"
#include "summary.hpp"
#include "writer.hpp"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rocprof_kfd
{
namespace
{
bool
exists(const std::string& path)
{
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Accepts anything; only checks that the text is one valid JSON document.
bool
valid_json_file(const std::string& path)
{
    std::ifstream in(path);
    if(!in) return false;
    return nlohmann::json::accept(in);
}

bool
cut_file(const std::string& path, uint64_t size, std::string& error)
{
    if(::truncate(path.c_str(), static_cast<off_t>(size)) != 0)
    {
        error = std::strerror(errno);
        return false;
    }
    return true;
}

bool
append_file(const std::string& path, const std::string& text, std::string& error)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if(fd < 0)
    {
        error = std::strerror(errno);
        return false;
    }
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if(!ok) error = std::strerror(errno);
    ::close(fd);
    return ok;
}
} // namespace

bool
repair_line_json(const std::string& path, const std::string& open_line_prefix, std::string& error)
{
    if(valid_json_file(path)) return false;
    // Keep everything up to the array's opening line, then every whole element line; the
    // writers put one element per line, separated by a ',' at the end of the line before.
    std::ifstream in(path);
    std::string   line;
    uint64_t      keep     = 0; // bytes to keep: up to the '[' or the last whole element
    uint64_t      offset   = 0;
    bool          in_array = false;
    while(std::getline(in, line))
    {
        if(in.eof()) break; // no '\n': cut inside the line
        uint64_t next = offset + line.size() + 1;
        if(!in_array)
        {
            if(line.rfind(open_line_prefix, 0) == 0)
            {
                in_array = true;
                keep     = offset + open_line_prefix.size();
                if(line.size() != open_line_prefix.size()) break; // not our layout
            }
        }
        else
        {
            std::string element = line;
            if(!element.empty() && element.back() == ',') element.pop_back();
            if(element.empty() || element[0] == ']' || !nlohmann::json::accept(element)) break;
            keep = offset + element.size();
        }
        offset = next;
    }
    in.close();
    if(!in_array)
    {
        error = "no " + open_line_prefix + " line: not a rocprof-kfd document";
        return false;
    }
    if(!cut_file(path, keep, error)) return false;
    if(!append_file(path, "\n],\"truncated\":true}\n", error)) return false;
    if(!valid_json_file(path))
    {
        error = "still not valid JSON after the repair";
        return false;
    }
    return true;
}

bool
repair_csv(const std::string& path, std::string& error)
{
    std::ifstream in(path, std::ios::binary);
    if(!in)
    {
        error = "cannot open";
        return false;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if(text.empty() || text.back() == '\n') return false;
    size_t last = text.rfind('\n');
    return cut_file(path, last == std::string::npos ? 0 : last + 1, error);
}

namespace
{
// Reads a varint at data[p]; false when cut.
bool
read_varint(const std::string& data, size_t& p, uint64_t& v)
{
    v         = 0;
    int shift = 0;
    while(p < data.size() && shift < 64)
    {
        auto b = static_cast<unsigned char>(data[p++]);
        v |= uint64_t{b & 0x7fu} << shift;
        shift += 7;
        if(!(b & 0x80)) return true;
    }
    return false;
}

// The varint field `field` of a message (0 when absent); length-delimited fields skipped.
uint64_t
varint_field(const std::string& msg, uint32_t field, std::string* sub = nullptr,
             uint32_t sub_field = 0)
{
    size_t p = 0;
    while(p < msg.size())
    {
        uint64_t key = 0, v = 0;
        if(!read_varint(msg, p, key)) return 0;
        switch(key & 7)
        {
        case 0:
            if(!read_varint(msg, p, v)) return 0;
            if((key >> 3) == field) return v;
            break;
        case 1:
            p += 8;
            break;
        case 5:
            p += 4;
            break;
        case 2:
            if(!read_varint(msg, p, v) || v > msg.size() - p) return 0;
            if(sub && (key >> 3) == sub_field) *sub = msg.substr(p, v);
            p += v;
            break;
        default:
            return 0;
        }
    }
    return 0;
}

// A packet that begins a slice (TracePacket.track_event.type == TYPE_SLICE_BEGIN).
bool
is_slice_begin(const std::string& packet)
{
    std::string event;
    varint_field(packet, 0, &event, 11);
    return !event.empty() && varint_field(event, 9) == 1;
}
} // namespace

bool
repair_pftrace(const std::string& path, std::string& error)
{
    std::ifstream in(path, std::ios::binary);
    if(!in)
    {
        error = "cannot open";
        return false;
    }
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t      pos = 0, whole = 0;
    while(pos < data.size())
    {
        // Each packet: key 0x0a (field 1, length-delimited), varint length, bytes.
        if(static_cast<unsigned char>(data[pos]) != 0x0a) break;
        size_t   p     = pos + 1;
        uint64_t len   = 0;
        int      shift = 0;
        bool     ok    = false;
        while(p < data.size() && shift < 64)
        {
            auto b = static_cast<unsigned char>(data[p++]);
            len |= uint64_t{b & 0x7fu} << shift;
            shift += 7;
            if(!(b & 0x80))
            {
                ok = true;
                break;
            }
        }
        if(!ok || len > data.size() - p) break;
        // The writer puts a slice's begin and end in one unit: a cut between them leaves a
        // begin without its end, which goes too.
        bool begin = is_slice_begin(data.substr(p, len));
        pos        = p + len;
        if(!begin) whole = pos;
    }
    if(whole == data.size()) return false;
    return cut_file(path, whole, error);
}

bool
check_sqlite(const std::string& path, std::string& error)
{
    sqlite3* db = nullptr;
    if(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr) !=
       SQLITE_OK)
    {
        error = db ? sqlite3_errmsg(db) : "cannot open";
        sqlite3_close(db);
        return false;
    }
    bool          hot = exists(path + "-journal");
    std::string   result;
    sqlite3_stmt* st = nullptr;
    if(sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, nullptr) == SQLITE_OK &&
       sqlite3_step(st) == SQLITE_ROW)
    {
        const unsigned char* t = sqlite3_column_text(st, 0);
        result                 = t ? reinterpret_cast<const char*>(t) : "";
    }
    else
        result = sqlite3_errmsg(db);
    sqlite3_finalize(st);
    // A killed run never built its indexes.
    bool indexed =
        result == "ok" && sqlite3_exec(db, sqlite_indexes, nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_close(db);
    if(result == "ok" && !indexed)
    {
        error = "cannot create the indexes";
        return false;
    }
    if(result != "ok")
    {
        error = "quick_check: " + result;
        return false;
    }
    return hot;
}

namespace
{
// Repairs the outputs of one stem in dir (one process's), adding to report.
void
repair_stem(const std::string& dir, const std::string& stem, uint64_t thrashing_threshold,
            repair_report& report)
{
    auto step = [&](const std::string& path, const char* what, auto&& fn)
    {
        if(!exists(path)) return;
        std::string error;
        if(fn(path, error))
            report.repaired.push_back(path + ": " + what);
        else if(!error.empty())
            report.errors.push_back(path + ": " + error);
    };
    step(output_path(dir, stem, "results.json"), "closed after the last whole record",
         [](const std::string& p, std::string& e)
         { return repair_line_json(p, "\"records\":[", e); });
    step(output_path(dir, stem, "trace.chrome.json"), "closed after the last whole event",
         [](const std::string& p, std::string& e)
         { return repair_line_json(p, "{\"traceEvents\":[", e); });
    for(int op = 1; op <= 4; ++op)
        step(output_path(dir, stem, csv_file_names[op]), "incomplete last line removed",
             repair_csv);
    step(output_path(dir, stem, "trace.pftrace"), "cut after the last whole packet",
         repair_pftrace);
    step(output_path(dir, stem, "kfd.db"), "unfinished transaction rolled back", check_sqlite);

    // The summary: rebuilt from the records unless the run wrote its final one.
    std::string summary       = output_path(dir, stem, "summary.json");
    bool        final_summary = false;
    if(exists(summary))
    {
        std::ifstream in(summary);
        auto          doc = nlohmann::json::parse(in, nullptr, false);
        final_summary     = !doc.is_discarded() && doc.is_object() && doc.value("complete", false);
    }
    if(!final_summary)
    {
        run_info        run;
        summary_builder s(thrashing_threshold);
        source_result   r = read_output(dir, stem, run, [&](const record& rec) { s.add(rec); });
        if(!r.ok)
            report.errors.push_back(summary + ": cannot rebuild: " + r.error);
        else
        {
            auto written = write_summary_files(dir, stem, run, s, false, true);
            for(const auto& w : written)
                report.repaired.push_back(w + ": rebuilt from " + r.source + " (" +
                                          std::to_string(r.records) + " records)");
        }
    }
}
} // namespace

repair_report
repair_directory(const std::string& dir, uint64_t thrashing_threshold)
{
    repair_report report;
    auto          stems = find_stems(dir);
    if(stems.empty()) report.errors.push_back(dir + ": no rocprof-kfd output here");
    // Every process's outputs: processes sharing a folder name theirs <pid>_<name>.
    for(const auto& stem : stems)
        repair_stem(dir, stem, thrashing_threshold, report);
    return report;
}
} // namespace rocprof_kfd
