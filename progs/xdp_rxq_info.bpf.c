// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Count frames per CPU (xdp_stats is per-CPU) and per RX queue, as the
 * kernel's samples/bpf xdp_rxq_info does, then give cfg.action (XDP_PASS by
 * default; with XDP_TX the MACs are swapped first when cfg.swap_macs).
 * The queue counters show whether RSS spreads a test's flows.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDPLAB_MAX_RXQ);
	__type(key, __u32);
	__type(value, struct xdplab_rxq_rec);
} rxq_stats SEC(".maps");

static __always_inline int rxq_info(struct xdp_md *ctx, bool frags)
{
	__u32 q = ctx->rx_queue_index;
	struct xdplab_rxq_rec *rec;
	struct xdplab_pkt p;
	__u32 action = cfg.action;

	xdplab_inspect(ctx, &p, frags);
	if (q >= XDPLAB_MAX_RXQ)
		q = XDPLAB_MAX_RXQ - 1;	/* the last slot also collects overflow */
	rec = bpf_map_lookup_elem(&rxq_stats, &q);
	if (rec) {
		rec->packets++;
		if (ctx->rx_queue_index >= XDPLAB_MAX_RXQ - 1)
			rec->issue++;
	}
	if (!xdplab_match(&p))
		action = XDP_PASS;
	if (action == XDP_TX && cfg.swap_macs && xdplab_swap_macs(ctx))
		return xdplab_verdict(ctx, &p, XDP_ABORTED);
	return xdplab_verdict(ctx, &p, action);
}

XDPLAB_PROG(xdp_rxq_info, rxq_info);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
