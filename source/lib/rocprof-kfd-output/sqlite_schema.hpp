// MIT License - see LICENSE.
//
// kfd.db's schema (documented in docs/rocprof-kfd-outputs.md). Addresses are stored as
// INTEGER (SQLite's 64-bit signed integers hold every user-space address); times in ns.
#pragma once

namespace rocprof_kfd
{
inline constexpr const char* sqlite_schema = R"sql(
CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE agents (gpu_id INTEGER PRIMARY KEY, node_id INTEGER NOT NULL, name TEXT NOT NULL,
                     type TEXT NOT NULL);
CREATE TABLE loss (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE page_fault (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,
    start_timestamp INTEGER NOT NULL, end_timestamp INTEGER NOT NULL,
    duration_ns INTEGER NOT NULL, node_id INTEGER NOT NULL, address INTEGER NOT NULL,
    read_fault INTEGER NOT NULL, migrated INTEGER NOT NULL);
CREATE TABLE page_migrate (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,
    start_timestamp INTEGER NOT NULL, end_timestamp INTEGER NOT NULL,
    duration_ns INTEGER NOT NULL, start_addr INTEGER NOT NULL, end_addr INTEGER NOT NULL,
    bytes INTEGER NOT NULL, from_node INTEGER NOT NULL, to_node INTEGER NOT NULL,
    prefetch_node INTEGER NOT NULL, preferred_node INTEGER NOT NULL, trigger TEXT NOT NULL);
CREATE TABLE queue_suspend (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,
    start_timestamp INTEGER NOT NULL, end_timestamp INTEGER NOT NULL,
    duration_ns INTEGER NOT NULL, node_id INTEGER NOT NULL, trigger TEXT NOT NULL,
    rescheduled INTEGER NOT NULL);
CREATE TABLE unmap_from_gpu (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,
    start_timestamp INTEGER NOT NULL, end_timestamp INTEGER NOT NULL, node_id INTEGER NOT NULL,
    start_addr INTEGER NOT NULL, end_addr INTEGER NOT NULL, trigger TEXT NOT NULL);
CREATE VIEW operations AS
    SELECT 'page_fault' AS operation, 'none' AS trigger, COUNT(*) AS count,
           SUM(duration_ns) AS total_ns, AVG(duration_ns) AS mean_ns,
           MIN(duration_ns) AS min_ns, MAX(duration_ns) AS max_ns FROM page_fault
    UNION ALL
    SELECT 'page_migrate', trigger, COUNT(*), SUM(duration_ns), AVG(duration_ns),
           MIN(duration_ns), MAX(duration_ns) FROM page_migrate GROUP BY trigger
    UNION ALL
    SELECT 'queue_suspend', trigger, COUNT(*), SUM(duration_ns), AVG(duration_ns),
           MIN(duration_ns), MAX(duration_ns) FROM queue_suspend GROUP BY trigger
    UNION ALL
    SELECT 'unmap_from_gpu', trigger, COUNT(*), 0, 0, 0, 0 FROM unmap_from_gpu GROUP BY trigger;

CREATE VIEW migrations_by_direction AS
    SELECT m.from_node, m.to_node,
           COALESCE(f.name, CASE WHEN m.from_node = 0 THEN 'CPU' END) AS from_name,
           COALESCE(t.name, CASE WHEN m.to_node = 0 THEN 'CPU' END) AS to_name,
           COUNT(*) AS count, SUM(m.bytes) AS bytes, SUM(m.duration_ns) AS total_ns,
           CASE WHEN SUM(m.duration_ns) > 0 THEN 1.0 * SUM(m.bytes) / SUM(m.duration_ns)
                ELSE 0 END AS gb_per_s
    FROM page_migrate m LEFT JOIN agents f ON f.gpu_id = m.from_node
                        LEFT JOIN agents t ON t.gpu_id = m.to_node
    GROUP BY m.from_node, m.to_node ORDER BY m.from_node, m.to_node;

CREATE VIEW faults_by_gpu AS
    SELECT p.node_id AS gpu_id, a.name AS name,
           SUM(read_fault = 1 AND migrated = 1) AS read_migrated,
           SUM(read_fault = 1 AND migrated = 0) AS read_updated,
           SUM(read_fault = 0 AND migrated = 1) AS write_migrated,
           SUM(read_fault = 0 AND migrated = 0) AS write_updated
    FROM page_fault p LEFT JOIN agents a ON a.gpu_id = p.node_id
    GROUP BY p.node_id ORDER BY p.node_id;

CREATE VIEW queue_suspend_by_gpu AS
    SELECT q.node_id AS gpu_id, a.name AS name, COUNT(*) AS count,
           SUM(duration_ns) AS total_ns
    FROM queue_suspend q LEFT JOIN agents a ON a.gpu_id = q.node_id
    GROUP BY q.node_id ORDER BY q.node_id;

-- Every 2 MiB block a migration covers, with the bytes that overlap it.
CREATE VIEW migration_blocks AS
    WITH RECURSIVE blocks(id, block, last) AS (
        SELECT id, start_addr >> 21, end_addr >> 21 FROM page_migrate
        UNION ALL SELECT id, block + 1, last FROM blocks WHERE block < last)
    SELECT b.block AS block, m.from_node, m.to_node,
           MIN(m.end_addr, ((b.block + 1) << 21) - 1) - MAX(m.start_addr, b.block << 21) + 1
               AS bytes
    FROM blocks b JOIN page_migrate m ON m.id = b.id;

CREATE VIEW ranges AS
    SELECT block, SUM(faults) AS faults, SUM(migrations) AS migrations,
           SUM(htod) AS htod_bytes, SUM(dtoh) AS dtoh_bytes, SUM(dtod) AS dtod_bytes,
           SUM(htod) + SUM(dtoh) + SUM(dtod) + SUM(other) AS bytes
    FROM (SELECT address >> 21 AS block, 1 AS faults, 0 AS migrations, 0 AS htod, 0 AS dtoh,
                 0 AS dtod, 0 AS other FROM page_fault
          UNION ALL
          SELECT block, 0, 1,
                 CASE WHEN from_node = 0 AND to_node <> 0 THEN bytes ELSE 0 END,
                 CASE WHEN from_node <> 0 AND to_node = 0 THEN bytes ELSE 0 END,
                 CASE WHEN from_node <> 0 AND to_node <> 0 THEN bytes ELSE 0 END,
                 CASE WHEN from_node = 0 AND to_node = 0 THEN bytes ELSE 0 END
          FROM migration_blocks)
    GROUP BY block;

CREATE VIEW top_ranges_by_faults AS
    SELECT printf('0x%x', block << 21) AS start, printf('0x%x', ((block + 1) << 21) - 1) AS "end",
           faults, migrations, htod_bytes, dtoh_bytes, dtod_bytes
    FROM ranges WHERE faults > 0 ORDER BY faults DESC, block ASC LIMIT 10;

CREATE VIEW top_ranges_by_bytes AS
    SELECT printf('0x%x', block << 21) AS start, printf('0x%x', ((block + 1) << 21) - 1) AS "end",
           faults, migrations, htod_bytes, dtoh_bytes, dtod_bytes
    FROM ranges WHERE bytes > 0 ORDER BY bytes DESC, block ASC LIMIT 10;
)sql";
// Built at finalization (and by --repair): one pass over the rows is much cheaper than
// keeping random-address indexes up to date row by row while the run streams.
inline constexpr const char* sqlite_indexes = R"sql(
CREATE INDEX IF NOT EXISTS page_fault_time ON page_fault (start_timestamp);
CREATE INDEX IF NOT EXISTS page_fault_address ON page_fault (address);
CREATE INDEX IF NOT EXISTS page_migrate_time ON page_migrate (start_timestamp);
CREATE INDEX IF NOT EXISTS page_migrate_address ON page_migrate (start_addr);
CREATE INDEX IF NOT EXISTS queue_suspend_time ON queue_suspend (start_timestamp);
CREATE INDEX IF NOT EXISTS unmap_from_gpu_time ON unmap_from_gpu (start_timestamp);
CREATE INDEX IF NOT EXISTS unmap_from_gpu_address ON unmap_from_gpu (start_addr);

)sql";
} // namespace rocprof_kfd
