// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The verifier's rule for BPF_F_XDP_GSO programs (kernel-patches/veth
 * 0011; issue 18 bug 1; selftests/veth_gso.c, veth_gso_review/slice_write).
 * In such a program a write into the frame's fragments may go to a copy of
 * fragments shared with the sender, leaving a read-only slice taken before
 * it on the old bytes: the series' verifier refuses xdp_gso_stale_slice,
 * xdp_gso_stale_subprog and xdp_gso_stale_nested with the flag, and they
 * load without it.
 * xdp_gso_pkt_ptr_store keeps a packet pointer across a write, which is
 * fine (the linear part is never replaced) and loads either way.
 * xdp_gso_ext_target calls ext_stub() with a slice held: an extension
 * that writes into the frame (xdp_gso_ext_write.bpf.c) may not replace it.
 * Test fixtures, never attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* generic loaders leave it alone: selftests/test_tools.c */
const volatile int xdplab_test_fixture = 1;

extern int bpf_dynptr_from_xdp(struct xdp_md *xdp, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __ksym __weak;
extern void *bpf_dynptr_slice(const struct bpf_dynptr *p, __u32 offset,
			      void *buffer__opt, __u32 buffer__szk) __ksym __weak;

/* The frame's dynptr; false where the kernel lacks the kfuncs. */
static __always_inline bool frame_dynptr(struct xdp_md *ctx, struct bpf_dynptr *ptr)
{
	return bpf_dynptr_from_xdp && bpf_dynptr_slice && !bpf_dynptr_from_xdp(ctx, 0, ptr);
}

SEC("xdp.frags")
int xdp_gso_stale_slice(struct xdp_md *ctx)
{
	struct bpf_dynptr ptr;
	__u8 buf[4], one = 1, *slice;

	if (!frame_dynptr(ctx, &ptr))
		return XDP_PASS;
	slice = bpf_dynptr_slice(&ptr, 2000, buf, sizeof(buf));
	if (!slice)
		return XDP_PASS;
	bpf_dynptr_write(&ptr, 3000, &one, sizeof(one), 0);
	return slice[0] ? XDP_PASS : XDP_DROP;
}

/* A global subprogram's dynptr argument is typed local: it is the frame's. */
__noinline int stale_in_subprog(const struct bpf_dynptr *ptr)
{
	__u8 buf[4], one = 1, *slice;

	slice = bpf_dynptr_slice(ptr, 2000, buf, sizeof(buf));
	if (!slice)
		return 0;
	bpf_dynptr_write(ptr, 3000, &one, sizeof(one), 0);
	return slice[0];
}

SEC("xdp.frags")
int xdp_gso_stale_subprog(struct xdp_md *ctx)
{
	struct bpf_dynptr ptr;

	if (!frame_dynptr(ctx, &ptr))
		return XDP_PASS;
	return stale_in_subprog(&ptr) ? XDP_PASS : XDP_DROP;
}

__noinline int write_frame(struct xdp_md *ctx)
{
	__u8 one = 1;

	return bpf_xdp_store_bytes(ctx, 3000, &one, sizeof(one));
}

/* The same slice, across a nested global call that writes the frame. */
__noinline int stale_across_global(const struct bpf_dynptr *ptr, struct xdp_md *ctx)
{
	__u8 buf[4], *slice;

	slice = bpf_dynptr_slice(ptr, 2000, buf, sizeof(buf));
	if (!slice)
		return 0;
	write_frame(ctx);
	return slice[0];
}

SEC("xdp.frags")
int xdp_gso_stale_nested(struct xdp_md *ctx)
{
	struct bpf_dynptr ptr;

	if (!frame_dynptr(ctx, &ptr))
		return XDP_PASS;
	return stale_across_global(&ptr, ctx) ? XDP_PASS : XDP_DROP;
}

SEC("xdp.frags")
int xdp_gso_pkt_ptr_store(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data, one = 1;

	if ((void *)(data + 1) > (void *)(long)ctx->data_end)
		return XDP_PASS;
	bpf_xdp_store_bytes(ctx, 3000, &one, sizeof(one));
	return data[0] ? XDP_PASS : XDP_DROP;
}

__u32 ext_stub_calls;

/* Writes nothing into the frame; an extension may replace it. The count
 * keeps clang from taking it for a pure function and dropping the call.
 */
__noinline int ext_stub(struct xdp_md *ctx)
{
	ext_stub_calls++;
	return ctx->ingress_ifindex ? 1 : 0;
}

SEC("xdp.frags")
int xdp_gso_ext_target(struct xdp_md *ctx)
{
	struct bpf_dynptr ptr;
	__u8 buf[4], *slice;

	if (!frame_dynptr(ctx, &ptr))
		return XDP_PASS;
	slice = bpf_dynptr_slice(&ptr, 2000, buf, sizeof(buf));
	if (!slice)
		return XDP_PASS;
	if (ext_stub(ctx) < 0)
		return XDP_DROP;
	return slice[0] ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
