// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bpf_redirect() matching frames to cfg.ifindex, pass the rest. */
#include "vmlinux.h"
#include "xdplab.bpf.h"

static __always_inline int redirect(struct xdp_md *ctx, bool frags)
{
	struct xdplab_pkt p;

	xdplab_inspect(ctx, &p, frags);
	if (!xdplab_match(&p))
		return xdplab_verdict(ctx, &p, XDP_PASS);
	return xdplab_verdict(ctx, &p, bpf_redirect(cfg.ifindex, 0));
}

XDPLAB_PROG(xdp_redirect, redirect);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
