// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Spread matching frames over CPUs through a CPUMAP; on the remote CPU the
 * map entry's own program (xdp_cpumap_*) gives the final verdict,
 * cfg.cpu_action, and the kernel builds the skb there. The CPU is a hash of
 * the ports so one flow stays on one CPU and in order.
 *
 * A CPUMAP serves frags programs or non-frags programs, not both, and its
 * entries' program must agree with them: each entry point has its own map
 * and its own cpumap program.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 1);		/* resized to the CPU count before load */
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} cpu_map SEC(".maps"), cpu_map_frags SEC(".maps");

/* Slots 0..cpus_count-1 name the CPUs in use, in the order given. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* resized like cpu_map */
	__type(key, __u32);
	__type(value, __u32);
} cpus_available SEC(".maps");

const volatile __u32 cpus_count = 1;

/* Verdicts given on the remote CPU, counted apart from xdp_stats. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDPLAB_STAT_MAX);
	__type(key, __u32);
	__type(value, struct xdplab_datarec);
} cpumap_stats SEC(".maps");

static __always_inline int redirect_cpu(struct xdp_md *ctx, void *cpus, bool frags)
{
	struct xdplab_pkt p;
	__u32 slot, *cpu;

	xdplab_parse(ctx, &p, frags);
	if (!xdplab_match(&p))
		return xdplab_verdict(ctx, &p, XDP_PASS);

	slot = ((__u32)p.sport * 31 + p.dport) % (cpus_count ? cpus_count : 1);
	cpu = bpf_map_lookup_elem(&cpus_available, &slot);
	if (!cpu)
		return xdplab_verdict(ctx, &p, XDP_ABORTED);
	return xdplab_verdict(ctx, &p, bpf_redirect_map(cpus, *cpu, XDP_ABORTED));
}

SEC("xdp")
int xdp_redirect_cpu(struct xdp_md *ctx)
{
	return redirect_cpu(ctx, &cpu_map, false);
}

XDPLAB_GSO_PRESERVING
SEC("xdp.frags")
int xdp_redirect_cpu_frags(struct xdp_md *ctx)
{
	return redirect_cpu(ctx, &cpu_map_frags, true);
}

XDPLAB_RUN_CONFIG(xdp_redirect_cpu);
XDPLAB_RUN_CONFIG(xdp_redirect_cpu_frags);

static __always_inline int cpumap_verdict(struct xdp_md *ctx)
{
	__u32 action = cfg.cpu_action, len = bpf_xdp_get_buff_len(ctx);

	if (action > XDP_REDIRECT || action == XDP_TX || action == XDP_REDIRECT)
		action = XDP_PASS;	/* no device to send on from a cpumap */
	xdplab_count_rec(&cpumap_stats, action, len, len > ctx->data_end - ctx->data, 1);
	return action;
}

SEC("xdp/cpumap")
int xdp_cpumap(struct xdp_md *ctx)
{
	return cpumap_verdict(ctx);
}

SEC("xdp.frags/cpumap")
int xdp_cpumap_frags(struct xdp_md *ctx)
{
	return cpumap_verdict(ctx);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
