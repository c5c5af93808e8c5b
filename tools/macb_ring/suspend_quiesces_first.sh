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
#	tools/macb_ring/suspend_quiesces_first.sh /root/ksrc/macb
set -eu
. "$(dirname "$0")/macb_src.sh"
body=$(fn_body '__maybe_unused macb_suspend')
[ -n "$body" ] || { echo "FAIL: no macb_suspend() in $src"; exit 1; }
reg=$(first '(macb|gem|queue|macb_or_gem)_(read|write)l(_n)?\(')
detach=$(first 'netif_device_detach\(netdev\)')
cancel=$(first 'cancel_work_sync\(&bp->hresp_err_work\)')
bad=0
for what in "detach:$detach" "cancel_work_sync(hresp_err_work):$cancel"; do
	name=${what%:*} line=${what##*:}
	if [ -n "$line" ] && [ -n "$reg" ] && [ "$line" -lt "$reg" ]; then
		echo "ok: macb_suspend: $name (line $line) before the first register access (line $reg)"
	else
		echo "FAIL: macb_suspend: $name (line ${line:-none}) not before the first register access (line ${reg:-none})"
		bad=$((bad + 1))
	fi
done
echo "2 checked, $bad failed"
[ "$bad" -eq 0 ]
