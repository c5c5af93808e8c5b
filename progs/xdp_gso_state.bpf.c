// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Records what bpf_xdp_gso_state() (kernel-patches/veth, 0013) tells a
 * program about each frame, for selftests/veth_gso.c: the values, whether
 * gso_segs agrees with the frame's own headers and length, the -ENODATA
 * contract, and that moving the frame's start does not change the answer
 * (the state is the frame's as it arrived). Every frame is passed.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"
#include "xdp_gso_state.h"

#ifndef ENODATA
#define ENODATA		61
#endif
#define IP_MF_OFFSET	0x3fff
#ifndef ETH_HLEN
#define ETH_HLEN	14
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gso_state_stats);
} gso_state SEC(".maps");

/* Ethernet, IP and TCP or UDP headers of an untagged IPv4 (unfragmented)
 * or IPv6 (no extension header) frame, all in the linear part; 0 for any
 * other frame.
 */
static __always_inline __u32 hdrs_len(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 l4_off, proto;

	if ((void *)(eth + 1) > end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->ihl < 5 || ip->frag_off & bpf_htons(IP_MF_OFFSET))
			return 0;
		l4_off = sizeof(*eth) + ip->ihl * 4;
		proto = ip->protocol;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return 0;
		l4_off = sizeof(*eth) + sizeof(*ip6);
		proto = ip6->nexthdr;
	} else {
		return 0;
	}
	if (l4_off > 14 + 60)
		return 0;
	if (proto == IPPROTO_UDP)
		return l4_off + sizeof(struct udphdr);
	if (proto == IPPROTO_TCP) {
		struct tcphdr *th = data + l4_off;

		if ((void *)(th + 1) > end || th->doff < 5)
			return 0;
		return l4_off + th->doff * 4;
	}
	return 0;
}

SEC("xdp.frags")
int xdp_gso_state(struct xdp_md *ctx)
{
	__u32 key = 0, size = 0, segs = 0, type = 0, size2 = 0, segs2 = 0, type2 = 0;
	struct gso_state_stats *st = bpf_map_lookup_elem(&gso_state, &key);
	__u32 len, hl;
	int ret, i;

	if (!st || !bpf_ksym_exists(bpf_xdp_gso_state))
		return XDP_PASS;
	st->frames++;
	ret = bpf_xdp_gso_state(ctx, &size, &segs, &type);
	if (ret == -ENODATA) {
		st->nodata++;
		if (size || segs || type)
			st->nodata_nonzero++;
		return XDP_PASS;
	}
	if (ret) {
		st->other_ret++;
		return XDP_PASS;
	}
	st->gso++;
	if (!st->size_min || size < st->size_min)
		st->size_min = size;
	if (size > st->size_max)
		st->size_max = size;
	st->segs_sum += segs;
	if (!segs)
		st->segs_zero++;
	for (i = 0; i < GSO_STATE_TYPE_BITS; i++)
		if (type & (1U << i))
			st->type_bits[i]++;

	len = bpf_xdp_get_buff_len(ctx);
	hl = hdrs_len(ctx);
	if (!hl || len <= hl || !size)
		st->unparsed++;
	else if ((len - hl + size - 1) / size != segs)
		st->segs_wrong++;

	if (!bpf_xdp_adjust_head(ctx, ETH_HLEN)) {
		if (bpf_xdp_gso_state(ctx, &size2, &segs2, &type2) ||
		    size2 != size || segs2 != segs || type2 != type)
			st->moved_changed++;
		/* the Ethernet header is still in place: give it back */
		if (bpf_xdp_adjust_head(ctx, -ETH_HLEN))
			return XDP_ABORTED;
	}
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
