#!/bin/bash
# The guest half of bench/gem-insns.sh, run on the emulated GEM board under
# QEMU -icount with the tb_insns plugin: for each mode and size, a paced
# iperf3 UDP stream from the peer (the host's tap) into the board, and once
# it runs, one counted window (bench/tcg/insns_mark.c) of SECONDS:
#
#   WINDOW <mode>/<len> rx=<frames> udp_in=<datagrams> rcvbuf_errors=<n>
#          tcp_in=<segments> ns=<ns>
#
# Modes: none (no program), pass (XDP_PASS of every frame), drop (XDP_DROP
# of UDP), tx (XDP_TX of UDP: every datagram goes back to the peer); native where the driver has XDP, else generic (the mode is
# printed); tcp: a TCP stream from the peer paced at RATE segments of 1448
# bytes a second, no program, once (the sizes do not apply). The program is attached once the stream runs: iperf3's UDP
# set-up exchange must not be dropped. The window starts a second after
# the stream (and the program) are up and ends before the stream does.
#
#   bench/gem-insns-guest.sh SECONDS RATE "SIZES" "MODES"
set -u
secs=${1:?SECONDS} rate=${2:?RATE} sizes=${3:?SIZES} modes=${4:?MODES}
ifname=${XDPLAB_GEM_IF:?not on the GEM board (make vmtest ARCH=arm64)}
peer=${XDPLAB_GEM_PEER:?no XDPLAB_GEM_PEER}
here=$(cd "$(dirname "$0")/.." && pwd)
xdplab=$here/build/arm64/xdplab
mark=$here/build/arm64/bench/insns_mark

rx_packets() { cat "/sys/class/net/$ifname/statistics/rx_packets"; }

# Bounded waits: a stream or a program that never comes up ends the sample.
wait_rx() { # FRAMES: until that many more frames came in (10 s at most)
	local r0 _
	r0=$(rx_packets)
	for _ in $(seq 100); do
		[ $(($(rx_packets) - r0)) -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

wait_prog() {
	local _
	for _ in $(seq 100); do
		ip link show "$ifname" | grep -q 'prog/xdp' &&
			[ "$(cat "/sys/class/net/$ifname/carrier")" = 1 ] && return 0
		sleep 0.1
	done
	return 1
}

native=skb
"$xdplab" status "$ifname" --json | grep -q '"xdp_features":"[^"]*BASIC' && native=native

window() { # MODE LEN
	local m=$1 len=$2 ipid xpid="" filter="" udp=-u
	[ "$m" != tcp ] || udp=""
	# shellcheck disable=SC2086 # udp is one option or none
	timeout $((secs + 40)) iperf3 -c "$peer" $udp -R -b $((rate * len * 8)) -l "$len" \
		-t $((secs + 5)) >/dev/null 2>&1 &
	ipid=$!
	if ! wait_rx $((rate / 10)); then
		echo "SKIP $m/$len: the stream did not start"
		wait "$ipid"
		return
	fi
	if [ "$m" = pass ] || [ "$m" = drop ] || [ "$m" = tx ]; then
		[ "$m" = pass ] || filter="--proto udp"
		# shellcheck disable=SC2086 # filter is one option or none
		"$xdplab" "$m" "$ifname" $filter --mode "$native" -d $((secs + 3)) -q >/dev/null 2>&1 &
		xpid=$!
		wait_prog || { echo "SKIP $m/$len: the program did not attach"; kill "$xpid"; wait; return; }
	fi
	sleep 1
	echo "MODE $m/$len $([ -z "$xpid" ] && echo none || echo "$native")"
	"$mark" "$ifname" "$secs" "$m/$len"
	[ -z "$xpid" ] || wait "$xpid"
	wait "$ipid"
}

ip link set "$ifname" mtu 1500 2>/dev/null
ping -q -c 2 -W 2 "$peer" >/dev/null 2>&1
echo "BENCH kernel $(uname -r) offered $rate pps, windows of $secs s"
for m in $modes; do
	if [ "$m" = tcp ]; then
		window tcp 1448
		continue
	fi
	for len in $sizes; do
		window "$m" "$len"
	done
done
