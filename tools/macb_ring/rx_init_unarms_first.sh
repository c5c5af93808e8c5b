#!/bin/sh
# ring_model.c takes what gem_init_rx_ring() writes to a descriptor without
# a buffer from macb_rx_ring.h (gem_rx_ring_unarmed_addr()); this checks
# that the tree's gem_init_rx_ring() does use it, on every entry, before it
# calls the refill (review-v3 B1).
#
#	tools/macb_ring/rx_init_unarms_first.sh /root/ksrc/macb
set -eu
. "$(dirname "$0")/macb_src.sh"
body=$(fn_body gem_init_rx_ring)
[ -n "$body" ] || { echo "FAIL: no gem_init_rx_ring() in $src"; exit 1; }
loop=$(first 'for \(i = 0; i < bp->rx_ring_size; i\+\+\)')
unarm=$(first 'gem_rx_ring_unarmed_addr\(i, bp->rx_ring_size')
refill=$(first 'gem_rx_refill\(')
if [ -n "$loop" ] && [ -n "$unarm" ] && [ -n "$refill" ] && [ "$loop" -lt "$unarm" ] && [ "$unarm" -lt "$refill" ]; then
	echo "ok: gem_init_rx_ring: every entry gets gem_rx_ring_unarmed_addr() (lines $loop, $unarm) before the refill (line $refill)"
else
	echo "FAIL: gem_init_rx_ring: loop over the ring line ${loop:-none}, gem_rx_ring_unarmed_addr() line ${unarm:-none}, refill line ${refill:-none}"
	exit 1
fi
