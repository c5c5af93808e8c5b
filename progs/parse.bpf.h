/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Header parsing that does not care where the linear part of a frame ends.
 *
 * Every read goes through bpf_xdp_load_bytes(), which copies across the
 * boundary between the linear area and the fragments of a multi-buffer
 * frame. Direct packet access would be cheaper for linear frames, but then
 * a header that straddles the boundary (a driver is free to put only the
 * Ethernet header in the linear part) would be silently missed. One path
 * for both cases keeps the counts honest.
 */
#ifndef XDPLAB_PARSE_BPF_H
#define XDPLAB_PARSE_BPF_H

/* #defines do not survive into BTF, so vmlinux.h lacks these. */
#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD
#define ETH_P_8021Q	0x8100
#define ETH_P_8021AD	0x88A8
#define IP_OFFSET	0x1FFF
#define ETH_ALEN	6
#define IPPROTO_HOPOPTS		0
#define IPPROTO_ROUTING		43
#define IPPROTO_FRAGMENT	44
#define IPPROTO_ICMPV6		58
#define IPPROTO_NONE		59
#define IPPROTO_DSTOPTS		60

#define XDPLAB_MAX_VLANS	2
#define XDPLAB_MAX_IPV6_EXT	4

struct xdplab_pkt {
	__u32 len;		/* whole frame, fragments included */
	__u16 l3_off;
	__u16 l4_off;
	__u16 sport;		/* host byte order, TCP/UDP only */
	__u16 dport;
	__u8  ipver;		/* 4, 6 or 0 */
	__u8  l4;		/* XDPLAB_L4_* */
	__u8  malformed;	/* a header was cut short or inconsistent */
};

/* Wire formats vmlinux.h has no stable uapi name for. Declared here, after
 * vmlinux.h, so they carry no CO-RE relocations: packet bytes do not move
 * between kernels.
 */
struct xdplab_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

struct xdplab_ipv6_opt {
	__u8 nexthdr;
	__u8 hdrlen;		/* in 8-byte units, not counting the first 8 */
};

struct xdplab_ipv6_frag {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;
	__be32 id;
};

/* Walks IPv6 extension headers; returns the upper-layer protocol or -1. */
static __always_inline int xdplab_ipv6_skip_ext(struct xdp_md *ctx, __u32 *off,
						__u8 nexthdr)
{
	struct xdplab_ipv6_opt opt;
	int i;

	for (i = 0; i < XDPLAB_MAX_IPV6_EXT; i++) {
		switch (nexthdr) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
			if (bpf_xdp_load_bytes(ctx, *off, &opt, sizeof(opt)))
				return -1;
			*off += (opt.hdrlen + 1) * 8;
			nexthdr = opt.nexthdr;
			break;
		case IPPROTO_FRAGMENT: {
			struct xdplab_ipv6_frag fh;

			if (bpf_xdp_load_bytes(ctx, *off, &fh, sizeof(fh)))
				return -1;
			/* Only the first fragment carries the L4 header. */
			if (bpf_ntohs(fh.frag_off) & ~0x7)
				return IPPROTO_NONE;
			*off += sizeof(fh);
			nexthdr = fh.nexthdr;
			break;
		}
		default:
			return nexthdr;
		}
	}
	return -1;
}

/* Fills *p. Returns 0, or -1 when the frame is malformed (p->malformed set,
 * p->len always valid). A frame that is simply not IP is not malformed.
 */
static __always_inline int xdplab_parse(struct xdp_md *ctx, struct xdplab_pkt *p)
{
	struct ethhdr eth;
	__u32 off = sizeof(eth);
	__u16 proto;
	int l4proto, i;

	__builtin_memset(p, 0, sizeof(*p));
	p->len = bpf_xdp_get_buff_len(ctx);

	if (bpf_xdp_load_bytes(ctx, 0, &eth, sizeof(eth)))
		goto bad;
	proto = eth.h_proto;

	for (i = 0; i < XDPLAB_MAX_VLANS; i++) {
		struct xdplab_vlan_hdr vh;

		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		if (bpf_xdp_load_bytes(ctx, off, &vh, sizeof(vh)))
			goto bad;
		proto = vh.proto;
		off += sizeof(vh);
	}
	p->l3_off = off;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr iph;
		__u32 ihl, tot;

		if (bpf_xdp_load_bytes(ctx, off, &iph, sizeof(iph)))
			goto bad;
		ihl = iph.ihl * 4;
		tot = bpf_ntohs(iph.tot_len);
		if (iph.version != 4 || ihl < sizeof(iph) || tot < ihl ||
		    off + tot > p->len)
			goto bad;
		p->ipver = 4;
		off += ihl;
		/* A non-first fragment has no L4 header to look at. */
		if (bpf_ntohs(iph.frag_off) & IP_OFFSET)
			return 0;
		l4proto = iph.protocol;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6h;
		__u32 end;

		if (bpf_xdp_load_bytes(ctx, off, &ip6h, sizeof(ip6h)))
			goto bad;
		if (ip6h.version != 6 ||
		    off + sizeof(ip6h) + bpf_ntohs(ip6h.payload_len) > p->len)
			goto bad;
		end = off + sizeof(ip6h) + bpf_ntohs(ip6h.payload_len);
		p->ipver = 6;
		off += sizeof(ip6h);
		l4proto = xdplab_ipv6_skip_ext(ctx, &off, ip6h.nexthdr);
		/* Extension headers may not claim more than the payload. */
		if (l4proto < 0 || off > end)
			goto bad;
	} else {
		return 0;
	}
	p->l4_off = off;

	switch (l4proto) {
	case IPPROTO_TCP: {
		struct tcphdr th;

		if (bpf_xdp_load_bytes(ctx, off, &th, sizeof(th)) || th.doff < 5)
			goto bad;
		p->l4 = XDPLAB_L4_TCP;
		p->sport = bpf_ntohs(th.source);
		p->dport = bpf_ntohs(th.dest);
		break;
	}
	case IPPROTO_UDP: {
		struct udphdr uh;

		if (bpf_xdp_load_bytes(ctx, off, &uh, sizeof(uh)))
			goto bad;
		p->l4 = XDPLAB_L4_UDP;
		p->sport = bpf_ntohs(uh.source);
		p->dport = bpf_ntohs(uh.dest);
		break;
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		__u32 type_code;

		if (bpf_xdp_load_bytes(ctx, off, &type_code, sizeof(type_code)))
			goto bad;
		p->l4 = XDPLAB_L4_ICMP;
		break;
	}
	}
	return 0;
bad:
	p->malformed = 1;
	p->l4 = XDPLAB_L4_NONE;
	return -1;
}

#endif /* XDPLAB_PARSE_BPF_H */
