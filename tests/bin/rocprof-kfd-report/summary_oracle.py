# MIT License - see LICENSE.
"""Builds summary.json fixtures (schema "rocprof-kfd-summary" v1, docs/rocprof-kfd-design.md)
from a generator oracle: the records of `rocprof-kfd-gen --expect`, binned here by the rules
the design note states. Nothing here is shared with the report's C++ code."""

import csv
import json
import re

MIGRATE_TRIGGERS = ["prefetch", "pagefault_gpu", "pagefault_cpu", "ttm_eviction"]
QUEUE_TRIGGERS = ["svm", "userptr", "ttm", "suspend", "criu_checkpoint", "criu_restore"]
UNMAP_TRIGGERS = ["mmu_notify", "mmu_notify_migrate", "unmap_from_cpu"]
RANGE = 2 << 20
MAX_BINS = 512


def read_records(expect_csv):
    """Rows of an --expect file as dicts with ints (None for empty columns)."""
    out = []
    with open(expect_csv, newline="") as f:
        for row in csv.DictReader(f):
            out.append({k: (row[k] if k == "operation" else (int(row[k]) if row[k] != "" else None))
                        for k in row})
    return out


def read_gpus(log):
    """[(gpu_id, gfx name)] from the log's '#@ gpu HEX NAME' directives."""
    gpus = []
    with open(log) as f:
        for line in f:
            m = re.match(r"#@ gpu ([0-9a-fA-F]+) (\S+)", line)
            if m:
                gpus.append((int(m.group(1), 16), m.group(2)))
    return gpus


def migrate_bytes(r):
    return r["addr_end"] + 1 - r["addr_start"]  # addr_end is inclusive for migrations


def duration(r):
    return r["end_ns"] - r["start_ns"]


def log2_bucket(d):
    """Bucket i holds durations in (2^(i-1), 2^i]; bucket 0 holds 0 and 1."""
    return 0 if d <= 1 else (d - 1).bit_length()


def nearest_rank(values, p):
    v = sorted(values)
    if not v:
        return 0
    k = max(1, -(-len(v) * p // 100))  # ceil(n*p/100)
    return v[k - 1]


def choose_bins(t0, t1):
    bin_ns = 1024
    while (t1 - t0) > bin_ns * MAX_BINS:
        bin_ns *= 2
    return bin_ns, max(1, -(-(t1 - t0) // bin_ns))


def spread(start, end, amount, t0, bin_ns, bins):
    """[(bin, share)]: `amount` spread over the bins [start, end) overlaps, in proportion."""
    if end <= start:
        return [(min((start - t0) // bin_ns, bins - 1), float(amount))]
    out = []
    b = (start - t0) // bin_ns
    while b < bins and t0 + b * bin_ns < end:
        lo, hi = max(start, t0 + b * bin_ns), min(end, t0 + (b + 1) * bin_ns)
        if hi > lo:
            out.append((b, amount * (hi - lo) / (end - start)))
        b += 1
    return out


def direction_kind(a, b):
    return "htod" if a == 0 and b != 0 else ("dtoh" if a != 0 and b == 0 else "dtod")


def op_stats(records, operation, trigger_names):
    out = []
    groups = {}
    for r in records:
        if r["operation"] != operation:
            continue
        t = r["trigger"]
        name = "none" if t is None else trigger_names[t]
        groups.setdefault(name, []).append(duration(r))
    for name, ds in sorted(groups.items()):
        out.append({"operation": operation.lower(), "trigger": name, "count": len(ds),
                    "total_ns": sum(ds), "mean_ns": sum(ds) // len(ds), "min_ns": min(ds),
                    "p50_ns": nearest_rank(ds, 50), "p99_ns": nearest_rank(ds, 99),
                    "max_ns": max(ds)})
    return out


def histogram(ds):
    if not ds:
        return {"bucket_upper_ns": [], "counts": [], "p50_ns": 0, "p99_ns": 0}
    top = max(log2_bucket(d) for d in ds)
    counts = [0] * (top + 1)
    for d in ds:
        counts[log2_bucket(d)] += 1
    return {"bucket_upper_ns": [1 << i for i in range(top + 1)], "counts": counts,
            "p50_ns": nearest_rank(ds, 50), "p99_ns": nearest_rank(ds, 99)}


def range_table(records):
    """{block start: {...}} for 2 MiB blocks: faults by address, migrations in every block
    they cover with bytes split by overlap."""
    blocks = {}

    def block(a):
        return blocks.setdefault(a, {"faults": 0, "migrations": 0, "htod_bytes": 0,
                                     "dtoh_bytes": 0, "dtod_bytes": 0, "pairs": {}})
    for r in records:
        if r["operation"] == "PAGE_FAULT":
            block(r["addr_start"] // RANGE * RANGE)["faults"] += 1
        elif r["operation"] == "PAGE_MIGRATE":
            lo, hi = r["addr_start"], r["addr_end"] + 1
            a = lo // RANGE * RANGE
            while a < hi:
                b = block(a)
                b["migrations"] += 1
                overlap = min(hi, a + RANGE) - max(lo, a)
                b[direction_kind(r["node_or_from"], r["to"]) + "_bytes"] += overlap
                pair = tuple(sorted((r["node_or_from"], r["to"])))
                b["pairs"].setdefault(pair, []).append((r["node_or_from"], r["to"], overlap))
                a += RANGE
    return blocks


def range_row(a, b):
    return {"start": hex(a), "end": hex(a + RANGE - 1), "faults": b["faults"],
            "migrations": b["migrations"], "htod_bytes": b["htod_bytes"],
            "dtoh_bytes": b["dtoh_bytes"], "dtod_bytes": b["dtod_bytes"]}


def thrashing(blocks, threshold):
    """Blocks that moved between one pair of locations in both directions `threshold` or
    more times in all."""
    out = []
    for a, b in sorted(blocks.items()):
        for pair, moves in sorted(b["pairs"].items()):
            directions = {(m[0], m[1]) for m in moves}
            if len(moves) >= threshold and len(directions) == 2:
                out.append({"start": hex(a), "end": hex(a + RANGE - 1), "between": list(pair),
                            "migrations": len(moves), "bytes": sum(m[2] for m in moves)})
    return out


def build(records, gpus, pid=1000, rank=None, hostname="testhost", loss=None, threshold=4):
    starts = [r["start_ns"] for r in records]
    ends = [r["end_ns"] for r in records]
    t0, t1 = min(starts), max(ends)
    bin_ns, bins = choose_bins(t0, t1 + 1)
    names = {0: "CPU"}
    names.update({g: n for g, n in gpus})

    mig = {}
    faults = {g: {"read": [0] * bins, "write": [0] * bins} for g, _ in gpus}
    for r in records:
        if r["operation"] == "PAGE_MIGRATE":
            key = (r["node_or_from"], r["to"])
            vals = mig.setdefault(key, [0.0] * bins)
            for b, share in spread(r["start_ns"], r["end_ns"], migrate_bytes(r), t0, bin_ns, bins):
                vals[b] += share
        elif r["operation"] == "PAGE_FAULT":
            b = (r["start_ns"] - t0) // bin_ns
            faults[r["node_or_from"]]["read" if r["read_fault"] else "write"][b] += 1

    directions = []
    for (a, b) in sorted(mig):
        rs = [r for r in records if r["operation"] == "PAGE_MIGRATE" and (r["node_or_from"], r["to"]) == (a, b)]
        total_bytes = sum(migrate_bytes(r) for r in rs)
        total_ns = sum(duration(r) for r in rs)
        directions.append({"from_node": a, "to_node": b, "from_name": names.get(a, ""),
                           "to_name": names.get(b, ""), "count": len(rs), "bytes": total_bytes,
                           "total_ns": total_ns,
                           "gb_per_s": total_bytes / total_ns if total_ns else 0.0})

    fault_rows = []
    for g, n in gpus:
        fs = [r for r in records if r["operation"] == "PAGE_FAULT" and r["node_or_from"] == g]
        fault_rows.append({"gpu_id": g, "name": n,
                           "read_migrated": sum(1 for r in fs if r["read_fault"] and r["migrated"]),
                           "read_updated": sum(1 for r in fs if r["read_fault"] and not r["migrated"]),
                           "write_migrated": sum(1 for r in fs if not r["read_fault"] and r["migrated"]),
                           "write_updated": sum(1 for r in fs if not r["read_fault"] and not r["migrated"])})

    wall = t1 - t0
    queue_rows, intervals = [], []
    for g, n in gpus:
        qs = sorted((r["start_ns"], r["end_ns"]) for r in records
                    if r["operation"] == "QUEUE_SUSPEND" and r["node_or_from"] == g)
        if not qs:
            continue
        total = sum(b - a for a, b in qs)
        queue_rows.append({"gpu_id": g, "name": n, "count": len(qs), "total_ns": total,
                           "share_of_wall": total / wall})
        intervals.append({"gpu_id": g, "intervals": [list(q) for q in qs], "intervals_merged": False})

    blocks = range_table(records)
    by_faults = sorted(blocks, key=lambda a: (-blocks[a]["faults"], a))[:10]
    by_bytes = sorted(blocks, key=lambda a: (-(blocks[a]["htod_bytes"] + blocks[a]["dtoh_bytes"] +
                                              blocks[a]["dtod_bytes"]), a))[:10]
    loss_fields = {k: 0 for k in [
        "events_received", "lines_malformed", "events_other_process", "records_emitted",
        "ends_without_start", "starts_aged_out", "starts_never_ended", "records_dropped",
        "kernel_reported_drops", "fifo_saturations", "raw_events_dropped", "starts_lost_in_gap",
        "starts_timed_out", "migrate_trigger_mismatches", "lines_overlong", "fields_out_of_range"]}
    loss_fields["records_emitted"] = len(records)
    loss_fields.update({"lost": False, "probably_lost": False, "message": ""})
    if loss:
        loss_fields.update(loss)

    return {
        "schema": "rocprof-kfd-summary", "version": 1,
        "metadata": {"command": ["./app", "--size", "64M"], "pid": pid, "ppid": 1,
                     "hostname": hostname, "rank": rank, "sdk_version": "0.5.0",
                     "kernel_release": "6.12.0-test", "kfd_version": "1.17", "emulated": True,
                     "start_ns": t0, "end_ns": t1, "wall_ns": wall},
        "agents": [{"gpu_id": 0, "node_id": 0, "name": "CPU", "type": "cpu"}] +
                  [{"gpu_id": g, "node_id": i + 1, "name": n, "type": "gpu"}
                   for i, (g, n) in enumerate(gpus)],
        "loss": loss_fields,
        "operations": op_stats(records, "PAGE_FAULT", []) +
                      op_stats(records, "PAGE_MIGRATE", MIGRATE_TRIGGERS) +
                      op_stats(records, "QUEUE_SUSPEND", QUEUE_TRIGGERS) +
                      op_stats(records, "UNMAP_FROM_GPU", UNMAP_TRIGGERS),
        "migrations_by_direction": directions,
        "faults_by_gpu": fault_rows,
        "queue_suspend_by_gpu": queue_rows,
        "range_bytes": RANGE,
        "top_ranges_by_faults": [range_row(a, blocks[a]) for a in by_faults],
        "top_ranges_by_bytes": [range_row(a, blocks[a]) for a in by_bytes],
        "top_ranges_approximate": False,
        "thrashing": {"threshold": threshold, "ranges": thrashing(blocks, threshold)},
        "timeline": {"start_ns": t0, "bin_ns": bin_ns, "bins": bins,
                     "migration_bytes": [{"from_node": a, "to_node": b, "values": v}
                                         for (a, b), v in sorted(mig.items())],
                     "faults": [{"gpu_id": g, "read": faults[g]["read"], "write": faults[g]["write"]}
                                for g, _ in gpus]},
        "histograms": {
            "page_fault": histogram([duration(r) for r in records if r["operation"] == "PAGE_FAULT"]),
            "page_migrate": histogram([duration(r) for r in records if r["operation"] == "PAGE_MIGRATE"])},
        "queue_suspensions": intervals,
    }


def write(summary, path):
    with open(path, "w") as f:
        json.dump(summary, f)
