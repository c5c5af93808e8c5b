/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What every xdplab program has: the settings, the stats maps and the one
 * function that counts a verdict. A program includes this after vmlinux.h.
 */
#ifndef XDPLAB_BPF_H
#define XDPLAB_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xdp/xdp_helpers.h>
#include "xdplab.h"

/* Before the parser, which reads cfg.gso_opt_in. */
const volatile struct xdplab_cfg cfg = {};

#include "parse.bpf.h"

/*
 * The GSO-preserving contract. A program tagged with XDPLAB_GSO_PRESERVING
 * promises that, whatever verdict it returns, it
 *   - never changes the frame's length (no bpf_xdp_adjust_head/_tail/_meta),
 *   - never writes to the IP, IPv6, TCP or UDP headers or the payload
 *     (rewriting Ethernet addresses is allowed),
 * so a GSO superframe that enters it leaves with gso_size, gso_type and the
 * checksum state still true. The tag is a BTF decl tag on the program's
 * function: `xdplab status` and the selftests read it back, and the
 * selftests check the promise on a 9000-byte multi-buffer frame.
 */
#define XDPLAB_GSO_PRESERVING __attribute__((btf_decl_tag("xdplab:gso_preserving")))

/* Lets libxdp (xdp-loader) load the program; a PASS in the chain actions
 * lets a libxdp dispatcher run the next program after it.
 */
#define XDPLAB_RUN_CONFIG(name)						\
	struct { __uint(priority, 10); __uint(XDP_PASS, 1); }		\
		XDP_RUN_CONFIG(name)

/*
 * One body, two entry points: `name` for drivers and MTUs where the whole
 * frame is linear, `name_frags` (BPF_F_XDP_HAS_FRAGS) for multi-buffer
 * frames. The loader picks one and leaves the other unloaded. body(ctx,
 * frags) gets which one it is as a constant, so the linear one carries no
 * fragment handling at all.
 */
#define XDPLAB_PROG(name, body)						\
	SEC("xdp") int name(struct xdp_md *ctx)				\
	{ return body(ctx, false); }					\
	XDPLAB_GSO_PRESERVING						\
	SEC("xdp.frags") int name##_frags(struct xdp_md *ctx)		\
	{ return body(ctx, true); }					\
	XDPLAB_RUN_CONFIG(name);					\
	XDPLAB_RUN_CONFIG(name##_frags)

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDPLAB_STAT_MAX);
	__type(key, __u32);
	__type(value, struct xdplab_datarec);
} xdp_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDPLAB_L4_MAX);
	__type(key, __u32);
	__type(value, __u64);
} xdp_proto SEC(".maps");

static __always_inline void xdplab_count_rec(void *map, __u32 slot, __u64 len, bool multibuf,
					     __u32 segs)
{
	struct xdplab_datarec *rec = bpf_map_lookup_elem(map, &slot);

	if (!rec)
		return;
	rec->packets += segs;
	rec->frames++;
	rec->bytes += len;
	if (multibuf)
		rec->mb_packets++;
}

/* Counts the frame under its verdict and returns the verdict: one per-CPU
 * lookup for a well-formed frame; the protocol count only when asked for
 * (cfg.count_proto), since it costs a second one.
 */
static __always_inline int xdplab_verdict(struct xdp_md *ctx,
					  const struct xdplab_pkt *p, int action)
{
	if (action < 0 || action > XDP_REDIRECT)
		action = XDP_ABORTED;
	xdplab_count_rec(&xdp_stats, action, p->len, p->multibuf, p->segs);
	if (p->malformed)
		xdplab_count_rec(&xdp_stats, XDPLAB_STAT_MALFORMED, p->len, p->multibuf, p->segs);
	if (cfg.count_proto) {
		__u32 l4 = p->l4;
		__u64 *n = bpf_map_lookup_elem(&xdp_proto, &l4);

		if (n)
			(*n)++;
	}
	return action;
}

/*
 * Fills *p as far as this program's settings need: the headers are parsed
 * only with a --proto/--port/--ip filter or cfg.count_proto. Otherwise only
 * the length is taken (not malformed, L4 "none"). cfg is in .rodata, so the
 * verifier removes the branch not taken: xdp_pass without options costs
 * one lookup and a few increments more than an empty program.
 */
static __always_inline void xdplab_inspect(struct xdp_md *ctx, struct xdplab_pkt *p, bool frags)
{
	if (cfg.match_l4 || cfg.match_ipver || cfg.match_dport || cfg.count_proto) {
		xdplab_parse(ctx, p, frags);
		return;
	}
	xdplab_pkt_init(ctx, p, frags);
}

/* Swaps source and destination MAC: in place when they are in the linear
 * part, else through the helpers, which reach them wherever they sit.
 * Returns 0 or a negative error.
 */
static __always_inline int xdplab_swap_macs(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u8 macs[2 * ETH_ALEN], tmp[ETH_ALEN];

	if (data + sizeof(macs) <= end) {
		__builtin_memcpy(tmp, data, ETH_ALEN);
		__builtin_memcpy(data, data + ETH_ALEN, ETH_ALEN);
		__builtin_memcpy(data + ETH_ALEN, tmp, ETH_ALEN);
		return 0;
	}
	if (bpf_xdp_load_bytes(ctx, 0, macs, sizeof(macs)))
		return -1;
	__builtin_memcpy(tmp, macs, ETH_ALEN);
	__builtin_memcpy(macs, macs + ETH_ALEN, ETH_ALEN);
	__builtin_memcpy(macs + ETH_ALEN, tmp, ETH_ALEN);
	return bpf_xdp_store_bytes(ctx, 0, macs, sizeof(macs));
}

/* Does the frame fall under the program's verdict (cfg.match_*)? An IPv6
 * chain past the parser's bound hides its upper-layer header: it matches
 * any --proto/--port, so that one extra header cannot carry a frame past
 * a filter (xdp_drop drops it; xdp_tx never reflects malformed frames).
 */
static __always_inline bool xdplab_match(const struct xdplab_pkt *p)
{
	/* cfg is volatile: one load each, not one per mention. */
	__u8 ipver = cfg.match_ipver, l4 = cfg.match_l4;
	__u16 dport = cfg.match_dport;

	if (ipver && p->ipver != ipver)
		return false;
	if (p->too_deep)
		return true;
	if (l4 && p->l4 != l4)
		return false;
	if (dport && p->dport != dport)
		return false;
	return true;
}

#endif /* XDPLAB_BPF_H */
