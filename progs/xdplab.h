/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the BPF programs and user space must agree on, defined once.
 * Included by the progs/ BPF sources (after vmlinux.h) and by user space (after
 * <linux/types.h>); it includes nothing itself.
 */
#ifndef XDPLAB_H
#define XDPLAB_H

/* Stats slots: one per XDP action (same numbering as enum xdp_action), then
 * frames the parser could not make sense of. A frame is counted once under
 * its verdict; a malformed frame is counted under its verdict too, and again
 * in XDPLAB_STAT_MALFORMED.
 */
enum {
	XDPLAB_STAT_ABORTED = 0,
	XDPLAB_STAT_DROP,
	XDPLAB_STAT_PASS,
	XDPLAB_STAT_TX,
	XDPLAB_STAT_REDIRECT,
	XDPLAB_STAT_MALFORMED,
	XDPLAB_STAT_MAX,
};

struct xdplab_datarec {
	__u64 packets;		/* packets: a GSO superframe counts gso_segs
				 * where the kernel tells (bpf_xdp_gso_state(),
				 * cfg.count_segs), else 1 per frame */
	__u64 bytes;		/* whole frame, fragments included */
	__u64 mb_packets;	/* frames that carried fragments */
	__u64 frames;		/* frames the program ran on */
};

/* What the parser found, counted per CPU in the proto map: one slot per
 * outermost L4 protocol, so tests can see that parsing crossed fragments.
 */
enum {
	XDPLAB_L4_NONE = 0,	/* not IP, or IP without a known L4 */
	XDPLAB_L4_TCP,
	XDPLAB_L4_UDP,
	XDPLAB_L4_ICMP,		/* ICMP and ICMPv6 */
	XDPLAB_L4_MAX,
};

/* Per-program settings, a const volatile in .rodata set before load.
 * match_*: only frames that match get the program's verdict; the rest are
 * passed untouched (and counted as PASS). Zero means "any".
 */
struct xdplab_cfg {
	__u8  match_l4;		/* XDPLAB_L4_* */
	__u8  match_ipver;	/* 4 or 6 */
	__u16 match_dport;	/* host byte order */
	__u32 ifindex;		/* egress ifindex: redirect, trafficgen */
	__u32 action;		/* rxq_info: the verdict to return */
	__u32 cpu_action;	/* redirect_cpu: the cpumap program's verdict */
	__u32 swap_macs;	/* rxq_info: swap MACs before an XDP_TX */
	__u32 count_proto;	/* parse every frame: count its L4 protocol in
				 * xdp_proto, and malformed frames, even
				 * without a filter (costs a second lookup) */
	__u32 gso_opt_in;	/* the loader loaded it with BPF_F_XDP_GSO:
				 * only then can a frame be a superframe, so
				 * only then does the program ask its GSO
				 * state; and `xdplab status` reads it back,
				 * as bpf_prog_info does not report the flag */
	__u32 count_segs;	/* not read by the program: the loader notes
				 * that the program is opted in (gso_opt_in),
				 * native, and the kernel has bpf_xdp_gso_state(),
				 * so it counts packets, not frames
				 * (struct xdplab_datarec) */
};

#define XDPLAB_MAX_RXQ 64

struct xdplab_rxq_rec {
	__u64 packets;
	__u64 issue;		/* rx_queue_index out of range */
};

#endif /* XDPLAB_H */
