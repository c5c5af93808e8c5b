// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* XDP_PASS every frame, counting it: the baseline any other program is
 * measured against, and the program the veth GSO series is about.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"

static __always_inline int pass(struct xdp_md *ctx, bool frags)
{
	struct xdplab_pkt p;

	xdplab_inspect(ctx, &p, frags);
	return xdplab_verdict(ctx, &p, XDP_PASS);
}

XDPLAB_PROG(xdp_pass, pass);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
