#!/bin/sh
# macb_suspend() must detach the device and wait for the HRESP recovery
# task (cancel_work_sync(&bp->hresp_err_work)) before it touches a GEM
# register: the task, once past its netif_device_present() check under
# rtnl, rewrites RBQP to the live ring, unmasks RX/TX/HRESP in IER and sets
# RE|TE in NCR. Run after the WoL branch has tied the RX queues off and
# left only the WOL interrupt unmasked, it undoes that setup and the system
# sleeps with RX DMA into the ring and interrupts its WoL handler does not
# clear (review-v3 B3). QEMU's GEM never raises HRESP, so no guest test can
# queue the task at the right moment; this reads the driver source.
#
# For the same reason the NAPI polls are disabled before the first register
# access (a poll that completes after the WoL setup's IDR writes IER again),
# and the stack's transmit after them, with netif_tx_disable():
# netif_device_detach() does not wait for a macb_start_xmit() already past
# the queue check, and TX completion wakes the queues until its NAPI is
# disabled (review-v13 DESIGN 2, review-v12 DESIGN 2).
#
#	tools/macb_ring/suspend_quiesces_first.sh /root/ksrc/macb
set -eu
. "$(dirname "$0")/macb_src.sh"
body=$(fn_body '__maybe_unused macb_suspend')
[ -n "$body" ] || { echo "FAIL: no macb_suspend() in $src"; exit 1; }
reg=$(first '(macb|gem|queue|macb_or_gem)_(read|write)l(_n)?\(')
detach=$(first 'netif_device_detach\(netdev\)')
cancel=$(first 'cancel_work_sync\(&bp->hresp_err_work\)')
napi_rx=$(first 'napi_disable\(&queue->napi_rx\)')
napi_tx=$(echo "$body" | grep -E 'napi_disable\(&queue->napi_tx\)' | tail -1 | cut -d: -f1)
txdis=$(echo "$body" | grep -E '^[0-9]+: [[:space:]]*netif_tx_disable\(' | awk -F: -v a="${napi_tx:-0}" '$1>a {print $1; exit}')
bad=0
for what in "detach:$detach" "cancel_work_sync(hresp_err_work):$cancel" \
	    "napi_disable(napi_rx):$napi_rx" "netif_tx_disable after napi_disable(napi_tx):$txdis"; do
	name=${what%:*} line=${what##*:}
	if [ -n "$line" ] && [ -n "$reg" ] && [ "$line" -lt "$reg" ]; then
		echo "ok: macb_suspend: $name (line $line) before the first register access (line $reg)"
	else
		echo "FAIL: macb_suspend: $name (line ${line:-none}) not before the first register access (line ${reg:-none})"
		bad=$((bad + 1))
	fi
done
echo "4 checked, $bad failed"
[ "$bad" -eq 0 ]
