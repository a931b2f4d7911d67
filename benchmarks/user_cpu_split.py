#!/usr/bin/env python3
# MIT License - see LICENSE.
#
# Splits the user-mode CPU time of the SDK's threads (rocprof-kfd = the reader, rocprof-cb* =
# callback threads) by the library the time was spent in: the SDK's own (and libstdc++), the
# KFD emulator's (its intercepted read(), which runs on the reader thread), and libc with the
# vDSO, which both call (the emulator: the copy out of its FIFO, getpid, fstat, recv, its
# lock; the SDK: poll, memmove, clock_gettime). Call chains cannot split libc: perf's unwinder
# finds no frames above Debian's libc, so its share is reported apart, with its top symbols.
# Input: `perf script -F comm,event,ip,sym,dso` of a run recorded with
# `perf record -e cpu-clock/period=P/u` (each sample is P ns of user time; samples of other
# events in the same recording, raw_syscalls, are skipped).
#
#   user_cpu_split.py <period ns> <events> [top libc symbols]  < perf-script-output
#
# Prints "<SDK> <emulator> <libc> ms per M events" and, when asked, the libc symbols with
# their ms per M events.
import collections
import sys


def group_of(dso):
    if "librocprofiler-sdk-kfd-emulator" in dso:
        return "emulator"
    if "librocprofiler-sdk." in dso or "libstdc++" in dso:
        return "sdk"
    return "libc"


def main():
    period_ns, events = float(sys.argv[1]), float(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    groups = collections.Counter()
    libc_symbols = collections.Counter()
    for line in sys.stdin:
        fields = line.split()
        if len(fields) < 3 or not fields[0].startswith("rocprof-") or "raw_syscalls" in line:
            continue  # another thread, or a sample of the system-call event
        dso = fields[-1]
        group = group_of(dso)
        groups[group] += 1
        if group == "libc":
            libc_symbols[fields[-2]] += 1
    per_m = period_ns / 1e6 / (events / 1e6)  # ms per million events, per sample
    print(" ".join(f"{groups[g] * per_m:.0f}" for g in ("sdk", "emulator", "libc")))
    for symbol, n in libc_symbols.most_common(top):
        print(f"  {n * per_m:.0f} {symbol}")


if __name__ == "__main__":
    main()
