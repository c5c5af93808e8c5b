/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Header parsing that does not care where the linear part of a frame ends.
 *
 * A header that lies whole in the linear part is read in place (direct
 * packet access, the cheap way); one that runs past it into a fragment of
 * a multi-buffer frame, or sits in one, is copied out with
 * bpf_xdp_load_bytes(). A driver is free to put only the Ethernet header in
 * the linear part, so both ways are needed for the counts to stay honest;
 * the selftests split frames inside every header to pin that.
 *
 * IPv6 extension headers are followed up to XDPLAB_MAX_IPV6_EXT of them
 * (RFC 8200's recommended order has at most six, plus repeats the RFC
 * allows); a longer chain is flagged, not guessed at (see struct
 * xdplab_pkt's too_deep and xdplab_match()).
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
#define IPPROTO_ESP_		50	/* vmlinux.h has IPPROTO_ESP as an enum */
#define IPPROTO_AH_		51
#define IPPROTO_ICMPV6		58
#define IPPROTO_NONE		59
#define IPPROTO_DSTOPTS		60
#define IPPROTO_MH		135	/* Mobility, RFC 6275 */
#define IPPROTO_HIP		139	/* RFC 7401 */
#define IPPROTO_SHIM6		140	/* RFC 5533 */

#define XDPLAB_MAX_VLANS	2
/* Extension headers followed before the upper-layer header. Large enough
 * for any chain RFC 8200 recommends (six) with room for repeats; small
 * enough that the verifier of Linux 6.1 walks the unrolled loop easily.
 */
#define XDPLAB_MAX_IPV6_EXT	16

struct xdplab_pkt {
	__u64 len;		/* whole frame, fragments included (64 bits: no zero-extension on every use) */
	__u16 l3_off;
	__u16 l4_off;
	__u16 sport;		/* host byte order, TCP/UDP only */
	__u16 dport;
	__u8  ipver;		/* 4, 6 or 0 */
	__u8  l4;		/* XDPLAB_L4_* */
	__u8  malformed;	/* a header was cut short or inconsistent */
	__u8  too_deep;		/* IPv6 chain longer than XDPLAB_MAX_IPV6_EXT */
	__u8  multibuf;		/* the frame has fragments (frags entry points only) */
	__u32 segs;		/* packets the frame stands for: gso_segs of a
				 * GSO superframe (xdplab_gso_segs()), else 1 */
};

/* Wire formats vmlinux.h has no stable uapi name for. Declared here, after
 * vmlinux.h, so they carry no CO-RE relocations: packet bytes do not move
 * between kernels.
 */
struct xdplab_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/* The first two bytes of every extension header this parser follows. */
struct xdplab_ipv6_opt {
	__u8 nexthdr;
	__u8 hdrlen;		/* AH: 4-byte units less 2; the rest: 8-byte units less 1 */
};

struct xdplab_ipv6_frag {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;	/* offset in 8-byte units << 3, then 2 reserved bits, M */
	__be32 id;
};

/*
 * len bytes of the frame at off: a pointer into the linear part when they
 * lie there and `direct`, else a copy in buf; NULL when the frame ends
 * first. len, direct and frags are constants after inlining: a linear-only
 * entry point (frags false) has no fragments to copy from, so a direct
 * read that does not fit means the frame is too short.
 *
 * `direct` only where off is a constant on every path the verifier walks
 * (Ethernet, VLAN, L3, and L4 behind a plain IPv4 or IPv6 header): direct
 * access at a variable offset makes the verifier track that offset
 * precisely, and then an extension-header walk does not prune and costs
 * hundreds of thousands of verifier steps. Variable offsets (IPv4 options,
 * IPv6 extension headers) take the copy, which those rarer frames can
 * afford.
 */
static __always_inline void *xdplab_hdr(struct xdp_md *ctx, __u32 off, void *buf, __u32 len,
					bool direct, bool frags)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;

	if (direct && data + off + len <= end)
		return data + off;
	if (direct && !frags)
		return NULL;
	if (bpf_xdp_load_bytes(ctx, off, buf, len))
		return NULL;
	return buf;
}

/* Headers with the generic layout of RFC 8200 section 4 (and AH's). */
static __always_inline bool xdplab_ipv6_is_ext(__u8 nexthdr)
{
	switch (nexthdr) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_FRAGMENT:
	case IPPROTO_AH_:
	case IPPROTO_DSTOPTS:
	case IPPROTO_MH:
	case IPPROTO_HIP:
	case IPPROTO_SHIM6:
		return true;
	}
	return false;
}

/*
 * Walks extension headers from *off; returns the upper-layer protocol,
 * IPPROTO_NONE for a non-first fragment (no upper-layer header in it), -1
 * when a header is cut short, -2 when the chain is longer than the bound.
 * Hop-by-hop options anywhere but first are skipped like any other header:
 * the stack drops such frames itself. ESP ends the walk (what follows is
 * encrypted).
 */
static __always_inline int xdplab_ipv6_skip_ext(struct xdp_md *ctx, __u32 *off, __u8 nexthdr,
						bool frags)
{
	int i;

	/* Unrolled: the 6.1 verifier refuses a loop whose back edge is the
	 * fall-through of a helper call ("back-edge from insn"), which is
	 * what clang makes of this one; no loop, no question.
	 */
#pragma unroll
	for (i = 0; i < XDPLAB_MAX_IPV6_EXT; i++) {
		if (!xdplab_ipv6_is_ext(nexthdr))
			return nexthdr;
		if (nexthdr == IPPROTO_FRAGMENT) {
			struct xdplab_ipv6_frag buf, *fh;

			fh = xdplab_hdr(ctx, *off, &buf, sizeof(buf), false, frags);
			if (!fh)
				return -1;
			/* Only the first fragment carries the upper-layer header. */
			if (bpf_ntohs(fh->frag_off) & ~0x7)
				return IPPROTO_NONE;
			*off += sizeof(*fh);
			nexthdr = fh->nexthdr;
		} else {
			struct xdplab_ipv6_opt buf, *h;

			h = xdplab_hdr(ctx, *off, &buf, sizeof(buf), false, frags);
			if (!h)
				return -1;
			if (nexthdr == IPPROTO_AH_)
				*off += ((__u32)h->hdrlen + 2) * 4;
			else
				*off += ((__u32)h->hdrlen + 1) * 8;
			nexthdr = h->nexthdr;
		}
	}
	return xdplab_ipv6_is_ext(nexthdr) ? -2 : nexthdr;
}

/* Zeroes *p and takes the whole frame's length: a helper call, and a
 * multi-buffer check, only where there can be fragments.
 */
/*
 * The veth series' kfunc (kernel-patches/veth, "bpf, veth: let an XDP
 * program read a GSO superframe's state"): 0 and the frame's GSO state for
 * a superframe, -ENODATA otherwise. Weak: on a kernel without it libbpf
 * leaves it NULL and the verifier drops the call as dead code.
 */
extern int bpf_xdp_gso_state(const struct xdp_md *ctx, __u32 *gso_size,
			     __u32 *gso_segs, __u32 *gso_type) __ksym __weak;

#ifndef bpf_ksym_exists		/* libbpf < 1.2 */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

/* How many packets the frame of len bytes stands for: a GSO superframe
 * (generic XDP gives them to frags programs, veth to those loaded with
 * BPF_F_XDP_GSO) its gso_segs, any other frame 1; 1 also where the kernel
 * cannot say (no bpf_xdp_gso_state()). A superframe from an untrusted
 * sender (a virtio_net_hdr's, seen in generic XDP) may come with gso_segs
 * 0: then len / gso_size, rounded up, which counts the headers as payload:
 * one packet too many where gso_size is at least the headers' length (an
 * untrusted gso_size can be smaller). Only a program the loader opted in
 * asks: cfg is in .rodata, so every other program loses the call at
 * verification and pays nothing per frame.
 */
static __always_inline __u32 xdplab_gso_segs(struct xdp_md *ctx, __u64 len)
{
	__u32 size = 0, segs = 0, type = 0;	/* the verifier checks reads too */

	if (!cfg.gso_opt_in || !bpf_ksym_exists(bpf_xdp_gso_state) ||
	    bpf_xdp_gso_state(ctx, &size, &segs, &type) || !size)
		return 1;
	if (!segs)
		segs = (len + size - 1) / size;
	return segs ?: 1;
}

static __always_inline void xdplab_pkt_init(struct xdp_md *ctx, struct xdplab_pkt *p, bool frags)
{
	__u64 linear = ctx->data_end - ctx->data;

	__builtin_memset(p, 0, sizeof(*p));
	p->segs = 1;
	if (!frags) {
		p->len = linear;
		return;
	}
	p->len = bpf_xdp_get_buff_len(ctx);
	p->multibuf = p->len > linear;
	p->segs = xdplab_gso_segs(ctx, p->len);
}

/*
 * The layouts most frames have, each checked with one bounds check:
 * untagged IPv4 without options (first or only fragment) or IPv6 without
 * extension headers, then UDP or TCP, all in the linear part. Fills *p and
 * returns 1 when one applies, 0 to leave the frame to the general parser,
 * which then reads it the long way: same checks, same result, more steps.
 * Frames too short to hold a whole TCP header always take the long way.
 */
static __always_inline int xdplab_parse_fast(struct xdp_md *ctx, struct xdplab_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct tcphdr *th;	/* a UDP header is its first 8 bytes */
	__u8 proto;

	if (data + sizeof(*eth) > end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = (void *)(eth + 1);
		__u32 tot;

		th = (void *)(iph + 1);
		if ((void *)(th + 1) > end || *(__u8 *)iph != 0x45 ||
		    iph->frag_off & bpf_htons(IP_OFFSET))
			return 0;
		tot = bpf_ntohs(iph->tot_len);
		if (tot < sizeof(*iph) || sizeof(*eth) + tot > p->len)
			return 0;
		proto = iph->protocol;
		p->ipver = 4;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = (void *)(eth + 1);

		th = (void *)(ip6h + 1);
		if ((void *)(th + 1) > end || ip6h->version != 6 ||
		    sizeof(*eth) + sizeof(*ip6h) + bpf_ntohs(ip6h->payload_len) > p->len)
			return 0;
		proto = ip6h->nexthdr;
		p->ipver = 6;
	} else {
		return 0;
	}
	if (proto == IPPROTO_UDP) {
		p->l4 = XDPLAB_L4_UDP;
	} else if (proto == IPPROTO_TCP && th->doff >= 5) {
		p->l4 = XDPLAB_L4_TCP;
	} else {
		p->ipver = 0;
		return 0;
	}
	p->l3_off = sizeof(*eth);
	p->l4_off = (void *)th - data;
	p->sport = bpf_ntohs(th->source);
	p->dport = bpf_ntohs(th->dest);
	return 1;
}

/* Fills *p; frags: is this an xdp.frags entry point (a constant). Returns
 * 0, or -1 when the frame is malformed (p->malformed set, p->len always
 * valid). A frame that is simply not IP is not malformed.
 */
static __always_inline int xdplab_parse(struct xdp_md *ctx, struct xdplab_pkt *p, bool frags)
{
	__u32 off = sizeof(struct ethhdr), end;
	__u16 proto;
	int l4proto, i;
	bool direct = true;	/* is off a constant here? see xdplab_hdr() */

	xdplab_pkt_init(ctx, p, frags);
	if (xdplab_parse_fast(ctx, p))
		return 0;

	{
		struct ethhdr buf, *eth = xdplab_hdr(ctx, 0, &buf, sizeof(buf), true, frags);

		if (!eth)
			goto bad;
		proto = eth->h_proto;
	}

	for (i = 0; i < XDPLAB_MAX_VLANS; i++) {
		struct xdplab_vlan_hdr buf, *vh;

		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		vh = xdplab_hdr(ctx, off, &buf, sizeof(buf), true, frags);
		if (!vh)
			goto bad;
		proto = vh->proto;
		off += sizeof(*vh);
	}
	p->l3_off = off;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr buf, *iph = xdplab_hdr(ctx, off, &buf, sizeof(buf), true, frags);
		__u32 ihl, tot;

		if (!iph)
			goto bad;
		ihl = iph->ihl * 4;
		tot = bpf_ntohs(iph->tot_len);
		if (iph->version != 4 || ihl < sizeof(*iph) || tot < ihl ||
		    off + tot > p->len)
			goto bad;
		p->ipver = 4;
		end = off + tot;
		if (ihl == sizeof(*iph)) {
			off += sizeof(*iph);
		} else {
			off += ihl;
			direct = false;
		}
		/* A non-first fragment has no L4 header to look at. */
		if (bpf_ntohs(iph->frag_off) & IP_OFFSET)
			return 0;
		l4proto = iph->protocol;
		/* IPsec AH in transport mode sits between IPv4 and L4. */
		if (l4proto == IPPROTO_AH_) {
			l4proto = xdplab_ipv6_skip_ext(ctx, &off, l4proto, frags);
			direct = false;
		}
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr buf, *ip6h = xdplab_hdr(ctx, off, &buf, sizeof(buf), true, frags);

		if (!ip6h)
			goto bad;
		end = off + sizeof(*ip6h) + bpf_ntohs(ip6h->payload_len);
		if (ip6h->version != 6 || end > p->len)
			goto bad;
		p->ipver = 6;
		off += sizeof(*ip6h);
		l4proto = ip6h->nexthdr;
		if (xdplab_ipv6_is_ext(l4proto)) {
			l4proto = xdplab_ipv6_skip_ext(ctx, &off, l4proto, frags);
			direct = false;
		}
	} else {
		return 0;
	}
	if (l4proto == -2) {
		p->too_deep = 1;
		goto bad;
	}
	/* Extension headers may not claim more than the payload. */
	if (l4proto < 0 || off > end)
		goto bad;
	p->l4_off = off;

	switch (l4proto) {
	case IPPROTO_TCP: {
		struct tcphdr buf, *th = xdplab_hdr(ctx, off, &buf, sizeof(buf), direct, frags);

		if (!th || th->doff < 5)
			goto bad;
		p->l4 = XDPLAB_L4_TCP;
		p->sport = bpf_ntohs(th->source);
		p->dport = bpf_ntohs(th->dest);
		break;
	}
	case IPPROTO_UDP: {
		struct udphdr buf, *uh = xdplab_hdr(ctx, off, &buf, sizeof(buf), direct, frags);

		if (!uh)
			goto bad;
		p->l4 = XDPLAB_L4_UDP;
		p->sport = bpf_ntohs(uh->source);
		p->dport = bpf_ntohs(uh->dest);
		break;
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		__u32 buf, *type_code = xdplab_hdr(ctx, off, &buf, sizeof(buf), direct, frags);

		if (!type_code)
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
