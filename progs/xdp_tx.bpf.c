// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Swap source and destination MAC and XDP_TX the frame back out of the
 * interface it came in on. Matching frames only; the rest are passed.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"

static __always_inline int tx(struct xdp_md *ctx)
{
	struct xdplab_pkt p;
	__u8 macs[2 * ETH_ALEN], tmp[ETH_ALEN];

	xdplab_parse(ctx, &p);
	if (p.malformed || !xdplab_match(&p))
		return xdplab_verdict(ctx, &p, XDP_PASS);

	/* The store helper too works wherever the Ethernet header sits. */
	if (bpf_xdp_load_bytes(ctx, 0, macs, sizeof(macs)))
		return xdplab_verdict(ctx, &p, XDP_ABORTED);
	__builtin_memcpy(tmp, macs, ETH_ALEN);
	__builtin_memcpy(macs, macs + ETH_ALEN, ETH_ALEN);
	__builtin_memcpy(macs + ETH_ALEN, tmp, ETH_ALEN);
	if (bpf_xdp_store_bytes(ctx, 0, macs, sizeof(macs)))
		return xdplab_verdict(ctx, &p, XDP_ABORTED);
	return xdplab_verdict(ctx, &p, XDP_TX);
}

XDPLAB_PROG(xdp_tx, tx);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
