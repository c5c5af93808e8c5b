// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The program the veth GSO selftests (selftests/veth_gso.c) attach: it
 * counts the GSO superframes a multi-buffer program is given (TCP frames
 * longer than the MTU) and, depending on gso_cfg.mode, resizes them,
 * sends them back out (XDP_TX), redirects them or drops a few, so the tests
 * can check that what comes out of the kernel is still correct.
 *
 * Not tagged XDPLAB_GSO_PRESERVING: most modes change the frame.
 */
#include "vmlinux.h"
#include "xdplab.bpf.h"
#include "xdp_gso_test.h"

#ifndef ETH_HLEN
#define ETH_HLEN	14
#endif

const volatile struct gso_test_cfg gso_cfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GSO_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} gso_counts SEC(".maps");

/* GSO_TEST_DROP_FIRST: superframes dropped so far, over all CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} gso_dropped SEC(".maps");

static __always_inline void count(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&gso_counts, &slot);

	if (v)
		*v += n;
}

static __always_inline void count_max(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&gso_counts, &slot);

	if (v && *v < n)
		*v = n;
}

/* One's complement sum - m + m2, 16-bit words in network order. */
static __always_inline __u16 csum_replace(__u16 sum, __u16 m, __u16 m2)
{
	__u32 c = (__u32)sum + (__u16)~m + m2;

	c = (c & 0xffff) + (c >> 16);
	c = (c & 0xffff) + (c >> 16);
	return c;
}

/* Push an 802.1Q tag with VID 0 (priority tagged): the frame grows by 4
 * bytes at the front, the IP packet itself is untouched.
 */
static __always_inline int push_tag(struct xdp_md *ctx)
{
	__u8 hdr[ETH_HLEN + 4];
	__u16 *w = (__u16 *)(hdr + 2 * ETH_ALEN);

	if (bpf_xdp_load_bytes(ctx, 0, hdr, ETH_HLEN))
		return -1;
	/* hdr[12..13] holds the inner type; make room for the tag */
	hdr[16] = hdr[12];
	hdr[17] = hdr[13];
	w[0] = bpf_htons(ETH_P_8021Q);
	w[1] = 0;
	if (bpf_xdp_adjust_head(ctx, -4))
		return -1;
	return bpf_xdp_store_bytes(ctx, 0, hdr, sizeof(hdr));
}

/* Cut `trim` bytes of TCP or UDP payload off the end (all but `keep` bytes
 * when keep is set) and make the IP and UDP lengths and the checksums say so.
 * The L4 checksum field of a superframe holds the pseudo-header sum only
 * (CHECKSUM_PARTIAL): its length changes.
 */
static __always_inline int trim_tail(struct xdp_md *ctx, const struct xdplab_pkt *p,
				     __u32 trim, __u32 keep)
{
	__u16 old_len, new_len, check;
	__u32 check_off, l4_hlen;
	struct tcphdr th;
	struct udphdr uh;

	if (p->l4 == XDPLAB_L4_UDP) {
		if (bpf_xdp_load_bytes(ctx, p->l4_off, &uh, sizeof(uh)))
			return -1;
		l4_hlen = sizeof(uh);
		check = uh.check;
		check_off = p->l4_off + offsetof(struct udphdr, check);
	} else {
		if (bpf_xdp_load_bytes(ctx, p->l4_off, &th, sizeof(th)))
			return -1;
		/* A FIN would then come early and end the stream there */
		if (th.fin || th.syn || th.rst)
			return 1;
		l4_hlen = th.doff * 4;
		check = th.check;
		check_off = p->l4_off + offsetof(struct tcphdr, check);
	}
	if (keep)
		trim = p->len > p->l4_off + l4_hlen + keep ?
		       p->len - p->l4_off - l4_hlen - keep : 0;
	if (!trim || p->len <= p->l4_off + l4_hlen + trim)
		return 1;	/* not that much payload: leave it */

	if (p->ipver == 4) {
		struct iphdr iph;

		if (bpf_xdp_load_bytes(ctx, p->l3_off, &iph, sizeof(iph)))
			return -1;
		old_len = iph.tot_len;
		new_len = bpf_htons(bpf_ntohs(old_len) - trim);
		iph.check = ~csum_replace(~iph.check, old_len, new_len);
		iph.tot_len = new_len;
		if (bpf_xdp_store_bytes(ctx, p->l3_off, &iph, sizeof(iph)))
			return -1;
		/* pseudo-header length: the IP payload */
		old_len = bpf_htons(bpf_ntohs(old_len) - iph.ihl * 4);
		new_len = bpf_htons(bpf_ntohs(new_len) - iph.ihl * 4);
	} else {
		struct ipv6hdr ip6h;

		if (bpf_xdp_load_bytes(ctx, p->l3_off, &ip6h, sizeof(ip6h)))
			return -1;
		old_len = ip6h.payload_len;
		new_len = bpf_htons(bpf_ntohs(old_len) - trim);
		ip6h.payload_len = new_len;
		if (bpf_xdp_store_bytes(ctx, p->l3_off, &ip6h, sizeof(ip6h)))
			return -1;
	}
	if (p->l4 == XDPLAB_L4_UDP) {
		uh.len = new_len;
		if (bpf_xdp_store_bytes(ctx, p->l4_off + offsetof(struct udphdr, len),
					&uh.len, sizeof(uh.len)))
			return -1;
	}
	check = csum_replace(check, old_len, new_len);
	if (bpf_xdp_store_bytes(ctx, check_off, &check, sizeof(check)))
		return -1;
	return bpf_xdp_adjust_tail(ctx, -(int)trim);
}

static __always_inline __u8 ttl_of(struct xdp_md *ctx, const struct xdplab_pkt *p)
{
	__u8 ttl = 0;

	/* IPv4 TTL is byte 8 of the header, the IPv6 hop limit byte 7 */
	bpf_xdp_load_bytes(ctx, p->l3_off + (p->ipver == 4 ? 8 : 7), &ttl, 1);
	return ttl;
}

static __always_inline int set_macs(struct xdp_md *ctx, bool swap)
{
	__u8 macs[2 * ETH_ALEN], tmp[ETH_ALEN];

	if (swap) {
		if (bpf_xdp_load_bytes(ctx, 0, macs, sizeof(macs)))
			return -1;
		__builtin_memcpy(tmp, macs, ETH_ALEN);
		__builtin_memcpy(macs, macs + ETH_ALEN, ETH_ALEN);
		__builtin_memcpy(macs + ETH_ALEN, tmp, ETH_ALEN);
	} else {
		/* Byte by byte: a memcpy() from gso_cfg cast to a plain
		 * pointer lets clang fold the bytes to the initializer's
		 * zeros, as the load-time values were never read.
		 */
		for (int i = 0; i < ETH_ALEN; i++) {
			macs[i] = gso_cfg.dmac[i];
			macs[ETH_ALEN + i] = gso_cfg.smac[i];
		}
	}
	return bpf_xdp_store_bytes(ctx, 0, macs, sizeof(macs));
}

extern int bpf_dynptr_from_xdp(struct xdp_md *xdp, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __ksym __weak;
extern void *bpf_dynptr_slice(const struct bpf_dynptr *p, __u32 offset,
			      void *buffer__opt, __u32 buffer__szk) __ksym __weak;
extern void *bpf_dynptr_slice_rdwr(const struct bpf_dynptr *p, __u32 offset,
				   void *buffer__opt, __u32 buffer__szk) __ksym __weak;

#define SCRIBBLE_LEN 64

/* Overwrite the last SCRIBBLE_LEN bytes of the frame (in its last fragment
 * for a multi-buffer frame).
 */
static __always_inline int scribble(struct xdp_md *ctx, __u32 len)
{
	__u8 junk[SCRIBBLE_LEN];
	struct bpf_dynptr ptr;
	__u8 *p;

	__builtin_memset(junk, 0xa5, sizeof(junk));
	if (!gso_cfg.dynptr)
		return bpf_xdp_store_bytes(ctx, len - SCRIBBLE_LEN, junk, sizeof(junk));
	if (!bpf_dynptr_from_xdp || !bpf_dynptr_slice_rdwr)
		return -1;
	if (bpf_dynptr_from_xdp(ctx, 0, &ptr))
		return -1;
	/* a direct pointer when the bytes sit in one fragment */
	p = bpf_dynptr_slice_rdwr(&ptr, len - SCRIBBLE_LEN, NULL, SCRIBBLE_LEN);
	if (!p)
		return bpf_dynptr_write(&ptr, len - SCRIBBLE_LEN, junk, sizeof(junk), 0);
	__builtin_memcpy(p, junk, SCRIBBLE_LEN);
	return 0;
}

/* GSO_TEST_SLICE_WRITE: the bytes read back from the copy of the slice. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[GSO_TEST_SLICE_LEN]);
} gso_seen SEC(".maps");

/* A write elsewhere in the frame, then a read-only slice and a copy of it
 * into the frame. Where the write made the kernel replace shared
 * fragments, the slice must point into the new ones and hold the frame's
 * bytes. (A slice taken before the write may not be read after it: the
 * verifier refuses that in an opted-in program, xdp_gso_stale_slice.bpf.c.)
 * The slice is read by a helper (a copy into the frame), which KASAN
 * checks; what it read is kept in gso_seen for the test to compare.
 */
static __always_inline int slice_write(struct xdp_md *ctx)
{
	__u32 woff = gso_cfg.write_off, zero = 0;
	struct bpf_dynptr ptr;
	__u8 one = 0x5a, *slice, *seen;

	if (!bpf_dynptr_from_xdp || !bpf_dynptr_slice)
		return -1;
	if (bpf_dynptr_from_xdp(ctx, 0, &ptr))
		return -1;
	if (bpf_dynptr_write(&ptr, woff, &one, 1, 0))
		return -1;
	slice = bpf_dynptr_slice(&ptr, gso_cfg.slice_off, NULL, GSO_TEST_SLICE_LEN);
	if (!slice)
		return -1;
	if (bpf_dynptr_write(&ptr, woff + 100, slice, GSO_TEST_SLICE_LEN, 0))
		return -1;
	seen = bpf_map_lookup_elem(&gso_seen, &zero);
	if (!seen)
		return -1;
	return bpf_dynptr_read(seen, GSO_TEST_SLICE_LEN, &ptr, woff + 100, 0);
}

/* GSO_TEST_TX_STORE on a frame to `port`: a write that changes nothing,
 * but makes the kernel give the frame private fragments first.
 */
static __always_inline int store_same(struct xdp_md *ctx)
{
	__u8 b;

	if (bpf_xdp_load_bytes(ctx, gso_cfg.write_off, &b, 1))
		return -1;
	return bpf_xdp_store_bytes(ctx, gso_cfg.write_off, &b, 1);
}

/* GSO_TEST_META_TX: 8 bytes of metadata in front of the frame. */
static __always_inline int put_meta(struct xdp_md *ctx)
{
	__u64 *meta;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*meta)))
		return -1;
	meta = (void *)(long)ctx->data_meta;
	if ((void *)(meta + 1) > (void *)(long)ctx->data)
		return -1;
	*meta = GSO_TEST_META;
	return 0;
}

/* GSO_TEST_META_CHECK: 1 if the frame came with put_meta()'s metadata. */
static __always_inline int has_meta(struct xdp_md *ctx)
{
	__u64 *meta = (void *)(long)ctx->data_meta;

	if ((void *)(meta + 1) > (void *)(long)ctx->data)
		return 0;
	return *meta == GSO_TEST_META;
}

#ifndef ENOMEM
#define ENOMEM		12
#endif
#define PARTIAL_LEN	12	/* what fits in the linear part: the MACs */

/* GSO_TEST_PARTIAL_WRITE. A store into the paged area whose copy of the
 * shared fragments failed part-way (-ENOMEM) must leave the buffer as it
 * was, and the next store must not free what the failed one copied. The
 * bytes at slice_off are read through a slice after the failed store and,
 * through a new slice, after the next one (a slice does not outlive a
 * store in an opted-in program); the kernel reads the second slice too
 * (bpf_xdp_store_bytes() copies it into the linear part), where KASAN
 * checks the read. Returns 1 when the first store did not fail with
 * -ENOMEM, 0 when the bytes stayed, -1 if not.
 */
static __always_inline int partial_write(struct xdp_md *ctx)
{
	__u8 b, before[PARTIAL_LEN], after[PARTIAL_LEN], *slice;
	__u32 woff = gso_cfg.write_off;
	struct bpf_dynptr ptr;
	int err;

	if (!bpf_dynptr_from_xdp || !bpf_dynptr_slice)
		return -1;
	if (bpf_xdp_load_bytes(ctx, woff, &b, 1))
		return -1;
	err = bpf_xdp_store_bytes(ctx, woff, &b, 1);
	if (err != -ENOMEM)
		return err ? -1 : 1;
	if (bpf_dynptr_from_xdp(ctx, 0, &ptr))
		return -1;
	slice = bpf_dynptr_slice(&ptr, gso_cfg.slice_off, NULL, PARTIAL_LEN);
	if (!slice)
		return -1;
	__builtin_memcpy(before, slice, PARTIAL_LEN);
	bpf_xdp_store_bytes(ctx, woff, &b, 1);	/* may fail again */
	slice = bpf_dynptr_slice(&ptr, gso_cfg.slice_off, NULL, PARTIAL_LEN);
	if (!slice)
		return -1;
	if (bpf_xdp_store_bytes(ctx, 0, slice, PARTIAL_LEN) ||
	    bpf_xdp_load_bytes(ctx, 0, after, PARTIAL_LEN))
		return -1;
	for (int i = 0; i < PARTIAL_LEN; i++)
		if (before[i] != after[i])
			return -1;
	return 0;
}

/* GSO_TEST_IPIP_REDIRECT: what a tunnelling load balancer does, the
 * frame wrapped in an outer IPv4 header (protocol 4, IPIP). The outer
 * length wraps for a superframe longer than 64 KB minus 20: such a frame
 * can only leave by segmentation, which recomputes it.
 */
static __always_inline int ipip_push(struct xdp_md *ctx, const struct xdplab_pkt *p)
{
	__u32 saddr = gso_cfg.encap_saddr, daddr = gso_cfg.encap_daddr, sum = 0;
	__u8 hdr[ETH_HLEN + 20] = {};
	__u16 *w = (__u16 *)(hdr + ETH_HLEN);

	for (int i = 0; i < ETH_ALEN; i++) {
		hdr[i] = gso_cfg.dmac[i];
		hdr[ETH_ALEN + i] = gso_cfg.smac[i];
	}
	hdr[12] = 0x08;			/* ETH_P_IP */
	hdr[ETH_HLEN] = 0x45;
	w[1] = bpf_htons(p->len - ETH_HLEN + 20);
	hdr[ETH_HLEN + 8] = 64;		/* TTL */
	hdr[ETH_HLEN + 9] = 4;		/* IPPROTO_IPIP */
	/* through locals: see set_macs() */
	__builtin_memcpy(hdr + ETH_HLEN + 12, &saddr, 4);
	__builtin_memcpy(hdr + ETH_HLEN + 16, &daddr, 4);
	for (int i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	w[5] = ~sum;
	if (bpf_xdp_adjust_head(ctx, -20))
		return -1;
	return bpf_xdp_store_bytes(ctx, 0, hdr, sizeof(hdr));
}

/* The TCP or UDP checksum of the IPv4 packet after the Ethernet header,
 * computed anew. A frame that left its sender's veth CHECKSUM_PARTIAL
 * carries only the pseudo-header sum there, and XDP_REDIRECT (as on a
 * stock kernel) sends it on like that; a NIC would have finished it, so
 * the tunnel's far end does. Only a linear frame of at most 1600 bytes.
 */
static __always_inline int l4_csum_fill(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *iph = data + ETH_HLEN;
	__u32 sum, len, check_off;
	__u16 *w, *check;
	__u8 last = 0;

	if ((void *)(iph + 1) > end || iph->ihl != 5)
		return -1;
	if (iph->protocol == IPPROTO_TCP)
		check_off = offsetof(struct tcphdr, check);
	else if (iph->protocol == IPPROTO_UDP)
		check_off = offsetof(struct udphdr, check);
	else
		return 0;
	len = bpf_ntohs(iph->tot_len) - sizeof(*iph);
	if (len > 1600)
		return -1;
	check = (void *)(iph + 1) + check_off;
	if ((void *)(check + 1) > end)
		return -1;
	*check = 0;
	sum = (iph->saddr & 0xffff) + (iph->saddr >> 16) + (iph->daddr & 0xffff) +
	      (iph->daddr >> 16) + bpf_htons(iph->protocol) + bpf_htons(len);
	w = (void *)(iph + 1);
	for (int i = 0; i < 800; i++) {
		if ((__u32)i * 2 + 2 > len || (void *)(w + 1) > end)
			break;
		sum += *w++;
	}
	if (len & 1) {
		if (bpf_xdp_load_bytes(ctx, ETH_HLEN + sizeof(*iph) + len - 1, &last, 1))
			return -1;
		sum += last;	/* the high byte of a word in network order */
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	check = (void *)(long)ctx->data + ETH_HLEN + sizeof(*iph) + check_off;
	if ((void *)(check + 1) > (void *)(long)ctx->data_end)
		return -1;
	*check = (__u16)~sum ? (__u16)~sum : 0xffff;
	return 0;
}

/* GSO_TEST_IPIP_POP: the tunnel's far end, in XDP: the outer IPv4 header
 * (20 bytes, as ipip_push() writes it) goes, the Ethernet header moves up,
 * the inner L4 checksum is filled in. 1 for a frame that is no IPIP.
 */
static __always_inline int ipip_pop(struct xdp_md *ctx, const struct xdplab_pkt *p)
{
	__u8 eth[ETH_HLEN], proto;

	if (p->ipver != 4 || p->l3_off != ETH_HLEN ||
	    bpf_xdp_load_bytes(ctx, ETH_HLEN + 9, &proto, 1) || proto != 4)
		return 1;
	if (bpf_xdp_load_bytes(ctx, 0, eth, sizeof(eth)) || bpf_xdp_adjust_head(ctx, 20) ||
	    bpf_xdp_store_bytes(ctx, 0, eth, sizeof(eth)))
		return -1;
	return l4_csum_fill(ctx);
}

/* GSO_TEST_BROADCAST: the ports a superframe goes to, by ifindex. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} gso_ports SEC(".maps");

/* The TCP or UDP payload bytes of the frame, or -1. */
static __always_inline long l4_payload(struct xdp_md *ctx, const struct xdplab_pkt *p)
{
	struct tcphdr th;
	__u32 hlen = sizeof(struct udphdr);

	if (p->l4 == XDPLAB_L4_TCP) {
		if (bpf_xdp_load_bytes(ctx, p->l4_off, &th, sizeof(th)))
			return -1;
		hlen = th.doff * 4;
	}
	return p->len >= p->l4_off + hlen ? p->len - p->l4_off - hlen : -1;
}

/* GSO_TEST_SPIN_DETACH. spin_state is the marker's progress (0 not yet,
 * 1 spinning, 2 done) for the test to wait on; the test sets spin_detached
 * once bpf_xdp_detach() has returned.
 */
volatile __u32 spin_state;
volatile __u32 spin_detached;
__u64 spin_took_ns;
__u32 spin_ifindex;

static long spin_step(__u64 i, void *start)
{
	return bpf_ktime_get_ns() - *(__u64 *)start >= gso_cfg.spin_ns;
}

/* Holds the NAPI poll that runs it for gso_cfg.spin_ns (at most
 * BPF_MAX_LOOPS clock reads), so that frames queued meanwhile by another
 * CPU wait in the same poll.
 */
static __always_inline void spin(void)
{
	__u64 start = bpf_ktime_get_ns();

	spin_state = 1;
	bpf_loop(1 << 23, spin_step, &start, 0);
	spin_took_ns = bpf_ktime_get_ns() - start;
	spin_state = 2;
}

/* The review modes, on UDP frames to gso_cfg.port (and tx_port) and, for
 * GSO_TEST_TRIM_REDIRECT, on superframes. Returns the verdict, or -1 for
 * a frame they leave to the others.
 */
static __always_inline int review(struct xdp_md *ctx, struct xdplab_pkt *p, bool big)
{
	bool udp = p->l4 == XDPLAB_L4_UDP && p->dport == gso_cfg.port;
	__u32 zero = 0;
	int err = 1;
	__u64 *n;

	switch (gso_cfg.mode) {
	case GSO_TEST_SLICE_WRITE:
		if (!udp)
			return -1;
		err = slice_write(ctx);
		if (!err)
			count(GSO_CNT_CHANGED, 1);
		count(GSO_CNT_ACTED, 1);
		if (err)
			count(GSO_CNT_FAILED, 1);
		return XDP_DROP;
	case GSO_TEST_TX_STORE:
		if (p->l4 == XDPLAB_L4_UDP && p->dport == gso_cfg.tx_port) {
			if (set_macs(ctx, true))
				count(GSO_CNT_FAILED, 1);
			count(GSO_CNT_ACTED, 1);
			return XDP_TX;
		}
		if (!udp)
			return -1;
		if (store_same(ctx))
			count(GSO_CNT_FAILED, 1);
		else
			count(GSO_CNT_CHANGED, 1);
		return XDP_DROP;
	case GSO_TEST_TRIM_REDIRECT:
		if (!udp && !big)
			return -1;
		n = bpf_map_lookup_elem(&gso_dropped, &zero);
		if (udp || (n && __sync_fetch_and_add(n, 1) < gso_cfg.drop))
			err = trim_tail(ctx, p, 0, gso_cfg.keep);
		if (err < 0)
			count(GSO_CNT_FAILED, 1);
		else if (!err)
			count(GSO_CNT_CHANGED, 1);
		if (set_macs(ctx, false))
			count(GSO_CNT_FAILED, 1);
		count(GSO_CNT_ACTED, 1);
		return bpf_redirect(gso_cfg.ifindex, 0);
	case GSO_TEST_META_TX:
		if (!udp)
			return -1;
		if (put_meta(ctx) || set_macs(ctx, true))
			count(GSO_CNT_FAILED, 1);
		count(GSO_CNT_ACTED, 1);
		return XDP_TX;
	case GSO_TEST_META_CHECK:
		if (!udp)
			return -1;
		if (has_meta(ctx))
			count(GSO_CNT_CHANGED, 1);
		count(GSO_CNT_ACTED, 1);
		return XDP_DROP;
	case GSO_TEST_PARTIAL_WRITE:
		if (!udp)
			return -1;
		err = partial_write(ctx);
		if (err < 0)
			count(GSO_CNT_FAILED, 1);
		else if (!err)
			count(GSO_CNT_CHANGED, 1);
		count(GSO_CNT_ACTED, 1);
		return XDP_DROP;
	case GSO_TEST_IPIP_REDIRECT:
		if (p->ipver != 4 || p->l4 != XDPLAB_L4_TCP)
			return -1;
		if (ipip_push(ctx, p)) {
			count(GSO_CNT_FAILED, 1);
			return XDP_DROP;
		}
		count(GSO_CNT_CHANGED, 1);
		if (big)
			count(GSO_CNT_ACTED, 1);
		return bpf_redirect(gso_cfg.ifindex, 0);
	case GSO_TEST_STORE:
		if (!udp)
			return -1;
		count(store_same(ctx) ? GSO_CNT_FAILED : GSO_CNT_CHANGED, 1);
		count(GSO_CNT_ACTED, 1);
		return XDP_DROP;
	case GSO_TEST_IPIP_POP:
		err = ipip_pop(ctx, p);
		if (err < 0)
			count(GSO_CNT_FAILED, 1);
		else if (!err)
			count(GSO_CNT_CHANGED, 1);
		return err < 0 ? XDP_DROP : XDP_PASS;
	case GSO_TEST_BROADCAST: {
		long n;

		if ((p->l4 != XDPLAB_L4_TCP && p->l4 != XDPLAB_L4_UDP) ||
		    p->len <= gso_cfg.mtu + ETH_HLEN)
			return -1;
		n = l4_payload(ctx, p);
		if (n < 0 || set_macs(ctx, false)) {
			count(GSO_CNT_FAILED, 1);
			return XDP_PASS;
		}
		count(GSO_CNT_ACTED, 1);
		count(GSO_CNT_PAYLOAD, n);
		return bpf_redirect_map(&gso_ports, 0, BPF_F_BROADCAST);
	}
	case GSO_TEST_SPIN_DETACH:
		if (p->l4 == XDPLAB_L4_UDP && p->dport == gso_cfg.tx_port) {
			spin();
			count(GSO_CNT_ACTED, 1);
			return XDP_DROP;
		}
		if (!udp)
			return -1;
		if (spin_detached)
			count(GSO_CNT_LATE, 1);
		/* xdp->rxq->dev: what a detach must not have torn down yet */
		if (gso_cfg.read_ifindex)
			spin_ifindex = ctx->ingress_ifindex;
		return XDP_PASS;
	case GSO_TEST_GROW_REDIRECT:
		if (!udp)
			return -1;
		count(bpf_xdp_adjust_tail(ctx, gso_cfg.grow) ? GSO_CNT_FAILED :
							       GSO_CNT_CHANGED, 1);
		count(GSO_CNT_ACTED, 1);
		return bpf_redirect(gso_cfg.ifindex, 0);
	case GSO_TEST_WRITE_PASS: {
		__u8 last;

		/* 128: more than the headers, so the byte is payload */
		if (p->l4 != XDPLAB_L4_TCP || p->len <= 128)
			return -1;
		if (bpf_xdp_load_bytes(ctx, p->len - 1, &last, 1) ||
		    bpf_xdp_store_bytes(ctx, p->len - 1, &last, 1)) {
			count(GSO_CNT_FAILED, 1);
			return XDP_PASS;
		}
		count(GSO_CNT_CHANGED, 1);
		if (p->len > ctx->data_end - ctx->data)
			count(GSO_CNT_ACTED, 1);
		return XDP_PASS;
	}
	}
	return -1;
}

static __always_inline int gso_test(struct xdp_md *ctx, bool frags)
{
	__u32 mode = gso_cfg.mode, zero = 0;
	struct xdplab_pkt p;
	bool big;
	int act = XDP_PASS, err;
	__u64 *n;

	xdplab_parse(ctx, &p, frags);
	big = p.l4 == XDPLAB_L4_TCP && p.len > gso_cfg.mtu + ETH_HLEN;

	count(GSO_CNT_FRAMES, 1);
	count_max(GSO_CNT_MAX_LEN, p.len);
	if (big) {
		count(GSO_CNT_BIG, 1);
		count(GSO_CNT_BIG_BYTES, p.len);
		if (p.len > ctx->data_end - ctx->data)
			count(GSO_CNT_MULTIBUF, 1);
	}
	if (p.len > ctx->data_end - ctx->data &&
	    ctx->data_end - ctx->data < GSO_TEST_HEAD_MIN)
		count(GSO_CNT_SHORT_HEAD, 1);
	if (p.malformed || !p.ipver)
		return xdplab_verdict(ctx, &p, XDP_PASS);
	if (mode > GSO_TEST_SCRIBBLE_DROP) {
		act = review(ctx, &p, big);
		return xdplab_verdict(ctx, &p, act < 0 ? XDP_PASS : act);
	}

	switch (mode) {
	case GSO_TEST_PUSH_TAG:
		err = push_tag(ctx);
		break;
	case GSO_TEST_TRIM:
		err = 1;
		/* with `drop` set, only the first `drop` superframes */
		if (big && gso_cfg.drop) {
			n = bpf_map_lookup_elem(&gso_dropped, &zero);
			big = n && __sync_fetch_and_add(n, 1) < gso_cfg.drop;
		}
		if (big)
			err = trim_tail(ctx, &p, gso_cfg.trim, gso_cfg.keep);
		break;
	case GSO_TEST_TX:
		if (!big || ttl_of(ctx, &p) != gso_cfg.ttl)
			return xdplab_verdict(ctx, &p, XDP_PASS);
		err = set_macs(ctx, true);
		act = XDP_TX;
		break;
	case GSO_TEST_REDIRECT:
		if (!big)
			return xdplab_verdict(ctx, &p, XDP_PASS);
		err = set_macs(ctx, false);
		act = bpf_redirect(gso_cfg.ifindex, 0);
		break;
	case GSO_TEST_DROP_FIRST:
	case GSO_TEST_SCRIBBLE_DROP:
		if (!big)
			return xdplab_verdict(ctx, &p, XDP_PASS);
		n = bpf_map_lookup_elem(&gso_dropped, &zero);
		if (!n || __sync_fetch_and_add(n, 1) >= gso_cfg.drop)
			return xdplab_verdict(ctx, &p, XDP_PASS);
		if (mode == GSO_TEST_SCRIBBLE_DROP) {
			if (scribble(ctx, p.len)) {
				count(GSO_CNT_FAILED, 1);
				return xdplab_verdict(ctx, &p, XDP_PASS);
			}
			count(GSO_CNT_CHANGED, 1);
		}
		count(GSO_CNT_ACTED, 1);
		return xdplab_verdict(ctx, &p, XDP_DROP);
	default:
		return xdplab_verdict(ctx, &p, XDP_PASS);
	}

	if (err < 0) {
		count(GSO_CNT_FAILED, 1);
		return xdplab_verdict(ctx, &p, XDP_PASS);
	}
	if (!err)
		count(GSO_CNT_CHANGED, 1);
	if (act != XDP_PASS && big)
		count(GSO_CNT_ACTED, 1);
	/* p.len is the length the program was given */
	return xdplab_verdict(ctx, &p, act);
}

/* Both entry points, no GSO-preserving tag (see XDPLAB_PROG). */
SEC("xdp")
int xdp_gso_test(struct xdp_md *ctx)
{
	return gso_test(ctx, false);
}

SEC("xdp.frags")
int xdp_gso_test_frags(struct xdp_md *ctx)
{
	return gso_test(ctx, true);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
