// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Redirect matching frames through a DEVMAP to the device in slot 0. An
 * empty slot aborts, so a misconfigured map shows up as errors (and in the
 * xdp:xdp_exception tracepoint) instead of as traffic quietly passed.
 *
 * The kernel lets a DEVMAP be used by frags programs or by non-frags
 * programs, not both, so each entry point has a map of its own.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} tx_port SEC(".maps"), tx_port_frags SEC(".maps");

static __always_inline int redirect_map(struct xdp_md *ctx, void *tx_map, bool frags)
{
	struct xdplab_pkt p;

	xdplab_inspect(ctx, &p, frags);
	if (!xdplab_match(&p))
		return xdplab_verdict(ctx, &p, XDP_PASS);
	return xdplab_verdict(ctx, &p, bpf_redirect_map(tx_map, 0, XDP_ABORTED));
}

SEC("xdp")
int xdp_redirect_map(struct xdp_md *ctx)
{
	return redirect_map(ctx, &tx_port, false);
}

XDPLAB_GSO_PRESERVING
SEC("xdp.frags")
int xdp_redirect_map_frags(struct xdp_md *ctx)
{
	return redirect_map(ctx, &tx_port_frags, true);
}

XDPLAB_RUN_CONFIG(xdp_redirect_map);
XDPLAB_RUN_CONFIG(xdp_redirect_map_frags);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
