#!/bin/sh
# No kernel message may be printed while bp->lock or a queue's tx_ptr_lock
# is held: a netconsole on the GEM transmits from within the printk, and
# netpoll's two ways back into the driver, macb_start_xmit() (tx_ptr_lock,
# then bp->lock for TSTART) and the poll controller (macb_interrupt(),
# bp->lock), spin on the lock this CPU holds. The HRESP message in
# macb_interrupt() (0029) and the TX error task's "BUG:" messages (0030)
# were printed so; the DMA layer may print from within a mapping too, so
# ndo_xdp_xmit maps and unmaps its frames outside tx_ptr_lock (0031 of
# v11; v10's DMA_ATTR_NO_WARN silenced only swiotlb). QEMU raises no TX
# error, and a mapping's print needs dma-debug (the DEBUG=1 board's test
# macb_netpoll/xdp_xmit_print); this reads the driver source. Lock regions are followed line by
# line inside each function (a region left by an early return is closed
# by its unlock line). Debug prints (netdev_dbg(), netdev_vdbg()) are off
# unless dynamic debug or VERBOSE_DEBUG turns them on, and not counted.
#
#	tools/macb_ring/no_print_under_tx_locks.sh /root/ksrc/macb
set -eu
. "$(dirname "$0")/macb_src.sh"
bad=$(awk '
	/^[a-z].*\(/ && !/;$/ { fn = $0; sub(/\(.*/, "", fn); sub(/.* \**/, "", fn); depth = 0 }
	/spin_lock(_irqsave|_bh)?\(&(bp->lock|queue->tx_ptr_lock)/ { depth++ }
	/spin_unlock(_irqrestore|_bh)?\(&(bp->lock|queue->tx_ptr_lock)/ { if (depth > 0) depth-- }
	depth > 0 && /(netdev|dev)_(err|warn|info|notice)\(|pr_(err|warn|info)\(|WARN(_ON|_ONCE)?\(/ {
		printf "%s:%d: %s\n", fn, NR, $0 }
' "$src")
n=0
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" | while IFS= read -r l; do printf 'FAIL: printed under bp->lock or tx_ptr_lock: %s\n' "$l"; done
	n=1
else
	echo "ok: no message printed under bp->lock or a tx_ptr_lock"
fi
m=0
# the DMA layer logs from a mapping with no driver bug (swiotlb full, an
# IOMMU page-table allocation, dma-debug growing its pool), whatever the
# attributes: ndo_xdp_xmit maps and unmaps outside tx_ptr_lock (0031, v11)
if fn_body 'macb_xdp_submit_frame' | grep -qE 'dma_(map|unmap)_|macb_tx_unmap\('; then
	echo "FAIL: macb_xdp_submit_frame(), run under tx_ptr_lock, maps or unmaps: the DMA layer may print there"
	m=1
elif fn_body 'macb_xdp_xmit' | awk '
	/spin_lock_irqsave\(&queue->tx_ptr_lock/ { in_lock = 1 }
	/spin_unlock_irqrestore\(&queue->tx_ptr_lock/ { in_lock = 0 }
	in_lock && /dma_(map|unmap)_|macb_xdp_(map|unmap)_frame\(/ { bad = 1 }
	END { exit !bad }'; then
	echo "FAIL: macb_xdp_xmit() maps or unmaps under tx_ptr_lock: the DMA layer may print there"
	m=1
else
	echo "ok: ndo_xdp_xmit maps and unmaps outside tx_ptr_lock (or is not there)"
fi
echo "2 checked, $((n + m)) failed"
[ "$n" -eq 0 ] && [ "$m" -eq 0 ]
