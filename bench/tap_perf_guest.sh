#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# In the vmtest guest: where a 64 B XDP_DROP via write() frame's CPU goes.
# Runs the tap-vhost point for SECS + 8 s and profiles the whole guest
# with perf for SECS s (default 4) in its middle; prints the flat profile
# by symbol and the number of samples. Under VMTEST_ICOUNT (with
# VMTEST_SMP=1) the guest's clock counts instructions, so samples fall
# per instruction executed: a symbol's share times the instructions a
# frame (2^-SHIFT / kpps) is its instructions a frame.
#
#   make vmtest KERNEL=IMAGE CMD=bench/tap_perf_guest.sh
#   make vmtest KERNEL=IMAGE CMD='bench/tap_perf_guest.sh tap-vhost/1500/drop/write/napi-off 0.3'
#   VMTEST_SMP=1 VMTEST_ICOUNT=3 make vmtest KERNEL=IMAGE \
#       CMD='bench/tap_perf_guest.sh tap-vhost/64/drop/write/napi-on 0.1 10'
point=${1:-tap-vhost/64/drop/write/napi-off}
limit=${2:-0.3}
secs=${3:-4}
cd "$(dirname "$0")/.." || exit 1
command -v perf >/dev/null || { echo "tap_perf_guest: no perf in the guest (hint: apt-get install linux-perf on the host)" >&2; exit 2; }
case "$secs" in
'' | *[!0-9]* | 0) echo "tap_perf_guest: seconds '$secs' is not a whole number above 0 (hint: e.g. 4)" >&2; exit 2 ;;
esac
build/xdplab-bench -p "$point" -r 1 -d $((secs + 8)) --no-plot -o /tmp/tap-perf >/tmp/tap-perf.log 2>&1 &
b=$!
sleep 6	# the sample is running: setup and the program's load take under 6 s
perf record -q -a -g -o /tmp/tap-perf.data -- sleep "$secs" >/dev/null 2>&1
wait $b || { cat /tmp/tap-perf.log >&2; exit 1; }
grep "$point" /tmp/tap-perf.log | tail -1
echo "== $point, $(perf report -i /tmp/tap-perf.data --stdio 2>/dev/null | sed -n 's/^# Samples: \([^ ]*\).*/\1/p' | head -1) samples, flat profile by symbol (% of all samples of all CPUs, >= $limit%)"
perf report -i /tmp/tap-perf.data --stdio --no-children -g none --sort sym \
	--percent-limit "$limit" 2>/dev/null | grep -v "^#" | grep "%"
