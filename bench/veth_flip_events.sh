#!/bin/bash
# per-window kernel event counts in one iperf3 stream, no XDP vs xdplab pass --frags
# usage (in the guest, cwd /work/main): bench/veth_flip_events.sh MTU WINDOW PAIRS
mtu=${1:-1500} win=${2:-3} pairs=${3:-3}
A=fsa B=fsb
cleanup() { kill $cli $srv $xp 2>/dev/null; wait 2>/dev/null; veth_pair_down; }
trap cleanup EXIT
. "$(dirname "$0")/veth_pair.sh"
veth_pair_up $mtu || exit 1
ip netns exec $B iperf3 -s >/dev/null 2>&1 & srv=$!
sleep 1
ip netns exec $A iperf3 -c 198.18.1.2 -t 600 >/dev/null 2>&1 & cli=$!
sleep 2
echo "pids: srv $(pgrep -x iperf3 | head -1) cli $(pgrep -x iperf3 | tail -1) ksoftirqd $(pgrep -x ksoftirqd/0)"
snap() {
	echo "txb $(ip netns exec $A cat /proc/net/dev | awk '/veth0:/ {print $10}')"
	grep -E '^(pgalloc_normal|pgalloc_dma32|pgfree|nr_tlb_local_flush_all|nr_tlb_local_flush_one|nr_tlb_remote_flush) ' /proc/vmstat
	awk '/^ctxt|^intr/ {print $1, $2}' /proc/stat
	awk '/NET_RX|TIMER|RCU/ {print $1, $2}' /proc/softirqs
	awk '/TLB:|LOC:|RES:|CAL:/ {print $1, $2}' /proc/interrupts
	for p in $(pgrep -x iperf3) $(pgrep -x ksoftirqd/0); do
		awk -v p=$p '/^voluntary_ctxt/ {v=$2} /^nonvoluntary_ctxt/ {n=$2} END {print "v" p, v; print "n" p, n}' /proc/$p/status
	done
	echo "t $(date +%s.%N)"
}
for w in $(seq 0 $((2*pairs-1))); do
	case $((w % 4)) in 1|2) mode=frags ;; *) mode=none ;; esac
	xp=
	if [ $mode = frags ]; then
		ip netns exec $B build/xdplab pass veth1 --frags -q >/dev/null 2>&1 & xp=$!
		for i in $(seq 100); do ip -n $B link show veth1 | grep -q xdp && break; sleep 0.05; done
	fi
	snap > /tmp/fs.a; sleep $win; snap > /tmp/fs.b
	[ -n "$xp" ] && { kill -INT $xp; wait $xp; }
	echo "== $w $mode: $(paste /tmp/fs.a /tmp/fs.b | awk '{d=$4-$2; if ($1=="txb") mb=d/1e6; if ($1=="t") printf "secs %.2f ", d; else printf "%s %.0f ", $1, d} END {print ""}')"
done
