// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Swap source and destination MAC and XDP_TX the frame back out of the
 * interface it came in on. Matching frames only; the rest are passed.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"

static __always_inline int tx(struct xdp_md *ctx, bool frags)
{
	struct xdplab_pkt p;

	xdplab_parse(ctx, &p, frags);
	if (p.malformed || !xdplab_match(&p))
		return xdplab_verdict(ctx, &p, XDP_PASS);
	if (xdplab_swap_macs(ctx))
		return xdplab_verdict(ctx, &p, XDP_ABORTED);
	return xdplab_verdict(ctx, &p, XDP_TX);
}

XDPLAB_PROG(xdp_tx, tx);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
