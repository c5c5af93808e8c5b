#!/bin/bash
# The guest half of bench/gem-macb.sh, run on the emulated GEM board
# (make vmtest ARCH=arm64): one sample of each measurement, one line each:
#
#   RESULT <name> offered=<pps> pps=<n> rx=<pps> user=<%> system=<%>
#          softirq=<%> idle=<%> stalled=<0|1> [rcvbuf_errors=<n>] [mode=...]
#
# The load is paced: the peer (iperf3 -R, the host's server) sends RATE
# datagrams a second, a rate QEMU 7.2's GEM survives. Unpaced, a 64-byte
# flood fills the RX ring, after which QEMU's GEM never looks at the ring
# again (stock macb and the series alike); a fixed offered rate also makes
# CPU per delivered packet the comparable figure.
#
# pps: datagrams delivered to UDP sockets (Udp InDatagrams delta), or for
# XDP_DROP the drop program's own count, over SECONDS; rx: the GEM's
# rx_packets delta over SECONDS; rcvbuf_errors: datagrams the socket
# refused, its receive buffer full (Udp RcvbufErrors). CPU columns are /proc/stat deltas over
# the measurement, in percent of one core (the board has two A72s: 200 is
# both), split like the macb seed (user+nice, system, softirq,
# idle+iowait). stalled=1: the GEM stopped answering pings afterwards (the
# interface is then reopened, and the sample is not to be used).
#
#   bench/gem-guest.sh [SECONDS [RATE]]      (default 5 s, 40000 pps)
set -u
secs=${1:-5}
rate=${2:-40000}
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

udp_in_datagrams() { awk '/^Udp:/ { n++ } /^Udp:/ && n == 2 { print $2 }' /proc/net/snmp; }
# datagrams dropped because the socket's receive buffer was full
udp_rcvbuf_errors() { awk '/^Udp:/ { n++ } /^Udp:/ && n == 2 { print $6 }' /proc/net/snmp; }
rx_packets() { cat "/sys/class/net/$ifname/statistics/rx_packets"; }
per_sec() { awk -v n="$1" -v s="$secs" 'BEGIN { printf "%.0f", n < 0 ? -1 : n / s }'; }

# iperf3 UDP from the peer to the board (-R): datagrams of LEN bytes at
# RATE a second (iperf3's -b counts payload bits). Bounded: a receive path
# that stalls must end the sample, not the run.
udp_in() {
	timeout $((secs + 20)) iperf3 -c "$peer" -u -R -b $((rate * $1 * 8)) -l "$1" \
		-t "$secs" >/dev/null 2>&1
}

# After a sample: does the GEM still receive? If not, reopen it (the only
# way to make QEMU's GEM look at its RX ring again) and say so.
alive() {
	local _
	for _ in 1 2 3; do
		ping -q -c 1 -W 2 "$peer" >/dev/null 2>&1 && { echo 0; return; }
	done
	ip link set "$ifname" down
	ip link set "$ifname" up
	for _ in $(seq 100); do
		[ "$(cat "/sys/class/net/$ifname/carrier")" = 1 ] && break
		sleep 0.1
	done
	ping -q -c 2 -W 2 "$peer" >/dev/null 2>&1
	echo 1
}

measure_udp() { # NAME LEN
	local t0 t1 s0 s1 d0 d1 r0 r1 e0 e1
	e0=$(udp_rcvbuf_errors) d0=$(udp_in_datagrams) r0=$(rx_packets) s0=$(stat) t0=$(now_ns)
	udp_in "$2"
	t1=$(now_ns) s1=$(stat) d1=$(udp_in_datagrams) r1=$(rx_packets) e1=$(udp_rcvbuf_errors)
	echo "RESULT $1 offered=$rate pps=$(per_sec $((d1 - d0))) rx=$(per_sec $((r1 - r0))) $(split "$s0" "$s1" $((t1 - t0))) stalled=$(alive) rcvbuf_errors=$((e1 - e0))"
}

# XDP_DROP of the same 64-byte load: native where macb has XDP, else
# generic (skb) mode; pps from the program's own counter. The program is
# attached once the stream runs (iperf3's UDP set-up exchange must not be
# dropped) and measures for SECONDS; the stream outlasts it.
measure_drop() {
	local mode=native t0 t1 s0 s1 r0 r1 n ipid xpid log=/tmp/gem-drop.$$
	"$xdplab" status "$ifname" --json | grep -q '"xdp_features":"[^"]*BASIC' || mode=skb
	timeout $((secs + 40)) iperf3 -c "$peer" -u -R -b $((rate * 64 * 8)) -l 64 \
		-t $((secs + 10)) >/dev/null 2>&1 &
	ipid=$!
	# the stream is up when a tenth of a second's worth came in
	r0=$(rx_packets)
	for _ in $(seq 100); do
		[ $(($(rx_packets) - r0)) -gt $((rate / 10)) ] && break
		sleep 0.1
	done
	"$xdplab" drop "$ifname" --proto udp --mode "$mode" -d "$secs" --json -q >"$log" 2>&1 &
	xpid=$!
	for _ in $(seq 100); do
		ip link show "$ifname" | grep -q 'prog/xdp' && break
		sleep 0.1
	done
	# native attach reopens the interface: measure once it is back
	for _ in $(seq 100); do
		[ "$(cat "/sys/class/net/$ifname/carrier")" = 1 ] && break
		sleep 0.1
	done
	r0=$(rx_packets) s0=$(stat) t0=$(now_ns)
	wait "$xpid"	# it detaches and exits after SECONDS
	t1=$(now_ns) s1=$(stat) r1=$(rx_packets)
	n=$(sed -n 's/.*"summary".*"drop":\([0-9]*\).*/\1/p' "$log")
	rm -f "$log"
	wait "$ipid"
	awk -v n="${n:--1}" -v r=$((r1 - r0)) -v ns=$((t1 - t0)) 'BEGIN {
		printf "RESULT xdp_drop64 pps=%.0f rx=%.0f ", n < 0 ? -1 : n / (ns / 1e9), r / (ns / 1e9) }'
	echo "offered=$rate $(split "$s0" "$s1" $((t1 - t0))) stalled=$(alive) mode=$mode"
}

[[ "$secs" =~ ^[1-9][0-9]*$ && "$rate" =~ ^[1-9][0-9]*$ ]] ||
	{ echo "gem-guest: SECONDS and RATE are positive integers (hint: bench/gem-guest.sh 5 40000)" >&2; exit 2; }
ip link set "$ifname" mtu 1500 2>/dev/null
ping -q -c 2 -W 2 "$peer" >/dev/null 2>&1
echo "BENCH kernel $(uname -r) offered $rate pps for $secs s"
measure_udp udp64 64
measure_udp udp128 128
measure_drop
