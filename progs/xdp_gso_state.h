/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What progs/xdp_gso_state.bpf.c records and selftests/veth_gso.c reads:
 * per CPU, what bpf_xdp_gso_state() said of each frame. Included after
 * vmlinux.h (BPF) or <linux/types.h> (user space); includes nothing.
 */
#ifndef XDP_GSO_STATE_H
#define XDP_GSO_STATE_H

/* Bits of gso_type the program counts one by one (enum xdp_gso_type has 7) */
#define GSO_STATE_TYPE_BITS	8

struct gso_state_stats {
	__u64 frames;
	__u64 nodata;		/* -ENODATA: not a superframe */
	__u64 nodata_nonzero;	/* ... with an output left non-zero */
	__u64 other_ret;	/* neither 0 nor -ENODATA */
	__u64 gso;		/* 0: a superframe */
	__u64 size_min;		/* its gso_size; 0: none seen yet */
	__u64 size_max;
	__u64 segs_sum;
	__u64 segs_zero;	/* gso_segs 0 */
	__u64 segs_wrong;	/* gso_segs != payload / gso_size, rounded up */
	__u64 unparsed;		/* headers the program does not read */
	__u64 moved_changed;	/* another answer after bpf_xdp_adjust_head() */
	__u64 type_bits[GSO_STATE_TYPE_BITS];	/* superframes with gso_type bit i */
};

#endif /* XDP_GSO_STATE_H */
