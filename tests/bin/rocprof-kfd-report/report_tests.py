#!/usr/bin/env python3
# MIT License - see LICENSE.
"""End-to-end tests of rocprof-kfd-report, one case per ctest test:

  single      a generated 2-GPU workload: summary written by summary_oracle.py, report
              parsed; every plot, axis title, legend; no external URL; the numbers behind
              each plot recomputed here from the generator's records for one bin
  ranks       three ranks on two hosts (one lost records): per-rank comparison, red banner
  bad-input   missing file, invalid JSON, wrong schema/version/type: one line naming the
              file, exit status 2, no report written
  mutations   every field of a valid summary given a wrong type or range: rendered or
              refused in one line (status 2), never a crash
  large       8 GPUs x 512 bins, 1000 suspensions per GPU: size bound, printed
  render      headless Chromium: rendered SVG sizes (getBBox), no console error, screenshot
              not blank and showing the plots' colours, printable to a multi-page PDF
  tool-replay the bundled tool on a bundled log through the emulator, then the report
"""

import argparse
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import html_dom  # noqa: E402
import summary_oracle as oracle  # noqa: E402

PLOTS = {
    # plot id -> substrings its axis titles must contain (units)
    "migration-bandwidth": ["bandwidth (GB/s)", "time since the first event ("],
    "fault-rate": ["faults/s", "time since the first event ("],
    "histogram-page_fault": ["records", "duration (ns, log scale"],
    "histogram-page_migrate": ["records", "duration (ns, log scale"],
    "queue-suspension": ["time since the first event ("],
}
RANK_PLOTS = {
    "rank-bytes": ["bytes migrated (GiB)"],
    "rank-faults": ["page faults"],
    "rank-queue": ["queues suspended (% of wall time, of records' span if replayed)"],
}

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)
    return cond


def close(a, b, rel=2e-5, abs_tol=1e-9):
    return abs(a - b) <= max(abs_tol, rel * max(abs(a), abs(b)))


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, **kw)


def generate(args, name, scenario, gpus, events, seed):
    """A generated log and its oracle records: (records, gpus)."""
    log = os.path.join(args.work, name + ".log")
    expect = os.path.join(args.work, name + ".expect.csv")
    r = run([args.generator, "--scenario", scenario, "--gpus", str(gpus), "--events",
             str(events), "--seed", str(seed), "--timestamps", "keep", "-o", log,
             "--expect", expect])
    assert r.returncode == 0, r.stderr
    return oracle.read_records(expect), oracle.read_gpus(log)


def report(args, inputs, out):
    r = run([args.report, "-o", out] + inputs)
    check(r.returncode == 0, f"report exit status {r.returncode}: {r.stderr}")
    check(r.stderr.strip() == f"rocprof-kfd-report: wrote {out}", f"stderr: {r.stderr!r}")
    with open(out, encoding="utf-8") as f:
        return f.read()


# --- structure -------------------------------------------------------------------------

def check_self_contained(text, root):
    for bad in ("http:", "https:", "//", "ftp:", "url(", "@import", "data:"):
        check(bad not in text, f"the page contains {bad!r}")
    scripts = root.find_all("script")
    check(len(scripts) <= 1, f"{len(scripts)} scripts")
    for sc in scripts:  # the inline hover script only: nothing loaded, nothing evaluated
        check(not sc.attrs, f"<script {sc.attrs}>")
        for bad in ("eval(", "Function(", "fetch(", "XMLHttpRequest", "import(", "innerHTML",
                    "document.write", "WebSocket", "src"):
            check(bad not in sc.text(), f"the script uses {bad}")
    for n in root.walk():
        check(n.tag not in ("link", "img", "iframe", "object", "embed", "image",
                            "use", "foreignobject", "audio", "video", "base", "form"),
              f"<{n.tag}> in the page")
        for k, v in n.attrs.items():
            if k in ("src", "href", "xlink:href", "action", "srcset", "background"):
                check((v or "").startswith("#"), f"<{n.tag} {k}={v!r}>")
            check(not k.startswith("on"), f"event handler {k} on <{n.tag}>")


def check_plot(section, plot_id, titles):
    svg = section.find("svg", data_plot=plot_id)
    if not check(svg is not None, f"plot {plot_id} missing"):
        return None
    check(svg.find("title") is not None and svg.find("title").text().strip(), f"{plot_id}: no title")
    axis_titles = " | ".join(t.text() for t in svg.find_all("text", class_="axis-title"))
    for t in titles:
        check(t in axis_titles, f"{plot_id}: axis title {t!r} not in {axis_titles!r}")
    legend = svg.find("g", class_="legend")
    check(legend is not None and legend.find_all("text"), f"{plot_id}: no legend")
    check(float(svg.attrs["width"]) > 0 and float(svg.attrs["height"]) > 0, f"{plot_id}: no size")
    return svg


def check_structure(text, expect_inputs, expect_ranks):
    root, errors = html_dom.parse(text)
    check(not errors, f"HTML nesting errors: {errors[:5]}")
    check(text.startswith("<!DOCTYPE html>"), "no doctype")
    check(root.find("meta", charset="utf-8") is not None, "no charset")
    check(root.find("style") is not None and "@media print" in root.find("style").text(),
          "no print stylesheet")
    check_self_contained(text, root)
    sections = root.find_all("section", class_="input")
    check(len(sections) == expect_inputs, f"{len(sections)} input sections, {expect_inputs} expected")
    for s in sections:
        for plot_id, titles in PLOTS.items():
            check_plot(s, plot_id, titles)
        for table in ("metadata", "loss", "operations", "directions", "faults",
                      "top-ranges-by-faults", "top-ranges-by-bytes", "thrashing"):
            check(s.find("table", data_table=table) is not None, f"table {table} missing")
    ranks = root.find("section", data_section="rank-comparison")
    check((ranks is not None) == expect_ranks, f"rank section present: {ranks is not None}")
    if ranks is not None:
        for plot_id, titles in RANK_PLOTS.items():
            check_plot(ranks, plot_id, titles)
    return root, sections


# --- numbers, recomputed here from the records ------------------------------------------

def values(node):
    return [float(v) for v in node.attrs["data-values"].split()]


def overlap_share(r, lo, hi):
    """The part of migration r's bytes that falls in [lo, hi)."""
    size = r["addr_end"] + 1 - r["addr_start"]
    s, e = r["start_ns"], r["end_ns"]
    if e <= s:
        return size if lo <= s < hi else 0
    return size * max(0, min(e, hi) - max(s, lo)) / (e - s)


def series_records(series, migs):
    """(path, (from, to), its migrations) for each bandwidth series; the 'other' series
    holds every direction not drawn on its own."""
    shown = {(int(p.attrs["data-from-node"]), int(p.attrs["data-to-node"]))
             for p in series if p.attrs["data-from-node"] != "other"}
    for p in series:
        if p.attrs["data-from-node"] == "other":
            yield p, ("other", "other"), [r for r in migs if (r["node_or_from"], r["to"]) not in shown]
        else:
            a, b = int(p.attrs["data-from-node"]), int(p.attrs["data-to-node"])
            yield p, (a, b), [r for r in migs if (r["node_or_from"], r["to"]) == (a, b)]


def check_numbers(section, records):
    migs = [r for r in records if r["operation"] == "PAGE_MIGRATE"]
    faults = [r for r in records if r["operation"] == "PAGE_FAULT"]
    queues = [r for r in records if r["operation"] == "QUEUE_SUSPEND"]

    bw = section.find("svg", data_plot="migration-bandwidth")
    t0, bin_ns, bins = (int(bw.attrs[k]) for k in ("data-start-ns", "data-bin-ns", "data-bins"))
    # One bin: the one where the median migration starts; every direction drawn.
    k = (sorted(r["start_ns"] for r in migs)[len(migs) // 2] - t0) // bin_ns
    lo, hi = t0 + k * bin_ns, t0 + (k + 1) * bin_ns
    series = bw.find_all("path", class_="series")
    directions = {(r["node_or_from"], r["to"]) for r in migs}
    check(len(series) == min(len(directions), 8), "bandwidth series: 7 directions and 'other'")
    for p, (a, b), mine in series_records(series, migs):
        want = sum(overlap_share(r, lo, hi) for r in mine) / bin_ns  # bytes/ns = GB/s
        got = values(p)
        check(len(got) == bins, "bandwidth values per bin")
        check(close(got[k], want), f"bandwidth {a}->{b} bin {k}: {got[k]} GB/s, expected {want}")
        total = sum(r["addr_end"] + 1 - r["addr_start"] for r in mine)
        check(close(sum(got) * bin_ns, total, rel=1e-4), f"bandwidth {a}->{b}: bytes over all bins")

    fr = section.find("svg", data_plot="fault-rate")
    k = (sorted(r["start_ns"] for r in faults)[len(faults) // 2] - t0) // bin_ns
    for panel in fr.find_all("g", class_="panel"):
        gpu = int(panel.attrs["data-gpu-id"])
        for kind, is_read in (("read", 1), ("write", 0)):
            n = sum(1 for r in faults if r["node_or_from"] == gpu and r["read_fault"] == is_read and
                    (r["start_ns"] - t0) // bin_ns == k)
            got = values(panel.find("path", data_kind=kind))[k]
            check(close(got, n * 1e9 / bin_ns), f"fault rate gpu {gpu} {kind} bin {k}: {got}, "
                  f"expected {n * 1e9 / bin_ns}")

    for op, rs in (("page_fault", faults), ("page_migrate", migs)):
        h = section.find("svg", data_plot="histogram-" + op)
        ds = sorted(r["end_ns"] - r["start_ns"] for r in rs)
        bars = h.find_all("rect", class_="bar")
        check(sum(int(b.attrs["data-value"]) for b in bars) == len(ds), f"{op}: bars hold every record")
        tallest = max(bars, key=lambda b: int(b.attrs["data-value"]))
        for bar in bars:
            lower, upper = int(bar.attrs["data-lower-ns"]), int(bar.attrs["data-upper-ns"])
            n = sum(1 for d in ds if (lower < d <= upper) or (upper == 1 and d <= 1))
            check(int(bar.attrs["data-value"]) == n, f"{op}: bucket ({lower}, {upper}] holds {n}")
            # geometry: bar heights in proportion to their counts
            ratio = float(bar.attrs["height"]) / float(tallest.attrs["height"])
            check(abs(ratio - n / int(tallest.attrs["data-value"])) < 0.02, f"{op}: bar height")
        p50 = ds[-(-len(ds) * 50 // 100) - 1]
        p99 = ds[-(-len(ds) * 99 // 100) - 1]
        check(int(h.find("g", data_marker="p50").attrs["data-ns"]) == p50, f"{op}: p50 marker")
        check(int(h.find("g", data_marker="p99").attrs["data-ns"]) == p99, f"{op}: p99 marker")

    q = section.find("svg", data_plot="queue-suspension")
    wall = max(r["end_ns"] for r in records) - min(r["start_ns"] for r in records)
    rows = q.find_all("g", class_="row")
    check(len(rows) == len({r["node_or_from"] for r in queues}), "one strip per suspended GPU")
    for row in rows:
        gpu = int(row.attrs["data-gpu-id"])
        mine = [r for r in queues if r["node_or_from"] == gpu]
        total = sum(r["end_ns"] - r["start_ns"] for r in mine)
        check(int(row.attrs["data-total-ns"]) == total, f"queue gpu {gpu}: total")
        check(int(row.attrs["data-intervals"]) == len(mine), f"queue gpu {gpu}: intervals")
        check(close(float(row.attrs["data-share"]), total / wall), f"queue gpu {gpu}: share")
        check(f"{100 * total / wall:.3g}"[:3] in row.text(), f"queue gpu {gpu}: share shown")
        check(row.find_all("rect", class_="interval"), f"queue gpu {gpu}: no interval drawn")

    # Highlights: the peak bandwidth over all bins, recomputed bin by bin from the records.
    per_bin = [0.0] * bins
    for r in migs:
        first = (r["start_ns"] - t0) // bin_ns
        last = max(first, (r["end_ns"] - 1 - t0) // bin_ns)
        for b in range(first, min(last, bins - 1) + 1):
            per_bin[b] += overlap_share(r, t0 + b * bin_ns, t0 + (b + 1) * bin_ns) / bin_ns
    hl = section.find("ul", data_section="highlights")
    peak = hl.find("li", data_highlight="peak-bandwidth")
    k = max(range(bins), key=lambda b: per_bin[b])
    check(int(peak.attrs["data-bin"]) == k and close(float(peak.attrs["data-value"]), per_bin[k]),
          f"peak bandwidth {peak.attrs} vs bin {k} {per_bin[k]}")
    total = sum(r["addr_end"] + 1 - r["addr_start"] for r in migs)
    check(int(hl.find("li", data_highlight="bytes-migrated").attrs["data-value"]) == total,
          "highlight: bytes migrated")
    worst = max({r["node_or_from"] for r in queues},
                key=lambda g: sum(r["end_ns"] - r["start_ns"] for r in queues if r["node_or_from"] == g))
    check(int(hl.find("li", data_highlight="worst-queue-share").attrs["data-gpu-id"]) == worst,
          "highlight: worst queue share")

    top = section.find("table", data_table="top-ranges-by-faults").find("tbody").find("tr")
    per_block = {}
    for r in faults:
        per_block[r["addr_start"] >> 21] = per_block.get(r["addr_start"] >> 21, 0) + 1
    best = max(per_block.values())
    check(int(top.find_all("td")[1].attrs["data-value"]) == best, "top range by faults")


# --- cases ---------------------------------------------------------------------------------

def case_single(args):
    records, gpus = generate(args, "single", "mixed", 2, 3000, 11)
    path = os.path.join(args.work, "single", "summary.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    oracle.write(oracle.build(records, gpus), path)
    text = report(args, [path], os.path.join(args.work, "single.html"))
    root, sections = check_structure(text, 1, False)
    check(root.find("div", data_lost="false") is not None, "no-loss line")
    check(root.find("div", data_lost="true") is None, "no red banner without loss")
    check_numbers(sections[0], records)


def write_ranks(args):
    """Three ranks on two hosts, as rocprof-kfd -d out/%hostname%-%rank% leaves them."""
    base = os.path.join(args.work, "ranks")
    shutil.rmtree(base, ignore_errors=True)
    all_records = []
    for rank, (host, seed, gpus) in enumerate([("host-a", 21, 2), ("host-a", 22, 2), ("host-b", 23, 4)]):
        records, g = generate(args, f"rank{rank}", "mixed", gpus, 1500, seed)
        loss = {"records_dropped": 17, "lost": True,
                "message": "17 records dropped: a buffer was full"} if rank == 1 else None
        d = os.path.join(base, f"{host}-{rank}", "4242")
        os.makedirs(d)
        summary = oracle.build(records, g, pid=4000 + rank, rank=str(rank), hostname=host, loss=loss)
        if rank == 2:  # what the tool writes for a run killed before its finalization
            summary["complete"] = False
            summary["loss"]["available"] = False
        oracle.write(summary, os.path.join(d, "summary.json"))
        all_records.append(records)
    return base, all_records


def case_ranks(args):
    base, all_records = write_ranks(args)
    # A merged summary next to the ranks (as rocprof-kfd merge -o leaves one): its own
    # section, listed inputs, and not a fourth row of the comparison.
    gpus = [g for i in (0, 1) for g in oracle.read_gpus(os.path.join(args.work, f"rank{i}.log"))]
    merged = oracle.build(all_records[0] + all_records[1], gpus)
    merged["inputs"] = [{"directory": f"host-a-{i}/4242", "hostname": "host-a", "rank": str(i),
                         "pid": 4000 + i, "records": len(all_records[i]), "complete": True} for i in (0, 1)]
    os.makedirs(os.path.join(base, "zz-merged"))
    oracle.write(merged, os.path.join(base, "zz-merged", "summary.json"))
    text = report(args, [base], os.path.join(args.work, "ranks.html"))
    root, sections = check_structure(text, 4, True)
    check(sections[3].find("table", data_table="merged-inputs") is not None and
          len(sections[3].find("table", data_table="merged-inputs").find("tbody").find_all("tr")) == 2,
          "merged summary lists its inputs")
    check("merged: 2 processes" in sections[3].find("h2").text(), "merged section title")
    for i, records in enumerate(all_records):
        check_numbers(sections[i], records)
    banner = root.find("div", data_lost="true")
    if check(banner is not None, "red banner when a rank lost records"):
        check("rank 1 · host-a · pid 4001" in banner.text() and "17 records dropped" in banner.text(),
              f"banner names the rank: {banner.text()!r}")
        check(banner.attrs.get("role") == "alert", "banner role")
        check("rank 2 · host-b · pid 4002: the summary is incomplete" in banner.text(),
              f"banner names the incomplete summary: {banner.text()!r}")
        check("rank 0" not in banner.text(), "rank 0 lost nothing")
    loss2 = sections[2].find("table", data_table="loss")
    check(any(tr.find("td") and tr.find("td").text() == "available" and "nonzero" in tr.attrs.get("class", "")
              for tr in loss2.find_all("tr")), "loss counters unavailable: flagged")
    ranks = root.find("section", data_section="rank-comparison")
    rows = ranks.find("table", data_table="ranks").find("tbody").find_all("tr")
    check(len(rows) == 3, "three rank rows")
    check("lost" in rows[1].text() and "none" in rows[0].text(), "loss column")
    bars = ranks.find("svg", data_plot="rank-bytes")
    for i, records in enumerate(all_records):
        htod = sum(r["addr_end"] + 1 - r["addr_start"] for r in records
                   if r["operation"] == "PAGE_MIGRATE" and r["node_or_from"] == 0 and r["to"] != 0)
        row = bars.find("g", data_row=str(i))
        got = float(row.find("rect", data_series="HtoD").attrs["data-value"])
        check(close(got, htod), f"rank {i}: HtoD bytes {got}, expected {htod}")
        reads = sum(1 for r in records if r["operation"] == "PAGE_FAULT" and r["read_fault"])
        row = ranks.find("svg", data_plot="rank-faults").find("g", data_row=str(i))
        check(float(row.find("rect", data_series="read faults").attrs["data-value"]) == reads,
              f"rank {i}: read faults")


def case_bad_input(args):
    d = os.path.join(args.work, "bad")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "empty"))
    good = oracle.build(*generate(args, "bad-good", "streaming", 1, 200, 3))
    cases = {
        "missing.json": None,
        "invalid.json": '{"schema": "rocprof-kfd-summary", "version": 1,',
        "schema.json": json.dumps(dict(good, schema="something-else")),
        "version.json": json.dumps(dict(good, version=2)),
        "type.json": json.dumps(dict(good, metadata=dict(good["metadata"], pid="one"))),
        "array.json": '[1, 2, 3]',
    }
    out = os.path.join(d, "out.html")
    for name, content in cases.items():
        path = os.path.join(d, name)
        if content is not None:
            with open(path, "w") as f:
                f.write(content)
        good_path = os.path.join(d, "good", "summary.json")
        os.makedirs(os.path.dirname(good_path), exist_ok=True)
        oracle.write(good, good_path)
        # the bad file after a good one: the whole run fails
        r = run([args.report, "-o", out, good_path, path])
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2, f"{name}: exit status {r.returncode}")
        check(len(lines) == 1 and path in lines[0], f"{name}: one line naming the file: {r.stderr!r}")
        check(not os.path.exists(out), f"{name}: a report was written")
        print(f"{name}: {r.stderr.strip()}")
    r = run([args.report, "-o", out, os.path.join(d, "empty")])
    check(r.returncode == 2 and "no summary.json" in r.stderr, f"empty dir: {r.stderr!r}")
    r = run([args.report, "--bogus", good_path])
    check(r.returncode == 2 and "unknown option --bogus" in r.stderr, f"bad option: {r.stderr!r}")
    r = run([args.report])
    check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, "no input")
    r = run([args.report, "-o", os.path.join(d, "no", "such", "dir", "r.html"), good_path])
    check(r.returncode == 1 and "cannot write" in r.stderr, f"unwritable output: {r.stderr!r}")
    # a planted symlink at the output is replaced, never followed
    victim = os.path.join(d, "victim.txt")
    with open(victim, "w") as f:
        f.write("keep")
    link = os.path.join(d, "link.html")
    os.symlink(victim, link)
    r = run([args.report, "-o", link, good_path])
    check(r.returncode == 0 and not os.path.islink(link), "output symlink replaced")
    check(open(victim).read() == "keep", "symlink target untouched")
    r = run([args.report, "--help"])
    check(r.returncode == 0 and "usage: rocprof-kfd-report" in r.stdout, "--help")


def mutations(value, rnd, path=()):
    """Every (path, replacement) worth trying on a summary: each member and element replaced
    by values of other types and out-of-range numbers, or removed."""
    out = []
    odd = [None, True, -1, 2 ** 64, 1e300, -0.5, "x", "0x", [], {}, [1, 2], 3.5]
    if isinstance(value, dict):
        for k, v in value.items():
            out += [(path + (k,), o) for o in odd] + [(path + (k,), "<delete>")]
            out += mutations(v, rnd, path + (k,))
    elif isinstance(value, list) and value:
        i = rnd.randrange(len(value))
        out += [(path + (i,), o) for o in odd]
        out += mutations(value[i], rnd, path + (i,))
    return out


def apply(summary, path, replacement):
    s = json.loads(json.dumps(summary))
    node = s
    for p in path[:-1]:
        node = node[p]
    if replacement == "<delete>":
        del node[path[-1]]
    else:
        node[path[-1]] = replacement
    return s


def case_mutations(args):
    """Every field of a valid summary replaced by something of the wrong type or range: the
    report either renders it (a missing or tolerated field) or says which field is wrong in
    one line with status 2; it never crashes."""
    rnd = random.Random(9)
    records, gpus = generate(args, "mut", "mixed", 2, 400, 4)
    good = oracle.build(records, gpus)
    cases = mutations(good, rnd)
    cases = rnd.sample(cases, min(len(cases), 600))  # a deterministic sample keeps it short
    path = os.path.join(args.work, "summary.json")
    out = os.path.join(args.work, "out.html")
    verdicts = {0: 0, 2: 0}
    for fields, replacement in cases:
        oracle.write(apply(good, fields, replacement), path)
        r = run([args.report, "-o", out, path])
        where = ".".join(str(f) for f in fields) + " = " + repr(replacement)
        if not check(r.returncode in (0, 2), f"{where}: exit status {r.returncode}: {r.stderr[-300:]}"):
            continue
        verdicts[r.returncode] += 1
        lines = r.stderr.strip().splitlines()
        check(len(lines) == 1, f"{where}: {len(lines)} lines on stderr")
        if r.returncode == 2:
            check(lines[0].startswith(f"rocprof-kfd-report: {path}: "), f"{where}: {lines[0]}")
    print(f"{len(cases)} mutated summaries: {verdicts[0]} rendered, {verdicts[2]} refused")
    check(verdicts[0] > 0 and verdicts[2] > 0, "both verdicts seen")


def large_summary():
    """8 GPUs, the full 512 bins, every direction, 1000 suspensions per GPU."""
    rnd = random.Random(5)
    gpus = [(0x1000 + 17 * i, "gfx942") for i in range(8)]
    bins, bin_ns, t0 = 512, 1 << 22, 10 ** 12
    dirs = [(0, g) for g, _ in gpus] + [(g, 0) for g, _ in gpus] + \
           [(a, b) for (a, _), (b, _) in zip(gpus, gpus[1:] + gpus[:1])]
    s = oracle.build([{"operation": "PAGE_FAULT", "start_ns": t0, "end_ns": t0 + bins * bin_ns - 1,
                       "node_or_from": gpus[0][0], "read_fault": 1, "migrated": 1,
                       "addr_start": 0, "trigger": None}], gpus)
    s["timeline"] = {"start_ns": t0, "bin_ns": bin_ns, "bins": bins,
                     "migration_bytes": [{"from_node": a, "to_node": b,
                                          "values": [rnd.randrange(0, 1 << 28) for _ in range(bins)]}
                                         for a, b in dirs],
                     "faults": [{"gpu_id": g, "read": [rnd.randrange(0, 5000) for _ in range(bins)],
                                 "write": [rnd.randrange(0, 5000) for _ in range(bins)]} for g, _ in gpus]}
    s["histograms"] = {op: {"bucket_upper_ns": [1 << i for i in range(40)],
                            "counts": [rnd.randrange(0, 10 ** 6) for _ in range(40)],
                            "p50_ns": 1 << 14, "p99_ns": 1 << 20} for op in ("page_fault", "page_migrate")}
    s["queue_suspensions"] = []
    for g, _ in gpus:
        starts = sorted(rnd.sample(range(t0, t0 + bins * bin_ns), 1000))
        s["queue_suspensions"].append({"gpu_id": g, "intervals_merged": True,
                                       "intervals": [[a, a + rnd.randrange(1000, 200000)] for a in starts]})
    s["queue_suspend_by_gpu"] = [{"gpu_id": g, "name": n, "count": 1000, "total_ns": 10 ** 8,
                                  "share_of_wall": 0.05} for g, n in gpus]
    s["thrashing"]["ranges"] = [{"start": hex(i << 21), "end": hex(((i + 1) << 21) - 1),
                                 "between": [0, gpus[i % 8][0]], "migrations": 100 - i,
                                 "bytes": 1 << 30} for i in range(50)]
    return s


def case_large(args):
    d = os.path.join(args.work, "large")
    os.makedirs(d, exist_ok=True)
    oracle.write(large_summary(), os.path.join(d, "summary.json"))
    out = os.path.join(args.work, "large.html")
    text = report(args, [d], out)
    size = os.path.getsize(out)
    print(f"large summary (8 GPUs, 512 bins, 24 directions, 8000 suspensions): report {size} bytes")
    check(size < 3 * 1024 * 1024, f"report of {size} bytes, over 3 MiB")
    root, sections = check_structure(text, 1, False)
    bw = sections[0].find("svg", data_plot="migration-bandwidth")
    labels = [p.attrs["data-label"] for p in bw.find_all("path", class_="series")]
    check(len(labels) == 8 and labels[-1] == "other (17 directions)", f"series {labels}")


PROBE = """<script>
// Test probe (not part of the report): record each plot's rendered size.
for (const svg of document.querySelectorAll('svg.plot')) {
  const b = svg.getBBox(), r = svg.getBoundingClientRect();
  let drawn = 0;
  for (const e of svg.querySelectorAll('path.series, rect.bar, rect.interval')) {
    const eb = e.getBBox(); if (eb.width > 0 && eb.height > 0) drawn++;
  }
  svg.setAttribute('data-probe', [b.width, b.height, r.width, r.height, drawn].join(' '));
}
/* Hover the middle bin of the bandwidth plot: the report's script shows a tooltip. */
const bw = document.querySelector('svg[data-plot=migration-bandwidth]');
const bins = +bw.getAttribute('data-bins'), x0 = +bw.getAttribute('data-x0'), x1 = +bw.getAttribute('data-x1');
const k = Math.floor(bins / 2);
const pt = bw.createSVGPoint();
pt.x = x0 + (k + 0.5) * (x1 - x0) / bins; pt.y = 100;
const c = pt.matrixTransform(bw.getScreenCTM());
bw.dispatchEvent(new MouseEvent('mousemove', {clientX: c.x, clientY: c.y, bubbles: true}));
const tip = document.querySelector('div.tip');
bw.setAttribute('data-tip', tip ? tip.textContent + '|' + tip.style.display : 'none');
bw.setAttribute('data-tip-bin', k);
document.body.setAttribute('data-probe-done', 'yes');
console.log('probe done');
</script>"""


def chromium(args, *extra):
    profile = os.path.join(args.work, "chromium-profile")
    cmd = [args.chromium, "--headless", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           "--disable-extensions",
           "--disable-background-networking", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0"]
    if os.geteuid() == 0:
        cmd.append("--no-sandbox")  # Chromium refuses to run as root otherwise
    return run(cmd + list(extra))


def console_errors(stderr):
    lines = [line for line in stderr.splitlines() if ":CONSOLE" in line or "net::ERR" in line]
    return [line for line in lines if "probe done" not in line]


def case_render(args):
    if not args.chromium:
        print("SKIPPED: no chromium (scripts/setup-debian.sh installs it)")
        sys.exit(77)
    base, _ = write_ranks(args)
    records, gpus = generate(args, "render", "mixed", 2, 3000, 11)
    single = os.path.join(args.work, "render", "summary.json")
    os.makedirs(os.path.dirname(single), exist_ok=True)
    oracle.write(oracle.build(records, gpus, hostname="node017", rank="0"), single)
    for name, inputs, plots in (("render-single", [single], len(PLOTS)),
                                ("render-ranks", [base], 3 * len(PLOTS) + len(RANK_PLOTS))):
        html = os.path.join(args.work, name + ".html")
        text = report(args, inputs, html)
        probe = os.path.join(args.work, name + ".probe.html")
        with open(probe, "w", encoding="utf-8") as f:
            f.write(text.replace("</body>", PROBE + "</body>"))
        r = chromium(args, "--dump-dom", "file://" + probe)
        check(r.returncode == 0, f"{name}: chromium --dump-dom exit status {r.returncode}")
        check(not console_errors(r.stderr), f"{name}: console: {console_errors(r.stderr)}")
        root, errors = html_dom.parse(r.stdout)
        check(root.find("body", data_probe_done="yes") is not None, f"{name}: probe did not run")
        bw = root.find("svg", data_plot="migration-bandwidth")
        tip = bw.attrs.get("data-tip", "")
        k = int(bw.attrs.get("data-tip-bin", "-1"))
        labels = [p.attrs["data-label"] for p in bw.find_all("path", class_="series")]
        check(tip.startswith(f"bin {k}: ") and tip.endswith("|block") and
              all(label in tip for label in labels) and tip.count("\n") == len(labels),
              f"{name}: hover tooltip {tip!r}")
        svgs = root.find_all("svg", class_="plot")
        check(len(svgs) == plots, f"{name}: {len(svgs)} plots rendered, {plots} expected")
        for svg in svgs:
            w, h, rw, rh, drawn = (float(v) for v in svg.attrs.get("data-probe", "0 0 0 0 0").split())
            check(w > 100 and h > 50 and rw > 100 and rh > 50,
                  f"{name}: {svg.attrs['data-plot']} rendered {w}x{h} (box {rw}x{rh})")
            check(drawn > 0, f"{name}: {svg.attrs['data-plot']}: no drawn mark has a size")
        png = os.path.join(args.work, name + ".png")
        r = chromium(args, "--hide-scrollbars", "--window-size=1000,1900", f"--screenshot={png}",
                     "file://" + html)
        check(r.returncode == 0 and os.path.exists(png), f"{name}: screenshot failed: {r.stderr[-500:]}")
        check(not console_errors(r.stderr), f"{name}: console: {console_errors(r.stderr)}")
        w, h, rows = html_dom.read_png(png)
        pixels = [p for row in rows for p in row]
        lum = [0.299 * r_ + 0.587 * g + 0.114 * b for r_, g, b in pixels]
        mean = sum(lum) / len(lum)
        var = sum((v - mean) ** 2 for v in lum) / len(lum)
        ink = sum(1 for v in lum if v < 200) / len(lum)
        blue = sum(1 for p in pixels if abs(p[0] - 0x00) < 12 and abs(p[1] - 0x72) < 12 and abs(p[2] - 0xB2) < 12)
        print(f"{name}: screenshot {w}x{h}, luminance variance {var:.0f}, ink {ink:.3f}, "
              f"Okabe-Ito blue pixels {blue}")
        check(var > 100 and ink > 0.02, f"{name}: screenshot looks blank")
        check(blue > 1000, f"{name}: the plots' blue is missing from the screenshot")
        # Printed: Chromium's print to PDF gives several pages (plots kept whole by the print CSS).
        pdf = os.path.join(args.work, name + ".pdf")
        r = chromium(args, "--no-pdf-header-footer", f"--print-to-pdf={pdf}", "file://" + html)
        data = open(pdf, "rb").read() if os.path.exists(pdf) else b""
        pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", data))
        print(f"{name}: printed to PDF, {len(data)} bytes, {pages} pages")
        check(data.startswith(b"%PDF") and pages >= 2 and len(data) > 50000, f"{name}: print to PDF")
        if name == "render-single" and args.screenshot_out:
            shutil.copyfile(png, args.screenshot_out)


def sanitizer_runtime(library):
    """The ASan/TSan runtime a sanitizer build's library needs ("" in a normal build): it must
    come first in LD_PRELOAD, or the runtime refuses to start the program."""
    listing = subprocess.run(["ldd", library], capture_output=True, text=True).stdout
    found = re.search(r"=>\s*(\S*lib(?:asan|tsan)\.so\S*)", listing)
    return found.group(1) if found else ""


def case_tool_replay(args):
    log = os.path.join(args.logs, "mixed-4gpu-6.0.log")
    expect = os.path.join(args.logs, "mixed-4gpu-6.0.expect.csv")
    out_dir = os.path.join(args.work, "tool-replay")
    shutil.rmtree(out_dir, ignore_errors=True)
    preload = " ".join(p for p in (sanitizer_runtime(args.emulator), args.emulator, args.tool) if p)
    env = dict(os.environ, LD_PRELOAD=preload, KFD_EMULATOR_LOG=log,
               ROCPROF_KFD_OUTPUT_DIRECTORY=out_dir, ROCPROF_KFD_SUMMARY_STDERR="0",
               ROCPROF_KFD_OUTPUT_FORMAT="summary")
    r = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"replay exit status {r.returncode}: {r.stderr}")
    found = glob.glob(os.path.join(out_dir, "**", "summary.json"), recursive=True)
    if not check(len(found) == 1, f"summary.json written by the tool: {found}"):
        return
    text = report(args, [out_dir], os.path.join(args.work, "tool-replay.html"))
    root, sections = check_structure(text, 1, False)
    records = oracle.read_records(expect)
    s = sections[0]
    # Time-independent figures (the emulator rebases timestamps): totals per plot.
    bw = s.find("svg", data_plot="migration-bandwidth")
    bin_ns = int(bw.attrs["data-bin-ns"])
    migs = [r for r in records if r["operation"] == "PAGE_MIGRATE"]
    for p, (a, b), mine in series_records(bw.find_all("path", class_="series"), migs):
        want = sum(r["addr_end"] + 1 - r["addr_start"] for r in mine)
        check(close(sum(values(p)) * bin_ns, want, rel=1e-3), f"tool: bytes {a}->{b}")
    for op in ("PAGE_FAULT", "PAGE_MIGRATE"):
        h = s.find("svg", data_plot="histogram-" + op.lower())
        n = sum(int(b.attrs["data-value"]) for b in h.find_all("rect", class_="bar"))
        check(n == sum(1 for r in records if r["operation"] == op), f"tool: {op} histogram total {n}")
    fr = s.find("svg", data_plot="fault-rate")
    for panel in fr.find_all("g", class_="panel"):
        gpu = int(panel.attrs["data-gpu-id"])
        got = sum(values(panel.find("path", data_kind="read"))) * bin_ns / 1e9
        want = sum(1 for r in records if r["operation"] == "PAGE_FAULT" and r["node_or_from"] == gpu
                   and r["read_fault"])
        check(close(got, want, rel=1e-4, abs_tol=1e-6), f"tool: read faults gpu {gpu}: {got} vs {want}")
    q = s.find("svg", data_plot="queue-suspension")
    for row in q.find_all("g", class_="row"):
        gpu = int(row.attrs["data-gpu-id"])
        want = sum(r["end_ns"] - r["start_ns"] for r in records
                   if r["operation"] == "QUEUE_SUSPEND" and r["node_or_from"] == gpu)
        check(int(row.attrs["data-total-ns"]) == want, f"tool: queue total gpu {gpu}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["single", "ranks", "bad-input", "mutations", "large", "render",
                                     "tool-replay"])
    ap.add_argument("--report", required=True)
    ap.add_argument("--generator", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--chromium")
    ap.add_argument("--screenshot-out")
    ap.add_argument("--emulator")
    ap.add_argument("--tool")
    ap.add_argument("--logs")
    args = ap.parse_args()
    args.work = os.path.join(args.work, args.case)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    globals()["case_" + args.case.replace("-", "_")](args)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
