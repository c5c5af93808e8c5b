// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* XDP_DROP the frames that match cfg.match_* (all by default), pass the
 * rest: with a port filter it drops test traffic and leaves ssh alone.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"

static __always_inline int drop(struct xdp_md *ctx, bool frags)
{
	struct xdplab_pkt p;

	xdplab_inspect(ctx, &p, frags);
	return xdplab_verdict(ctx, &p, xdplab_match(&p) ? XDP_DROP : XDP_PASS);
}

XDPLAB_PROG(xdp_drop, drop);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
