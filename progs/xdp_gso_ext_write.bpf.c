// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * An extension of xdp_gso_stale_slice.bpf.c's ext_stub() that writes into
 * the frame (selftests/veth_gso.c, veth_gso_review/slice_write). Where the
 * target was loaded with BPF_F_XDP_GSO, its caller holds a slice across
 * the call, which the write would leave on the sender's bytes: the series'
 * kernel refuses this extension for such a target. A test fixture.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* generic loaders leave it alone: selftests/test_tools.c */
const volatile int xdplab_test_fixture = 1;

SEC("freplace/ext_stub")
int xdp_gso_ext_write(struct xdp_md *ctx)
{
	__u8 one = 1;

	return bpf_xdp_store_bytes(ctx, 3000, &one, sizeof(one)) ? 0 : 1;
}

char LICENSE[] SEC("license") = "GPL";
