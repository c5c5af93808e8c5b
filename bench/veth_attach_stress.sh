#!/bin/bash
# attach and detach xdplab pass --frags N times on the receiving veth while an
# iperf3 stream runs through the pair (the dispatcher is re-patched each time)
# usage (in the guest, cwd /work/main): bench/veth_attach_stress.sh N
n=${1:-200}
A=asa B=asb
cleanup() { kill $cli $srv 2>/dev/null; wait 2>/dev/null; veth_pair_down; }
trap cleanup EXIT
. "$(dirname "$0")/veth_pair.sh"
veth_pair_up 1500 || exit 1
ip netns exec $B iperf3 -s >/dev/null 2>&1 & srv=$!
sleep 1
ip netns exec $A iperf3 -c 198.18.1.2 -t 3600 -A 0,1 >/dev/null 2>&1 & cli=$!
sleep 2
start=$(date +%s)
for i in $(seq $n); do
	ip netns exec $B build/xdplab pass veth1 --frags -q -d 1 >/dev/null 2>&1 || { echo "attach $i failed"; exit 1; }
done
echo "STRESS done: $n attach/detach cycles in $(( $(date +%s) - start )) s, stream alive: $(kill -0 $cli && echo yes)"
