#!/bin/bash
# The SDK's reader pattern (ppoll + identity check + read) against an io_uring reader (one
# io_uring_enter per wake-up, a registered file), without and with a 50 us wait linked before
# each read, on a pipe of FIFO size fed with evenly spaced events: 5 alternated runs per
# configuration, medians. BENCHMARKS.md, "An io_uring
# reader, measured outside the SDK".
#
#   benchmarks/reader_wakeups.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
build=${1:-build}
seconds=${2:-2}
program="$build/benchmarks/reader-wakeups"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for config in "100000 4096" "200000 8192" "500000 8192"; do
    read -r rate fifo <<<"$config"
    for _ in 1 2 3 4 5; do
        for mode in poll io_uring io_uring_wait; do
            echo "$fifo $("$program" "$mode" "$rate" "$seconds" "$fifo" 50)" >>"$out"
        done
    done
done
python3 - "$out" <<'PY'
import collections, re, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"(\d+) (\S+)\s+rate\s+(\d+)\s+events\s+\d+\s+drops\s+(\d+)\s+wake-ups/event ([\d.]+)"
                 r"\s+syscalls/event ([\d.]+)\s+user ns/event\s+([\d.]+)\s+sys ns/event\s+([\d.]+)", line)
    if m:
        runs[(int(m[3]), int(m[1]), m[2])].append([float(x) for x in m.groups()[3:]])
print("| FIFO | rate/s | reader | drops (each run) | wake-ups/event | syscalls/event | user ns/event | sys ns/event |")
print("|---|---|---|---|---|---|---|---|")
for (rate, fifo, mode), rows in sorted(runs.items()):
    cols = list(zip(*rows))
    med = [statistics.median(c) for c in cols]
    print(f"| {fifo // 1024} KiB | {rate} | {mode} | {', '.join(str(int(d)) for d in sorted(cols[0]))} "
          f"| {med[1]:.3f} | {med[2]:.3f} | {med[3]:.0f} | {med[4]:.0f} |")
PY
