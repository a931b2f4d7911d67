#!/bin/sh
# The SDK library neither depends on glog/gflags (a host's own glog would clash with them)
# nor carries more than 64 bytes of static TLS (every thread of a host that preloads it pays
# that much of its stack). $1: the library.
set -eu
lib=$1
if readelf -dW "$lib" | grep -Ei 'NEEDED.*(glog|gflags)'; then
    echo "FAIL: $lib depends on glog/gflags"
    exit 1
fi
tls=$(readelf -lW "$lib" | awk '$1 == "TLS" { print $6 }')
size=$(( ${tls:-0} ))
echo "PT_TLS MemSiz: $size bytes"
if [ "$size" -gt 64 ]; then
    echo "FAIL: static TLS of $size bytes"
    exit 1
fi
