// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The transmit side of the live-frames traffic generator. User space runs
 * this with BPF_PROG_RUN and BPF_F_TEST_XDP_LIVE_FRAMES: the kernel resets
 * the frame to the given bytes before every run, and the redirect sends it
 * for real. No parsing: this is the hot loop and the frame is known.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"

SEC("xdp")
int xdp_trafficgen(struct xdp_md *ctx)
{
	struct xdplab_pkt p = { .len = ctx->data_end - ctx->data, .segs = 1 };

	return xdplab_verdict(ctx, &p, bpf_redirect(cfg.ifindex, 0));
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
