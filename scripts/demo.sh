#!/usr/bin/env bash
# MIT License - see LICENSE.
# The demo: replays an emulated page-migration workload (4 GPUs: faults, migrations to VRAM
# and back, prefetches, queue evictions, unmaps; Linux 6.0 event formats) through the real
# /dev/kfd code path into the sample tool, with no application and no GPU.
#   scripts/demo.sh [build dir] [log]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
log=${2:-$here/share/kfd-logs/mixed-4gpu-6.0.log}
emulator=$build/source/lib/kfd-emulator/librocprofiler-sdk-kfd-emulator.so
tool=$build/samples/page-migration-tool/libpage-migration-sample-tool.so
for f in "$emulator" "$tool" "$log"; do
    [ -e "$f" ] || { echo "demo: missing $f (build first)" >&2; exit 1; }
done
echo "Replaying $log through the KFD emulator into samples/page-migration-tool:"
LD_PRELOAD="$emulator:$tool" KFD_EMULATOR_LOG="$log" /bin/true
