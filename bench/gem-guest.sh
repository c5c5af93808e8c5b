#!/bin/bash
# The guest half of bench/gem-macb.sh, run on the emulated GEM board
# (make vmtest ARCH=arm64): one sample of each measurement, one line each:
#
#   RESULT <name> pps=<n> user=<%> system=<%> softirq=<%> idle=<%> [mode=...]
#
# CPU columns are /proc/stat deltas over the measurement, in percent of one
# core (the board has two A72s: 200 is both), split like the macb seed
# (user+nice, system, softirq, idle+iowait).
#
#   bench/gem-guest.sh [SECONDS]       (default 5)
set -u
secs=${1:-5}
ifname=${XDPLAB_GEM_IF:?not on the GEM board (make vmtest ARCH=arm64)}
peer=${XDPLAB_GEM_PEER:?no XDPLAB_GEM_PEER}
here=$(cd "$(dirname "$0")/.." && pwd)
xdplab=$here/build/arm64/xdplab
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)

stat() { # user+nice system softirq idle+iowait total
	local _ u n s i io irq si st
	read -r _ u n s i io irq si st _ </proc/stat
	echo "$((u + n)) $s $si $((i + io)) $((u + n + s + i + io + irq + si + st))"
}

# split T0 T1 ("stat" outputs) and elapsed ns: the columns in % of a core
split() {
	local a=($1) b=($2) ns=$3
	awk -v u=$((b[0] - a[0])) -v s=$((b[1] - a[1])) -v q=$((b[2] - a[2])) \
		-v i=$((b[3] - a[3])) -v hz="$hz" -v ns="$ns" 'BEGIN {
		t = ns / 1e9 * hz / 100;
		printf "user=%.1f system=%.1f softirq=%.1f idle=%.1f", u / t, s / t, q / t, i / t }'
}

# busybox date may lack %N: the uptime clock, in ns (10 ms resolution)
now_ns() { awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime; }

# iperf3 UDP from the peer to the board (-R): datagrams of LEN bytes, as
# fast as the peer sends; prints the datagrams the board's socket took.
udp_in() {
	local out
	# bounded: a receive path that stalls under the flood must end the
	# sample (it prints -1), not the run
	out=$(timeout $((secs + 20)) iperf3 -c "$peer" -u -R -b 0 -l "$1" -t "$secs" -J 2>&1)
	echo "$out" | sed -n '/"end":/,$p' | awk -F'[:,]' '
		/"packets"/ && !p { p = $2 } /"lost_packets"/ && !l { l = $2 }
		END { if (p == "") print -1; else print p - l }'
}

measure_udp() { # NAME LEN
	local t0 t1 s0 s1 n
	s0=$(stat) t0=$(now_ns)
	n=$(udp_in "$2")
	t1=$(now_ns) s1=$(stat)
	echo "RESULT $1 pps=$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.0f", n / s }') $(split "$s0" "$s1" $((t1 - t0)))"
}

# XDP_DROP of the same 64-byte flood: native where macb has XDP, else
# generic (skb) mode; pps from the program's own counter.
measure_drop() {
	local mode=native t0 t1 s0 s1 out n log=/tmp/gem-drop.$$
	"$xdplab" status "$ifname" --json | grep -q '"xdp_features":"[^"]*BASIC' || mode=skb
	"$xdplab" drop "$ifname" --proto udp --mode "$mode" -d $((secs + 3)) --json -q >"$log" 2>&1 &
	for _ in $(seq 100); do
		ip link show "$ifname" | grep -q 'prog/xdp' && break
		sleep 0.1
	done
	for _ in $(seq 100); do
		[ "$(cat "/sys/class/net/$ifname/carrier")" = 1 ] && break
		sleep 0.1
	done
	s0=$(stat) t0=$(now_ns)
	udp_in 64 >/dev/null
	t1=$(now_ns) s1=$(stat)
	wait
	out=$(grep '"summary"' "$log")
	rm -f "$log"
	n=$(echo "$out" | sed -n 's/.*"drop":\([0-9]*\).*/\1/p')
	echo "RESULT xdp_drop64 pps=$(awk -v n="${n:--1}" -v s="$secs" 'BEGIN { printf "%.0f", n / s }') $(split "$s0" "$s1" $((t1 - t0))) mode=$mode"
}

ip link set "$ifname" mtu 1500 2>/dev/null
ping -q -c 2 -W 2 "$peer" >/dev/null 2>&1
echo "BENCH kernel $(uname -r)"
measure_udp udp64 64
measure_udp udp128 128
measure_drop
