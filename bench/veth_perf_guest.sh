#!/bin/bash
# wall-clock profile of iperf3 through a veth pair, no XDP vs xdplab pass --frags,
# with bytes and kernel event counts per mode so cost per byte can be compared.
# usage (in the guest, cwd /work/main): bench/veth_perf_guest.sh MTU SECS OUTDIR
mtu=${1:-1500} secs=${2:-6} out=${3:-/tmp/pg2}
mkdir -p $out
A=hvpa B=hvpb
cleanup() { kill $srv $xp 2>/dev/null; wait 2>/dev/null; veth_pair_down; }
trap cleanup EXIT
. "$(dirname "$0")/veth_pair.sh"
veth_pair_up $mtu || exit 1
snap() { awk '/^ctxt|^intr|^softirq/ {print $1, $2}' /proc/stat; awk '/NET_RX|NET_TX|TIMER|RCU|SCHED/ {s=0; for(i=2;i<=NF;i++) s+=$i; print $1, s}' /proc/softirqs; }
n=0
for mode in none frags none frags; do
	n=$((n+1))
	ip netns exec $B iperf3 -s -1 >/dev/null 2>&1 & srv=$!
	sleep 0.5
	xp=
	if [ $mode = frags ]; then
		ip netns exec $B build/xdplab pass veth1 --frags -q >/tmp/xp.out 2>&1 & xp=$!
		for i in $(seq 50); do ip -n $B link show veth1 | grep -q xdp && break; sleep 0.2; done
	fi
	snap > $out/$n.$mode.before
	perf record -o $out/$n.$mode.data -a -g -e cpu-clock -F 999 -- \
		ip netns exec $A iperf3 -c 198.18.1.2 -t $secs -f g -J > $out/$n.$mode.json 2>/dev/null
	snap > $out/$n.$mode.after
	echo "== $n $mode mtu $mtu: $(python3 -c "import json;d=json.load(open('$out/$n.$mode.json'));e=d['end']['sum_received'];print(e['bytes'],e['seconds'],e['bits_per_second']/1e9)")"
	paste $out/$n.$mode.before $out/$n.$mode.after | awk '{printf "%s %d  ", $1, $4-$2} END {print ""}'
	[ -n "$xp" ] && { kill -INT $xp; wait $xp; }
	wait $srv 2>/dev/null
	perf report -i $out/$n.$mode.data --no-children --sort sym -g none --stdio -n 2>/dev/null | grep -v "^#" | grep -v "^$" | head -60 > $out/$n.$mode.self
	perf report -i $out/$n.$mode.data --children --sort sym -g none --stdio -n 2>/dev/null | grep -v "^#" | grep -v "^$" | head -150 > $out/$n.$mode.children
	perf report -i $out/$n.$mode.data --no-children --sort comm -g none --stdio -n 2>/dev/null | grep -v "^#" | grep -v "^$" | head -20 > $out/$n.$mode.comm
	rm -f $out/$n.$mode.data
done
for f in $out/*.self $out/*.children $out/*.comm; do echo "#### $f"; cat $f; done
