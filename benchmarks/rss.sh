#!/usr/bin/env bash
# Peak RSS of a traced run as the number of events grows: `rocprof-kfd --emulate` replays a
# generated log of N events (every kind, 2 GPUs) through the SDK and the bundled tool, for
# N = 1M and 10M, with the summary output and with the default outputs (summary, csv,
# perfetto), at two paces: `lossless` (as fast as the SDK's reader takes them: 2M+ events/s,
# faster than the tool writes, so the SDK's LOSSLESS buffer holds a backlog, up to its cap)
# and `rate=500000` (a high but kernel-like rate, which the tool keeps up with).
# GNU time around the command (outside any LD_PRELOAD) reports the largest resident set of
# the process tree (the traced process: the replay runs in it).
#   benchmarks/rss.sh [build-dir] [runs]      (default build, 3 runs each; medians printed)
#   RSS_EVENTS="1000000" RSS_PACES="lossless" benchmarks/rss.sh    (a subset)
set -euo pipefail
build=${1:-build}
runs=${2:-3}
gen=$build/source/bin/rocprof-kfd-gen/rocprof-kfd-gen
cmd=$build/source/bin/rocprof-kfd/rocprof-kfd
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "| pace | events | outputs | peak RSS KiB (median of $runs) | wall s (median) | all runs KiB |"
echo "|---|---|---|---|---|---|"
for pace in ${RSS_PACES:-lossless rate=500000}; do
for events in ${RSS_EVENTS:-1000000 10000000}; do
    "$gen" --scenario mixed --events "$events" --gpus 2 --seed 11 --pace "$pace" \
        -o "$work/log" >/dev/null
    for formats in summary summary,csv,perfetto; do
        rss=()
        wall=()
        for ((i = 0; i < runs; i++)); do
            rm -rf "$work/out"
            /usr/bin/time -f '%M %e' -o "$work/time" \
                "$cmd" --no-summary --output-format "$formats" -d "$work/out" --emulate "$work/log" 2>/dev/null
            read -r kb secs <"$work/time"
            rss+=("$kb")
            wall+=("$secs")
        done
        echo "| $pace | $events | $formats | $(printf '%s\n' "${rss[@]}" | median) |" \
            "$(printf '%s\n' "${wall[@]}" | median) | ${rss[*]} |"
    done
done
done
