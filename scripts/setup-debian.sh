#!/usr/bin/env bash
# MIT License - see LICENSE.
# Installs what building and testing need on Debian 12, from Debian's packages only.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libfmt-dev libgoogle-glog-dev libgtest-dev
          libbenchmark-dev libhsakmt-dev libhsa-runtime-dev
          nlohmann-json3-dev python3 chromium
          clang-14 libclang-rt-14-dev)
missing=()
packages+=(libsqlite3-dev nlohmann-json3-dev protobuf-compiler) # rocprof-kfd outputs, their tests
packages+=(time) # benchmarks/rss.sh: peak RSS of the traced run
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
