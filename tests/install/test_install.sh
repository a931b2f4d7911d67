#!/usr/bin/env bash
# MIT License - see LICENSE.
# Installs the build into a temporary prefix, then builds the installed sample tool out of
# tree twice (CMake find_package, and pkg-config), and runs each against a fake topology:
# a tool written only from the public headers must compile unchanged and see the agents.
set -euo pipefail
build_dir=$1
topology=$2
readme=$3
generator=${4:-Ninja}  # the build's own generator: a fresh machine may have no make
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
for f in include/rocprofiler-sdk/rocprofiler.h include/rocprofiler-sdk/version.h \
         include/rocprofiler-sdk/ext/kfd.h lib/cmake/rocprofiler-sdk/rocprofiler-sdk-config.cmake \
         lib/pkgconfig/rocprofiler-sdk.pc share/rocprofiler-sdk/samples/CMakeLists.txt; do
    [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
ls "$prefix"/lib/librocprofiler-sdk.so.0* >/dev/null

# 1. CMake package.
cmake -S "$prefix/share/rocprofiler-sdk/samples" -B "$work/cmake-build" -G "$generator" \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
tool_cmake=$(find "$work/cmake-build" -name 'libpage-migration-sample-tool.so' | head -1)

# 2. pkg-config.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc -std=c99 -Wall -Werror -shared -fPIC -o "$work/libtool-pc.so" \
   "$prefix/share/rocprofiler-sdk/samples/page-migration-tool/page_migration_tool.c" \
   $(pkg-config --cflags --libs rocprofiler-sdk)

# A sanitizer build's SDK needs its runtime loaded first (as any preload of it would).
runtime=$(ldd "$prefix"/lib/librocprofiler-sdk.so.0 | awk '/lib(asan|tsan)\.so/ {print $3; exit}')
for tool in "$tool_cmake" "$work/libtool-pc.so"; do
    out=$(LD_LIBRARY_PATH=$prefix/lib ROCPROFILER_KFD_TOPOLOGY_ROOT=$topology \
          ROCPROFILER_LOG_LEVEL=none LD_PRELOAD="${runtime:+$runtime }$tool" /bin/true)
    echo "$out" | grep -qx 'agents: 3' || { echo "unexpected output of $tool:"; echo "$out"; exit 1; }
    echo "$out" | grep -q 'GPU gfx90a' || { echo "no gfx90a agent from $tool:"; echo "$out"; exit 1; }
done
# 3. The README's "Writing a tool" example compiles as it is printed.
sed -n '/^```c$/,/^```$/p' "$readme" | sed '1d;$d' > "$work/readme_tool.c"
[ -s "$work/readme_tool.c" ] || { echo "no C example found in $readme"; exit 1; }
cc -std=c99 -Wall -Wextra -Werror -shared -fPIC -o "$work/libreadme-tool.so" "$work/readme_tool.c" \
   $(pkg-config --cflags --libs rocprofiler-sdk)

# 4. The minimal sample is the README's example, unchanged.
cmp -s "$work/readme_tool.c" "$prefix/share/rocprofiler-sdk/samples/minimal-tool/minimal_tool.c" ||
    { echo "samples/minimal-tool/minimal_tool.c differs from the README's example"; exit 1; }
for t in libminimal-sample-tool.so libloss-accounting-sample-tool.so; do
    [ -n "$(find "$work/cmake-build" -name "$t")" ] || { echo "sample $t was not built"; exit 1; }
done
if [ -e /usr/lib/x86_64-linux-gnu/cmake/hsa-runtime64/hsa-runtime64-config.cmake ]; then
    hsa_sample=$(find "$work/cmake-build" -name hsa-svm-migrate -type f | head -1)
    [ -n "$hsa_sample" ] || { echo "the HSA sample was not built though hsa-runtime64 is installed"; exit 1; }
fi

# 5. The installed rocprof-kfd finds the installed SDK and emulator next to itself (bin/ ->
# lib/) and replays an installed log into a tool (here the installed loss-accounting sample,
# standing in for the bundled tool).
loss_tool=$(find "$work/cmake-build" -name libloss-accounting-sample-tool.so | head -1)
[ -x "$prefix/bin/rocprof-kfd" ] || { echo "missing after install: bin/rocprof-kfd"; exit 1; }
preload=$(ROCPROF_KFD_TOOL_LIBRARY=$loss_tool LD_PRELOAD= "$prefix/bin/rocprof-kfd" \
          --emulate "$prefix/share/rocprofiler-sdk/kfd-logs/managed-2gpu-6.13.log" -d "$work/out" \
          -- /usr/bin/printenv LD_PRELOAD 2>/dev/null | grep rocprofiler-sdk-kfd-emulator)
# (A sanitizer build of the command puts the runtime it runs with first.)
expected="${runtime:+$runtime:}$prefix/lib/rocprofiler-sdk/librocprofiler-sdk-kfd-emulator.so:$prefix/lib/librocprofiler-sdk.so.0"
[ "$preload" = "$expected" ] || { echo "installed rocprof-kfd preloads '$preload', not '$expected'"; exit 1; }
out=$(ROCPROF_KFD_TOOL_LIBRARY=$loss_tool ROCPROFILER_LOG_LEVEL=none "$prefix/bin/rocprof-kfd" \
      --emulate "$prefix/share/rocprofiler-sdk/kfd-logs/managed-2gpu-6.13.log" -d "$work/out")
echo "$out" | grep -q '^all gpus   received=4000 ' || { echo "installed rocprof-kfd replay:"; echo "$out"; exit 1; }

echo "installed package builds and runs the sample tool (CMake and pkg-config) and the README example"
