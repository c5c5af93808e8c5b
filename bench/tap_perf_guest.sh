#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# In the vmtest guest: where a 64 B XDP_DROP via write() frame's CPU goes.
# Runs the tap-vhost point for 12 s and profiles the whole guest with
# perf for 4 s in its middle; prints the flat profile by symbol.
#
#   make vmtest KERNEL=IMAGE CMD=bench/tap_perf_guest.sh
#   make vmtest KERNEL=IMAGE CMD='bench/tap_perf_guest.sh tap-vhost/1500/drop/write/napi-off 0.3'
point=${1:-tap-vhost/64/drop/write/napi-off}
limit=${2:-0.3}
cd "$(dirname "$0")/.." || exit 1
command -v perf >/dev/null || { echo "tap_perf_guest: no perf in the guest (hint: apt-get install linux-perf on the host)" >&2; exit 2; }
build/xdplab-bench -p "$point" -r 1 -d 12 --no-plot -o /tmp/tap-perf >/tmp/tap-perf.log 2>&1 &
b=$!
sleep 6	# the sample is running: setup and the program's load take under 6 s
perf record -q -a -g -o /tmp/tap-perf.data -- sleep 4 >/dev/null 2>&1
wait $b || { cat /tmp/tap-perf.log >&2; exit 1; }
grep "$point" /tmp/tap-perf.log | tail -1
echo "== $point, flat profile by symbol (% of all samples of all CPUs, >= $limit%)"
perf report -i /tmp/tap-perf.data --stdio --no-children -g none --sort sym \
	--percent-limit "$limit" 2>/dev/null | grep -v "^#" | grep "%"
