#!/usr/bin/env bash
# MIT License - see LICENSE.
# The demo: `rocprof-kfd --emulate` replays a bundled, realistic managed-memory workload (two
# GPUs streaming through their buffers while a few ranges thrash between the CPU and the
# GPUs; 4000 KFD events, Linux 6.13 formats) through the real /dev/kfd code path, with no
# application and no GPU; the bundled tool prints the summary and the files it wrote.
#   scripts/demo.sh [build dir] [log] [output dir]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
log=${2:-$here/share/kfd-logs/managed-2gpu-6.13.log}
default_out=$build/rocprof-kfd-demo
out=${3:-$default_out}
command=$build/source/bin/rocprof-kfd/rocprof-kfd
tool=$build/source/lib/rocprof-kfd-tool/librocprofiler-sdk-tool-kfd.so
for f in "$command" "$log"; do
    [ -e "$f" ] || { echo "demo: missing $f (build first)" >&2; exit 1; }
done

if [ ! -e "$tool" ] && [ -z "${ROCPROF_KFD_TOOL_LIBRARY:-}" ]; then
    # Only while the bundled tool is not part of the build: the sample tool prints records.
    sample=$build/samples/page-migration-tool/libpage-migration-sample-tool.so
    echo "demo: the bundled tool ($tool) is not built; replaying into samples/page-migration-tool instead" >&2
    exec env ROCPROF_KFD_TOOL_LIBRARY="$sample" "$command" --emulate "$log" -d "$out"
fi

formats=summary,csv,perfetto,json,sqlite
[ -x "$build/source/bin/rocprof-kfd/rocprof-kfd-report" ] && formats=$formats,html
[ "$out" = "$default_out" ] && rm -rf "$out" # only the demo's own folder is cleared
echo "rocprof-kfd --emulate $log -d $out --output-format $formats"
# The summary and one "rocprof-kfd: wrote PATH" line per file come on stderr.
"$command" --emulate "$log" -d "$out" --output-format "$formats"
echo
echo "Next: open $out/trace.pftrace in https://ui.perfetto.dev;"
echo "      sqlite3 $out/kfd.db 'SELECT * FROM top_ranges_by_faults'"
