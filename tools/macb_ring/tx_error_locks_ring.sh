#!/bin/sh
# macb_tx_error_task() must hold the queue's tx_ptr_lock from before its
# tail-to-head walk of the TX ring until after it has reset tx_head and
# tx_tail: the XDP producers (gem_xdp_tx(), macb_xdp_xmit()) take only
# that lock, and take no notice of the stopped stack queues, so an XDP_TX
# during the walk or the reset puts a frame on a ring the task is about
# to zero (issue 20, bug 3). QEMU's GEM never raises a TX error, so no
# guest test runs the task; this reads the driver source.
#
#	tools/macb_ring/tx_error_locks_ring.sh /root/ksrc/macb
set -eu
. "$(dirname "$0")/macb_src.sh"
body=$(fn_body 'macb_tx_error_task')
[ -n "$body" ] || { echo "FAIL: no macb_tx_error_task() in $src"; exit 1; }
lock=$(first 'spin_lock_irqsave\(&queue->tx_ptr_lock')
walk=$(first 'for \(tail = queue->tx_tail; tail != queue->tx_head')
reset=$(echo "$body" | grep -E 'queue->tx_tail = 0;' | tail -1 | cut -d: -f1)
unlock=$(echo "$body" | grep -E 'spin_unlock_irqrestore\(&queue->tx_ptr_lock' | tail -1 | cut -d: -f1)
bad=0
if [ -n "$lock" ] && [ -n "$walk" ] && [ "$lock" -lt "$walk" ]; then
	echo "ok: macb_tx_error_task: tx_ptr_lock taken (line $lock) before the ring walk (line $walk)"
else
	echo "FAIL: macb_tx_error_task: tx_ptr_lock (line ${lock:-none}) not taken before the ring walk (line ${walk:-none})"
	bad=$((bad + 1))
fi
if [ -n "$unlock" ] && [ -n "$reset" ] && [ "$unlock" -gt "$reset" ]; then
	echo "ok: macb_tx_error_task: tx_ptr_lock released (line $unlock) after the index reset (line $reset)"
else
	echo "FAIL: macb_tx_error_task: tx_ptr_lock (released at line ${unlock:-none}) not held over the index reset (line ${reset:-none})"
	bad=$((bad + 1))
fi
echo "2 checked, $bad failed"
[ "$bad" -eq 0 ]
