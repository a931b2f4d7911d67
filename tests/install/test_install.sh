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

echo "installed package builds and runs the sample tool (CMake and pkg-config) and the README example"
