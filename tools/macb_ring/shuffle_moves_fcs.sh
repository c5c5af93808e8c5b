#!/bin/sh
# The TX ring's rotation at link up (gem_shuffle_tx_one_ring(), stock code)
# moves descriptors and tx_skb entries; 0024's FCS words belong to ring
# indices, so every move must take the word with it (review-v7 BUG 2): the
# move inside the juggling loop and the last one of each cycle. QEMU's GEM
# sends a frame as soon as it is kicked, so no guest test can queue one
# across a link flap; this checks the source, and 0024's message argues the
# rest.
#
#	tools/macb_ring/shuffle_moves_fcs.sh /root/ksrc/macb
set -eu
. "$(dirname "$0")/macb_src.sh"
grep -q 'MACB_TYPE_XDP_FCS' "$src" || { echo "ok: no FCS descriptors in $src (before 0024): nothing to move"; exit 0; }
body=$(fn_body gem_shuffle_tx_one_ring)
[ -n "$body" ] || { echo "FAIL: no gem_shuffle_tx_one_ring() in $src"; exit 1; }
moves=$(echo "$body" | grep -c 'memcpy(skb_curr, skb_next\|memcpy(macb_tx_skb(queue, curr), &tx_skb' || true)
fcs=$(echo "$body" | grep -c 'gem_shuffle_tx_fcs(' || true)
if [ "$moves" -eq 2 ] && [ "$fcs" -eq 2 ]; then
	echo "ok: gem_shuffle_tx_one_ring: both tx_skb moves take their FCS word (gem_shuffle_tx_fcs() $fcs times)"
else
	echo "FAIL: gem_shuffle_tx_one_ring: $moves tx_skb moves, $fcs FCS word moves (want 2 and 2)"
	exit 1
fi
