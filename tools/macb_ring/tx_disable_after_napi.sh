#!/bin/sh
# Every path that drains, resets or frees the TX rings of a running GEM
# must stop the stack's queues with netif_tx_disable() after the last
# napi_disable(&queue->napi_tx): until then macb_tx_complete() (a TX poll,
# or netpoll's budget-0 poll) wakes any stopped subqueue, and a
# macb_start_xmit() after the drain puts an skb on a ring about to be reset.
# The skb is lost, and with it its socket and whatever that socket holds
# (v11's leaked pool page, kernel-patches/macb leak-analysis-v11.md).
# The board's QEMU raises HRESP on request (selftests/test_macb_hresp.c),
# but the window is a few instructions wide and needs a TX poll and a
# transmit inside it, so no guest test hits it on demand; this reads the
# driver source (review-v12 BUG 1).
#	tools/macb_ring/tx_disable_after_napi.sh /root/ksrc/macb
set -eu
. "$(dirname "$0")/macb_src.sh"
last() { echo "$body" | grep -E "$1" | tail -1 | cut -d: -f1; }
bad=0; n=0
check() {	# function, regex of the teardown
	body=$(fn_body "$1")
	[ -n "$body" ] || { echo "FAIL: no $1()"; bad=$((bad+1)); return; }
	napi=$(last 'napi_disable\(&queue->napi_tx\)')
	down=$(first "$2")
	dis=$(echo "$body" | grep -E '^[0-9]+: [[:space:]]*netif_tx_disable\(' | awk -F: -v a="${napi:-0}" -v b="${down:-0}" '$1>a && $1<b {print $1; exit}')
	n=$((n+1))
	if [ -n "$dis" ]; then
		echo "ok: $1: netif_tx_disable (line $dis) between napi_disable(napi_tx) (line $napi) and the teardown (line $down)"
	else
		echo "FAIL: $1: no netif_tx_disable between napi_disable(napi_tx) (line ${napi:-none}) and the teardown (line ${down:-none})"
		bad=$((bad+1))
	fi
}
check macb_close 'macb_free_consistent\(bp\)'
check macb_hresp_error_task 'macb_tx_ring_drain\(queue\)'
check macb_open 'macb_free_consistent\(bp\)'
echo "$n checked, $bad failed"
[ "$bad" -eq 0 ]
