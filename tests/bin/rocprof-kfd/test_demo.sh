#!/usr/bin/env bash
# MIT License - see LICENSE.
# The README's demo: scripts/demo.sh replays the bundled workload through rocprof-kfd and the
# real bundled tool, prints the summary and the files, which are there.
#   test_demo.sh <source dir> <build dir>
set -euo pipefail
source_dir=$1
build_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/demo
"$source_dir/scripts/demo.sh" "$build_dir" "$source_dir/share/kfd-logs/managed-2gpu-6.13.log" \
    "$out" > "$work/stdout" 2> "$work/stderr" ||
    { echo "demo.sh failed"; cat "$work/stdout" "$work/stderr"; exit 1; }
for f in summary.txt summary.json page_fault.csv page_migrate.csv trace.pftrace kfd.db results.json; do
    [ -s "$out/$f" ] || { echo "demo did not write $f"; cat "$work/stderr"; exit 1; }
    grep -qxF "rocprof-kfd: wrote $out/$f" "$work/stderr" || { echo "demo did not list $f"; cat "$work/stderr"; exit 1; }
done
# The summary is printed (the tool's own text is also in summary.txt).
# (awk, not grep | head: under pipefail, grep's SIGPIPE when head exits early fails the test)
first=$(awk 'NF { print; exit }' "$out/summary.txt")
grep -qF -- "$first" "$work/stderr" || { echo "summary not printed"; cat "$work/stderr"; exit 1; }
echo "demo wrote and listed every file"
