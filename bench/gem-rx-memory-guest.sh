#!/bin/bash
# The guest half of bench/gem-rx-memory.sh, on the emulated GEM board: the
# memory the GEM's RX rings hold, per RX queue, at a ring size and an MTU:
#
#   RXMEM ring=<descriptors> mtu=<bytes> queues=<n> kib_per_queue=<KiB> ... (one per try)
#
# Measured as MemFree with the interface down, minus MemFree once it is up
# and has carrier, divided by the RX queues: what the open allocates for RX
# (buffers, their skbs or pages, the descriptor rings) and TX (its rings,
# small next to RX). Nothing is received meanwhile: the peer is not asked
# for traffic, and the board's tap is quiet. Each setting is tried TRIES
# times; the caches the first open fills are warmed by one open before.
#
#   bench/gem-rx-memory-guest.sh "RINGS" "MTUS" TRIES
set -u
rings=${1:?RINGS} mtus=${2:?MTUS} tries=${3:?TRIES}
ifname=${XDPLAB_GEM_IF:?not on the GEM board (make vmtest ARCH=arm64)}

mem_free_kib() { awk '/^MemFree:/ { print $2 }' /proc/meminfo; }
queues=$(ls -d /sys/class/net/"$ifname"/queues/rx-* | wc -l)

up() {
	local _
	ip link set "$ifname" up
	for _ in $(seq 100); do
		[ "$(cat "/sys/class/net/$ifname/carrier")" = 1 ] && return 0
		sleep 0.1
	done
	echo "SKIP: $ifname has no carrier after 10 s"
	return 1
}

for mtu in $mtus; do
	for ring in $rings; do
		ip link set "$ifname" down
		ip link set "$ifname" mtu "$mtu" || { echo "SKIP ring=$ring mtu=$mtu: MTU refused"; continue; }
		ethtool -G "$ifname" rx "$ring" || { echo "SKIP ring=$ring mtu=$mtu: ring size refused"; continue; }
		up || continue
		line="RXMEM ring=$ring mtu=$mtu queues=$queues"
		for t in $(seq "$tries"); do
			ip link set "$ifname" down
			sync
			echo 3 >/proc/sys/vm/drop_caches
			sleep 1
			m0=$(mem_free_kib)
			up || break
			sleep 1
			m1=$(mem_free_kib)
			line+=" try$t=$(((m0 - m1) / queues))"
		done
		echo "$line"
	done
done
