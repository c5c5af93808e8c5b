/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What progs/xdp_gso_test.bpf.c and selftests/veth_gso.c agree on: the
 * modes of the test program, its settings and its counters. Included after
 * vmlinux.h (BPF) or <linux/types.h> (user space); includes nothing.
 */
#ifndef XDP_GSO_TEST_H
#define XDP_GSO_TEST_H

/* What the program does with a TCP frame longer than mtu + 14 bytes (a GSO
 * superframe); everything else is passed untouched.
 */
enum {
	GSO_TEST_PASS = 0,	/* count it, XDP_PASS */
	GSO_TEST_PUSH_TAG,	/* every IP frame: push an 802.1Q priority tag
				 * (VID 0) with bpf_xdp_adjust_head(), PASS */
	GSO_TEST_TRIM,		/* cut `trim` bytes of TCP payload off the end
				 * (all but `keep` with keep set; only the
				 * first `drop` superframes with drop set)
				 * with bpf_xdp_adjust_tail(), fix the IP
				 * length and checksums, PASS */
	GSO_TEST_TX,		/* IP TTL/hop limit == ttl: swap MACs, XDP_TX */
	GSO_TEST_REDIRECT,	/* set MACs dmac/smac, XDP_REDIRECT to ifindex */
	GSO_TEST_DROP_FIRST,	/* XDP_DROP the first `drop` superframes */
	GSO_TEST_SCRIBBLE_DROP,	/* overwrite the last 64 bytes of the first
				 * `drop` superframes (bpf_xdp_store_bytes, or
				 * a bpf_dynptr_slice_rdwr() pointer with
				 * `dynptr`), then XDP_DROP them: what TCP sends
				 * again must be the original bytes */
	/* The review tests (kernel-patches/veth v2, issue 18): UDP frames to
	 * `port`, mostly datagrams sent with UDP_SEGMENT by the test.
	 */
	GSO_TEST_SLICE_WRITE,	/* bpf_dynptr_write() of one byte at
				 * write_off, then a read-only dynptr slice at
				 * slice_off, copied to write_off + 100 and
				 * read back into gso_seen; XDP_DROP */
	GSO_TEST_TX_STORE,	/* UDP to tx_port: swap MACs, XDP_TX; UDP to
				 * port: rewrite the byte at write_off with
				 * itself (bpf_xdp_store_bytes), XDP_DROP */
	GSO_TEST_TRIM_REDIRECT,	/* superframes (TCP, the first `drop`) and UDP
				 * to port (all): cut the payload to `keep`
				 * bytes, fix the lengths, then as
				 * GSO_TEST_REDIRECT; other superframes are
				 * redirected whole */
	GSO_TEST_META_TX,	/* UDP to port: 8 bytes of metadata
				 * (bpf_xdp_adjust_meta) holding GSO_TEST_META,
				 * swap MACs, XDP_TX */
	GSO_TEST_META_CHECK,	/* UDP to port: count it as CHANGED if its
				 * metadata holds GSO_TEST_META; XDP_DROP */
	/* The v2 review tests (issue 18, v3). */
	GSO_TEST_PARTIAL_WRITE,	/* UDP to port: bpf_xdp_store_bytes() at
				 * write_off; if that failed with -ENOMEM, a
				 * dynptr slice at slice_off, the store again,
				 * a new slice there copied by the kernel into
				 * the frame's MAC addresses: CHANGED if the
				 * bytes are what the first slice held, FAILED
				 * if not; XDP_DROP */
	GSO_TEST_IPIP_REDIRECT,	/* IPv4 TCP: push an outer IPv4 header
				 * (IPIP, encap_saddr -> encap_daddr), set MACs
				 * dmac/smac, XDP_REDIRECT to ifindex */
	GSO_TEST_STORE,		/* UDP to port: rewrite the byte at write_off
				 * with itself (bpf_xdp_store_bytes): CHANGED,
				 * or FAILED; ACTED; XDP_DROP */
	GSO_TEST_IPIP_POP,	/* IPv4 of protocol 4 (IPIP): take the outer
				 * header off (CHANGED), XDP_PASS */
	/* The bench's copy-on-write point (xdplab-bench veth-flip
	 * write-frags): the cost of writing into shared fragments.
	 */
	GSO_TEST_WRITE_PASS,	/* every TCP frame with payload: rewrite its
				 * last byte with itself (bpf_xdp_store_bytes;
				 * in the last fragment of a multi-buffer
				 * frame, so shared fragments are copied
				 * first): CHANGED, or FAILED; ACTED when the
				 * byte lay past the linear part; XDP_PASS */
	/* The redirect target shared by several frames (issues 18, 19: the
	 * core's xdp_do_redirect_to()).
	 */
	GSO_TEST_BROADCAST,	/* TCP and UDP superframes: set MACs dmac/smac,
				 * XDP_REDIRECT with BPF_F_BROADCAST to every
				 * port of gso_ports (ACTED, their payload
				 * bytes in PAYLOAD); other frames pass */
	/* Detach under a running poll (veth review-v7 BUG 1). */
	GSO_TEST_SPIN_DETACH,	/* UDP to tx_port (the marker): spin for
				 * spin_ns (spin_state 1, then 2), XDP_DROP;
				 * UDP to port: LATE if spin_detached is set,
				 * read ingress_ifindex with read_ifindex,
				 * XDP_PASS */
	GSO_TEST_GROW_REDIRECT,	/* UDP to port: grow the tail by `grow`
				 * bytes (CHANGED, or FAILED), XDP_REDIRECT to
				 * ifindex (ACTED) */
	GSO_TEST_MODE_MAX,
};

struct gso_test_cfg {
	__u32 mode;		/* GSO_TEST_* */
	__u32 mtu;		/* frames longer than mtu + 14 are superframes */
	__u32 trim;		/* GSO_TEST_TRIM: bytes to cut */
	__u32 ttl;		/* GSO_TEST_TX: only frames with this TTL */
	__u32 ifindex;		/* GSO_TEST_REDIRECT: target */
	__u32 drop;		/* GSO_TEST_*DROP*: how many */
	__u32 dynptr;		/* GSO_TEST_SCRIBBLE_DROP: write through a dynptr */
	__u32 port;		/* the review modes: UDP destination port */
	__u32 tx_port;		/* GSO_TEST_TX_STORE: UDP port sent back */
	__u32 slice_off;	/* GSO_TEST_SLICE_WRITE: frame offsets */
	__u32 write_off;
	__u32 keep;		/* GSO_TEST_TRIM_REDIRECT: payload bytes left */
	__u32 encap_saddr;	/* GSO_TEST_IPIP_REDIRECT: outer addresses, */
	__u32 encap_daddr;	/* network order */
	__u32 spin_ns;		/* GSO_TEST_SPIN_DETACH: how long the marker */
	__u32 read_ifindex;	/* spins; read ctx->ingress_ifindex */
	__u32 grow;		/* GSO_TEST_GROW_REDIRECT: tail bytes added */
	__u8 dmac[6];		/* GSO_TEST_REDIRECT: new Ethernet addresses */
	__u8 smac[6];
};

/* What GSO_TEST_META_TX writes and GSO_TEST_META_CHECK looks for. */
#define GSO_TEST_META		0x786470676d657461ULL
/* A multi-buffer frame's linear part holds at least this much: a stock
 * kernel's copy (skb_pp_cow_data()) fills the head page, about 3.5 KB with
 * 4 KB pages, and the series must not give a program less.
 */
#define GSO_TEST_HEAD_MIN	2048
/* Bytes GSO_TEST_SLICE_WRITE copies and keeps in gso_seen. */
#define GSO_TEST_SLICE_LEN	64

/* Slots of the per-CPU gso_counts map. */
enum {
	GSO_CNT_FRAMES = 0,	/* frames seen */
	GSO_CNT_BIG,		/* superframes seen (longer than mtu + 14) */
	GSO_CNT_BIG_BYTES,	/* their bytes */
	GSO_CNT_MULTIBUF,	/* superframes with fragments */
	GSO_CNT_MAX_LEN,	/* longest frame seen (per CPU) */
	GSO_CNT_CHANGED,	/* frames the mode changed (resized, re-addressed) */
	GSO_CNT_ACTED,		/* superframes given the mode's TX/REDIRECT/DROP */
	GSO_CNT_FAILED,		/* a helper failed: passed unchanged */
	GSO_CNT_PAYLOAD,	/* GSO_TEST_BROADCAST: L4 payload bytes of the
				 * superframes sent */
	GSO_CNT_SHORT_HEAD,	/* multi-buffer frames whose linear part holds
				 * less than GSO_TEST_HEAD_MIN bytes: a program
				 * reading early payload with direct packet
				 * access fails its bounds check there */
	GSO_CNT_LATE,		/* GSO_TEST_SPIN_DETACH: frames this program
				 * ran on after the test's detach returned */
	GSO_CNT_MAX,
};

#endif /* XDP_GSO_TEST_H */
