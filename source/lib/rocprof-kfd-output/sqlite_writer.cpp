// MIT License - see LICENSE.
//
// kfd.db: SQLite database (schema in sqlite_schema.hpp). Rows are inserted through prepared
// statements inside a transaction that commits at the end of every delivered buffer (and
// every 20000 rows), so the database keeps up with the reader and a killed run keeps every
// committed transaction (rollback journal: the next open rolls the unfinished one back).
// A write error (disk full) rolls back the open transaction and stops the writer.
#include "csv_writer.hpp"
#include "loss.hpp"
#include "names.hpp"
#include "sqlite_schema.hpp"

#include <sqlite3.h>

#include <array>
#include <cstdio>
#include <unistd.h>

namespace rocprof_kfd
{
namespace
{
const char* const insert_sql[5] = {
    "",
    "INSERT INTO page_migrate (pid, start_timestamp, end_timestamp, duration_ns, start_addr, "
    "end_addr, bytes, from_node, to_node, prefetch_node, preferred_node, trigger) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO page_fault (pid, start_timestamp, end_timestamp, duration_ns, node_id, "
    "address, read_fault, migrated) VALUES (?,?,?,?,?,?,?,?)",
    "INSERT INTO queue_suspend (pid, start_timestamp, end_timestamp, duration_ns, node_id, "
    "trigger, rescheduled) VALUES (?,?,?,?,?,?,?)",
    "INSERT INTO unmap_from_gpu (pid, start_timestamp, end_timestamp, node_id, start_addr, "
    "end_addr, trigger) VALUES (?,?,?,?,?,?,?)"};

constexpr size_t rows_per_transaction = 20000;

class sqlite_writer final : public record_writer
{
public:
    ~sqlite_writer() override { shut(); }

    bool open(const std::string& dir, const std::string& stem, const run_info& run) override
    {
        path_ = output_path(dir, stem, "kfd.db");
        // A stale database (or its journal) from an earlier run would be reused: start empty.
        ::unlink(path_.c_str());
        ::unlink((path_ + "-journal").c_str());
        int flags =
            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX;
        if(sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr) != SQLITE_OK)
            return fail("cannot create");
        // A reader (sqlite3 on the live database) holds a shared lock for a moment: wait for
        // it at commit instead of failing (on the callback thread, never the program's).
        sqlite3_busy_timeout(db_, 10000);
        if(!exec("PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF;") || !exec("BEGIN") ||
           !exec(sqlite_schema))
            return false;
        for(int op = 1; op <= operation_count; ++op)
            if(sqlite3_prepare_v2(db_, insert_sql[op], -1, &insert_[op], nullptr) != SQLITE_OK)
                return fail("cannot prepare");
        write_metadata(run, nullptr);
        for(const auto& a : run.agents)
        {
            std::string sql = "INSERT OR REPLACE INTO agents VALUES (" + std::to_string(a.gpu_id) +
                              "," + std::to_string(a.node_id) + ",?,'" +
                              (a.is_gpu ? "gpu" : "cpu") + "')";
            sqlite3_stmt* st = nullptr;
            if(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
                return fail("cannot prepare");
            sqlite3_bind_text(st, 1, a.name.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_step(st);
            sqlite3_finalize(st);
        }
        return commit();
    }

    void write(const record& r) override
    {
        if(failed_ || !db_ || r.operation < 1 || r.operation > operation_count) return;
        sqlite3_stmt* st = insert_[r.operation];
        auto          i  = [](uint64_t v) { return static_cast<sqlite3_int64>(v); };
        uint64_t      dur =
            r.end_timestamp >= r.start_timestamp ? r.end_timestamp - r.start_timestamp : 0;
        int n = 1;
        sqlite3_bind_int64(st, n++, r.pid);
        sqlite3_bind_int64(st, n++, i(r.start_timestamp));
        sqlite3_bind_int64(st, n++, i(r.end_timestamp));
        std::string trig = trigger_name(r.operation, record_trigger(r));
        switch(r.operation)
        {
        case ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE:
        {
            const auto& m = r.page_migrate;
            sqlite3_bind_int64(st, n++, i(dur));
            sqlite3_bind_int64(st, n++, i(m.start_addr));
            sqlite3_bind_int64(st, n++, i(m.end_addr));
            sqlite3_bind_int64(st, n++,
                               i(m.end_addr >= m.start_addr ? m.end_addr - m.start_addr + 1 : 0));
            sqlite3_bind_int64(st, n++, m.from_node);
            sqlite3_bind_int64(st, n++, m.to_node);
            sqlite3_bind_int64(st, n++, m.prefetch_node);
            sqlite3_bind_int64(st, n++, m.preferred_node);
            sqlite3_bind_text(st, n++, trig.c_str(), -1, SQLITE_TRANSIENT);
            break;
        }
        case ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT:
            sqlite3_bind_int64(st, n++, i(dur));
            sqlite3_bind_int64(st, n++, r.page_fault.node_id);
            sqlite3_bind_int64(st, n++, i(r.page_fault.address));
            sqlite3_bind_int64(st, n++, r.page_fault.read_fault);
            sqlite3_bind_int64(st, n++, r.page_fault.migrated);
            break;
        case ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND:
            sqlite3_bind_int64(st, n++, i(dur));
            sqlite3_bind_int64(st, n++, r.queue_suspend.node_id);
            sqlite3_bind_text(st, n++, trig.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(st, n++, r.queue_suspend.rescheduled);
            break;
        case ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU:
            sqlite3_bind_int64(st, n++, r.unmap_from_gpu.node_id);
            sqlite3_bind_int64(st, n++, i(r.unmap_from_gpu.start_addr));
            sqlite3_bind_int64(st, n++, i(r.unmap_from_gpu.end_addr));
            sqlite3_bind_text(st, n++, trig.c_str(), -1, SQLITE_TRANSIENT);
            break;
        }
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if(rc != SQLITE_DONE)
        {
            fail("cannot write");
            return;
        }
        if(++rows_ >= rows_per_transaction) commit();
    }

    void end_batch() override
    {
        if(rows_ > 0) commit();
    }

    void finish(const run_info& run, const summary_builder& s) override
    {
        if(!failed_ && db_)
        {
            write_metadata(run, &s);
            for(size_t k = 0; k < loss_field_count; ++k)
            {
                std::string sql = std::string("INSERT OR REPLACE INTO loss VALUES ('") +
                                  loss_fields[k].name + "'," +
                                  std::to_string(run.loss.stats.*loss_fields[k].member) + ")";
                exec(sql.c_str());
            }
            std::string sql = "INSERT OR REPLACE INTO loss VALUES ('buffer_drops'," +
                              std::to_string(run.loss.buffer_drops) + ")";
            exec(sql.c_str());
            sql = "INSERT OR REPLACE INTO loss VALUES ('records_not_received'," +
                  std::to_string(run.loss.records_not_received) + ")";
            exec(sql.c_str());
            exec(sqlite_indexes);
            exec("INSERT OR REPLACE INTO metadata VALUES ('complete','1')");
            if(db_ && !failed_) exec("COMMIT");
            in_transaction_ = false;
        }
        shut();
    }

    std::vector<std::string> files() const override
    {
        if(path_.empty() || failed_) return {};
        return {path_};
    }

private:
    bool exec(const char* sql)
    {
        if(failed_ || !db_) return false;
        char* error = nullptr;
        if(sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK)
        {
            std::string message = error ? error : "error";
            sqlite3_free(error);
            fail(("cannot write (" + message + ")").c_str());
            return false;
        }
        return true;
    }

    bool commit()
    {
        rows_ = 0;
        return exec("COMMIT") && exec("BEGIN");
    }

    void write_metadata(const run_info& run, const summary_builder* s)
    {
        std::string cmd;
        for(const auto& a : run.command)
            cmd += (cmd.empty() ? "" : " ") + a;
        const std::pair<const char*, std::string> rows[] = {
            {"schema", "rocprof-kfd-db"},
            {"version", "1"},
            {"command", cmd},
            {"pid", std::to_string(run.pid)},
            {"ppid", std::to_string(run.ppid)},
            {"hostname", run.hostname},
            {"rank", run.rank ? *run.rank : ""},
            {"sdk_version", run.sdk_version},
            {"kernel_release", run.kernel_release},
            {"kfd_version", run.kfd_version ? *run.kfd_version : ""},
            {"emulated", run.emulated ? "1" : "0"},
            {"run_id", run.run_id ? *run.run_id : ""},
            {"start_ns", std::to_string(run.start_ns)},
            {"boot_time_unix_ns",
             run.boot_time_unix_ns ? std::to_string(*run.boot_time_unix_ns) : ""},
            {"end_ns", std::to_string(run.end_ns)},
            {"records", std::to_string(s ? s->records() : 0)},
        };
        sqlite3_stmt* st = nullptr;
        if(sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO metadata VALUES (?,?)", -1, &st,
                              nullptr) != SQLITE_OK)
            return;
        for(const auto& [key, value] : rows)
        {
            sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, value.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_step(st);
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
    }

    bool fail(const char* what)
    {
        if(!failed_)
            std::fprintf(stderr, "rocprof-kfd: %s %s: %s\n", what, path_.c_str(),
                         db_ ? sqlite3_errmsg(db_) : "out of memory");
        failed_ = true;
        if(db_ && !sqlite3_get_autocommit(db_))
            sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        return false;
    }

    void shut()
    {
        for(auto& st : insert_)
        {
            if(st) sqlite3_finalize(st);
            st = nullptr;
        }
        if(db_) sqlite3_close(db_);
        db_ = nullptr;
    }

    std::string                  path_;
    sqlite3*                     db_             = nullptr;
    std::array<sqlite3_stmt*, 5> insert_         = {};
    size_t                       rows_           = 0;
    bool                         failed_         = false;
    bool                         in_transaction_ = true;
};
} // namespace

std::unique_ptr<record_writer>
make_sqlite_writer()
{
    return std::make_unique<sqlite_writer>();
}
} // namespace rocprof_kfd
