// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A dynptr slice read after a write elsewhere in the frame (kernel-patches/
 * veth, issue 18 bug 1; selftests/veth_gso.c, veth_gso_review/slice_write).
 * In a program loaded with BPF_F_XDP_GSO the write may go to a copy of
 * fragments shared with the sender, leaving the slice on the old bytes:
 * the series' verifier refuses this program with the flag. Without it the
 * program loads, as on any kernel. A test fixture, never attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

extern int bpf_dynptr_from_xdp(struct xdp_md *xdp, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __ksym __weak;
extern void *bpf_dynptr_slice(const struct bpf_dynptr *p, __u32 offset,
			      void *buffer__opt, __u32 buffer__szk) __ksym __weak;

SEC("xdp.frags")
int xdp_gso_stale_slice(struct xdp_md *ctx)
{
	struct bpf_dynptr ptr;
	__u8 buf[4], one = 1, *slice;

	if (!bpf_dynptr_from_xdp || !bpf_dynptr_slice)
		return XDP_PASS;
	if (bpf_dynptr_from_xdp(ctx, 0, &ptr))
		return XDP_PASS;
	slice = bpf_dynptr_slice(&ptr, 2000, buf, sizeof(buf));
	if (!slice)
		return XDP_PASS;
	bpf_dynptr_write(&ptr, 3000, &one, sizeof(one), 0);
	return slice[0] ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
